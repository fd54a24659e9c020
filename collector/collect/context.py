"""One invocation of the collector: its run row, clock, WARC file, ledger and fetcher."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from collector import settings
from collector.clock import Clock
from collector.net.fetcher import Fetcher
from collector.net.ledger import Ledger
from collector.record.store import Store
from collector.net.warc import WarcLog


_NOTE_LOCK = threading.Lock()  # outlet threads reach the deadline together; one note is made
# Outlet threads count at once; a switch between reading a counter and writing
# it back would lose an increment in run_finishes, an append-only observation.
_COUNT_LOCK = threading.Lock()


def _host(url: str) -> str:
    """Return the host part of url as the pacer keys it."""
    try:
        return urlsplit(url).netloc.lower()
    except ValueError:
        return ""


def default_vantage() -> str:
    """Return the name of the network location requests are made from."""
    return os.environ.get("TAKEDOWNWATCH_VANTAGE") or f"host:{socket.gethostname()}"


def git_revision() -> str | None:
    """Return the commit the software runs from, or None outside a checkout."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=5, cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def settings_snapshot() -> dict:
    """Return the settings in force, for the run row."""
    return {k: v for k, v in vars(settings).items()
            if k.isupper() and isinstance(v, (int, float, str, tuple, list))}


@dataclass
class RunContext:
    """Everything a stage needs: the store, the clock, the run id and the fetcher."""

    store: Store
    clock: Clock
    run_id: int
    vantage: str
    fetcher: Fetcher | None = None
    warc: WarcLog | None = None
    counts: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    deadline: datetime | None = None  # on the run's clock: no fetch is started that might end after it
    warc_store: Any = None  # a net.releases.ReleaseStore: WARC records of earlier runs, from release assets
    record_dir: Path | None = None  # the record folder checked out: values a pruned database holds as digests

    @classmethod
    def open(cls, store: Store, command: str, *, clock: Clock, vantage: str,
             warc_dir: str | Path | None = None, interval: float = settings.MIN_INTERVAL_SECONDS,
             allow_loopback: bool = False, deadline: datetime | None = None,
             **fetcher_options) -> "RunContext":
        """Return a context with a new run row (and a fetcher when warc_dir is given)."""
        run_id = store.insert("runs", {
            "command": command, "started_at": clock.now_iso(), "vantage": vantage,
            "software_version": settings.__version__, "git_revision": git_revision(),
            "settings": settings_snapshot(),
        })
        ctx = cls(store, clock, run_id, vantage, deadline=deadline)
        if warc_dir is not None:
            ctx.warc = WarcLog(warc_dir, run_id, clock.now())
            ledger = Ledger(store, run_id, vantage, clock, ctx.warc)
            # Requests an earlier run was killed in the middle of get their rows first.
            interrupted = ledger.close_interrupted(warc_dir)
            if interrupted:
                ctx.count("interrupted_requests_closed", interrupted)
            ctx.fetcher = Fetcher(ledger, clock=clock, interval=interval,
                                  allow_loopback=allow_loopback, **fetcher_options)
        return ctx

    def fetch_reserve(self, url: str | None = None) -> float:
        """Return the seconds one fetch may take at worst: every attempt to its whole-response limit, every backoff.

        With `url`, each attempt waits its host's interval: its robots.txt
        Crawl-delay when that is longer (net/pacing.py).
        """
        if self.fetcher is None:
            return 0.0
        total = self.fetcher.timeouts[2] + self.fetcher.timeouts[0]
        waits = sum(self.fetcher.backoff[:settings.MAX_ATTEMPTS - 1])
        interval = self.fetcher.interval if url is None else self.fetcher.pacer.interval_for(_host(url))
        return settings.MAX_ATTEMPTS * (total + interval) + waits

    def out_of_time(self, stage: str, url: str | None = None) -> bool:
        """Return True, and note it once for the run, when a fetch (of `url`) started now might end after the deadline."""
        if self.deadline is None:
            return False
        left = (self.deadline - self.clock.now()).total_seconds()
        if left >= self.fetch_reserve(url) + settings.DEADLINE_WORK_SECONDS:
            return False
        with _NOTE_LOCK:
            if not self.counts.get("stopped_at_deadline"):
                self.count("stopped_at_deadline")
                self.warnings.append(f"deadline: stopped starting fetches ({stage}) with {max(left, 0):.0f} s left; "
                                     "the rest is carried over to the next run")
        return True

    def count(self, name: str, amount: int = 1) -> None:
        """Add to one of the run's counters (from any thread: no increment is lost)."""
        with _COUNT_LOCK:
            self.counts[name] = self.counts.get(name, 0) + amount

    def finish(self) -> None:
        """Record the run's end with its counts and close its WARC file."""
        requests = {row["result"]: row["n"] for row in self.store.query(
            "SELECT result, COUNT(*) AS n FROM requests WHERE run_id = ? GROUP BY result",
            (self.run_id,))}
        with _COUNT_LOCK:
            counts = dict(self.counts, requests=requests)
        if self.fetcher is not None and self.fetcher.pacer.delayed_hosts():
            # the interval each host was paced at when its robots.txt Crawl-delay made it longer
            counts["crawl_delay_seconds"] = self.fetcher.pacer.delayed_hosts()
        self.store.insert("run_finishes", {
            "run_id": self.run_id, "finished_at": self.clock.now_iso(),
            "counts": json.dumps(counts, sort_keys=True),
            "warnings": json.dumps(self.warnings, ensure_ascii=False),
        })
        if self.warc is not None:
            self.warc.close()
