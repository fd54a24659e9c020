"""Prints a Markdown summary of one run for $GITHUB_STEP_SUMMARY: figures by group, requests by result,
duration and warnings. Groups only, never single outlets, as on the published site.

    python .github/scripts/run_summary.py --db data/takedownwatch.db --command run >> "$GITHUB_STEP_SUMMARY"
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from datetime import datetime
from pathlib import Path

BY_GROUP = """
SELECT g.id AS grp,
  (SELECT COUNT(*) FROM outlets o WHERE o.group_id = g.id AND o.active = 1) AS outlets,
  (SELECT COUNT(*) FROM listings l JOIN outlets o ON o.id = l.outlet_id
     WHERE l.run_id = :run AND o.group_id = g.id) AS listings,
  (SELECT COALESCE(SUM(l.entry_count), 0) FROM listings l JOIN outlets o ON o.id = l.outlet_id
     WHERE l.run_id = :run AND o.group_id = g.id) AS entries,
  (SELECT COUNT(*) FROM capture_queue q JOIN outlets o ON o.id = q.outlet_id
     WHERE q.queued_run = :run AND o.group_id = g.id) AS queued,
  (SELECT COUNT(*) FROM snapshots s JOIN articles a ON a.id = s.article_id JOIN outlets o ON o.id = a.outlet_id
     WHERE s.run_id = :run AND s.purpose = 'capture' AND o.group_id = g.id) AS captured,
  (SELECT COUNT(*) FROM checks c JOIN articles a ON a.id = c.article_id JOIN outlets o ON o.id = a.outlet_id
     WHERE c.run_id = :run AND o.group_id = g.id) AS checks,
  (SELECT COUNT(*) FROM archive_submissions s JOIN snapshots n ON n.id = s.snapshot_id
     JOIN articles a ON a.id = n.article_id JOIN outlets o ON o.id = a.outlet_id
     WHERE s.run_id = :run AND o.group_id = g.id) AS archive_rows
FROM outlet_groups g ORDER BY g.id
"""
COLUMNS = ("outlets", "listings", "entries", "queued", "captured", "checks", "archive_rows")


def _parse(stamp: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else None
    except ValueError:
        return None


def _duration(start: str, end: str | None) -> str:
    a, b = _parse(start), _parse(end)
    if a is None or b is None:
        return "unfinished (no run_finishes row)"
    seconds = int((b - a).total_seconds())
    return f"{seconds // 60} min {seconds % 60} s"


def summary(db: Path, command: str, run_id: int | None = None) -> str:
    """Return the Markdown summary of the run given (default: the latest run of the command)."""
    if not db.exists():
        return f"## {command}\n\nNo database at `{db}`: the run did not get as far as opening it.\n"
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        run = conn.execute("SELECT * FROM runs WHERE (? IS NULL AND command = ?) OR id = ? ORDER BY id DESC LIMIT 1",
                           (run_id, command, run_id)).fetchone()
        if run is None:
            return f"## {command}\n\nNo `{command}` run in the record.\n"
        finish = conn.execute("SELECT * FROM run_finishes WHERE run_id = ?", (run["id"],)).fetchone()
        lines = [f"## {run['command']} run {run['id']}", "",
                 f"Vantage `{run['vantage']}`, started {run['started_at']}, "
                 f"duration {_duration(run['started_at'], finish['finished_at'] if finish else None)}.", "",
                 "### By group", "", "| group | " + " | ".join(COLUMNS) + " |",
                 "|---|" + "---:|" * len(COLUMNS)]
        for row in conn.execute(BY_GROUP, {"run": run["id"]}):
            lines.append(f"| {row['grp']} | " + " | ".join(str(row[c]) for c in COLUMNS) + " |")
        lines += ["", "### Requests by result", "", "| result | requests | not sent |", "|---|---:|---:|"]
        for row in conn.execute("SELECT result, COUNT(*) AS n, SUM(sent = 0) AS unsent FROM requests "
                                "WHERE run_id = ? GROUP BY result ORDER BY n DESC", (run["id"],)):
            lines.append(f"| {row['result']} | {row['n']} | {row['unsent']} |")
        warnings = json.loads(finish["warnings"]) if finish else []
        lines += ["", f"### Warnings ({len(warnings)})", ""]
        lines += [f"- {w}" for w in warnings] or ["None."]
        return "\n".join(lines) + "\n"
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, default=Path("data/takedownwatch.db"))
    parser.add_argument("--command", default="run", help="summarise the latest run of this command")
    parser.add_argument("--run-id", type=int, help="summarise this run instead")
    args = parser.parse_args(argv)
    sys.stdout.write(summary(args.db, args.command, args.run_id))
    return 0


if __name__ == "__main__":
    sys.exit(main())
