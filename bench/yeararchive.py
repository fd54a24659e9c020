"""The year's archive figures: the queue of captures waiting for a copy over time, and how soon copies came.

Read from the full database rebuilt from the pushed record, as the health
checks read it (collector/health/archive.py): a capture waits from its
snapshot's captured_at until Save Page Now's first answer of success with a
timestamp is recorded for it (a confirmed copy), or until an answer refuses
the address for good (a permanent error: it leaves the queue without a copy).
"""

from __future__ import annotations

import sqlite3
import statistics
from datetime import datetime, timedelta

from collector.clock import parse_instant
from collector.wayback.answers import PERMANENT_EXTS

WITHIN = {"1h": timedelta(hours=1), "24h": timedelta(hours=24)}


def captures(db) -> list[tuple[datetime, datetime | None, datetime | None]]:
    """Return (captured, first confirmed copy or None, refused for good or None) of every capture snapshot."""
    marks = ", ".join("?" for _ in PERMANENT_EXTS)
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute(f"""
            SELECT s.captured_at,
                   (SELECT MIN(a.recorded_at) FROM archive_submissions AS a WHERE a.snapshot_id = s.id
                       AND a.status = 'success' AND a.timestamp IS NOT NULL),
                   (SELECT MIN(a.recorded_at) FROM archive_submissions AS a WHERE a.snapshot_id = s.id
                       AND a.status = 'error' AND a.status_ext IN ({marks}))
            FROM snapshots AS s WHERE s.purpose = 'capture'""", PERMANENT_EXTS).fetchall()
    finally:
        conn.close()
    return [tuple(parse_instant(v) if v else None for v in row) for row in rows]


def queue_at(found, when: datetime) -> int:
    """Return how many captures made by `when` had neither a confirmed copy nor a refusal for good by then."""
    return sum(1 for made, copied, refused in found
               if made <= when and not (copied and copied <= when) and not (refused and refused <= when))


def archive_figures(db, instants: list[datetime], end: datetime) -> dict:
    """Return the queue at each instant (the archive runs' starts) and the shares copied within 1 and 24 hours.

    A share counts only the captures made at least that long before `end`:
    a later one has not had the time yet, and would count against the archive.
    """
    found = captures(db)
    series = [(when, queue_at(found, when)) for when in instants]
    lengths = [n for _, n in series] or [0]
    shares = {}
    for name, span in WITHIN.items():
        eligible = [(made, copied) for made, copied, _ in found if made <= end - span]
        copied = sum(1 for made, copy in eligible if copy and copy - made <= span)
        shares[name] = {"captures": len(eligible), "copied": copied,
                        "share": round(copied / len(eligible), 4) if eligible else None}
    days: dict[str, int] = {}
    for when, n in series:
        days[f"{when:%Y-%m-%d}"] = max(n, days.get(f"{when:%Y-%m-%d}", 0))
    peak = max(series, key=lambda s: s[1], default=(None, 0))
    return {"captures": len(found), "never_copied": sum(1 for _, c, r in found if c is None and r is None),
            "refused_for_good": sum(1 for _, c, r in found if c is None and r is not None),
            "queue_median": statistics.median(lengths), "queue_max": peak[1],
            "queue_max_at": peak[0].isoformat() if peak[0] else None, "queue_end": lengths[-1],
            "queue_daily_max": days, "queue": [(w.isoformat(), n) for w, n in series], "within": shares}


def report(a: dict) -> None:
    """Print the archive figures."""
    shares = ", ".join(f"{name} {s['copied']} of {s['captures']}"
                       + (f" ({s['share']:.1%})" if s["share"] is not None else "") for name, s in a["within"].items())
    print(f"archive: {a['captures']} captures; with a confirmed copy within {shares}; never copied "
          f"{a['never_copied']}, refused for good {a['refused_for_good']}")
    print(f"  queue waiting for a copy at the start of each archive run: median {a['queue_median']:g}, "
          f"max {a['queue_max']} (at {a['queue_max_at']}), at the last run {a['queue_end']}")
    print("  its largest each day: " + ", ".join(f"{day[5:]} {n}" for day, n in a["queue_daily_max"].items()))
