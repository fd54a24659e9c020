"""A loopback world the health checks judge: outlets, Save Page Now and two authorities, on a virtual clock.

Every run is the real code: a collection run of the outlets (testing/farm.py
hosts serving a news sitemap whose articles appear every 20 minutes), the
export of its rows and a time-stamping run against two loopback authorities
(testing/trust.py), as collect.yml runs them every 15 minutes, and every hour
an archive run against the fake Save Page Now (testing/fake_spn.py). Sleeps
of the fetcher and of the archive job pass at once on the virtual clock, so a
day's schedule costs seconds. A fault is a change to what a host answers (or
to the schedule); `World.health` runs `python -m collector health --json`.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from click.testing import CliRunner

from collector.cli.main import cli
from collector.clock import iso
from collector.collect.context import RunContext
from collector.collect.pipeline import active_outlets, run_collection
from collector.evidence.timestamps import load_authorities, stamp_missing
from collector.record.export import export_new
from collector.record.registry_mirror import sync_registry
from collector.record.store import Store
from collector.registry import parse_registry
from collector.wayback import spn
from collector.wayback.job import ArchiveRun, Limits
from testing import replica
from testing.fake_spn import FakeSPN
from testing.farm import Farm, Handler, Host, Reply
from testing.trust import Trust, make_trust
from tests.wayback.runs import VirtualClock

START = datetime(2026, 9, 1, 0, 2, tzinfo=timezone.utc)
EVERY = timedelta(minutes=15)  # collect.yml's schedule
PUBLISHED_EVERY = timedelta(minutes=20)  # each outlet publishes an article this often
LISTED_HOURS = 4  # its sitemap lists the articles of the last hours, as a news sitemap does
OUTLETS = ("alpha", "beta", "gamma")
FAST = {"interval": 0.01, "backoff": (0.01, 0.02), "connect_timeout": 2.0, "read_timeout": 2.0,
        "total_timeout": 3.0}
KEYS = spn.Keys("test-access", "test-secret")
CHALLENGE_PAGE = (Path(replica.DATA) / "cloudflare" / "challenge-khaborerkagoj.html").read_bytes()


@dataclass
class Loopback:
    """The servers every world shares: the outlets' hosts, Save Page Now, the trust folder's authorities."""

    farm: Farm
    hosts: dict[str, Host]
    spn: FakeSPN
    trust: Trust
    now: list[datetime] = field(default_factory=lambda: [START])  # what the outlets take the time to be

    def healthy(self, outlet: str) -> None:
        """Give the outlet its healthy routes back."""
        host = self.hosts[outlet]
        host.routes.clear()
        host.routes.update({
            "/robots.txt": replica.robots([host.url("/news_sitemap.xml")]),
            "/": Reply(200, replica.homepage()),
            "/news_sitemap.xml": self._sitemap(host),
            "/news/*": replica.article_route(replica.article_page(), host.base),
        })

    def _sitemap(self, host: Host):
        def route(_handler: Handler) -> Reply:
            now = self.now[0]
            newest = START + ((now - START) // PUBLISHED_EVERY) * PUBLISHED_EVERY
            count = int(timedelta(hours=LISTED_HOURS) / PUBLISHED_EVERY)
            entries = [(host.url(f"/news/{int((newest - n * PUBLISHED_EVERY).timestamp())}"),
                        newest - n * PUBLISHED_EVERY) for n in range(count)]
            return Reply(200, replica.news_sitemap(entries), content_type="application/xml")
        return route

    def fault(self, outlet: str, path: str, reply) -> None:
        """Make one path of the outlet answer otherwise ('*' for every path)."""
        host = self.hosts[outlet]
        if path == "*":
            host.routes.clear()
            host.routes["/*"] = reply
        else:
            host.routes[path] = reply


def challenge() -> Reply:
    """Return a Cloudflare managed challenge as Cloudflare serves it (collector/net/cloudflare.py's rules)."""
    return Reply(403, CHALLENGE_PAGE, {"Server": "cloudflare", "CF-RAY": "8f0000000000-DAC",
                                       "cf-mitigated": "challenge"})


def start_loopback(folder: Path) -> Loopback:
    """Return the servers, started: one host per outlet, Save Page Now, and two authorities."""
    farm = Farm()
    loop = Loopback(farm, {name: farm.add() for name in OUTLETS}, FakeSPN(farm, polls=1),
                    make_trust(folder / "trust", farm))
    for name in OUTLETS:
        loop.healthy(name)
    return loop


@dataclass
class World:
    """One working database, its record folder and WARC folder, and the time of its next scheduled run."""

    loop: Loopback
    folder: Path
    now: datetime = START

    @property
    def db(self) -> Path:
        return self.folder / "work.db"

    def fork(self, folder: Path) -> "World":
        """Return a copy of this world in another folder (its database, record and WARC files)."""
        shutil.copytree(self.folder, folder, dirs_exist_ok=True)
        return World(self.loop, folder, self.now)

    def _context(self, store: Store, command: str, at: datetime) -> RunContext:
        return RunContext.open(store, command, clock=VirtualClock(at), vantage="test", warc_dir=self.folder / "warc",
                               allow_loopback=True, **FAST)

    def collect(self) -> None:
        """Run one collection, export its rows and ask the authorities for tokens, as collect.yml does."""
        self.loop.now[0] = self.now
        store = Store(self.db)
        try:
            ctx = self._context(store, "run", self.now)
            sync_registry(store, parse_registry(replica.registry_toml(self.loop.hosts)), ctx.clock)
            run_collection(ctx, active_outlets(ctx))
            ctx.finish()
            export_new(store, self.folder / "record", warc_dir=self.folder / "warc")
            stamper = self._context(store, "timestamp", ctx.clock.now())
            stamp_missing(stamper.fetcher, self.folder / "record", load_authorities(self.loop.trust.folder))
            stamper.finish()
        finally:
            store.close()

    def archive(self) -> None:
        """Run the archive job once against the fake Save Page Now."""
        store = Store(self.db)
        try:
            ctx = self._context(store, "archive", self.now + timedelta(minutes=5))
            ArchiveRun(ctx, self.loop.spn.base, KEYS, Limits(per_minute=6.0, daily_cap=1000, poll_seconds=15.0,
                                                             max_wait=600.0)).run()
            ctx.finish()
        finally:
            store.close()

    def advance(self, hours: float = 0.25, *, runs: bool = True) -> None:
        """Let the schedule run for some hours: a collection every 15 minutes, the archive every hour."""
        end = self.now + timedelta(hours=hours)
        while self.now + EVERY <= end + timedelta(seconds=1):
            self.now += EVERY
            if not runs:
                continue
            self.collect()
            if self.now.minute < 15:
                self.archive()

    def health(self, *options: str) -> dict:
        """Return `python -m collector health --json` at the world's time, a few minutes after its last run."""
        at = iso(self.now + timedelta(minutes=10))
        result = CliRunner().invoke(cli, ["health", "--db", str(self.db), "--now", at, "--json", *options])
        assert result.exit_code in (0, 1), result.output
        report = json.loads(result.output)
        assert result.exit_code == (1 if report["state"] == "fail" else 0)
        return report


def failing(report: dict) -> set[tuple[str, str | None]]:
    """Return the (check, subject) of every failing finding."""
    return {(f["check"], f["subject"]) for f in report["findings"] if f["state"] == "fail"}


def states(report: dict, check: str) -> dict[str | None, str]:
    """Return one check's state per subject."""
    return {f["subject"]: f["state"] for f in report["findings"] if f["check"] == check}
