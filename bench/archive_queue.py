"""The archive job's queue over simulated days: its length, the delay to a confirmed copy, an outage's backlog.

    .venv/bin/python bench/archive_queue.py                          # 40 outlets x 100 a day, 3 days, 12 h outage
    .venv/bin/python bench/archive_queue.py --outlets 100 --days 2 --outage-hours 0
    .venv/bin/python bench/archive_queue.py --json queue.json

The archive job itself (collector/wayback/job.py: ArchiveRun, its queue,
pacing, back-offs and daily cap) runs against the loopback Save Page Now
(testing/fake_spn.py) on one virtual clock, so hours of the real pace cost
seconds: submissions at settings.SPN_CAPTURES_PER_MINUTE_KEYS, every request
to the service 2 s apart (settings.MIN_INTERVAL_SECONDS), polls every
settings.SPN_POLL_SECONDS. The fake enforces the documented 12 captures a
minute with a 429 and counts every submission's time; each capture takes
--capture-seconds at the service.

Captures arrive as the collect job makes them: at each of collect.yml's
scheduled minutes (a few minutes late), outlets x per-day / (runs a day) new
captured pages. Archive runs start on archive.yml's schedule, a few minutes
late, after --setup-minutes of set-up, and last until the workflow's deadline
or settings.SPN_RUN_SECONDS, whichever comes first. During the outage no
archive run happens (the job, the runner or the service down); captures go on
arriving.

Printed: the queue (captured pages without a confirmed copy) at every run's
start, the share of captures with a confirmed copy within 1 and
24 hours of their capture (all of them, and those captured during the
outage), the hours from the outage's end until the queue is back to one
hour's load, the most submissions the service saw in any minute and any 429
it answered.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

from runner import DEADLINE_MINUTES
from year import cron

from collector import settings
from collector.clock import Clock, iso, parse_instant
from collector.collect.context import RunContext
from collector.record.store import Store
from collector.wayback import spn
from collector.wayback.job import ArchiveRun, Limits
from testing.fake_spn import FakeSPN
from testing.farm import Farm

START = datetime(2026, 9, 1, tzinfo=timezone.utc)
KEYS = spn.Keys("queue-access", "queue-secret")


class SimClock(Clock):
    """One virtual timeline for the whole simulation: sleeps pass at once, requests take no time."""

    def __init__(self, start: datetime = START):
        super().__init__(start)
        self.t = 0.0

    def now(self) -> datetime:
        return START + timedelta(seconds=self.t)

    def monotonic(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.t += seconds

    def at(self, when: datetime) -> None:
        """Move the timeline to `when` (never back)."""
        self.t = max(self.t, (when - START).total_seconds())


def arrivals(hours: int, outlets: int, per_day: int, rng: random.Random) -> list[datetime]:
    """Return the instants of every captured page, collect.yml's runs spreading the day's load."""
    minutes, every = cron("collect.yml")
    runs_a_day = len(minutes) * 24 // every
    share, owed, out = outlets * per_day / runs_a_day, 0.0, []
    for hour in range(0, hours, every):
        for minute in minutes:
            at = START + timedelta(hours=hour, minutes=minute, seconds=rng.uniform(60, 300))
            owed += share
            out += [at + timedelta(seconds=n) for n in range(int(owed))]
            owed -= int(owed)
    return out


def archive_starts(hours: int, rng: random.Random, setup_minutes: float) -> list[tuple[datetime, float]]:
    """Return (when the archive run itself starts, its bound in seconds) for each scheduled job."""
    minutes, every = cron("archive.yml")
    starts = []
    for hour in range(0, hours, every):
        for minute in minutes:
            job = START + timedelta(hours=hour, minutes=minute, seconds=rng.uniform(60, 300))
            left = DEADLINE_MINUTES["archive"] * 60 - setup_minutes * 60
            starts.append((job + timedelta(minutes=setup_minutes), min(settings.SPN_RUN_SECONDS, left)))
    return starts


def simulate(folder: Path, *, hours: int, outlets: int, per_day: int, outage: tuple[float, float] | None,
             per_minute: float = settings.SPN_CAPTURES_PER_MINUTE_KEYS, capture_seconds: float = 30.0,
             setup_minutes: float = 3.0, seed: int = 7) -> dict:
    """Return the queue, the delays to a confirmed copy and the backlog's drain of one simulated span.

    `outage` is (start, end) in hours from the start: no archive run starts within it.
    """
    rng = random.Random(seed)
    clock = SimClock()
    store = Store(folder / "queue.db")
    pending = sorted(arrivals(hours, outlets, per_day, rng))
    runs = archive_starts(hours, rng, setup_minutes)
    samples, hourly_load = [], outlets * per_day / 24
    with Farm() as farm:
        fake = FakeSPN(farm, per_minute=settings.SPN_CAPTURES_PER_MINUTE_DOCUMENTED_KEYS, clock=clock.monotonic,
                       capture_seconds=capture_seconds)
        capture_run = store.insert("runs", {"command": "run", "started_at": iso(START), "vantage": "v",
                                            "software_version": "0", "settings": {}})
        for n, (begin, bound) in enumerate(runs):
            while pending and pending[0] <= begin:
                _capture(store, capture_run, pending.pop(0), len(pending))
            hour = (begin - START).total_seconds() / 3600
            if outage and outage[0] <= hour < outage[1]:
                samples.append((hour, _queue(store), "outage"))
                continue
            if begin.date() != (runs[n - 1][0].date() if n else begin.date()):
                fake.new_day()
            clock.at(begin)
            samples.append((hour, _queue(store), "run"))
            ctx = RunContext.open(store, "archive", clock=clock, vantage="sim", warc_dir=folder / "warc",
                                  interval=settings.MIN_INTERVAL_SECONDS, allow_loopback=True)
            job = ArchiveRun(ctx, fake.base, KEYS, Limits(per_minute, settings.SPN_DAILY_CAP_KEYS,
                                                          settings.SPN_POLL_SECONDS, bound))
            job.run()
            ctx.finish()
            ctx.warc.close()
        for at in pending:
            _capture(store, capture_run, at, 0)
        rate_limited = sum(1 for s in fake.submissions if s.job_id is None)
        most = fake.most_in_a_minute()
    delays = _delays(store)
    store.close()
    return _figures(samples, delays, hours, outage, hourly_load, most, rate_limited, len(fake.submissions))


def _capture(store: Store, run: int, at: datetime, n: int) -> None:
    url = f"https://outlet{n % 97}.example/ok/{iso(at)}-{n}"
    when = iso(at)
    request = store.insert("requests", {"run_id": run, "purpose": "capture", "method": "GET", "url": url,
                                        "attempt": 1, "sent": 1, "started_at": when, "finished_at": when,
                                        "result": "ok", "vantage": "v"})
    article = store.insert("articles", {"outlet_id": "o", "url_key": url, "url": url, "first_seen_at": when,
                                        "first_seen_run": run})
    store.insert("snapshots", {"article_id": article, "request_id": request, "run_id": run, "purpose": "capture",
                               "captured_at": when, "status_code": 200, "final_url": url, "text": "t",
                               "html_sha256": "0" * 64, "warc_file": "f", "warc_offset": 0, "warc_length": 1,
                               "extractor": "x", "extractor_info": "{}"})


def _queue(store: Store) -> int:
    """Return the captured pages without a confirmed copy (every page of the simulation can be archived)."""
    return store.one("""SELECT COUNT(*) AS n FROM snapshots s WHERE s.purpose = 'capture' AND NOT EXISTS
                        (SELECT 1 FROM archive_submissions a WHERE a.snapshot_id = s.id
                         AND a.status = 'success' AND a.timestamp IS NOT NULL)""")["n"]


def _delays(store: Store) -> list[tuple[datetime, float | None]]:
    """Return (captured at, hours to its first confirmed copy or None) for every captured page."""
    rows = store.query("""SELECT s.captured_at, MIN(a.recorded_at) AS confirmed FROM snapshots s
                          LEFT JOIN archive_submissions a ON a.snapshot_id = s.id AND a.status = 'success'
                               AND a.timestamp IS NOT NULL
                          WHERE s.purpose = 'capture' GROUP BY s.id""")
    out = []
    for row in rows:
        at = parse_instant(row["captured_at"])
        done = parse_instant(row["confirmed"]) if row["confirmed"] else None
        out.append((at, (done - at).total_seconds() / 3600 if done else None))
    return out


def _share(delays, within: float) -> float:
    return round(sum(1 for _at, h in delays if h is not None and h <= within) / max(1, len(delays)), 4)


def _figures(samples, delays, hours, outage, hourly_load, most, rate_limited, submissions) -> dict:
    # Only captures with 24 hours after them inside the span are judged against 24 hours.
    judged = [(at, h) for at, h in delays if at <= START + timedelta(hours=hours - 24)] or delays
    figures = {"hours": hours, "captures": len(delays), "submissions": submissions,
               "load_per_hour": round(hourly_load, 1),
               "copy_within_1h": _share(delays, 1.0), "copy_within_24h": _share(judged, 24.0),
               "most_submissions_in_a_minute": most, "rate_limited_submissions": rate_limited,
               "queue": [{"hour": round(h, 2), "queue": q, "state": state} for h, q, state in samples]}
    if outage:
        during = [(at, h) for at, h in judged if outage[0] <= (at - START).total_seconds() / 3600 < outage[1]]
        figures["outage_hours"] = outage
        figures["outage_copy_within_1h"] = _share(during, 1.0)
        figures["outage_copy_within_24h"] = _share(during, 24.0)
        figures["backlog_peak"] = max((q for h, q, _ in samples if h >= outage[0]), default=0)
        # The backlog is drained when a run starts with no more than an hour's load waiting.
        drained = next((h for h, q, state in samples if h >= outage[1] and state == "run" and q <= hourly_load),
                       None)
        figures["backlog_drained_after_hours"] = round(drained - outage[1], 2) if drained is not None else None
    return figures


def report(f: dict) -> None:
    print(f"{f['hours']} h, {f['captures']} captures ({f['load_per_hour']} an hour), {f['submissions']} submissions")
    print("queue at each archive run's start (hour: pages waiting):")
    print("  " + ", ".join(f"{s['hour']:.0f}: {s['queue']}{' (outage)' if s['state'] == 'outage' else ''}"
                           for s in f["queue"]))
    print(f"confirmed copy within 1 h: {f['copy_within_1h']:.1%}; within 24 h: {f['copy_within_24h']:.1%}")
    if "outage_hours" in f:
        start, end = f["outage_hours"]
        print(f"outage from hour {start:g} to {end:g}: backlog at most {f['backlog_peak']}, drained "
              f"{f['backlog_drained_after_hours']} h after the outage ended; its captures: copy within 1 h "
              f"{f['outage_copy_within_1h']:.1%}, within 24 h {f['outage_copy_within_24h']:.1%}")
    print(f"most submissions the service saw in any minute: {f['most_submissions_in_a_minute']} (documented limit "
          f"{settings.SPN_CAPTURES_PER_MINUTE_DOCUMENTED_KEYS}); submissions refused for rate: "
          f"{f['rate_limited_submissions']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=float, default=3.0)
    parser.add_argument("--outlets", type=int, default=40)
    parser.add_argument("--per-day", type=int, default=100)
    parser.add_argument("--outage-at", type=float, default=12.0, help="hour at which the outage starts")
    parser.add_argument("--outage-hours", type=float, default=12.0, help="0: no outage")
    parser.add_argument("--capture-seconds", type=float, default=30.0, help="how long a capture takes at the service")
    parser.add_argument("--setup-minutes", type=float, default=3.0, help="the job's set-up before the run starts")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    outage = (args.outage_at, args.outage_at + args.outage_hours) if args.outage_hours > 0 else None
    with tempfile.TemporaryDirectory(prefix="archive-queue-") as folder:
        figures = simulate(Path(folder), hours=round(args.days * 24), outlets=args.outlets, per_day=args.per_day,
                           outage=outage, capture_seconds=args.capture_seconds, setup_minutes=args.setup_minutes)
    report(figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
