#!/usr/bin/env bash
# Commits the published history when `collector publish` appended to it, and pushes it,
# rebasing onto whatever was pushed meanwhile and retrying. Before every push it checks that
# both files of the history only grew since the branch's last commit of them: a published
# period is never rewritten. Prints sha=<the commit the site is to be built from> to
# $GITHUB_OUTPUT.
#
#   bash .github/scripts/commit_published.sh "published: closed periods, workflow run 123"
set -euo pipefail
message=${1:?usage: commit_published.sh MESSAGE}
published=${PUBLISHED:-data/published}
decisions=${DECISIONS:-data/disclosure}
branch=${GITHUB_REF_NAME:?GITHUB_REF_NAME is not set}
python=${PYTHON:-python}
output=${GITHUB_OUTPUT:-/dev/null}
files=("$published/history.jsonl" "$decisions/decisions.jsonl")
# The workflow checks out with persist-credentials: false, so the token reaches git only here:
# as the header actions/checkout itself would set, through git's environment, not its argv
# (as commit_record.sh does).
if [[ -n "${GITHUB_TOKEN:-}" ]]; then
  basic=$(printf 'x-access-token:%s' "$GITHUB_TOKEN" | base64 | tr -d '\n')
  echo "::add-mask::$basic"
  export GIT_CONFIG_COUNT=1
  export GIT_CONFIG_KEY_0="http.${GITHUB_SERVER_URL:-https://github.com}/.extraheader"
  export GIT_CONFIG_VALUE_0="AUTHORIZATION: basic $basic"
fi

only_grown() {  # only_grown REV: every file of the history is REV's version with lines appended
  local rev=$1 file old
  for file in "${files[@]}"; do
    git cat-file -e "$rev:$file" 2>/dev/null || continue
    old=$(mktemp)
    git show "$rev:$file" > "$old"
    "$python" -c 'import sys
from collector.publish.history import is_append_of
old, new = (open(p, "rb").read() for p in sys.argv[1:3])
sys.exit(0 if is_append_of(old, new) else 1)' "$old" "$file" || {
      echo "$file is not $rev's version with lines appended: refusing to push a rewritten history" >&2
      rm -f "$old"
      return 1
    }
    rm -f "$old"
  done
}

git config user.name "takedownwatch[bot]"
git config user.email "41898282+github-actions[bot]@users.noreply.github.com"
git add -- "${files[@]}" 2>/dev/null || true
if git diff --quiet --cached; then
  echo "published history unchanged: nothing to commit"
  echo "sha=$(git rev-parse HEAD)" >> "$output"
  exit 0
fi
only_grown HEAD
git commit --quiet -m "$message"
for attempt in 1 2 3 4 5; do
  if git push --quiet origin "HEAD:$branch"; then
    echo "pushed $(git rev-parse --short HEAD) to $branch"
    echo "sha=$(git rev-parse HEAD)" >> "$output"
    exit 0
  fi
  echo "push refused (attempt $attempt): rebasing onto origin/$branch" >&2
  git pull --quiet --rebase origin "$branch"
  only_grown "origin/$branch"
  sleep $((attempt * 3))
done
echo "could not push the published history after 5 attempts" >&2
exit 1
