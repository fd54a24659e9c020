"""The bounded working database: every job works on it as on the full one, and the figures are the same."""

from __future__ import annotations

import hashlib
import json
import shutil
from datetime import timedelta

import pytest
from click.testing import CliRunner

from collector.cli.main import cli
from collector.clock import Clock
from collector.collect.context import RunContext
from collector.collect.prune import prune
from collector.collect.revisits import due_checks, run_rechecks
from collector.publish.cells import first_event
from collector.publish.history import History
from collector.publish.periods import week_start
from collector.publish.release import release
from collector.record import export
from collector.record.fileformat import ExportError
from collector.record.rebuild import rebuild
from collector.record.store import Store
from collector.wayback.history import candidates
from tests.collect.test_revisits import HEADLINE_NEW, ROBOTS_OPEN, T0, capture_article, page
from tests.conftest import TEST_INTERVAL
from testing.synthetic import NOW, SyntheticRecord, populate
from testing.farm import Reply


# The articles' paths are as long as real outlets' (an export repeats an address of 48 characters or more: its
# checks' addresses are repeated as {"$same": id}, which a pruned database must write as the full one does).
SLUG = "-as-long-as-the-slugs-real-outlets-write"


def news(name: str) -> str:
    """Return the path of one of the record fixture's articles."""
    return f"/news/{name}{SLUG}"


def context(db, tmp_path, now, name="warc"):
    return RunContext.open(Store(db), "test", clock=Clock(now), vantage="test", warc_dir=tmp_path / name,
                           allow_loopback=True, interval=TEST_INTERVAL, backoff=(0.02, 0.04),
                           connect_timeout=2.0, read_timeout=1.0, total_timeout=3.0)


def copy(source, target) -> None:
    """Copy a database file whole: its WAL written back first."""
    store = Store(source)
    store.checkpoint()
    store.conn.close()
    shutil.copyfile(source, target)


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def observed(db) -> dict:
    """Return what a run added that does not depend on ids: checks and events by article."""
    store = Store(db)
    try:
        return {
            "checks": sorted(tuple(r) for r in store.query(
                "SELECT article_id, slot, outcome, result FROM checks WHERE performed_at > ?",
                ((T0 + timedelta(days=500)).isoformat(),))),
            "events": sorted(tuple(r) for r in store.query(
                "SELECT article_id, kind, field, before, after FROM events")),
        }
    finally:
        store.conn.close()


@pytest.fixture
def record(farm, tmp_path):
    """Return (host, full database, record folder, article ids): one out of its window and three still revisited."""
    host = farm.add({"/robots.txt": ROBOTS_OPEN, news("old"): page(), news("same"): page(),
                     news("edited"): page(), news("gone"): page()})
    full = tmp_path / "full.db"
    ctx = context(full, tmp_path, T0)
    old = capture_article(ctx, "alpha", host.url(news("old")))
    ctx.finish()
    # Every slot of the old article performed (a year and more later): it is out of its window.
    ctx = context(full, tmp_path, T0 + timedelta(hours=8761))
    assert run_rechecks(ctx)["performed"] == 8
    ctx.finish()
    later = T0 + timedelta(days=400)
    ctx = context(full, tmp_path, later)
    ids = {name: capture_article(ctx, "alpha", host.url(news(name))) for name in ("same", "edited", "gone")}
    ctx.finish()
    ctx = context(full, tmp_path, later + timedelta(hours=30))
    assert run_rechecks(ctx)["performed"] == 9  # 1h, 6h and 24h of each
    ctx.finish()
    store = Store(full)
    export.export_new(store, tmp_path / "record", now=later + timedelta(hours=31))
    store.checkpoint()
    store.conn.close()
    return host, full, tmp_path / "record", {"old": old, **ids}


