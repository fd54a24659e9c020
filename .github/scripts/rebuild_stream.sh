#!/usr/bin/env bash
# Rebuilds one record stream's working database from every period's record repository, oldest first,
# and prunes it as the jobs keep it (`export prune`): what rebuild-database.yml saves to the Actions
# cache for that stream's collect job (the key collect_matrix.py gives the stream).
#
#   STREAM=bd-2of4 bash .github/scripts/rebuild_stream.sh data/takedownwatch.db records/a-record-2026 records/a-record-2027
#
# STREAM is the stream's name ('' or unset: the default stream, the record folders' own files; a named
# stream's files are streams/NAME/ in each folder). Prints `rebuilt=yes` for $GITHUB_OUTPUT, or
# `rebuilt=no` when no folder holds a file of the stream yet: its first collect job starts from an
# empty database, and there is nothing to save. The database is pruned with the stream's folder in
# the newest period that has one, the folder its collect job resumes from (or, at a boundary, the copy
# of whose last file the next period's folder starts with). PYTHON names the interpreter (default python).
set -euo pipefail
db=${1:?usage: rebuild_stream.sh DB FOLDER...}
shift
(( $# > 0 )) || { echo "usage: rebuild_stream.sh DB FOLDER..." >&2; exit 2; }
python=${PYTHON:-python}
stream=${STREAM:-}
if [[ -n "$stream" && ! "$stream" =~ ^[a-z0-9][a-z0-9-]{0,62}$ ]]; then
  echo "::error::STREAM=$stream is not a stream name" >&2
  exit 2
fi
# The folders that hold the stream, as `export rebuild` itself finds them (collector/record/merge.py).
mapfile -t holding < <("$python" -c 'import sys
from collector.record.folder import continues, last_batch
from collector.record.merge import stream_folders
for folder in stream_folders(sys.argv[2:]).get(sys.argv[1] or None, []):
    if last_batch(folder) is not None or continues(folder) is not None:
        print(folder)' "$stream" "$@")
if (( ${#holding[@]} == 0 )); then
  echo "no record folder holds a file of stream ${stream:-(default)} yet: its first job starts from an empty database" >&2
  echo "rebuilt=no"
  exit 0
fi
args=()
for folder in "$@"; do args+=(--out "$folder"); done
"$python" -m collector export rebuild "${args[@]}" --db "$db" --stream "${stream:-.}" >&2
"$python" -m collector export prune --out "${holding[-1]}" --db "$db" >&2
echo "rebuilt=yes"
