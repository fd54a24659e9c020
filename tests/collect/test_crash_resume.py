"""A collection killed at any moment resumes to the record an uninterrupted run makes.

The real command (`python -m collector run`) runs in a subprocess against a
farm of loopback replica outlets served from this process, and is killed
with SIGKILL at seeded random moments; after each kill it runs again, and
finally runs to completion. The record is then checked the way a court
would: the database is intact, every WARC file is sound except for at most
one torn record at the end of a killed run's own file, nothing was captured
twice, no listing lost an entry, and what was collected equals what one
uninterrupted run collects.

A second test makes the same promise at every commit boundary of a run,
in-process: the run dies right after its k-th commit, for every k, and a
fresh run resumes it.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import signal
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from collector import settings
from collector.clock import Clock, iso
from collector.collect.context import RunContext
from collector.collect.pipeline import active_outlets, run_collection
from collector.collect.revisits import run_rechecks
from collector.registry import parse_registry
from collector.record.store import Store
from collector.record.registry_mirror import sync_registry
from testing import hostile, replica
from testing.farm import Farm, Host, Reply

ROOT = Path(__file__).resolve().parents[2]
NOW = replica.FEED_SNAPSHOT_TIME
WARCIO = Path(sys.executable).parent / "warcio"
SEED = 20260813
KILLS = 20
ARTICLES_PER_OUTLET = 6


# -- the farm -------------------------------------------------------------------------

def quiet_outlet(farm: Farm, articles: int) -> Host:
    """Return an outlet whose robots.txt names a feed and a news sitemap, both listing its articles."""
    host = hostile.add_host(farm)
    paths = [f"/news/{i}" for i in range(articles)]
    host.routes.update(hostile.outlet_routes(host, NOW, paths))
    return host


def replica_outlet(farm: Farm) -> Host:
    """Return bd24live's real feed, moved to loopback, linked only from the homepage."""
    host = hostile.add_host(farm)
    host.routes.update({
        "/robots.txt": Reply(404, b"", content_type="text/plain"),
        "/": Reply(200, replica.homepage("/feed/")),
        "/feed/": Reply(200, replica.moved_feed("bd24live", host.base), content_type=hostile.RSS_TYPE),
        "/*": replica.article_route(replica.article_page(), host.base),
    })
    return host


@dataclass
class Outlets:
    """The registry file text of the outlets, and their hosts (which log every request they see)."""

    registry: str
    hosts: list[Host]

    def marks(self) -> list[int]:
        """Return how many requests each host has seen so far."""
        return [len(h.seen) for h in self.hosts]

    def seen(self, since: list[int] | None = None) -> list[tuple[str, str, str]]:
        """Return (host, method, target) of every request the servers saw (after the marks given)."""
        since = since or [0] * len(self.hosts)
        return [(h.netloc, s.method, s.path) for h, n in zip(self.hosts, since) for s in list(h.seen)[n:]]


@pytest.fixture(scope="module")
def outlets():
    """Return four outlets served from this process."""
    farm = Farm()
    hosts = {name: quiet_outlet(farm, ARTICLES_PER_OUTLET) for name in ("alpha", "beta", "gamma")}
    hosts["delta"] = replica_outlet(farm)
    yield Outlets(replica.registry_toml(hosts), list(hosts.values()))
    hostile.close_all(farm)


def unlogged_requests(seen: list[tuple[str, str, str]], db: Path) -> list[tuple[str, str, str]]:
    """Return the requests the servers saw that have no ledger row (each one as often as it is missing)."""
    from collections import Counter
    from urllib.parse import urlsplit

    logged = Counter()
    for method, url in rows(db, "SELECT method, url FROM requests WHERE sent = 1"):
        parts = urlsplit(url)
        logged[(parts.netloc, method, (parts.path or "/") + (f"?{parts.query}" if parts.query else ""))] += 1
    missing = Counter(seen) - logged
    return sorted(missing.elements())


# -- torn WARC records --------------------------------------------------------------------

