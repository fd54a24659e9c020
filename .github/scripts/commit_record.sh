#!/usr/bin/env bash
# Commits data/record when it changed and pushes it, rebasing onto whatever was pushed
# meanwhile (another workflow, a person) and retrying, so no job loses another's commit.
# After every rebase the record's hash chain is checked: a forked record is never pushed.
#
#   bash .github/scripts/commit_record.sh "record: collection run 123"
set -euo pipefail
message=${1:?usage: commit_record.sh MESSAGE}
record=${RECORD:-data/record}
branch=${GITHUB_REF_NAME:?GITHUB_REF_NAME is not set}
python=${PYTHON:-python}
# The workflows check out with persist-credentials: false, so the token reaches git only here:
# as the header actions/checkout itself would set, through git's environment, not its argv.
if [[ -n "${GITHUB_TOKEN:-}" ]]; then
  basic=$(printf 'x-access-token:%s' "$GITHUB_TOKEN" | base64 | tr -d '\n')
  echo "::add-mask::$basic"
  export GIT_CONFIG_COUNT=1
  export GIT_CONFIG_KEY_0="http.${GITHUB_SERVER_URL:-https://github.com}/.extraheader"
  export GIT_CONFIG_VALUE_0="AUTHORIZATION: basic $basic"
fi
git config user.name "takedownwatch[bot]"
git config user.email "41898282+github-actions[bot]@users.noreply.github.com"
git add -- "$record"
if git diff --quiet --cached; then
  echo "record unchanged: nothing to commit"
  exit 0
fi
git commit --quiet -m "$message"
for attempt in 1 2 3 4 5; do
  if git push --quiet origin "HEAD:$branch"; then
    echo "pushed $(git rev-parse --short HEAD) to $branch"
    exit 0
  fi
  echo "push refused (attempt $attempt): rebasing onto origin/$branch" >&2
  git pull --quiet --rebase origin "$branch"
  "$python" -m collector export verify --chain-only --out "$record"
  sleep $((attempt * 3))
done
echo "could not push the record after 5 attempts" >&2
exit 1
