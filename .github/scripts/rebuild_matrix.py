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
import sys

from collect_matrix import matrix, variables

COLLECT_DB = "data/takedownwatch.db"  # collect.yml's working database (archive.yml's follows every stream: none here)
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
    given = variables()  # the collect matrix's repository variables, checked as collect_matrix.py checks them
    if given is None:
        return 1
    print("matrix=" + json.dumps(jobs(*given), separators=(",", ":")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
