#!/usr/bin/env bash
# The record repositories: each period's export files (a calendar year's, settings.RECORD_REPOSITORY_MONTHS)
# live in a private repository of their own, PREFIX-record-YYYY (PREFIX is the code repository's
# owner/name), so that none passes GitHub's recommended 5 GB (docs/operating.md, "Record periods and rollover").
# gh and git use GITHUB_TOKEN, a token that may read and write them (gh reads it when GH_TOKEN is unset).
#
#   bash .github/scripts/record_repository.sh prepare              # make this period's (and near its end
#                                                                  # the next one's) repository, private
#   bash .github/scripts/record_repository.sh checkout data/record # clone this period's, its newest days
#   bash .github/scripts/record_repository.sh seed data/record     # roll over: start it from the last
#                                                                  # file of the period before
#   bash .github/scripts/record_repository.sh history records      # clone every period's, print them
#                                                                  # oldest first
#
# checkout prints `repository=OWNER/NAME` and `due=yes|no` for $GITHUB_OUTPUT: due when the repository
# holds no export file yet and this is not the period the record began in (RECORD_FIRST_PERIOD, e.g.
# 2026). The first writing job of a period then runs seed, with a token that may read the period
# before's repository: it copies that repository's last file, its signature and tokens into this one
# (`python -m collector export rollover`); its own export continues the chain from that copy and its
# commit carries both. Environment: RECORD_PREFIX (default $GITHUB_REPOSITORY), RECORD_FIRST_PERIOD,
# RECORD_MONTHS (default the setting), RECORD_PREVIOUS (the repository before, when the period length
# changed), RECORD_DAYS (newest days checked out, default 2), NOW (default the clock), RECORD_URL_BASE
# (default $GITHUB_SERVER_URL, else https://github.com), PYTHON, RECORD_STREAM (a collect job's record stream: checkout and seed
# then work on DEST/streams/RECORD_STREAM, that stream's folder, which the period before may lack: a
# stream that starts in this period starts from nothing), RECORD_ALL_STREAMS=yes (a job that follows
# every stream, pages and archive: checkout also takes the newest days of every stream's folder).
set -euo pipefail
command=${1:?usage: record_repository.sh prepare | checkout DEST | seed DEST | history PARENT}
prefix=${RECORD_PREFIX:-${GITHUB_REPOSITORY:?neither RECORD_PREFIX nor GITHUB_REPOSITORY is set}}
base=${RECORD_URL_BASE:-${GITHUB_SERVER_URL:-https://github.com}}
python=${PYTHON:-python}
here=$(dirname "$0")
source "$here/gh_host.sh"  # gh asks the GitHub of GITHUB_SERVER_URL
source "$here/git_token.sh"  # GITHUB_TOKEN: the token that may read and write the record repositories
now=(); [[ -n "${NOW:-}" ]] && now=(--now "$NOW")
months=(); [[ -n "${RECORD_MONTHS:-}" ]] && months=(--months "$RECORD_MONTHS")
plan=$("$python" -m collector export repositories --prefix "$prefix" "${months[@]}" "${now[@]}")
value() { sed -n "s/^$1=//p" <<< "$plan"; }
label=$(value label)
current=$(value current)
previous=${RECORD_PREVIOUS:-$(value previous)}
stream=${RECORD_STREAM:-}
if [[ -n "$stream" && ! "$stream" =~ ^[a-z0-9][a-z0-9-]{0,62}$ ]]; then
  echo "::error::RECORD_STREAM=$stream is not a stream name" >&2
  exit 2
fi
inside=${stream:+streams/$stream/}  # the stream's folder inside the repository ('' for the default)

exists() {  # 0: the repository exists; 1: GitHub says there is none (or the token may not see it)
  local answer
  if answer=$(gh api "repos/$1" --jq .full_name 2>&1); then return 0; fi
  if [[ "$answer" == *"HTTP 404"* ]]; then return 1; fi
  echo "::error::could not ask GitHub whether $1 exists: $answer" >&2
  exit 1
}

clone() {  # clone REPOSITORY DEST [git clone options]
  local repository=$1 dest=$2
  shift 2
  git clone --quiet --depth 1 "$@" "$base/$repository.git" "$dest"
}

case "$command" in
  prepare)
    for name in $(value prepare); do
      if ! exists "$name"; then
        gh repo create "$name" --private --add-readme \
          --description "Takedown Watch: the record of ${name##*-record-} (private; never make it public)"
        echo "created $name"
      fi
      bash "$here/require_private.sh" "$name"
    done
    ;;
  checkout)
    dest=${2:?usage: record_repository.sh checkout DEST}
    if ! exists "$current"; then
      echo "::error::$current does not exist, or the token may not see it: run the rollover workflow" \
        "(it makes each period's record repository) and give the App access to it" >&2
      exit 1
    fi
    bash "$here/require_private.sh" "$current" >&2
    # Only the newest days are checked out (the tree comes whole, each file's bytes only when checked out):
    # a job needs the files from its cached database's on, whatever the period's age. sync_database.sh
    # checks out the rest when the cache is older.
    clone "$current" "$dest" --filter=blob:none --sparse
    mapfile -t days < <(git -C "$dest" ls-tree -r --name-only HEAD \
      | grep -E "^${inside}[0-9]{4}/[0-9]{2}/[0-9]{2}/[0-9]{6}\.jsonl(\.bz2)?$" | sed "s|^${inside}||" \
      | cut -d/ -f1-3 | sort -u | tail -n "${RECORD_DAYS:-2}" | sed "s|^|/${inside}|; s|\$|/|")
    every=()
    if [[ "${RECORD_ALL_STREAMS:-}" == yes ]]; then  # a job that follows every stream: each one's newest days
      mapfile -t every < <(git -C "$dest" ls-tree -r --name-only HEAD \
        | sed -nE 's#^((streams/[a-z0-9][a-z0-9-]*/)?[0-9]{4}/[0-9]{2}/[0-9]{2})/[0-9]{6}\.jsonl(\.bz2)?$#\1#p' \
        | sort -u | awk -F/ -v keep="${RECORD_DAYS:-2}" '
            { folder = ($1 == "streams") ? $2 : "."; n[folder]++; day[folder, n[folder]] = $0 }
            END { for (f in n) for (i = n[f] - keep + 1; i <= n[f]; i++) if (i > 0) print "/" day[f, i] "/" }')
      every+=('/streams/*/*.json')
    fi
    today=$(date -u -d "${NOW:-now}" +"/${inside}%Y/%m/%d/")  # where this job's exports go
    git -C "$dest" sparse-checkout set --no-cone '/*.json' '/*.md' ${inside:+"/${inside}*.json"} \
      "${days[@]}" "${every[@]}" "$today"
    mkdir -p "$dest/$inside"
    due=no
    if "$python" -m collector export rollover --check --out "$dest/$inside" >&2 \
        && [[ "${RECORD_FIRST_PERIOD:-}" != "$label" ]]; then
      due=yes  # only the period the record began in starts from nothing
    fi
    if [[ "$due" == yes && -z "$stream" && "${RECORD_ALL_STREAMS:-}" == yes && -n "$(git -C "$dest" ls-tree -r \
        --name-only HEAD | grep -E '^streams/[a-z0-9][a-z0-9-]*/([0-9]{4}/[0-9]{2}/[0-9]{2}/[0-9]{6}\.jsonl(\.bz2)?|CONTINUES\.json)$')" ]]; then
      due=no  # a job that reads every stream (pages): the period has begun once any stream's has
    fi
    echo "repository=$current"
    echo "due=$due"
    ;;
  seed)
    dest=${2:?usage: record_repository.sh seed DEST}
    last_period=$(mktemp -d)
    trap 'rm -rf -- "$last_period"' EXIT
    if ! clone "$previous" "$last_period" --filter=blob:none --no-checkout; then
      echo "::error::$current holds no export file and $previous cannot be read: give the App access to" \
        "it, or, if the record began in $label, set the repository variable TAKEDOWNWATCH_FIRST_PERIOD to $label" >&2
      exit 1
    fi
    last=$(git -C "$last_period" ls-tree -r --name-only HEAD \
      | grep -E "^${inside}[0-9]{4}/[0-9]{2}/[0-9]{2}/[0-9]{6}\.jsonl(\.bz2)?$" | sort | tail -n 1 || true)
    if [[ -z "$last" && -n "$stream" ]]; then
      echo "$previous holds no file of stream $stream: the stream starts in this period" >&2
      exit 0
    fi
    if [[ -z "$last" ]]; then
      echo "::error::$previous holds no export file: nothing to continue (if the record began in $label," \
        "set the repository variable TAKEDOWNWATCH_FIRST_PERIOD to $label)" >&2
      exit 1
    fi
    # Only that file, its signature and its tokens are fetched.
    mapfile -t with_it < <(git -C "$last_period" ls-tree --name-only HEAD "$(dirname "$last")/" \
      | grep -F "$(basename "$last")")
    git -C "$last_period" checkout --quiet HEAD -- "${with_it[@]}"
    "$python" -m collector export rollover --from "$last_period/$inside" --out "$dest/$inside" \
      --continues "$previous" "${now[@]}"
    ;;
  history)
    parent=${2:?usage: record_repository.sh history PARENT}
    mkdir -p "$parent"
    name=$current folders=()
    while [[ -n "$name" ]]; do
      dest="$parent/${name##*/}"
      [[ -d "$dest" ]] || clone "$name" "$dest"
      folders=("$dest" "${folders[@]}")
      # The period before, as the record folder's CONTINUES.json names it, or any stream's (a stream
      # that began later, or a default stream no job writes any more, has none).
      name=$("$python" -c 'import glob, json, sys
for path in sorted([sys.argv[1] + "/CONTINUES.json", *glob.glob(sys.argv[1] + "/streams/*/CONTINUES.json")]):
    try:
        print(json.load(open(path))["repository"])
        break
    except FileNotFoundError:
        pass' "$dest")
    done
    printf '%s\n' "${folders[@]}"
    ;;
  *)
    echo "usage: record_repository.sh prepare | checkout DEST | seed DEST | history PARENT" >&2
    exit 2
    ;;
esac
