#!/usr/bin/env bash
# A stand-in for the GitHub CLI commands that the scripts bench/runner.py runs call
# (publish_warc.sh, require_private.sh), with curl: it starts in milliseconds, which a simulated
# year of hourly jobs needs (a Python gh started twice a second job). As the real gh
# (cli.github.com/manual/gh_release_view, gh_release_create, gh_release_upload, gh_api), against
# the REST API at $GH_API (testing/release_store.py on loopback; https://api.github.com/repos/OWNER/REPO
# for the real one) with $GH_TOKEN:
#
#   gh release view TAG                                      exit 0 when the release exists, 1 when not
#   gh release view TAG --json assets --jq '.assets[].name'  the assets' names, one a line
#   gh release create TAG [--title T] [--notes N]            POST {repo}/releases
#   gh release upload TAG FILE                               POST the file to the release's upload_url
#   gh release download TAG [--pattern GLOB] [--dir DIR]     each asset whose name matches GLOB (default
#                                                            every one) into DIR (default .), through its
#                                                            API `url` with Accept: application/octet-stream,
#                                                            then the address it redirects to, without the
#                                                            token (gh_release_download: -p/--pattern, -D/--dir);
#                                                            none matching is gh's `no assets match the file
#                                                            pattern`, exit 1
#   gh api repos/OWNER/REPO [--jq .FIELD]                    GET the repository: the field (a string
#                                                            unquoted, as jq -r prints it), or the JSON;
#                                                            a 404 is `gh: Not Found (HTTP 404)` on
#                                                            standard error with exit 1, as gh reports it
#
# Any other command, or a refused request, exits 1 with a message on standard error, as gh does.
# It reads the compact JSON testing/release_store.py answers (json.dumps: '"key": value').
set -euo pipefail
api=${GH_API:?GH_API is not set}
auth=(-H "Authorization: Bearer ${GH_TOKEN:-}" -H "Accept: application/vnd.github+json")
if [[ "${1:-}" == api && -n "${2:-}" ]]; then
  root=${api%%/repos/*}
  answer=$(mktemp)
  trap 'rm -f "$answer"' EXIT
  status=$(curl -s -o "$answer" -w '%{http_code}' "${auth[@]}" "$root/${2#/}") || status=000
  if [[ "$status" != 200 ]]; then
    [[ "$status" == 404 ]] && why="Not Found" || why="error"
    echo "gh: $why (HTTP $status)" >&2
    exit 1
  fi
  if [[ "${3:-}" == --jq ]]; then
    field=${4:?--jq needs a filter}
    field=${field#.}
    value=$(grep -o '"'"$field"'": \("[^"]*"\|[^,}]*\)' "$answer" | head -n 1) || { echo null; exit 0; }
    value=${value#*\": }
    value=${value#\"}
    echo "${value%\"}"
  else
    cat "$answer"; echo
  fi
  exit 0
fi
[[ "${1:-}" == release ]] || { echo "fake gh: unsupported command $*" >&2; exit 1; }
verb=${2:?} tag=${3:?}
shift 3
release() { curl -sf "${auth[@]}" "$api/releases/tags/$tag"; }
case "$verb" in
  view)
    body=$(release) || { echo "release not found" >&2; exit 1; }
    if [[ "${1:-}" == --json ]]; then
      assets=${body#*\"assets\": }
      grep -o '"name": "[^"]*"' <<<"$assets" | sed 's/^"name": "//; s/"$//' || true
    fi ;;
  create)
    curl -sf "${auth[@]}" -X POST -H "Content-Type: application/json" \
      -d "{\"tag_name\": \"$tag\", \"name\": \"$tag\"}" "$api/releases" >/dev/null ;;
  upload)
    file=${1:?}
    body=$(release) || { echo "release not found" >&2; exit 1; }
    upload=$(grep -o '"upload_url": "[^"{]*' <<<"$body" | sed 's/^"upload_url": "//')
    curl -sf "${auth[@]}" -X POST -H "Content-Type: application/octet-stream" --data-binary "@$file" \
      "$upload?name=$(basename "$file")" >/dev/null ;;
  download)
    pattern='*' dir=.
    while (($#)); do
      case "$1" in
        -p|--pattern) pattern=${2:?}; shift 2 ;;
        -D|--dir) dir=${2:?}; shift 2 ;;
        *) echo "fake gh: unsupported option release download $1" >&2; exit 1 ;;
      esac
    done
    body=$(release) || { echo "release not found" >&2; exit 1; }
    assets=${body#*\"assets\": }
    mapfile -t names < <(grep -o '"name": "[^"]*"' <<<"$assets" | sed 's/^"name": "//; s/"$//')
    mapfile -t urls < <(grep -o '"url": "[^"]*"' <<<"$assets" | sed 's/^"url": "//; s/"$//')
    mkdir -p "$dir"
    selected=()
    for i in "${!names[@]}"; do
      # shellcheck disable=SC2053  # a glob, as gh's --pattern
      [[ "${names[$i]}" == $pattern ]] && selected+=("$i")
    done
    ((${#selected[@]})) || { echo "no assets match the file pattern" >&2; exit 1; }  # as gh says it
    # One curl for every asset's API address (each answers 302), one for the addresses they redirect to.
    api=() get=()
    for i in "${selected[@]}"; do api+=(-o /dev/null "${urls[$i]}"); done
    located=$(curl -sf --fail-early -w '%{redirect_url}\n' -H "Authorization: Bearer ${GH_TOKEN:-}" \
      -H "Accept: application/octet-stream" "${api[@]}") || { echo "could not download from $tag" >&2; exit 1; }
    mapfile -t locations <<<"$located"
    for k in "${!selected[@]}"; do
      [[ -n "${locations[$k]:-}" ]] || { echo "could not download ${names[${selected[$k]}]}" >&2; exit 1; }
      get+=(-o "$dir/${names[${selected[$k]}]}" "${locations[$k]}")
    done
    curl -sf --fail-early "${get[@]}" || { echo "could not download from $tag" >&2; exit 1; }
    ;;
  *) echo "fake gh: unsupported command release $verb" >&2; exit 1 ;;
esac
