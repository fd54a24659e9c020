#!/usr/bin/env bash
# A stand-in for the GitHub CLI's `gh release` commands that .github/scripts/publish_warc.sh
# runs, with curl (testing/fake_gh.py does the same in Python; this one starts in milliseconds,
# which a simulated year of hourly jobs needs). As the real gh (cli.github.com/manual/gh_release_view,
# gh_release_create, gh_release_upload), against the REST API at $GH_API with $GH_TOKEN:
#
#   gh release view TAG                                      exit 0 when the release exists, 1 when not
#   gh release view TAG --json assets --jq '.assets[].name'  the assets' names, one a line
#   gh release create TAG [--title T] [--notes N]            POST {repo}/releases
#   gh release upload TAG FILE                               POST the file to the release's upload_url
#
# It reads the compact JSON testing/release_store.py answers (json.dumps: '"key": value').
set -euo pipefail
api=${GH_API:?GH_API is not set}
auth=(-H "Authorization: Bearer ${GH_TOKEN:-}" -H "Accept: application/vnd.github+json")
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
  *) echo "fake gh: unsupported command release $verb" >&2; exit 1 ;;
esac