@dataclass
class WarcScan:
    """How a WARC file's gzip members read: complete records, then maybe a torn tail."""

    records: int
    complete_bytes: int  # length of the prefix made of complete records
    size: int

    @property
    def torn(self) -> bool:
        return self.complete_bytes < self.size


def scan_warc(path: Path) -> WarcScan:
    """Return the complete records of a gzip WARC file and where a torn tail starts.

    Each record is one gzip member. A member is complete when zlib reaches its
    end and its WARC block is as long as its Content-Length says; the first
    member that is not ends the complete prefix.
    """
    data = path.read_bytes()
    position = records = 0
    while position < len(data):
        end = _complete_member_end(data, position)
        if end is None:
            break
        position, records = end, records + 1
    return WarcScan(records, position, len(data))


def _complete_member_end(data: bytes, start: int) -> int | None:
    """Return where the gzip member at start ends if it holds one whole WARC record, else None."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        record = inflater.decompress(data[start:])
    except zlib.error:
        return None
    if not inflater.eof or not _whole_record(record):
        return None
    return len(data) - len(inflater.unused_data)


def _whole_record(record: bytes) -> bool:
    head, _, block = record.partition(b"\r\n\r\n")
    fields = dict(line.split(b":", 1) for line in head.split(b"\r\n")[1:] if b":" in line)
    length = int(fields.get(b"Content-Length", b"-1"))
    return record.startswith(b"WARC/") and len(block) == length + 4 and block.endswith(b"\r\n\r\n")


def last_record_torn(path: Path) -> bool:
    """Return True when the file's last record is cut short and everything before it is whole.

    Raises AssertionError when a whole record follows the torn one: that
    is damage inside the file, not a run that died while writing its end.
    """
    scan = scan_warc(path)
    if not scan.torn:
        return False
    data = path.read_bytes()
    later = data.find(b"\x1f\x8b\x08", scan.complete_bytes + 1)
    while later >= 0:
        assert _complete_member_end(data, later) is None, f"{path}: a whole record follows a torn one"
        later = data.find(b"\x1f\x8b\x08", later + 1)
    return True


def warcio_check(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(WARCIO), "check", *map(str, paths)], capture_output=True, text=True)


def test_the_torn_record_helper_finds_a_cut_anywhere_in_the_last_record(tmp_path, farm):
    host = quiet_outlet(farm, 2)
    ctx = RunContext.open(Store(tmp_path / "r.db"), "test", clock=Clock(NOW), vantage="v",
                          warc_dir=tmp_path / "warc", interval=0.02, allow_loopback=True)
    sync_registry(ctx.store, parse_registry(replica.registry_toml({"alpha": host})), ctx.clock)
    run_collection(ctx, active_outlets(ctx))
    ctx.finish()
    whole = ctx.warc.path.read_bytes()
    scan = scan_warc(ctx.warc.path)
    assert not scan.torn and scan.records > 10 and not last_record_torn(ctx.warc.path)
    assert warcio_check(ctx.warc.path).returncode == 0
    # Cut inside the last record: at its first byte, its middle, one byte short.
    last_start = _last_member_start(whole)
    for cut in (last_start + 1, (last_start + len(whole)) // 2, len(whole) - 1):
        torn = tmp_path / f"cut-{cut}.warc.gz"
        torn.write_bytes(whole[:cut])
        assert last_record_torn(torn) and scan_warc(torn).complete_bytes == last_start
        # (warcio check 1.8.1 passes every one of these files: it takes a cut
        # gzip member for the end of the file. Hence this helper.)
    # A cut exactly between records leaves a sound, shorter file.
    exact = tmp_path / "exact.warc.gz"
    exact.write_bytes(whole[:last_start])
    assert not last_record_torn(exact) and warcio_check(exact).returncode == 0


def _last_member_start(data: bytes) -> int:
    position = last = 0
    while position < len(data):
        last, position = position, _complete_member_end(data, position)
    return last


# -- running the real command ----------------------------------------------------------------

@dataclass
class Collection:
    """One database and WARC folder, and what each run of the command did to them."""

    root: Path
    registry: Path
    runs: list[dict] = field(default_factory=list)

    @property
    def db(self) -> Path:
        return self.root / "record.db"

    @property
    def warc_dir(self) -> Path:
        return self.root / "warc"

    def command(self) -> list[str]:
        return [sys.executable, "-m", "collector", "run", "--outlets", str(self.registry),
                "--db", str(self.db), "--warc-dir", str(self.warc_dir), "--min-interval", "0.02",
                "--now", iso(NOW), "--vantage", "crash-test"]

    def warc_files(self) -> set[Path]:
        return set(self.warc_dir.rglob("*.warc.gz"))

    def run(self, kill_after: float | None = None) -> dict:
        """Run the command once, SIGKILLed kill_after seconds after its run began (None: never)."""
        before = self.warc_files()
        log = self.root / f"stderr-{len(self.runs)}.txt"
        with open(log, "w") as err:
            process = subprocess.Popen(self.command(), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err,
                                       env={**os.environ, "TAKEDOWNWATCH_VANTAGE": "crash-test"})
        began = _wait_for_run_start(process, log)
        sent = False
        if kill_after is not None:
            _sleep_unless_done(process, kill_after)
            sent = process.poll() is None
            if sent:
                process.send_signal(signal.SIGKILL)
        code = process.wait(timeout=60)
        # A run may end on its own between the poll and the signal: then it
        # exited 0, was not killed, and counts as a whole run.
        assert code in ((0, -signal.SIGKILL) if sent else (0,)), log.read_text()
        killed = code == -signal.SIGKILL
        new = self.warc_files() - before
        run = {"killed": killed, "seconds": time.monotonic() - began, "warcs": new,
               "digests": {p: _sha256(p) for p in new}}
        self.runs.append(run)
        return run


RUN_BEGAN = re.compile(r"^run \d+:", re.M)  # the command's first line, once its run row exists


def _wait_for_run_start(process: subprocess.Popen, log: Path) -> float:
    """Return the monotonic time the command said its run began (or exited)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if RUN_BEGAN.search(log.read_text()) or process.poll() is not None:
            return time.monotonic()
        time.sleep(0.005)
    raise AssertionError("the command did not start a run within 30 s")


