# Sourced, not run: gives git the token in GITHUB_TOKEN for github.com, as the header actions/checkout
# itself would set, through git's environment, not its argv and not a file. The workflows check out with
# persist-credentials: false, so a token reaches git only in the steps that source this.
#
#   GITHUB_TOKEN=... source .github/scripts/git_token.sh
if [[ -n "${GITHUB_TOKEN:-}" ]]; then
  basic=$(printf 'x-access-token:%s' "$GITHUB_TOKEN" | base64 | tr -d '\n')
  echo "::add-mask::$basic"
  export GIT_CONFIG_COUNT=1
  export GIT_CONFIG_KEY_0="http.${GITHUB_SERVER_URL:-https://github.com}/.extraheader"
  export GIT_CONFIG_VALUE_0="AUTHORIZATION: basic $basic"
  unset basic
fi
