"""The demo's timeline: the real commands, run as an operator runs them, over a day of simulated time.

Every command gets `--now`, so a day of collection runs takes a few minutes:

    visit 0   T+0:00   run: discover, list, capture     then archive (fake Save Page Now), export new
    visit 1   T+1:05   run: the 1-hour checks find the first changes, a 404 and a 301
    visit 2   T+2:10   run: the missing article's follow-up check (1 h after its first absence)
    visit 3   T+4:15   run: its follow-up 3 h after
    visit 4   T+7:10   run: the 6-hour checks, and the follow-up that makes three absences over six hours: gone
    visit 5   T+25:15  run: the 24-hour checks (not in the reduced demo)
    then      export verify (with the evidence command: export sign, timestamp, verify, wacz, and an
              evidence bundle of the article gone, checked by its own verify.py), review,
              publish (as a week and a day later, when the demo's weeks have closed), build-site from the published history

T is 26 hours before the demo starts, so every instant in the record is in
the past. After each run `export new` writes the run's rows to the committed
record, as the hourly workflow does.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from collector import settings
from collector.clock import iso
from demo.world import TROUBLE, World
from testing.fake_spn import FakeSPN
from testing.farm import Farm

INTERVAL = "0.05"  # seconds between requests to one loopback host
VISITS = (  # hours after the first run, and what the run shows
    (0.0, "the first run: discover each outlet's feed, list every entry, capture what is new"),
    (1 + 5 / 60, "the 1-hour checks: every article is fetched again and compared with its capture"),
    (2 + 10 / 60, "one hour after the first absence: a follow-up check of the missing article"),
    (4 + 15 / 60, "three hours after it: another follow-up"),
    (7 + 10 / 60, "the 6-hour checks, and a third absence six hours after the first: the article is gone"),
    (25 + 15 / 60, "the 24-hour checks"),
)
SMALL_VISITS = 5  # the reduced demo stops after the visit that records the gone
# The demo's day lies in at most two ISO weeks; the later one ends within 7 days and is published
# PUBLISH_AFTER_HOURS after it ends: that long after, every week of the demo is closed and published.
PUBLISH_LATER = timedelta(days=7, hours=settings.PUBLISH_AFTER_HOURS)


@dataclass
class Demo:
    """Where the demo wrote everything, and what it ran."""

    out: Path
    small: bool
    start: datetime
    commands: list[str] = field(default_factory=list)
    timings: list[tuple[str, float]] = field(default_factory=list)  # (command, seconds)
    seconds: float = 0.0
    evidence: Path | None = None

    @property
    def db(self) -> Path:
        return self.out / "demo.db"

    @property
    def warc(self) -> Path:
        return self.out / "warc"

    @property
    def record(self) -> Path:
        return self.out / "record"

    @property
    def site(self) -> Path:
        return self.out / "site"

    @property
    def published(self) -> Path:
        return self.out / "published"

    def collector(self, *args: str, env: dict[str, str] | None = None) -> str:
        """Return what `python -m collector ARGS` printed, after showing the command and its output.

        Its output passes through this process's stdout (so a test can read it);
        progress on stderr goes straight to the terminal.
        """
        shown = "python -m collector " + " ".join(_shorten(a, self.out) for a in args)
        self.commands.append(shown)
        print(f"\n$ {shown}", flush=True)
        began = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "collector", *args], cwd=self.out.parent, check=True,
                              stdout=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
        print(_shorten(done.stdout, self.out), end="", flush=True)
        self.timings.append((args[0], time.monotonic() - began))
        return done.stdout

    def common(self) -> list[str]:
        return ["--db", str(self.db), "--warc-dir", str(self.warc), "--outlets", str(self.out / "outlets.toml"),
                "--vantage", "demo-loopback"]


def _shorten(arg: str, out: Path) -> str:
    """Return an argument with the output folder's absolute path made relative to the repository."""
    return arg.replace(str(out.parent) + "/", "")


def has_command(name: str) -> bool:
    """Return True when `python -m collector` has this command (the evidence command lands separately)."""
    from collector.cli.main import cli

    return name in cli.commands


def first_instant(now: datetime | None = None) -> datetime:
    """Return the demo's T: 26 hours before now, to the minute."""
    now = (now or datetime.now(timezone.utc)).replace(second=0, microsecond=0)
    return now - timedelta(hours=26)