def _sleep_unless_done(process: subprocess.Popen, seconds: float) -> None:
    try:
        process.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        pass


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# -- what the record must look like afterwards ------------------------------------------------

def rows(db: Path, sql: str, params=()) -> list[tuple]:
    store = Store(db)
    try:
        return [tuple(r) for r in store.query(sql, params)]
    finally:
        store.conn.close()


def captured_keys(db: Path) -> set[str]:
    return {r[0] for r in rows(db, "SELECT DISTINCT a.url_key FROM snapshots s JOIN articles a "
                                   "ON a.id = s.article_id WHERE s.purpose = 'capture'")}


def current_sources(db: Path) -> set[tuple[str, str, str]]:
    """Return (outlet, url, kind) of the sources the next run will read: each outlet's latest
    round validated by a run that finished."""
    return set(rows(db, "SELECT outlet_id, url, kind FROM sources s WHERE run_id = "
                        "(SELECT MAX(run_id) FROM sources WHERE outlet_id = s.outlet_id "
                        "AND run_id IN (SELECT run_id FROM run_finishes))"))


def assert_record_sound(db: Path) -> None:
    """Check the invariants that must hold after any sequence of killed and completed runs."""
    assert rows(db, "PRAGMA integrity_check") == [("ok",)]
    assert rows(db, "PRAGMA foreign_key_check") == []
    # One capture snapshot per article: nothing captured twice.
    assert rows(db, "SELECT article_id FROM snapshots WHERE purpose = 'capture' "
                    "GROUP BY article_id HAVING COUNT(*) > 1") == []
    # No listing lost an entry: each stored listing has every entry it counted.
    assert rows(db, "SELECT l.id FROM listings l LEFT JOIN listing_entries e ON e.listing_id = l.id "
                    "GROUP BY l.id HAVING COUNT(e.id) != MAX(l.entry_count)") == []
    # Every article has its queue row, and the queue agrees with the snapshots.
    assert rows(db, "SELECT a.id FROM articles a LEFT JOIN capture_queue q ON q.article_id = a.id "
                    "WHERE q.url_key IS NULL") == []
    assert rows(db, "SELECT q.url_key FROM capture_queue q WHERE (q.state = 'captured') != EXISTS "
                    "(SELECT 1 FROM snapshots s WHERE s.article_id = q.article_id AND s.purpose = 'capture')") == []
    assert rows(db, "SELECT url_key FROM capture_queue WHERE state = 'pending'") == []


