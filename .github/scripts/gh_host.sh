# Sourced, not run: points gh at the GitHub this job runs on, from what every runner sets.
#
#   source "$(dirname "$0")/gh_host.sh"
#
# A runner sets GITHUB_SERVER_URL (the GitHub it runs for: github.com, or a GitHub Enterprise Server's
# address) and GITHUB_REPOSITORY, never GH_HOST or GH_REPO. gh asks github.com unless GH_HOST names
# another host, and for such a host reads the token from GH_ENTERPRISE_TOKEN, not GH_TOKEN ("gh help
# environment"; cli/go-gh pkg/auth tokenForHost). So: the host comes from GITHUB_SERVER_URL, the token
# given as GH_TOKEN is given for that host too, and GH_REPO (unless set) is this repository on that host,
# so `gh release` never guesses the repository from a folder's git remote. Without GITHUB_SERVER_URL
# (run by hand) gh keeps its own defaults.
if [[ -n "${GITHUB_SERVER_URL:-}" ]]; then
  _gh_host=${GITHUB_SERVER_URL#*://}
  _gh_host=${_gh_host%%/*}
  if [[ "$_gh_host" != "github.com" ]]; then
    export GH_HOST="$_gh_host"
    # gh reads GH_TOKEN, else GITHUB_TOKEN, for github.com; GH_ENTERPRISE_TOKEN for any other host.
    if [[ -z "${GH_ENTERPRISE_TOKEN:-}" && -n "${GH_TOKEN:-${GITHUB_TOKEN:-}}" ]]; then
      export GH_ENTERPRISE_TOKEN="${GH_TOKEN:-$GITHUB_TOKEN}"
    fi
  fi
  unset _gh_host
fi
if [[ -z "${GH_REPO:-}" && -n "${GITHUB_REPOSITORY:-}" ]]; then
  export GH_REPO="${GH_HOST:+$GH_HOST/}$GITHUB_REPOSITORY"
fi
