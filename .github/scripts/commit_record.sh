#!/usr/bin/env bash
# Commits the record folder when it changed and pushes it, rebasing onto whatever was pushed
# meanwhile (another workflow, a person) and retrying, so no job loses another's commit.
# After every rebase the record's hash chain is checked: a forked record is never pushed.
# Nothing is committed or pushed unless the repository pushed to is private (require_private.sh).
#
#   RECORD_REPOSITORY=owner/name-record-2027 bash .github/scripts/commit_record.sh "record: collection run 123"
#
# RECORD (default data/record) is the record folder: a clone of this year's record repository
# (record_repository.sh checkout), or a folder inside one (a collect job's stream, streams/NAME): only
# that folder is committed, so jobs of other streams pushing meanwhile never conflict with it. The
# script works from the clone's top, since a rebase may remove and remake a folder new in this commit. RECORD_REPOSITORY names the repository
# pushed to (default: origin's, when it is on GitHub); RECORD_BRANCH the branch (default: the one
# checked out).
set -euo pipefail
message=${1:?usage: commit_record.sh MESSAGE}
record=${RECORD:-data/record}
python=${PYTHON:-python}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/git_token.sh"  # GITHUB_TOKEN: the token that may push to the record repository
inside=$(git -C "$record" rev-parse --show-prefix)  # '' for the clone itself, else e.g. streams/NAME/
code=$PWD  # the code's checkout: `python -m collector` is found from here (the runner does not install it)
top=$(git -C "$record" rev-parse --show-toplevel)
cd "$top"
origin=$(git remote get-url origin)
if [[ -z "${RECORD_REPOSITORY:-}" && "$origin" =~ github\.com[:/]([^/]+/[^/]+)$ ]]; then
  RECORD_REPOSITORY=${BASH_REMATCH[1]%.git}
fi
bash "$here/require_private.sh" "${RECORD_REPOSITORY:?RECORD_REPOSITORY is not set and origin is not on GitHub}"
branch=${RECORD_BRANCH:-$(git symbolic-ref --short HEAD)}
git config user.name "takedownwatch[bot]"
git config user.email "41898282+github-actions[bot]@users.noreply.github.com"
git add --sparse -A -- "./$inside"  # a sparse checkout's new files too (today's folder may lie outside it)
if git diff --quiet --cached; then
  echo "record unchanged: nothing to commit"
  exit 0
fi
git commit --quiet -m "$message"
for attempt in 1 2 3 4 5; do
  if git push --quiet origin "HEAD:$branch"; then
    echo "pushed $(git rev-parse --short HEAD) to $RECORD_REPOSITORY $branch"
    exit 0
  fi
  echo "push refused (attempt $attempt): rebasing onto origin/$branch" >&2
  git pull --quiet --rebase origin "$branch"
  tail=(); [[ "$(git config --get core.sparseCheckout || true)" == true ]] && tail=(--tail)  # newest days only
  (cd "$code" && "$python" -m collector export verify --chain-only --out "$top/$inside" "${tail[@]}")
  sleep $((attempt * 3))
done
echo "could not push the record after 5 attempts" >&2
exit 1
