"""Prints `matrix=<JSON>` for $GITHUB_OUTPUT: the collect workflow's jobs, one per (vantage, shard).

Repository variables (read from the environment):
  SHARDS      TAKEDOWNWATCH_SHARDS, the number N of shards (default 1): `run --shard K/N`;
  RUNNER      the hosted vantage's runner (TAKEDOWNWATCH_RUNNER, default ubuntu-24.04);
  BD_RUNNER   TAKEDOWNWATCH_BD_RUNNER, the label of a self-hosted runner inside Bangladesh: when set,
              every shard is collected from there too (docs/operating.md, "A runner inside Bangladesh").

Each job writes a record stream of its own (collector/record/streams.py) with its own working
database (cache key prefix `cache`) and concurrency group. Shard 1 of 1 from the hosted runner is the
default stream, the record folder itself, exactly as one job always wrote it (cache record-db-,
group record, shared with the archive and rollover workflows). The vantages take turns at each site
(`run --vantage-slot K/V`), so no site sees more than one request per interval from all of them.

  SHARDS=4 BD_RUNNER=dhaka python3 .github/scripts/collect_matrix.py >> "$GITHUB_OUTPUT"
"""

from __future__ import annotations

import json
import os
import re
import sys


def matrix(shards: int, runner: str, bd_runner: str) -> dict:
    """Return the matrix {"include": [job, ...]}; each job's vantage, runs-on, shard, slot, stream, cache, group."""
    vantages = [("hosted", runner)] + ([("bd", ["self-hosted", bd_runner])] if bd_runner else [])
    jobs = []
    for v, (vantage, runs_on) in enumerate(vantages, start=1):
        for k in range(1, shards + 1):
            stream = "" if vantage == "hosted" and shards == 1 else f"{vantage}-{k}of{shards}"
            jobs.append({"vantage": vantage, "runs-on": runs_on, "shard": f"{k}/{shards}",
                         "slot": f"{v}/{len(vantages)}", "stream": stream,
                         "folder": f"streams/{stream}" if stream else ".",
                         "cache": f"record-stream-{stream}-" if stream else "record-db-",
                         "group": f"record-{stream}" if stream else "record",
                         "first": v == 1 and k == 1})
    return {"include": jobs}


def variables() -> tuple[int, str, str] | None:
    """Return (shards, runner, bd_runner) from the environment, or None after printing why they are wrong."""
    shards = (os.environ.get("SHARDS") or "1").strip()
    bd_runner = (os.environ.get("BD_RUNNER") or "").strip()
    if not re.fullmatch(r"[1-9][0-9]?", shards):
        print(f"::error::TAKEDOWNWATCH_SHARDS is {shards!r}: a whole number from 1 to 99", file=sys.stderr)
        return None
    if bd_runner and not re.fullmatch(r"[A-Za-z0-9_.-]+", bd_runner):
        print(f"::error::TAKEDOWNWATCH_BD_RUNNER is {bd_runner!r}: one runner label", file=sys.stderr)
        return None
    return int(shards), (os.environ.get("RUNNER") or "ubuntu-24.04").strip(), bd_runner


def main() -> int:
    given = variables()
    if given is None:
        return 1
    print("matrix=" + json.dumps(matrix(*given), separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
