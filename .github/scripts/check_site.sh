#!/usr/bin/env bash
# Checks a built site before it is published: it has its front page, and holds nothing but pages, the
# stylesheet and the published figures (stats.json). A database, a record file, a WARC file or anything
# else a mistaken build step copied in stops the deployment.
#
#   bash .github/scripts/check_site.sh _site
set -euo pipefail
site=${1:?usage: check_site.sh SITE_DIR}
if [[ ! -s "$site/index.html" ]]; then
  echo "::error::$site/index.html is missing or empty: not a built site" >&2
  exit 1
fi
unexpected=$(cd "$site" && find . -type f ! -name '*.html' ! -name '*.css' ! -path './stats.json' \
  ! -path './.nojekyll' | sort)
if [[ -n "$unexpected" ]]; then
  echo "::error::$site holds files that are not the site's: $(tr '\n' ' ' <<< "$unexpected")" >&2
  exit 1
fi
echo "$site: $(find "$site" -type f | wc -l) site files"
