#!/usr/bin/env bash
# Fails, saying why in the job summary, unless the repository named is private. The per-article record
# (its export files, its WARC release assets) is written only to private repositories: the method
# publishes nothing about a single article, and GitHub shows a public repository to everyone.
#
#   bash .github/scripts/require_private.sh [HOST/]OWNER/NAME [VISIBILITY]
#
# [HOST/]OWNER/NAME as gh's GH_REPO takes it ("[HOST/]OWNER/REPO", gh help environment): a GitHub
# Enterprise Server's repository names its host, and gh is asked that host's API.
#
# VISIBILITY is what the workflow's context says (github.event.repository.visibility), when it says
# anything. The repository is asked of the GitHub API as well (gh, with GH_TOKEN), because a repository
# can be made public while a job runs: both must say "private". A missing or unknown answer is a refusal,
# and so is "internal" (every member of the enterprise can read an internal repository).
set -uo pipefail
source "$(dirname "$0")/gh_host.sh"  # gh asks the GitHub of GITHUB_SERVER_URL
repository=${1:?usage: require_private.sh OWNER/NAME [VISIBILITY]}
context=${2:-}
name=$repository host=()
if [[ "$repository" == */*/* ]]; then
  host=(env "GH_HOST=${repository%%/*}")
  name=${repository#*/}
fi
asked=$("${host[@]}" gh api "repos/$name" --jq .visibility 2>/dev/null) || asked=""
refuse() {
  local why="The record is not written to $repository: $1. Make the repository private (Settings, General, \
Danger Zone, Change visibility) and run the job again; the public site is built from the published figures \
alone (docs/operating.md, \"The public and the private\")."
  echo "::error title=Refused: not a private repository::$why"
  if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
    printf '## Refused: %s is not a private repository\n\n%s\n\nNothing was committed, pushed or uploaded.\n' \
      "$repository" "$why" >> "$GITHUB_STEP_SUMMARY"
  fi
  exit 1
}
if [[ -n "$context" && "$context" != "private" ]]; then
  refuse "the workflow's context says it is $context"
fi
case "$asked" in
  private) echo "$repository is private: the record may be written to it" ;;
  "") refuse "the GitHub API did not say what its visibility is" ;;
  *) refuse "the GitHub API says it is $asked" ;;
esac
