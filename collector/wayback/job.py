"""The archive job: submits captured pages to Save Page Now and confirms their copies.

A separate command, never in capture's way, safe to run at any time and
repeatedly; what it does is derived from the record (history.py).

Time is the job's hard constraint. The service keeps a job's status about an
hour (SPN_POLL_WITHIN_SECONDS); a job not polled to its end by then is lost
and its page captured a second time. So a run:

* polls the jobs an earlier run left pending before it submits anything;
* stops submitting SPN_JOB_SECONDS before its end, the time a job needs to
  finish (spn.sh gives a job 300 s), and spends the rest polling;
* never outlasts --max-wait: every request's timeouts are cut to the time
  left, and no request starts without time for the host's pacing turn.

With keys it first asks the service what the account may do today (GET
/save/status/user): a stated `daily_captures_limit` replaces the fall-back
daily cap, and the service's own `daily_captures` (every capture of the
account today, ours and anyone else's) counts against it; the job keeps
SPN_DAILY_CAP_SHARE of the limit. Submissions start at most `per_minute` a
minute, counted between the starts the service sees (the host's own pacing may
hold a request back; the next waits from when it was really sent).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from collector import settings
from collector.collect.context import RunContext
from collector.wayback import answers, spn
from collector.wayback.history import (
    TERMINAL, Job, candidates, jobs_in_flight, refused_today, submitted_today,
)


def _record(ctx: RunContext, snapshot_id: int, kind: str, address: str, response,
            answer: answers.Answer) -> int:
    """Return the id of the row recording one submission or one status answer."""
    return ctx.store.insert("archive_submissions", {
        "snapshot_id": snapshot_id, "run_id": ctx.run_id, "request_id": response.request_id,
        "kind": kind, "url": address, "recorded_at": ctx.clock.now_iso(), "job_id": answer.job_id,
        "status": answer.status, "status_ext": answer.status_ext, "message": answer.message,
        "timestamp": answer.timestamp, "original_url": answer.original_url,
        "archive_url": answer.archive_url, "service_message": answer.service_message,
    })


@dataclass
class Limits:
    """How hard one run may lean on the service, and how long it may take."""

    per_minute: float
    daily_cap: int
    poll_seconds: float = settings.SPN_POLL_SECONDS
    max_wait: float = settings.SPN_RUN_SECONDS
    limit: int | None = None

    @property
    def reserve(self) -> float:
        """Return the seconds at the end of a run kept for polling (half of a run shorter than two jobs)."""
        return min(settings.SPN_JOB_SECONDS, self.max_wait / 2)


class ArchiveRun:
    """Submits, polls and records, interleaved, until nothing is left or time is up."""

    def __init__(self, ctx: RunContext, base_url: str, keys: spn.Keys | None, limits: Limits):
        self.ctx, self.base_url, self.keys, self.limits = ctx, base_url, keys, limits
        self.clock = ctx.clock
        now = self.clock.now()
        self.jobs = jobs_in_flight(ctx.store, now)  # an earlier run's jobs, oldest first
        self.resumed = {job.job_id for job in self.jobs}  # polled before anything is submitted
        self.queue = candidates(ctx.store, now, limits.limit)
        self.today = submitted_today(ctx.store, now)
        self.next_submit = self.clock.monotonic()
        self.deadline = self.next_submit + limits.max_wait
        self.submit_until = self.deadline - limits.reserve
        self.refusals = 0  # consecutive rate limits: the exponent of the back-off
        self.daily_cap = limits.daily_cap  # until the service states the account's own
        self.stated: answers.UserStatus | None = None  # what /save/status/user said at the start
        self.stopped: str | None = None  # why the run ended early
        self.closed: str | None = None  # why it stopped submitting (jobs are still polled)
        self.credentials_refused = False
        earlier = refused_today(ctx.store, now).day_over
        if earlier:
            self._close(f"the account's daily limit was reached earlier today: {earlier}")

    def run(self) -> dict:
        """Return the run's counts once every job is answered, the run stopped, or time is up."""
        self.ctx.count("archive_resumed", len(self.jobs))
        if self.keys is not None and self.closed is None:
            self._read_account()
        while self.stopped is None:
            now = self.clock.monotonic()
            if now >= self.deadline:
                break
            if self.queue and self._may_submit(now):
                self._submit(*self.queue.pop(0))
                continue
            due = [job for job in self.jobs if job.next_poll <= now]
            if due and self._poll_fits(now):
                self._poll(min(due, key=lambda job: job.next_poll))
                continue
            if due:  # the polls wait for the submission due first
                self.clock.sleep(min(self.next_submit, self.submit_until, self.deadline) - now)
                continue
            wake = self._next_wake()
            if wake is None:
                break
            self.clock.sleep(min(wake, self.deadline) - now)
        self.ctx.counts["archive_left_pending"] = len(self.jobs)
        return self.ctx.counts

    def _poll_fits(self, now: float) -> bool:
        """Return True unless a poll now would hold the next submission back past its time.

        Every request to the service waits its turn (one interval apart); a poll
        taken just before a submission is due would delay it, and at 10 a minute
        such delays add up to whole submissions a run. Polls fill the gaps; a
        job polled later is likelier to be over.
        """
        if not self.queue or self.resumed or now >= self.submit_until:
            return True
        host = urlsplit(self.base_url).netloc.lower()
        step = self.ctx.fetcher.interval + settings.PACING_SAFETY_SECONDS
        last = self.ctx.fetcher.pacer.last_start(host)
        starts = max(now, last + step) if last is not None else now
        return starts + step <= self.next_submit

    def _may_submit(self, now: float) -> bool:
        if self.resumed:
            return False
        if now >= self.submit_until:
            self._close(f"stopped submitting {self.limits.reserve:g} s before the run's end "
                        "to poll the last jobs to their end")
            return False
        if self.today >= self.daily_cap:
            self._close(f"daily cap of {self.daily_cap} submissions reached")
            return False
        return now >= self.next_submit

    def _read_account(self) -> None:
        """Take the account's daily limit and today's captures from the service, where it states them."""
        timeouts = self._timeouts()
        if timeouts is None:
            return
        _response, stated = spn.user_status(self.ctx.fetcher, self.base_url, self.keys, timeouts)
        self.stated = stated
        if stated is None:
            self.ctx.warnings.append(f"the service stated no account status: daily cap {self.daily_cap} assumed")
            return
        if stated.daily_captures_limit is not None:
            self.daily_cap = int(stated.daily_captures_limit * settings.SPN_DAILY_CAP_SHARE)
            self.ctx.counts["archive_account_daily_limit"] = stated.daily_captures_limit
        if stated.daily_captures is not None:
            # Every capture of the account today, ours among them: the larger count is the true floor.
            self.today = max(self.today, stated.daily_captures)
            self.ctx.counts["archive_account_daily_captures"] = stated.daily_captures
        if stated.available is not None:
            self.ctx.counts["archive_account_sessions_available"] = stated.available

    def _next_wake(self) -> float | None:
        times = [job.next_poll for job in self.jobs]
        if self.queue and not self.resumed:
            # At submit_until the queue is closed, whatever a back-off said.
            times.append(min(self.next_submit, self.submit_until))
        return min(times) if times else None

    def _timeouts(self) -> spn.Timeouts | None:
        """Return (connect, read, total) limits that end a request before the deadline, or None."""
        # The host's pacing turn comes before the request and may take an interval.
        left = self.deadline - self.clock.monotonic() - self.ctx.fetcher.interval
        if left <= 0:
            return None
        # connect + total bounds the request (the total is counted once connected).
        return left / 2, left / 2, left / 2

    def _submit(self, snapshot_id: int, address: str) -> None:
        timeouts = self._timeouts()
        if timeouts is None:
            self.queue.insert(0, (snapshot_id, address))
            self._close("no time left for another submission")
            return
        asked = self.clock.monotonic()
        response, answer = spn.submit(self.ctx.fetcher, self.base_url, address, self.keys, timeouts)
        # Paced from when the request was really sent (the host's turn may have held it back), so
        # the starts the service sees are never closer than the rate, and a slow answer costs none.
        sent = self.ctx.fetcher.pacer.last_start(urlsplit(self.base_url).netloc.lower())
        self.next_submit = max(asked, sent or asked) + 60.0 / self.limits.per_minute
        _record(self.ctx, snapshot_id, "submit", address, response, answer)
        self.today += 1
        self.ctx.count(f"archive_submit_{answer.status}")
        if answer.effect == answers.PENDING:
            self.refusals = 0
            job = Job(snapshot_id, address, answer.job_id, self.clock.now())
            job.next_poll = self.clock.monotonic() + self.limits.poll_seconds
            self.jobs.append(job)
        elif answer.effect == answers.BACKOFF:
            self.queue.insert(0, (snapshot_id, address))  # refused for load, not for the address
            self._back_off(answer)
        else:
            self._settle(answer)

    def _poll(self, job: Job) -> None:
        self.resumed.discard(job.job_id)
        timeouts = self._timeouts()
        if timeouts is None:
            job.next_poll = self.deadline  # left to the next run
            return
        age = (self.clock.now() - job.submitted).total_seconds()
        expired = age > settings.SPN_POLL_WITHIN_SECONDS
        response, answer = spn.status(self.ctx.fetcher, self.base_url, job.job_id, self.keys, expired,
                                      timeouts)
        _record(self.ctx, job.snapshot_id, "status", job.address, response, answer)
        self.ctx.count(f"archive_status_{answer.status}")
        if answer.status in TERMINAL or expired:
            # Past the window a non-final answer can never become final.
            self.jobs.remove(job)
        else:
            job.next_poll = self.clock.monotonic() + self.limits.poll_seconds
        if answer.effect == answers.BACKOFF:
            self._back_off(answer)
        else:
            self._settle(answer)

    def _settle(self, answer: answers.Answer) -> None:
        """Act on an answer that is not a rate limit: reset the back-off, close the day, or stop."""
        if answer.status != "failed_request":
            self.refusals = 0
        if answer.effect == answers.DAY_OVER:
            self._close(f"the account's daily limit: {answer.message or answer.status_ext}")
        elif answer.effect == answers.NOT_TODAY:
            self.ctx.count("archive_not_today")
        elif answer.effect == answers.STOP:
            self.credentials_refused = answer.credentials_refused
            self._stop(f"the service refused us: {answer.status_ext or answer.message}")

    def _back_off(self, answer: answers.Answer) -> None:
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
        if self.closed is None:
            self.closed = reason
            self.ctx.warnings.append(reason)
        self.queue.clear()

    def _stop(self, reason: str) -> None:
        self.stopped = reason
        self.ctx.warnings.append(reason)

