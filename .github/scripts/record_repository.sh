#!/usr/bin/env bash
# The record repositories: each period's export files (a calendar year's, settings.RECORD_REPOSITORY_MONTHS)
# live in a private repository of their own, PREFIX-record-YYYY (PREFIX is the code repository's
# owner/name), so that none passes GitHub's recommended 5 GB (README, "Where the record lives").
# gh and git use GH_TOKEN, a token that may read and write them.
#
#   bash .github/scripts/record_repository.sh prepare            # make this period's (and near its end the
#                                                                # next one's) repository, private
#   bash .github/scripts/record_repository.sh checkout data/record  # clone this period's; roll over when due
#   bash .github/scripts/record_repository.sh history records    # clone every period's, print them oldest first
#
# checkout prints `repository=OWNER/NAME` for $GITHUB_OUTPUT. The rollover: the first writing job of a
# period finds its repository without an export file and copies the last file of the period before into
# it (`python -m collector export rollover`); its own export continues the chain from that copy and its
# commit carries both. Only the period the record began in (RECORD_FIRST_PERIOD, e.g. 2026) may start
# without the one before. Environment: RECORD_PREFIX (default $GITHUB_REPOSITORY), RECORD_FIRST_PERIOD,
# RECORD_MONTHS (default the setting), RECORD_PREVIOUS (the repository before, when the period length
# changed), NOW (default the clock), RECORD_URL_BASE (default https://github.com), PYTHON.
set -euo pipefail
command=${1:?usage: record_repository.sh prepare | checkout DEST | history PARENT}
prefix=${RECORD_PREFIX:-${GITHUB_REPOSITORY:?neither RECORD_PREFIX nor GITHUB_REPOSITORY is set}}
base=${RECORD_URL_BASE:-https://github.com}
python=${PYTHON:-python}
here=$(dirname "$0")
now=(); [[ -n "${NOW:-}" ]] && now=(--now "$NOW")
months=(); [[ -n "${RECORD_MONTHS:-}" ]] && months=(--months "$RECORD_MONTHS")
plan=$("$python" -m collector export repositories --prefix "$prefix" "${months[@]}" "${now[@]}")
label=$(awk '$1 == "label" {print $2}' <<< "$plan")
current=$(awk '$1 == "current" {print $2}' <<< "$plan")
previous=${RECORD_PREVIOUS:-$(awk '$1 == "previous" {print $2}' <<< "$plan")}

exists() {  # 0: the repository exists; 1: GitHub says there is none; anything else stops the job
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
    awk '$1 == "prepare" {print $2}' <<< "$plan" | while read -r name; do
      if ! exists "$name"; then
        gh repo create "$name" --private --add-readme \
          --description "Takedown Watch: the record of ${name##*-} (private; never make it public)"
        echo "created $name"
      fi
      bash "$here/require_private.sh" "$name"
    done
    ;;
  checkout)
    dest=${2:?usage: record_repository.sh checkout DEST}
    if ! exists "$current"; then
      echo "::error::$current does not exist: run the rollover workflow (it makes each year's record repository)" >&2
      exit 1
    fi
    bash "$here/require_private.sh" "$current" >&2
    [[ -n "${GH_TOKEN:-}" ]] && gh auth setup-git
    # Only the newest days are checked out (the tree comes whole, each file's bytes only when checked out):
    # a job needs the files from its cached database's on, whatever the period's age. level_database.sh
    # checks out the rest when the cache is older.
    clone "$current" "$dest" --filter=blob:none --sparse
    mapfile -t days < <(git -C "$dest" ls-tree -r --name-only HEAD \
      | grep -E '^[0-9]{4}/[0-9]{2}/[0-9]{2}/[0-9]{6}\.jsonl(\.bz2)?$' | cut -d/ -f1-3 | sort -u \
      | tail -n "${RECORD_DAYS:-2}" | sed 's|^|/|; s|$|/|')
    today=$(date -u -d "${NOW:-now}" +/%Y/%m/%d/)  # where this job's exports go
    git -C "$dest" sparse-checkout set --no-cone '/*.json' '/*.md' "${days[@]}" "$today"
    due=no
    "$python" -m collector export rollover --check --out "$dest" >&2 && due=yes
    if [[ "$due" == yes ]] && ! exists "$previous" && [[ "${RECORD_FIRST_PERIOD:-}" != "$label" ]]; then
      # A repository the token may not see answers 404 too: starting a second chain here would cut the
      # record in two, so only the period the record began in (TAKEDOWNWATCH_FIRST_PERIOD) starts from nothing.
      echo "::error::$current holds no export file and $previous cannot be seen: give the App access to it, \
or, if the record began in $label, set the repository variable TAKEDOWNWATCH_FIRST_PERIOD to $label" >&2
      exit 1
    fi
    if [[ "$due" == yes ]] && exists "$previous"; then
      last_year=$(mktemp -d)
      clone "$previous" "$last_year" --filter=blob:none --no-checkout
      last=$(git -C "$last_year" ls-tree -r --name-only HEAD \
        | grep -E '^[0-9]{4}/[0-9]{2}/[0-9]{2}/[0-9]{6}\.jsonl(\.bz2)?$' | sort | tail -n 1 || true)
      if [[ -n "$last" ]]; then  # only that one file is fetched
        git -C "$last_year" checkout --quiet HEAD -- "$last"
        "$python" -m collector export rollover --from "$last_year" --out "$dest" --continues "$previous" \
          "${now[@]}" >&2
      fi
      rm -rf -- "$last_year"
    fi
    echo "repository=$current"
    ;;
  history)
    parent=${2:?usage: record_repository.sh history PARENT}
    mkdir -p "$parent"
    name=$current folders=()
    while [[ -n "$name" ]]; do
      dest="$parent/${name##*/}"
      [[ -d "$dest" ]] || clone "$name" "$dest"
      folders=("$dest" "${folders[@]}")
      name=$("$python" -c 'import json, sys
try:
    print(json.load(open(sys.argv[1]))["repository"])
except FileNotFoundError:
    pass' "$dest/CONTINUES.json")
    done
    printf '%s\n' "${folders[@]}"
    ;;
  *)
    echo "usage: record_repository.sh prepare | checkout DEST | history PARENT" >&2
    exit 2
    ;;
esac