def run_demo(out: Path, small: bool = False) -> Demo:
    """Return the finished demo after running the whole lifecycle into `out` (emptied first)."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    demo = Demo(out, small, first_instant())
    began = time.monotonic()
    visits = VISITS[:SMALL_VISITS] if small else VISITS
    with Farm() as farm:
        world = World(farm, demo.start, small=small)
        (out / "outlets.toml").write_text(world.registry(), encoding="utf-8")
        spn = FakeSPN(farm, polls=1)
        _introduce(world)
        for visit, (hours, what) in enumerate(visits):
            when = demo.start + timedelta(hours=hours)
            world.visit = visit
            print(f"\n== visit {visit}, T+{_hm(hours)} ({iso(when)}): {what}")
            for line in world.changes_at(visit):
                print(f"   meanwhile: {line}")
            demo.collector("run", *demo.common(), "--min-interval", INTERVAL, "--now", iso(when))
            if visit == 0:
                world.silence()
                archive(demo, spn, when + timedelta(minutes=10))
            demo.collector("export", "new", "--db", str(demo.db), "--out", str(demo.record),
                           "--warc-dir", str(demo.warc))
        finish(demo, farm, demo.start + timedelta(hours=visits[-1][0], minutes=10))
    demo.seconds = time.monotonic() - began
    return demo


def _hm(hours: float) -> str:
    minutes = round(hours * 60)
    return f"{minutes // 60}:{minutes % 60:02d}"


def _introduce(world: World) -> None:
    outlets = len(world.hosts)
    print(f"{outlets} loopback outlets in {len(world.groups)} groups, serving their real feeds and one page "
          f"per feed item, built from the item's own headline, author and text.")
    for oid, (_group, _name, why) in TROUBLE.items():
        if oid in world.hosts:
            print(f"   {oid}: {why}")


def archive(demo: Demo, spn: FakeSPN, when: datetime) -> None:
    """Run the archive job against the fake Save Page Now (which, like the real one, wants keys: any pair will do)."""
    # The fake answers at once, so the demo submits far faster than the real service allows.
    demo.collector("archive", *demo.common(), "--base-url", spn.base, "--min-interval", "0.02",
                   "--poll-seconds", "0.1", "--per-minute", "3000", "--limit", "40" if demo.small else "150",
                   "--now", iso(when), env={"IA_ACCESS_KEY": "demo", "IA_SECRET_KEY": "demo-secret"})


def finish(demo: Demo, farm: Farm, when: datetime) -> None:
    """Verify the record's chain, list the events for review, make an evidence bundle, build the site."""
    if has_command("evidence"):
        demo.evidence = evidence(demo, farm)
    else:
        demo.collector("export", "verify", "--out", str(demo.record))
    demo.collector("review", "--db", str(demo.db))
    # Figures are published for closed weeks only (a day after a week ends): publish as the hourly
    # workflow will once the demo's weeks have closed, then build the site from that history.
    history = ["--published", str(demo.published)]
    demo.collector("publish", "--db", str(demo.db), "--now", iso(when + PUBLISH_LATER), *history,
                   "--decisions", str(demo.out / "disclosure"))
    demo.collector("build-site", "--db", str(demo.db), "--out", str(demo.site), "--now", iso(when), *history)


def evidence(demo: Demo, farm: Farm) -> Path:
    """Sign and timestamp the record (two loopback authorities), verify it whole, and bundle the article gone.

    The evidence command and testing/trust.py land together; the bundle carries
    its own verify.py, run here as a recipient would run it.
    """
    from testing.trust import make_trust

    trust = make_trust(demo.out / "trust", farm)
    record, db, warc, folder = str(demo.record), str(demo.db), str(demo.warc), str(trust.folder)
    demo.collector("export", "sign", "--out", record, "--key", str(trust.key), "--trust", folder, "--db", db)
    demo.collector("export", "timestamp", "--out", record, "--db", db, "--warc-dir", warc, "--min-interval",
                   INTERVAL, "--trust", folder, "--vantage", "demo-loopback")
    demo.collector("export", "verify", "--out", record, "--db", db, "--require-timestamps", "--trust", folder)
    day = min(p.parent for p in demo.warc.rglob("*.warc.gz")).relative_to(demo.warc)
    from collector.evidence.wacz_signing import new_key

    wacz_key = new_key(trust.folder / "keys" / "wacz.key")  # its public half: the demo's wacz-signers.pem
    (trust.folder / "wacz-signers.pem").write_bytes(Path(f"{wacz_key}.pub").read_bytes())
    demo.collector("export", "wacz", "--day", "-".join(day.parts), "--warc-dir", warc,
                   "--out", str(demo.out / "wacz"), "--key", str(trust.key), "--wacz-key", str(wacz_key))
    demo.collector("export", "verify-wacz", str(demo.out / "wacz" / f"{'-'.join(day.parts)}.wacz"),
                   "--signers", str(trust.folder / "wacz-signers.pem"))
    conn = sqlite3.connect(f"file:{demo.db}?mode=ro", uri=True)
    address = conn.execute("SELECT a.url FROM events e JOIN articles a ON a.id = e.article_id "
                           "ORDER BY e.kind = 'gone' DESC, e.id LIMIT 1").fetchone()[0]
    conn.close()
    bundle = demo.out / "evidence"
    demo.collector("evidence", address, "--out", str(bundle), "--db", db, "--record", record, "--warc-dir", warc,
                   "--trust", folder)
    print(f"\n$ (cd {bundle.relative_to(demo.out.parent)} && python3 verify.py)", flush=True)
    subprocess.run([sys.executable, "-I", "verify.py"], cwd=bundle, check=True)
    return bundle
