"""The archive job: submits captured pages to Save Page Now and confirms their copies.

A separate command, never in capture's way, safe to run at any time and
repeatedly. It keeps no state of its own: what to submit, what to poll and
what to leave alone is derived from the append-only `archive_submissions`
rows, one per submission and one per status answer. A run killed at any
moment leaves every recorded job to be polled by the next run.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from collector import settings
from collector.wayback import spn
from collector.clock import iso, parse_instant
from collector.collect.context import RunContext
from collector.record.store import Store

TERMINAL = ("success", "error", "unknown")  # a job with one of these answers is over


# -- what the record says ----------------------------------------------------

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
    """Return accepted jobs with no final answer, submitted within the status window."""
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
    # Rate limits, session limits and refused credentials say nothing about the address.
    marks = ", ".join("?" for _ in spn.NOT_THE_ADDRESS)
    rows = store.query(f"""
        SELECT a.snapshot_id, COUNT(*) AS n FROM archive_submissions a
        LEFT JOIN requests r ON r.id = a.request_id
        WHERE a.kind = 'submit' AND a.status != 'rate_limited'
          AND COALESCE(a.status_ext, '') NOT IN ({marks})
          AND COALESCE(r.status_code, 0) NOT IN {spn.AUTH_REFUSED}
        GROUP BY a.snapshot_id""", spn.NOT_THE_ADDRESS)
    return {row["snapshot_id"]: row["n"] for row in rows}


def candidates(store: Store, now: datetime, limit: int | None = None) -> list[tuple[int, str]]:
    """Return (snapshot id, final address) to submit, oldest capture first."""
    marks = ", ".join("?" for _ in spn.PERMANENT_EXTS)
    rows = store.query(f"""
        SELECT s.id, s.final_url FROM snapshots s WHERE s.purpose = 'capture'
          AND NOT EXISTS (SELECT 1 FROM archive_submissions a WHERE a.snapshot_id = s.id
                          AND ((a.status = 'success' AND a.timestamp IS NOT NULL)
                               OR (a.status = 'error' AND a.status_ext IN ({marks}))))
        ORDER BY s.captured_at, s.id""", spn.PERMANENT_EXTS)
    busy = {job.snapshot_id for job in jobs_in_flight(store, now)}
    tried = attempts_by_snapshot(store)
    chosen = [(r["id"], r["final_url"]) for r in rows
              if r["id"] not in busy and tried.get(r["id"], 0) < settings.SPN_MAX_ATTEMPTS]
    return chosen[:limit]


def submitted_today(store: Store, now: datetime) -> int:
    """Return the number of submissions recorded since midnight UTC."""
    midnight = iso(now.replace(hour=0, minute=0, second=0, microsecond=0))
    row = store.one("SELECT COUNT(*) AS n FROM archive_submissions WHERE kind = 'submit' "
                    "AND recorded_at >= ?", (midnight,))
    return row["n"]


def _record(ctx: RunContext, snapshot_id: int, kind: str, address: str, response, answer: spn.Answer) -> int:
    """Return the id of the row recording one submission or one status answer."""
    return ctx.store.insert("archive_submissions", {
        "snapshot_id": snapshot_id, "run_id": ctx.run_id, "request_id": response.request_id,
        "kind": kind, "url": address, "recorded_at": ctx.clock.now_iso(), "job_id": answer.job_id,
        "status": answer.status, "status_ext": answer.status_ext, "message": answer.message,
        "timestamp": answer.timestamp, "original_url": answer.original_url,
        "archive_url": answer.archive_url,
    })


# -- one run -----------------------------------------------------------------

@dataclass
class Limits:
    """How hard one run may lean on the service."""

    per_minute: float
    daily_cap: int
    poll_seconds: float = settings.SPN_POLL_SECONDS
    max_wait: float = settings.SPN_RUN_SECONDS
    limit: int | None = None


class ArchiveRun:
    """Submits, polls and records, interleaved, until nothing is left or time is up."""

    def __init__(self, ctx: RunContext, base_url: str, keys: spn.Keys | None, limits: Limits):
        self.ctx, self.base_url, self.keys, self.limits = ctx, base_url, keys, limits
        self.clock = ctx.clock
        now = self.clock.now()
        self.jobs = jobs_in_flight(ctx.store, now)  # an earlier run's jobs, polled first
        self.queue = candidates(ctx.store, now, limits.limit)
        self.today = submitted_today(ctx.store, now)
        self.next_submit = self.clock.monotonic()
        self.refusals = 0  # consecutive rate limits: the exponent of the back-off
        self.stopped: str | None = None
        self.unauthorized = False

    def run(self) -> dict:
        """Return the run's counts once every job is answered, the run stopped, or time is up."""
        self.ctx.count("archive_resumed", len(self.jobs))
        deadline = self.clock.monotonic() + self.limits.max_wait
        while self.stopped is None:
            now = self.clock.monotonic()
            if now >= deadline:
                break
            if self.queue and self._may_submit(now):
                self._submit(*self.queue.pop(0))
                continue
            due = [job for job in self.jobs if job.next_poll <= now]
            if due:
                self._poll(min(due, key=lambda job: job.next_poll))
                continue
            wake = self._next_wake()
            if wake is None:
                break
            self.clock.sleep(min(wake, deadline) - now)
        self.ctx.counts["archive_left_pending"] = len(self.jobs)
        return self.ctx.counts

    def _may_submit(self, now: float) -> bool:
        if self.today >= self.limits.daily_cap:
            self._close(f"daily cap of {self.limits.daily_cap} submissions reached")
            return False
        return now >= self.next_submit

    def _next_wake(self) -> float | None:
        times = [job.next_poll for job in self.jobs]
        if self.queue:
            times.append(self.next_submit)
        return min(times) if times else None

    def _submit(self, snapshot_id: int, address: str) -> None:
        response, answer = spn.submit(self.ctx.fetcher, self.base_url, address, self.keys)
        # Paced from the end of one submission, so the starts are never closer than the rate.
        self.next_submit = self.clock.monotonic() + 60.0 / self.limits.per_minute
        _record(self.ctx, snapshot_id, "submit", address, response, answer)
        self.today += 1
        self.ctx.count(f"archive_submit_{answer.status}")
        if answer.effect == spn.PENDING:
            self.refusals = 0
            job = Job(snapshot_id, address, answer.job_id, self.clock.now())
            job.next_poll = self.clock.monotonic() + self.limits.poll_seconds
            self.jobs.append(job)
        elif answer.effect == spn.BACKOFF:
            self.queue.insert(0, (snapshot_id, address))  # refused for load, not for the address
            self._back_off(answer)
        else:
            self._settle(answer)

    def _poll(self, job: Job) -> None:
        age = (self.clock.now() - job.submitted).total_seconds()
        expired = age > settings.SPN_POLL_WITHIN_SECONDS
        response, answer = spn.status(self.ctx.fetcher, self.base_url, job.job_id, self.keys, expired)
        _record(self.ctx, job.snapshot_id, "status", job.address, response, answer)
        self.ctx.count(f"archive_status_{answer.status}")
        if answer.status in TERMINAL or expired:
            # Past the window a non-final answer can never become final.
            self.jobs.remove(job)
        else:
            job.next_poll = self.clock.monotonic() + self.limits.poll_seconds
        if answer.effect == spn.BACKOFF:
            self._back_off(answer)
        else:
            self._settle(answer)

    def _settle(self, answer: spn.Answer) -> None:
        """Act on an answer that is not a rate limit: reset the back-off, or stop the run."""
        if answer.status != "failed_request":
            self.refusals = 0
        if answer.effect == spn.STOP:
            self.unauthorized = answer.credentials_refused
            self._stop(f"the service refused us: {answer.status_ext or answer.message}")

    def _back_off(self, answer: spn.Answer) -> None:
        """Wait longer after each consecutive refusal; give the run up after too many."""
        self.refusals += 1
        if self.refusals > settings.SPN_MAX_BACKOFFS:
            self._stop(f"rate limited {self.refusals} times in a row: {answer.message}")
            return
        wait = max(answer.retry_after or 0.0, settings.SPN_BACKOFF_SECONDS * 2 ** (self.refusals - 1))
        until = self.clock.monotonic() + wait
        self.next_submit = max(self.next_submit, until)
        for job in self.jobs:
            job.next_poll = max(job.next_poll, until)
        self.ctx.count("archive_backoff_seconds", int(wait))

    def _close(self, reason: str) -> None:
        """Stop submitting for this run; jobs already accepted are still polled."""
        if self.queue:
            self.ctx.warnings.append(reason)
            self.queue.clear()

    def _stop(self, reason: str) -> None:
        self.stopped = reason
        self.ctx.warnings.append(reason)
