"""Prints a Markdown summary of one run for $GITHUB_STEP_SUMMARY: counts by group, requests by result,
duration and how many warnings. GitHub shows a job summary to anyone who can see the run, so it carries
group-level counts only: no outlet id, no address, no warning or exception text (which names sites).
A group of fewer than settings.MIN_OUTLETS_PER_FIGURE monitored outlets is pooled with the other small
groups, and the pool is shown only when it is that large itself, as on the published site.

    python .github/scripts/run_summary.py --db data/takedownwatch.db --command run >> "$GITHUB_STEP_SUMMARY"
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from datetime import datetime
from pathlib import Path

try:
    from collector.settings import MIN_OUTLETS_PER_FIGURE
except ImportError:  # run as a file from the checkout: the project is its root
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from collector.settings import MIN_OUTLETS_PER_FIGURE

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
POOL = "smaller groups"
TOTAL = "all outlets"


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
        for name, values in group_rows(conn, run["id"]):
            lines.append(f"| {name} | " + " | ".join(str(values[c]) for c in COLUMNS) + " |")
        lines += ["", "### Requests by result", "", "| result | requests | not sent |", "|---|---:|---:|"]
        for row in conn.execute("SELECT result, COUNT(*) AS n, SUM(sent = 0) AS unsent FROM requests "
                                "WHERE run_id = ? GROUP BY result ORDER BY n DESC", (run["id"],)):
            lines.append(f"| {row['result']} | {row['n']} | {row['unsent']} |")
        warnings = json.loads(finish["warnings"]) if finish else []
        lines += ["", f"### Warnings: {len(warnings)}", "",
                  "Their text can name a site, so it stays in the record (`run_finishes.warnings`), "
                  "never in this summary." if warnings else "None."]
        return "\n".join(lines) + "\n"
    finally:
        conn.close()


def group_rows(conn: sqlite3.Connection, run_id: int) -> list[tuple[str, dict]]:
    """Return (name, counts) rows: groups large enough to show, the pool of smaller ones, the total.

    A group of fewer than MIN_OUTLETS_PER_FIGURE monitored outlets is never a
    row of its own; the small groups are pooled, and the pool is shown only
    when it reaches the threshold. The total is shown only when nothing is
    held back, so that no row subtracted from it gives the held-back counts.
    """
    groups = [dict(row) for row in conn.execute(BY_GROUP, {"run": run_id})]
    shown = [(g["grp"], g) for g in groups if g["outlets"] >= MIN_OUTLETS_PER_FIGURE]
    small = [g for g in groups if g["outlets"] < MIN_OUTLETS_PER_FIGURE]
    pool = {c: sum(g[c] for g in small) for c in COLUMNS}
    if small and pool["outlets"] >= MIN_OUTLETS_PER_FIGURE:
        shown.append((f"{POOL} ({len(small)})", pool))
    if not small or pool["outlets"] >= MIN_OUTLETS_PER_FIGURE:
        shown.append((TOTAL, {c: sum(g[c] for g in groups) for c in COLUMNS}))
    return shown


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