def assert_snapshots_point_at_whole_records(db: Path, warc_dir: Path) -> None:
    """Check that every snapshot's WARC pointer lands on its own response record."""
    from warcio.archiveiterator import ArchiveIterator

    for file, offset, digest in rows(db, "SELECT warc_file, warc_offset, payload_digest FROM snapshots"):
        with open(warc_dir / file, "rb") as stream:
            stream.seek(offset)
            record = next(iter(ArchiveIterator(stream)))
            assert record.rec_type == "response"
            assert record.rec_headers.get_header("WARC-Payload-Digest") == digest


def assert_warcs_sound(collection: Collection) -> int:
    """Check every WARC file; return how many torn final records killed runs left."""
    torn = 0
    for run in collection.runs:
        assert len(run["warcs"]) <= 1, "a run wrote more than one WARC file"
        for path in run["warcs"]:
            # Written once by its own run, never appended to by a later one.
            assert _sha256(path) == run["digests"][path]
            scan = scan_warc(path)
            if not scan.torn:
                assert warcio_check(path).returncode == 0, f"{path} fails warcio check"
                continue
            assert run["killed"] and last_record_torn(path), f"{path}: torn, but not by a kill"
            prefix = collection.root / "prefix.warc.gz"
            prefix.write_bytes(path.read_bytes()[: scan.complete_bytes])
            assert warcio_check(prefix).returncode == 0, f"{path}: records before the torn one"
            torn += 1
    return torn


# -- the tests ---------------------------------------------------------------------------------

def test_twenty_sigkills_then_a_complete_run_leave_the_record_an_uninterrupted_run_makes(
        outlets, tmp_path):
    registry = tmp_path / "outlets.toml"
    registry.write_text(outlets.registry, encoding="utf-8")
    (tmp_path / "reference").mkdir()
    (tmp_path / "killed").mkdir()
    reference = Collection(tmp_path / "reference", registry)
    whole = reference.run()["seconds"]
    assert 0.5 < whole < 20, whole
    # Kills land within the first quarter of a whole run's time, so each run
    # gets a little further and the kills spread over discovery, listings,
    # captures and the end of the work, not just its first seconds.
    budget = whole / 4

    assert unlogged_requests(outlets.seen(), reference.db) == []
    before = outlets.marks()
    killed = Collection(tmp_path / "killed", registry)
    rng = random.Random(SEED)
    while sum(r["killed"] for r in killed.runs) < KILLS:
        assert len(killed.runs) < 3 * KILLS, "kills keep missing their runs"
        run = killed.run(kill_after=rng.uniform(0, budget))
        if not run["killed"]:  # it finished first: later runs have less to do
            budget = run["seconds"]
        elif not rows(killed.db, "SELECT 1 FROM snapshots LIMIT 1"):
            # No capture committed yet (a loaded machine, captures written after their extraction): the
            # next kills may land later, so that they reach the capturing too, never past a whole run.
            budget = min(budget * 1.25, whole)
    killed.run()
    assert not killed.runs[-1]["killed"]
    # Every request a server saw across the kills is in the ledger: its intent was
    # committed before it was sent, and the next run closed it as interrupted.
    seen = outlets.seen(before)
    assert unlogged_requests(seen, killed.db) == []
    assert rows(killed.db, "SELECT COUNT(*) FROM request_intents i WHERE NOT EXISTS "
                           "(SELECT 1 FROM requests r WHERE r.intent_id = i.id)") == [(0,)]
    interrupted = rows(killed.db, "SELECT warc_file IS NOT NULL FROM requests WHERE result = 'interrupted'")
    print(f"\n{KILLS} kills: {len(seen)} requests seen by the servers, 0 without a ledger row; "
          f"{len(interrupted)} closed as interrupted ({sum(r[0] for r in interrupted)} from their WARC record)")

    for collection in (reference, killed):
        assert_record_sound(collection.db)
        assert_snapshots_point_at_whole_records(collection.db, collection.warc_dir)
    assert assert_warcs_sound(reference) == 0
    assert_warcs_sound(killed)  # torn final records of killed runs are allowed, and found
    # The kills interrupted the capturing itself, not only the runs after it.
    assert len(rows(killed.db, "SELECT DISTINCT run_id FROM snapshots")) >= 2
    assert captured_keys(killed.db) == captured_keys(reference.db)
    assert len(captured_keys(reference.db)) >= 3 * ARTICLES_PER_OUTLET
    assert current_sources(killed.db) == current_sources(reference.db)
    # A run that never finished was killed; every run that exited finished.
    unfinished = {r[0] for r in rows(killed.db, "SELECT id FROM runs WHERE id NOT IN "
                                                "(SELECT run_id FROM run_finishes)")}
    killed_ids = {_run_id(p) for r in killed.runs if r["killed"] for p in r["warcs"]}
    assert unfinished and unfinished <= killed_ids


