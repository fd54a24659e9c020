#!/usr/bin/env bash
# Uploads every WARC file under the folder given to the GitHub release of its day
# (tag warc-YYYY-MM-DD, created when missing), the name and SHA-256 of each being in the
# record's warc_files table already. An asset is never replaced: a file whose name is
# already among the release's assets is left alone and reported. Nothing is uploaded unless the
# repository of the releases (GH_REPO, default GITHUB_REPOSITORY) is private (require_private.sh).
#
#   GH_TOKEN=... bash .github/scripts/publish_warc.sh data/warc
set -euo pipefail
warc_dir=${1:?usage: publish_warc.sh WARC_DIR}
[ -d "$warc_dir" ] || { echo "no WARC folder $warc_dir: nothing to publish"; exit 0; }
source "$(dirname "$0")/gh_host.sh"  # gh asks the GitHub of GITHUB_SERVER_URL, GH_REPO is this repository
bash "$(dirname "$0")/require_private.sh" "${GH_REPO:?neither GH_REPO nor GITHUB_REPOSITORY is set}"
find "$warc_dir" -name '*.warc.gz' -type f | sort | while read -r file; do
  relative=${file#"$warc_dir"/}
  if [[ "$relative" =~ ^([0-9]{4})/([0-9]{2})/([0-9]{2})/ ]]; then
    day="${BASH_REMATCH[1]}-${BASH_REMATCH[2]}-${BASH_REMATCH[3]}"
  else
    day=$(date -u +%Y-%m-%d)
  fi
  tag="warc-$day"
  if ! gh release view "$tag" >/dev/null 2>&1; then
    gh release create "$tag" --title "WARC files of $day (UTC)" \
      --notes "Every HTTP exchange of the day's collection and archive runs, as WARC/1.1. Each file's SHA-256 is in the record's warc_files table." \
      || gh release view "$tag" >/dev/null  # created meanwhile by another job: fine
  fi
  name=$(basename "$file")
  if gh release view "$tag" --json assets --jq '.assets[].name' | grep -qxF "$name"; then
    echo "warning: $tag already has an asset named $name; not replaced" >&2
    continue
  fi
  for attempt in 1 2 3; do
    if gh release upload "$tag" "$file"; then break; fi
    [ "$attempt" = 3 ] && { echo "could not upload $file to $tag" >&2; exit 1; }
    sleep $((attempt * 10))
  done
  echo "published $relative in release $tag"
done
