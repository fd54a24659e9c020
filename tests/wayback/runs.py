"""What the archive tests share: a virtual clock, seeded snapshots, one run against the fake."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

from collector.clock import Clock, iso
from collector.collect.context import RunContext
from collector.record.store import Store
from collector.wayback import spn
from collector.wayback.job import ArchiveRun, Limits
from tests.conftest import TEST_INTERVAL
from testing.fake_spn import FakeSPN

START = datetime(2026, 3, 1, 6, 0, tzinfo=timezone.utc)
KEYS = spn.Keys("test-access", "test-secret")  # any key pair: the fake refuses only a missing one


class VirtualClock(Clock):
    """A clock whose sleeps pass at once: waits of minutes cost the test nothing."""

    def __init__(self, start: datetime = START):
        super().__init__(start)
        self.skipped = 0.0

    def now(self) -> datetime:
        return super().now() + timedelta(seconds=self.skipped)

    def monotonic(self) -> float:
        return time.monotonic() + self.skipped

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.skipped += seconds

    skip = sleep


def seed(store: Store, fake: FakeSPN, markers: list[str]) -> list[int]:
    """Insert one captured snapshot per marker, oldest first; return their ids."""
    run = store.insert("runs", {"command": "run", "started_at": iso(START - timedelta(days=1)),
                                "vantage": "v", "software_version": "0", "settings": {}})
    ids = []
    for n, marker in enumerate(markers):
        url = f"https://outlet.example/{marker}/story-{n}"
        at = iso(START - timedelta(hours=10) + timedelta(minutes=n))
        request = store.insert("requests", {"run_id": run, "purpose": "capture", "method": "GET", "url": url,
                                            "attempt": 1, "sent": 1, "started_at": at, "finished_at": at,
                                            "result": "ok", "vantage": "v"})
        article = store.insert("articles", {"outlet_id": "o", "url_key": url, "url": url,
                                            "first_seen_at": at, "first_seen_run": run})
        ids.append(store.insert("snapshots", {
            "article_id": article, "request_id": request, "run_id": run, "purpose": "capture",
            "captured_at": at, "status_code": 200, "final_url": url, "text": "t", "html_sha256": "0" * 64,
            "warc_file": "f", "warc_offset": 0, "warc_length": 1, "extractor": "x", "extractor_info": "{}"}))
    return ids


def run_archive(store: Store, tmp_path: Path, fake: FakeSPN, clock: Clock, keys=KEYS,
                interval: float = TEST_INTERVAL, **limits) -> ArchiveRun:
    """Run the archive job once against the fake and return it."""
    ctx = RunContext.open(store, "archive", clock=clock, vantage="test", warc_dir=tmp_path / "warc",
                          interval=interval, allow_loopback=True, backoff=(0.02, 0.04),
                          connect_timeout=2.0, read_timeout=2.0, total_timeout=3.0)
    options = {"per_minute": 6.0, "daily_cap": 1000, "poll_seconds": 15.0, "max_wait": 900.0, **limits}
    job = ArchiveRun(ctx, fake.base, keys, Limits(**options))
    try:
        job.run()
        ctx.finish()
    finally:
        ctx.warc.close()
    return job


def rows(store: Store, snapshot_id: int) -> list:
    return store.query("SELECT * FROM archive_submissions WHERE snapshot_id = ? ORDER BY id", (snapshot_id,))


def url_of(store: Store, snapshot_id: int) -> str:
    return store.one("SELECT final_url FROM snapshots WHERE id = ?", (snapshot_id,))["final_url"]
