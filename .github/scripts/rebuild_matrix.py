"""Prints `matrix=<JSON>` for $GITHUB_OUTPUT: rebuild-database.yml's jobs, one per record stream with a database.

Every stream a workflow writes from a working database of its own: the collect matrix's (collect_matrix.py,
from the same repository variables SHARDS, RUNNER and BD_RUNNER), and each of WRITERS below, the streams
other workflows write (vantages.yml's `vantages`, which runs only when a second vantage is configured).
Each job names the stream, its folder inside a record repository, the cache key prefix and database path
its workflow restores (`db`), its concurrency group and the runner it runs on.

  SHARDS=4 BD_RUNNER=dhaka python3 .github/scripts/rebuild_matrix.py >> "$GITHUB_OUTPUT"
"""

from __future__ import annotations

import json
import os
import re
import sys

from collect_matrix import matrix

COLLECT_DB = "data/takedownwatch.db"  # collect.yml's (and archive.yml's) working database
# (stream, its workflow's database path, needs a second vantage): keep in step with those workflows.
WRITERS = (("vantages", "data/vantages.db", True),)


def jobs(shards: int, runner: str, bd_runner: str) -> dict:
    """Return the matrix {"include": [job, ...]}: collect's jobs with their database, then the other writers."""
    found = [dict(job, db=COLLECT_DB) for job in matrix(shards, runner, bd_runner)["include"]]
    for stream, db, second_vantage in WRITERS:
        if bd_runner or not second_vantage:
            found.append({"stream": stream, "folder": f"streams/{stream}", "cache": f"record-stream-{stream}-",
                          "group": f"record-{stream}", "runs-on": runner, "db": db})
    return {"include": found}


def main() -> int:
    shards = (os.environ.get("SHARDS") or "1").strip()
    bd_runner = (os.environ.get("BD_RUNNER") or "").strip()
    if not re.fullmatch(r"[1-9][0-9]?", shards):
        print(f"::error::TAKEDOWNWATCH_SHARDS is {shards!r}: a whole number from 1 to 99", file=sys.stderr)
        return 1
    if bd_runner and not re.fullmatch(r"[A-Za-z0-9_.-]+", bd_runner):
        print(f"::error::TAKEDOWNWATCH_BD_RUNNER is {bd_runner!r}: one runner label", file=sys.stderr)
        return 1
    found = jobs(int(shards), (os.environ.get("RUNNER") or "ubuntu-24.04").strip(), bd_runner)
    print("matrix=" + json.dumps(found, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
