#!/usr/bin/env bash
# Brings the database that follows every record stream in sync with the record, before a job reads it
# (the pages job: the site's figures over every stream) or writes its own stream beside them (the archive
# job: STREAM, 'archive'): `export follow` (collector/record/follow.py).
#
# The job starts from the copy of that database, and of each stream's own database beside it
# (DB.streams/), that its last successful run saved to the Actions cache: each stream's new export files
# are read, and only their new rows merged. With no copy, every stream's database is rebuilt from its
# folder and the merged one written from them (then every file of the period is read). A record folder
# checked out sparsely (its newest days: record_repository.sh with RECORD_ALL_STREAMS) is checked out
# whole first when that is not enough (a stream new to the copy, a copy older than those days). After a
# rollover, a copy that had not followed the period before to its end (or no copy) follows that period's
# repository too, read with PREVIOUS_TOKEN.
#
# Then, every PRUNE_EVERY_HOURS (4; formerly LEVEL_EVERY_HOURS, still read) by the record's clock, the
# merged database and each stream's own are pruned (`export follow --prune-every`,
# collector/collect/follow_prune.py), so neither grows with the period: each stream's own as its job's
# working database, every article's identity kept; the merged one to what the job reads (the archive's
# queue; FOLLOW_KEEPS adds the rest: pages.yml `--for-figures`, the rows a release still reads;
# vantages.yml `--awake-hours 30`, the answers it compares). Pruning is left for a later job when the
# database holds rows not yet exported.
#
#   bash .github/scripts/follow_database.sh data/record data/takedownwatch.db           # pages
#   bash .github/scripts/follow_database.sh data/record data/takedownwatch.db archive   # archive
set -euo pipefail
record=${1:?usage: follow_database.sh RECORD DB [STREAM]}
db=${2:?usage: follow_database.sh RECORD DB [STREAM]}
writes=${3:-}
python=${PYTHON:-python}
source "$(dirname "$0")/git_token.sh"  # GITHUB_TOKEN: a sparse record checkout fetches the rest it needs
mkdir -p "$record"
args=(--out "$record" --db "$db")
# 0: never pruned (the whole period's record, as `export rebuild` makes it)
every=${PRUNE_EVERY_HOURS:-${LEVEL_EVERY_HOURS:-4}}
[[ "$every" != 0 ]] && args+=(--prune-every "$every")
[[ -n "$writes" ]] && args+=(--writes "$writes")
read -r -a keeps <<< "${FOLLOW_KEEPS:-}"
args+=("${keeps[@]}")
if "$python" -m collector export follow "${args[@]}"; then
  exit 0
fi
if [[ "$(git -C "$record" config --get core.sparseCheckout 2>/dev/null || true)" == true ]]; then
  echo "checking out the whole record folder: its newest days were not enough to follow every stream" >&2
  git -C "$record" sparse-checkout disable
  if "$python" -m collector export follow "${args[@]}"; then
    exit 0
  fi
fi
continued=$(compgen -G "$record/CONTINUES.json" || compgen -G "$record/streams/*/CONTINUES.json" || true)
if [[ -n "$continued" ]]; then
  # The record continues the period before's repository, and the database has not followed every stream
  # to that period's end (a job of the period before wrote after this job's last run, or no copy was
  # cached): a stream's database resumes in this period's folder only from the period before's last file,
  # which the folder starts with. Follow both periods' repositories, oldest first, with a token that may
  # read the period before's (PREVIOUS_TOKEN, the workflow's; a database older than the period before
  # still needs rebuild-database.yml).
  previous=$("$python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["repository"])' \
    "$(head -n 1 <<< "$continued")")
  if [[ -n "${PREVIOUS_TOKEN:-}" ]]; then
    earlier="$(dirname "$record")/${previous##*/}"
    echo "following $previous too: the database had not followed every stream to the end of that period" >&2
    base=${RECORD_URL_BASE:-${GITHUB_SERVER_URL:-https://github.com}}
    [[ -d "$earlier" ]] || (GITHUB_TOKEN=$PREVIOUS_TOKEN; source "$(dirname "$0")/git_token.sh"
                            git clone --quiet --depth 1 "$base/$previous.git" "$earlier")
    if "$python" -m collector export follow --out "$earlier" "${args[@]}"; then
      exit 0
    fi
  fi
  echo "::error::the database that follows every stream could not be brought in sync, and $record continues \
$previous: a stream's database is rebuilt from every period's files (run rebuild-database.yml, or \
python -m collector export follow --out <each period's repository, oldest first> --db $db)" >&2
fi
exit 1
