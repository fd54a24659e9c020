#!/usr/bin/env bash
# Brings the working database in sync with the committed record before a job uses it, then prunes it.
#
# The database is never committed: the record (data/record) is the truth. A job
# starts from the copy the last successful job saved to the Actions cache, and
# reads only the export files written since (`export rebuild --resume`). When
# there is no copy, or the copy holds anything the record does not (its job
# failed before pushing, or the record was rewritten), the copy is discarded and
# the database is rebuilt from the whole record. A record folder checked out sparsely (its newest
# days: record_repository.sh) is checked out whole first when the copy is older than those days. A record folder that continues last year's
# record repository (CONTINUES.json) cannot be rebuilt alone: the job then stops, asking for the
# rebuild-database workflow, which reads every year's repository. In sync with the record, the database
# is then pruned to the bounded working database (`export prune`: what the jobs read; everything
# left out is in the record, and `export rebuild` makes the full database for browsing); a database
# pruned less than PRUNE_EVERY_HOURS (4; formerly LEVEL_EVERY_HOURS, still read) ago is left as it is,
# and so is one whose pruning is not expected to end before the job's DEADLINE (the environment's,
# when set: collect's and archive's).
# It is a collect or vantages stream's own database: the archive job submits its captures from the
# database that follows every stream (archive.yml), so no archive answer is ever in this one, and the
# pruning does not keep a capture awake for want of one (`export prune --no-archive-queue`).
#
# A rebuild is said to the job's later steps: RESTORED_BY (missing: no cached copy; unusable: a copy
# that did not continue the record) is appended to $GITHUB_ENV, and collect.yml's run records it in its
# counts (`run --restored-by-rebuild`), which the storage-rebuild health check reads.
#
#   bash .github/scripts/sync_database.sh data/record data/takedownwatch.db
set -euo pipefail
record=${1:?usage: sync_database.sh RECORD DB}
db=${2:?usage: sync_database.sh RECORD DB}
python=${PYTHON:-python}
# Pruning copies the whole working database (under a minute at 40 outlets): 6 a day.
every=${PRUNE_EVERY_HOURS:-${LEVEL_EVERY_HOURS:-4}}
source "$(dirname "$0")/git_token.sh"  # GITHUB_TOKEN: a sparse record checkout fetches the rest it needs
mkdir -p "$record"
restored_by=missing
if [[ -f "$db" ]]; then
  if "$python" -m collector export rebuild --resume --out "$record" --db "$db"; then
    exec "$python" -m collector export prune --out "$record" --db "$db" --unless-within "$every" --no-archive-queue ${DEADLINE:+--deadline "$DEADLINE"}
  fi
  # A sparse checkout holds the newest days only: a cache older than them needs the rest.
  if [[ "$(git -C "$record" config --get core.sparseCheckout 2>/dev/null || true)" == true ]]; then
    echo "checking out the whole record folder: the cached database is older than its newest days" >&2
    git -C "$record" sparse-checkout disable
    if "$python" -m collector export rebuild --resume --out "$record" --db "$db"; then
      exec "$python" -m collector export prune --out "$record" --db "$db" --unless-within "$every" --no-archive-queue ${DEADLINE:+--deadline "$DEADLINE"}
    fi
  fi
  echo "::warning::the cached database does not continue the record; rebuilding it from the record" >&2
  rm -f -- "$db" "$db-wal" "$db-shm"
  restored_by=unusable
fi
if [[ -n "${GITHUB_ENV:-}" ]]; then
  echo "RESTORED_BY=$restored_by" >> "$GITHUB_ENV"
fi
if [[ "$(git -C "$record" config --get core.sparseCheckout 2>/dev/null || true)" == true ]]; then
  git -C "$record" sparse-checkout disable  # a rebuild reads every file
fi
if [[ -f "$record/CONTINUES.json" ]]; then
  echo "::error::no cached database continues the record, and $record continues an earlier year's record \
repository: run the rebuild-database workflow (it reads every year's) and then this job again" >&2
  exit 1
fi
# The folder's own stream only: the default stream's folder also holds the other streams' (streams/).
"$python" -m collector export rebuild --out "$record" --db "$db" --stream .
"$python" -m collector export prune --out "$record" --db "$db" --unless-within "$every" --no-archive-queue ${DEADLINE:+--deadline "$DEADLINE"}