def test_every_job_works_on_the_pruned_database_as_on_the_full_one(record, tmp_path):
    host, full, folder, ids = record
    now = T0 + timedelta(days=400, hours=72, minutes=1)  # the 72 h slots fall due
    working = tmp_path / "working.db"
    copy(full, working)
    done = prune(working, folder, now, History.open(tmp_path / "published"))
    # The old article's 8 rechecks, and the 1 h and 6 h rechecks of the others (older than the newest hours;
    # each keeps its capture and latest). A database this small gains a page for each bookkeeping table.
    assert done.left_out["snapshots"] == 8 + 6
    store = Store(working)
    # The old article (out of its window) is known by its address still, and its rechecks are left out; the
    # others kept.
    assert store.one("SELECT COUNT(*) FROM articles WHERE id = ?", (ids["old"],))[0] == 1
    assert store.one("SELECT COUNT(*) FROM checks WHERE article_id = ?", (ids["old"],))[0] == 8  # its capture is kept
    assert store.one("SELECT COUNT(*) FROM checks WHERE article_id = ?", (ids["edited"],))[0] == 3
    for db in (full, working):  # the archive job finds the same queue
        assert candidates(Store(db), now) == candidates(Store(full), now)
        assert [d.article_id for d in due_checks(Store(db), now)] == [ids["same"], ids["edited"], ids["gone"]]
    store.conn.close()
    host.routes.update({news("edited"): page(headline=HEADLINE_NEW), news("gone"): Reply(404)})
    for db, name in ((full, "warc-full"), (working, "warc-working")):
        ctx = context(db, tmp_path, now, name)
        summary = run_rechecks(ctx)
        ctx.finish()
        assert summary["performed"] == 3, summary
    seen = observed(working)
    assert seen == observed(full)
    assert (ids["edited"], "changed", "headline") in {e[:3] for e in seen["events"]}  # the revisit compared
    # The pruned database's export continues the record, and the record rebuilds whole.
    written = export.export_new(Store(working), folder, now=now + timedelta(minutes=5))
    assert written.path is not None and written.rows["checks"] == 3
    counts = rebuild(folder, tmp_path / "rebuilt.db")
    assert counts["checks"] == 8 + 9 + 3


def test_pruning_refuses_rows_the_record_lacks_and_changes_nothing(record, tmp_path):
    _host, full, folder, _ids = record
    store = Store(full)
    store.insert("runs", {"command": "late", "started_at": "2027-02-06T00:00:00.000000Z", "vantage": "test",
                          "software_version": "0", "settings": {}})
    store.checkpoint()
    store.conn.close()
    before = digest(full)
    with pytest.raises(ExportError, match="never exported"):
        prune(full, folder, T0 + timedelta(days=403), History.open(tmp_path / "published"))
    assert digest(full) == before and not list(tmp_path.glob("*.pruning*"))
    result = CliRunner().invoke(cli, ["export", "prune", "--db", str(full), "--out", str(folder),
                                      "--published", str(tmp_path / "published")])
    assert result.exit_code == 1 and "prune refused" in result.output and digest(full) == before


def test_pruning_refuses_a_database_behind_the_record(record, tmp_path):
    _host, full, folder, _ids = record
    behind = tmp_path / "behind.db"
    copy(full, behind)
    store = Store(full)
    store.insert("runs", {"command": "next", "started_at": "2027-02-06T00:00:00.000000Z", "vantage": "test",
                          "software_version": "0", "settings": {}})
    export.export_new(store, folder)
    store.conn.close()
    before = digest(behind)
    with pytest.raises(ExportError, match="not in sync with"):
        prune(behind, folder, T0 + timedelta(days=403), History.open(tmp_path / "published"))
    assert digest(behind) == before


def two_groups(tmp_path):
    """Return (full database, its store, a SyntheticRecord on it, the groups): two groups of outlets, no row yet."""
    groups = {"national": ["n1", "n2", "n3", "n4"], "online": ["o1", "o2", "o3"]}
    full = tmp_path / "full.db"
    store = Store(full)
    r = SyntheticRecord(store)
    for group, members in groups.items():
        r.group(group)
        for outlet in members:
            r.outlet(outlet, group)
    return full, store, r, groups


def figures_record(tmp_path):
    """Return (full database, its record folder, the published history, when the next release is due).

    Nine weeks of two groups, exported; October and the first weeks of
    November are published, the rest of November is due at the instant returned.
    """
    full, store, r, groups = two_groups(tmp_path)
    populate(r, groups, weeks=9, per_week={"n1": 6, "o2": 5}, vary=True)
    r.request("n1", NOW - timedelta(days=70), "timeout")  # the record's first observation: left out, long published
    for n in range(40):  # requests of every week, by result
        r.request(f"n{n % 4 + 1}", NOW - timedelta(days=n * 1.5, minutes=n), ("ok", "timeout", "not_found")[n % 3])
    r.finish_run(NOW)
    with store.transaction() as conn:  # every queued address was captured: rows no job reads again but the figures'
        conn.execute("UPDATE capture_queue SET state = 'captured', done_at = queued_at")
    folder = tmp_path / "record"
    export.export_new(store, folder, now=NOW)
    store.conn.close()
    # October and the first weeks of November were published; the rest of November is due later.
    published = tmp_path / "published"
    first = week_start(NOW) - timedelta(days=7) + timedelta(hours=25)
    assert release(Store(full), first, History.open(published, published)).appended
    return full, folder, published, NOW + timedelta(days=9)


