#!/usr/bin/env bash
# Packages yesterday's (UTC) WARC files as one WACZ and uploads it, with its SSH signature,
# to that day's release (warc-YYYY-MM-DD), unless the release already has it. The WARC
# files are downloaded from the release, where every run of the day published its own.
#
#   GH_TOKEN=... RECORD_SIGNING_KEY=... WACZ_SIGNING_KEY=... bash .github/scripts/package_wacz.sh [DAY]
#
# WACZ_SIGNING_KEY (an ECDSA P-384 private key, PEM) signs the package inside, as the WACZ
# signing specification's anonymous signature in datapackage-digest.json (ReplayWeb.page checks
# it); RECORD_SIGNING_KEY signs it beside (DAY.wacz.sig). Either missing is said in the job
# summary, and the package is published without that signature.
set -euo pipefail
# The WACZ holds every page as captured: never uploaded to a repository that is not private.
source "$(dirname "$0")/gh_host.sh"  # gh asks the GitHub of GITHUB_SERVER_URL, GH_REPO is this repository
bash "$(dirname "$0")/require_private.sh" "${GH_REPO:?neither GH_REPO nor GITHUB_REPOSITORY is set}"
day=${1:-$(date -u -d yesterday +%Y-%m-%d)}
tag="warc-$day"
python=${PYTHON:-python}
if ! gh release view "$tag" >/dev/null 2>&1; then
  echo "no release $tag: nothing to package"
  exit 0
fi
if gh release view "$tag" --json assets --jq '.assets[].name' | grep -qxF "$day.wacz"; then
  echo "$tag already has $day.wacz"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
folder="$work/warc/${day//-//}"
mkdir -p "$folder"
gh release download "$tag" --pattern '*.warc.gz' --dir "$folder"
summary=${GITHUB_STEP_SUMMARY:-/dev/null}
signing=()
if [ -n "${RECORD_SIGNING_KEY:-}" ]; then
  key="$work/record.key"
  (umask 077 && printf '%s\n' "$RECORD_SIGNING_KEY" > "$key")
  signing=(--key "$key")
else
  echo "::warning::RECORD_SIGNING_KEY is not set: $day.wacz is published without its .sig"
  echo "**$day.wacz has no SSH signature beside it**: the secret RECORD_SIGNING_KEY is not set." >> "$summary"
fi
if [ -n "${WACZ_SIGNING_KEY:-}" ]; then
  wacz_key="$work/wacz.key"
  (umask 077 && printf '%s\n' "$WACZ_SIGNING_KEY" > "$wacz_key")
  signing+=(--wacz-key "$wacz_key")
else
  echo "::warning::WACZ_SIGNING_KEY is not set: $day.wacz is published without a WACZ signature"
  echo "**$day.wacz is not signed inside** (WACZ signing): the secret WACZ_SIGNING_KEY is not set." >> "$summary"
fi
"$python" -m collector export wacz --day "$day" --warc-dir "$work/warc" --out "$work/wacz" "${signing[@]}" \
  | tee -a "$summary"
gh release upload "$tag" "$work/wacz/$day.wacz" $(ls "$work/wacz/$day.wacz.sig" 2>/dev/null)
echo "published $day.wacz in release $tag"
