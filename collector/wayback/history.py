"""What the archive_submissions rows say: copies confirmed, jobs in flight, attempts, today's refusals.

The archive job keeps no state of its own. What to submit, what to poll and
what to leave alone is derived from the append-only rows, one per submission
and one per status answer, so a run killed at any moment leaves every
recorded job to the next run.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from collector import settings
from collector.clock import iso, parse_instant
from collector.record.store import Store
from collector.wayback import answers

TERMINAL = ("success", "error", "unknown")  # a job with one of these answers is over


def confirmed_snapshot_ids(store: Store) -> set[int]:
    """Return the ids of snapshots with a confirmed copy (a success with a timestamp)."""
    rows = store.query("SELECT DISTINCT snapshot_id FROM archive_submissions "
                       "WHERE status = 'success' AND timestamp IS NOT NULL")
    return {row["snapshot_id"] for row in rows}


@dataclass
class Job:
    """A submission the service accepted and has not finished answering about."""

    snapshot_id: int
    address: str
    job_id: str
    submitted: datetime
    next_poll: float = 0.0  # on the clock's monotonic scale


def jobs_in_flight(store: Store, now: datetime) -> list[Job]:
    """Return accepted jobs with no final answer, submitted within the status window, oldest first."""
    since = iso(now - timedelta(seconds=settings.SPN_POLL_WITHIN_SECONDS))
    rows = store.query(f"""
        SELECT s.snapshot_id, s.url, s.job_id, s.recorded_at FROM archive_submissions s
        WHERE s.kind = 'submit' AND s.status = 'pending' AND s.job_id IS NOT NULL AND s.recorded_at >= ?
          AND NOT EXISTS (SELECT 1 FROM archive_submissions t WHERE t.snapshot_id = s.snapshot_id
                          AND t.job_id = s.job_id AND t.status IN {TERMINAL})
        ORDER BY s.recorded_at, s.id""", (since,))
    return [Job(r["snapshot_id"], r["url"], r["job_id"], parse_instant(r["recorded_at"])) for r in rows]


def attempts_by_snapshot(store: Store) -> dict[int, int]:
    """Return how often each snapshot's address was put to the service and judged."""
    # Rate limits, daily limits, session limits and refused credentials say
    # nothing about the address; nor does a job the service ended because it
    # had captured the address as often as it would that day.
    marks = ", ".join("?" for _ in answers.NOT_THE_ADDRESS)
    today = ", ".join("?" for _ in answers.NOT_TODAY_EXTS)
    rows = store.query(f"""
        SELECT a.snapshot_id, COUNT(*) AS n FROM archive_submissions a
        LEFT JOIN requests r ON r.id = a.request_id
        WHERE a.kind = 'submit' AND a.status != 'rate_limited'
          AND COALESCE(a.status_ext, '') NOT IN ({marks})
          AND COALESCE(r.status_code, 0) NOT IN {answers.AUTH_REFUSED}
          AND NOT EXISTS (SELECT 1 FROM archive_submissions t WHERE t.kind = 'status'
                          AND t.snapshot_id = a.snapshot_id AND t.job_id = a.job_id
                          AND t.status_ext IN ({today}))
        GROUP BY a.snapshot_id""", (*answers.NOT_THE_ADDRESS, *answers.NOT_TODAY_EXTS))
    return {row["snapshot_id"]: row["n"] for row in rows}


@dataclass(frozen=True)
class Today:
    """What the service refused since midnight UTC: addresses for today, and the account for the day."""

    not_today: frozenset[int]  # snapshots whose address the service will capture no more today
    day_over: str | None  # the account's daily-limit answer, when one came


def midnight(now: datetime) -> datetime:
    """Return the start of now's UTC day (the service's day, as our own daily cap counts it)."""
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def refused_today(store: Store, now: datetime) -> Today:
    """Return today's per-address and per-account daily refusals, read from the answers recorded."""
    rows = store.query("SELECT snapshot_id, status_ext, message, service_message FROM archive_submissions "
                       "WHERE recorded_at >= ? AND status IN ('error', 'rate_limited') ORDER BY id",
                       (iso(midnight(now)),))
    not_today, day_over = set(), None
    for row in rows:
        said = " ".join(filter(None, (row["message"], row["service_message"])))
        if row["status_ext"] in answers.NOT_TODAY_EXTS or (
                row["status_ext"] is None and answers.ADDRESS_DAILY_LIMIT.search(said)):
            not_today.add(row["snapshot_id"])
        elif row["status_ext"] in answers.DAY_OVER_EXTS or answers.DAILY_LIMIT.search(said):
            day_over = row["status_ext"] or said
    return Today(frozenset(not_today), day_over)


def candidates(store: Store, now: datetime, limit: int | None = None) -> list[tuple[int, str]]:
    """Return (snapshot id, final address) to submit, newest capture first.

    Newest first: the Archive copies the page as the outlet serves it when the
    Archive fetches it, so the sooner after our capture it does, the likelier its
    copy shows what we captured; after an outage, new captures go out within the
    hour and the backlog drains behind them (bench/archive_queue.py measures both).
    """
    marks = ", ".join("?" for _ in answers.PERMANENT_EXTS)
    rows = store.query(f"""
        SELECT s.id, s.final_url FROM snapshots s WHERE s.purpose = 'capture'
          AND NOT EXISTS (SELECT 1 FROM archive_submissions a WHERE a.snapshot_id = s.id
                          AND ((a.status = 'success' AND a.timestamp IS NOT NULL)
                               OR (a.status = 'error' AND a.status_ext IN ({marks}))))
        ORDER BY s.captured_at DESC, s.id DESC""", answers.PERMANENT_EXTS)
    busy = {job.snapshot_id for job in jobs_in_flight(store, now)} | refused_today(store, now).not_today
    tried = attempts_by_snapshot(store)
    chosen = [(r["id"], r["final_url"]) for r in rows
              if r["id"] not in busy and tried.get(r["id"], 0) < settings.SPN_MAX_ATTEMPTS]
    return chosen[:limit]


def submitted_today(store: Store, now: datetime) -> int:
    """Return the number of submissions recorded since midnight UTC."""
    row = store.one("SELECT COUNT(*) AS n FROM archive_submissions WHERE kind = 'submit' "
                    "AND recorded_at >= ?", (iso(midnight(now)),))
    return row["n"]