def test_published_figures_from_a_pruned_database_equal_the_full_rebuilds(tmp_path):
    full, folder, published, later = figures_record(tmp_path)
    working = tmp_path / "working.db"
    copy(full, working)
    done = prune(working, folder, later, History.open(published), figures=True)  # export prune --for-figures
    assert done.left_out.get("requests", 0) > 0  # October's requests: the published weeks', in the record
    assert done.left_out.get("capture_queue", 0) > 0  # and October's finished queue rows
    rebuilt = tmp_path / "rebuilt.db"
    rebuild(folder, rebuilt)
    outcomes = []
    for db in (rebuilt, working, full):  # full: never pruned, released as it always was
        kept = tmp_path / f"history-{db.stem}"
        shutil.copytree(published, kept)
        outcome = release(Store(db), later, History.open(kept, kept), write=False)
        assert outcome.periods and outcome.audit.passed
        outcomes.append(json.dumps([outcome.published, outcome.decisions], sort_keys=True, ensure_ascii=False))
    assert outcomes[0] == outcomes[1] == outcomes[2]
    # The record's first observation is not in the pruned database, but when it was is.
    first = "SELECT MIN(started_at) FROM requests"
    assert Store(working).one(first)[0] > Store(rebuilt).one(first)[0]
    assert first_event(Store(working)) == first_event(Store(rebuilt))


def test_pruning_counts_the_recent_ledger_back_from_the_databases_last_run(record, tmp_path):
    _host, full, folder, _ids = record
    result = CliRunner().invoke(cli, ["export", "prune", "--db", str(full), "--out", str(folder),
                                      "--published", str(tmp_path / "published")])
    assert result.exit_code == 0 and "pruned" in result.output, result.output
    store = Store(full)
    last = store.one("SELECT started_at FROM runs ORDER BY id DESC LIMIT 1")[0]
    recent = store.one("SELECT recent_from FROM prune_state")[0]
    # settings.WORKING_LEDGER_DAYS (2) before it, not before the wall clock's now
    assert last.startswith("2027-02-06") and recent.startswith("2027-02-04")


def test_a_database_pruned_lately_is_left_as_it_is(record, tmp_path):
    _host, full, folder, _ids = record
    args = ["export", "prune", "--db", str(full), "--out", str(folder), "--published", str(tmp_path / "published")]
    first = CliRunner().invoke(cli, [*args, "--unless-within", "20"])
    assert first.exit_code == 0 and "pruned" in first.output, first.output  # never pruned: due
    before = digest(full)
    again = CliRunner().invoke(cli, [*args, "--unless-within", "20"])
    assert again.exit_code == 0 and "left as it is" in again.output and digest(full) == before, again.output
    later = CliRunner().invoke(cli, [*args, "--unless-within", "20", "--now", "2027-02-07T08:00:00Z"])
    assert later.exit_code == 0 and "left as it is" not in later.output, later.output  # 26 hours after its last run


def test_a_streams_working_database_stays_its_streams(tmp_path):
    from collector.record import streams

    db, out = tmp_path / "stream.db", tmp_path / "record" / "streams" / "hosted-2"
    store = Store(db)
    with store.transaction() as conn:
        streams.set_stream(conn, "hosted-2")
    first = store.insert("runs", {"command": "run", "started_at": "2027-02-06T00:00:00.000000Z", "vantage": "v",
                                  "software_version": "0", "settings": {}})
    export.export_new(store, out)
    store.conn.close()
    prune(db, out, None, History.open(tmp_path / "published"))
    store = Store(db)
    assert streams.stream_of(store.conn) == "hosted-2" and streams.in_range("hosted-2", first)
    following = store.insert("runs", {"command": "run", "started_at": "2027-02-06T01:00:00.000000Z",
                                      "vantage": "v", "software_version": "0", "settings": {}})
    assert following == first + 1  # the stream's own range goes on
    assert export.export_new(store, out).rows == {"runs": 1}


def test_the_first_job_prunes_nothing_before_the_first_export(tmp_path):
    db, out = tmp_path / "first.db", tmp_path / "record"
    Store(db).conn.close()  # `export rebuild` of a record with no file yet: an empty database
    result = CliRunner().invoke(cli, ["export", "prune", "--db", str(db), "--out", str(out),
                                      "--published", str(tmp_path / "published")])
    assert result.exit_code == 0 and "left as it is" in result.output, result.output
    store = Store(db)  # a database with rows but no export file is still refused: its rows are in no record
    store.insert("runs", {"command": "run", "started_at": "2027-02-06T00:00:00.000000Z", "vantage": "v",
                          "software_version": "0", "settings": {}})
    store.conn.close()
    with pytest.raises(ExportError, match="holds no export file"):
        prune(db, out, None, History.open(tmp_path / "published"))