def _run_id(warc: Path) -> int:
    return int(re.match(r"run-(\d+)-", warc.name).group(1))


# -- dying after any commit, in-process ----------------------------------------------------

class Killed(BaseException):
    """The process died: nothing after this point happens."""


class DyingConnection:
    """A sqlite3 connection that dies right after its k-th COMMIT; dead, it refuses everything."""

    def __init__(self, conn, commits: int | None):
        self._conn = conn
        self.left = commits
        self.commits = 0

    def execute(self, sql, *params):
        if self.left == 0:
            raise Killed()
        cursor = self._conn.execute(sql, *params)
        if sql == "COMMIT":
            self.commits += 1
            if self.left is not None:
                self.left -= 1
                if self.left == 0:
                    raise Killed()
        return cursor

    def __getattr__(self, name):
        return getattr(self._conn, name)


def run_in_process(root: Path, registry_text: str, die_after: int | None = None) -> int:
    """Return the commits of one run done as the command does it, dying after the given commit."""
    store = Store(root / "record.db")
    connection = store.conn = DyingConnection(store.conn, die_after)
    ctx = None
    try:
        clock = Clock(NOW)
        sync_registry(store, parse_registry(registry_text), clock)
        ctx = RunContext.open(store, "run", clock=clock, vantage="v", warc_dir=root / "warc",
                              interval=0.01, allow_loopback=True, backoff=(0.01, 0.01))
        run_collection(ctx, active_outlets(ctx))
        if settings.RECHECKS_ENABLED:
            run_rechecks(ctx)
        ctx.finish()
    except Killed:
        assert die_after is not None
    finally:
        if ctx is not None and ctx.warc is not None:
            ctx.warc.close()
        connection._conn.close()
    return connection.commits


def test_a_run_that_dies_after_any_commit_is_resumed_by_the_next(tmp_path, farm):
    host = quiet_outlet(farm, 2)
    registry = replica.registry_toml({"alpha": host})
    (tmp_path / "reference").mkdir()
    commits = run_in_process(tmp_path / "reference", registry)
    assert commits > 10
    for k in range(1, commits):
        root = tmp_path / f"die-{k}"
        root.mkdir()
        run_in_process(root, registry, die_after=k)
        run_in_process(root, registry)
        assert_record_sound(root / "record.db")
        assert captured_keys(root / "record.db") == captured_keys(tmp_path / "reference" / "record.db"), k
        assert current_sources(root / "record.db") == current_sources(tmp_path / "reference" / "record.db"), k
