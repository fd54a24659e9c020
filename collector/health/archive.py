"""Archive checks: the Save Page Now queue, its oldest capture, today's share of the cap, refusals in a row.

Judged only in a database that holds archive runs (the one that follows every
stream, which the archive job writes): a collect stream's own database never
holds an archive answer.
"""

from __future__ import annotations

from datetime import timedelta

from collector import settings
from collector.clock import iso, parse_instant
from collector.health.checks import FAIL, OK, WARN, Check, Finding, Inputs, grade, hours
from collector.wayback.answers import PERMANENT_EXTS
from collector.wayback.history import midnight

# An answer that refused the submission for the service's own reasons: it says nothing about the address.
_REFUSED = "(a.status IN ('rate_limited', 'failed_request') OR (a.status = 'error' AND a.status_ext IS NULL))"


def has_archive(inputs: Inputs) -> bool:
    """Return True when this database holds an archive run."""
    return inputs.conn.execute("SELECT 1 FROM runs WHERE command = 'archive' LIMIT 1").fetchone() is not None


def _not_judged(check_id: str) -> list[Finding]:
    return [Finding(check_id, None, OK, None, None, "not judged: no archive run in this database")]


def waiting(inputs: Inputs) -> tuple[int, str | None]:
    """Return (captures without a confirmed copy and not refused for good, the oldest one's capture time)."""
    marks = ", ".join("?" for _ in PERMANENT_EXTS)
    row = inputs.conn.execute(f"""
        SELECT COUNT(*), MIN(s.captured_at) FROM snapshots AS s WHERE s.purpose = 'capture' AND s.captured_at <= ?
           AND NOT EXISTS (SELECT 1 FROM archive_submissions AS a WHERE a.snapshot_id = s.id
                           AND ((a.status = 'success' AND a.timestamp IS NOT NULL)
                                OR (a.status = 'error' AND a.status_ext IN ({marks}))))""",
        (iso(inputs.now), *PERMANENT_EXTS)).fetchone()
    return row[0], row[1]


def queue(inputs: Inputs) -> list[Finding]:
    """Return the archive queue's length in days of the daily cap."""
    if not has_archive(inputs):
        return _not_judged("archive-queue")
    count, _ = waiting(inputs)
    days = round(count / settings.SPN_DAILY_CAP_KEYS, 2)
    return [Finding("archive-queue", None, grade(days, settings.HEALTH_ARCHIVE_QUEUE_DAYS), days,
                    settings.HEALTH_ARCHIVE_QUEUE_DAYS,
                    f"{count} captures wait for a confirmed copy: {days} days of the "
                    f"{settings.SPN_DAILY_CAP_KEYS} a day cap")]


def oldest(inputs: Inputs) -> list[Finding]:
    """Return the hours since the oldest capture still without a confirmed copy was made."""
    if not has_archive(inputs):
        return _not_judged("archive-oldest")
    _, first = waiting(inputs)
    value = round(hours(inputs.now, parse_instant(first)), 1) if first else 0.0
    return [Finding("archive-oldest", None, grade(value, settings.HEALTH_ARCHIVE_OLDEST_HOURS), value,
                    settings.HEALTH_ARCHIVE_OLDEST_HOURS,
                    f"oldest capture without a confirmed copy: {first or 'none'} ({value} h)")]


def cap(inputs: Inputs) -> list[Finding]:
    """Return the share of today's (UTC) daily cap already submitted."""
    if not has_archive(inputs):
        return _not_judged("archive-cap")
    count = inputs.conn.execute(
        "SELECT COUNT(*) FROM archive_submissions WHERE kind = 'submit' AND recorded_at >= ? AND recorded_at <= ?",
        (iso(midnight(inputs.now)), iso(inputs.now))).fetchone()[0]
    value = round(count / settings.SPN_DAILY_CAP_KEYS, 3)
    return [Finding("archive-cap", None, grade(value, settings.HEALTH_ARCHIVE_CAP_SHARE), value,
                    settings.HEALTH_ARCHIVE_CAP_SHARE,
                    f"{count} submissions today of a {settings.SPN_DAILY_CAP_KEYS} cap")]


def refusals(inputs: Inputs) -> list[Finding]:
    """Return the submissions refused in a row (429, errors, failed requests) and how long they have lasted."""
    if not has_archive(inputs):
        return _not_judged("archive-refusals")
    rows = inputs.conn.execute(
        f"SELECT {_REFUSED} AS refused, a.recorded_at FROM archive_submissions AS a WHERE a.kind = 'submit' "
        "AND a.recorded_at <= ? ORDER BY a.recorded_at DESC, a.id DESC LIMIT 10000", (iso(inputs.now),)).fetchall()
    streak, since = 0, None
    for row in rows:
        if not row["refused"]:
            break
        streak, since = streak + 1, row["recorded_at"]
    lasted = round(hours(inputs.now, parse_instant(since)), 1) if since else 0.0
    state = OK
    if streak >= settings.HEALTH_ARCHIVE_REFUSALS:
        state = FAIL if lasted >= settings.HEALTH_ARCHIVE_REFUSED_HOURS else WARN
    return [Finding("archive-refusals", None, state, streak,
                    (settings.HEALTH_ARCHIVE_REFUSALS, settings.HEALTH_ARCHIVE_REFUSED_HOURS),
                    f"{streak} submission(s) refused in a row" + (f", since {since} ({lasted} h)" if since else ""))]


CHECKS = [
    Check("archive-queue", "Captures waiting for a confirmed archive copy, in days of the cap", "archive", queue),
    Check("archive-oldest", "Age of the oldest capture without a confirmed copy", "archive", oldest),
    Check("archive-cap", "Share of today's Save Page Now cap used", "archive", cap),
    Check("archive-refusals", "Save Page Now refusals in a row", "archive", refusals),
]
