"""One record from many writers: each (vantage, shard) job its own stream, merged deterministically."""

from __future__ import annotations

import shutil
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from collector.cli.export import export as export_command
from collector.clock import Clock
from collector.collect.context import RunContext
from collector.collect.pipeline import active_outlets, run_collection
from collector.publish.cells import read_block
from collector.publish.figures import TOTAL_ID, cells_of, membership
from collector.publish.periods import month
from collector.record import export as ex, merge, rebuild as rebuilding, streams, tables
from collector.record.fileformat import ExportError, read_header
from collector.record.folder import batches
from collector.record.registry_mirror import sync_registry
from collector.record.store import Store
from collector.registry import parse_registry
from testing import replica
from tests.conftest import TEST_INTERVAL
from tests.collect.test_pipeline import outlets  # noqa: F401  (the loopback outlets fixture)

NOW = replica.FEED_SNAPSHOT_TIME
# Each stream's outlets, as two shards would split them (fixed here: the farm's addresses, which shards
# hash, differ from test to test).
SHARDS = {"hosted-1of2": ["robotsmap"], "hosted-2of2": ["homelink"]}


def _collect(db, hosts, name, only, when, warc):
    """One job of a stream: its own database, its shard's outlets, a run as `run --stream` makes it."""
    store = Store(db)
    with store.transaction() as conn:
        streams.set_stream(conn, name)
    registry = parse_registry(replica.registry_toml(hosts))
    ctx = RunContext.open(store, "run", clock=Clock(when), vantage="hosted", warc_dir=warc,
                          interval=TEST_INTERVAL, allow_loopback=True, backoff=(0.02, 0.04),
                          connect_timeout=2.0, read_timeout=1.0, total_timeout=3.0)
    sync_registry(store, registry, ctx.clock)
    run_collection(ctx, active_outlets(ctx, only))
    ctx.finish()
    return store


_BUILT: dict[str, Path] = {}  # the record is collected once per session and copied for each test


@pytest.fixture
def record(tmp_path, tmp_path_factory, request):
    """A record written by two shard jobs, each exporting twice into its own stream folder."""
    if "root" not in _BUILT:
        hosts = request.getfixturevalue("outlets")
        built = tmp_path_factory.mktemp("streams")
        root, warc = built / "record", built / "warc"
        for hours in (0, 2):
            for name, only in SHARDS.items():
                when = NOW + timedelta(hours=hours)
                store = _collect(built / f"{name}.db", hosts, name, only, when, warc)
                assert ex.export_new(store, streams.folder(root, name), warc_dir=warc, now=when).path is not None
                store.close()
        _BUILT["root"] = built
    shutil.copytree(_BUILT["root"], tmp_path, dirs_exist_ok=True)
    return tmp_path / "record"


def _rows(db) -> dict[str, set[tuple]]:
    conn = sqlite3.connect(db)
    try:
        return {t: set(conn.execute(f'SELECT * FROM "{t}"')) for t in tables.record_tables(conn)
                if tables.appended_by_id(conn, t)}
    finally:
        conn.close()


def test_each_stream_allocates_ids_in_its_own_range(tmp_path, record):
    for name in SHARDS:
        conn = sqlite3.connect(tmp_path / f"{name}.db")
        for table in ("runs", "requests", "listings", "listing_entries", "articles", "snapshots"):
            low, high = conn.execute(f"SELECT MIN(id), MAX(id) FROM {table}").fetchone()
            assert low == streams.base(name) + 1 and streams.in_range(name, high), (name, table)
        conn.close()
        assert all(read_header(f)["stream"] == name for f in batches(streams.folder(record, name)))
    assert streams.base(None) == 0 and len({streams.base(n) for n in SHARDS}) == 2


def test_merge_is_the_union_and_byte_identical_whatever_order_streams_are_read(tmp_path, record):
    found = merge.stream_folders([record])
    assert list(found) == sorted(SHARDS)
    merge.merge(found, tmp_path / "a.db")
    merge.merge(dict(reversed(list(found.items()))), tmp_path / "b.db")
    assert (tmp_path / "a.db").read_bytes() == (tmp_path / "b.db").read_bytes()

    merged = _rows(tmp_path / "a.db")
    parts = [_rows(tmp_path / f"{name}.db") for name in SHARDS]
    for table, rows in merged.items():
        assert rows == set().union(*(p.get(table, set()) for p in parts)), table
    assert all(p["snapshots"] for p in parts)  # both shards captured something: a real union
    # The command reads every stream; the database it writes is read, never exported.
    result = CliRunner().invoke(export_command, ["rebuild", "--out", str(record), "--db", str(tmp_path / "c.db")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "c.db").read_bytes() == (tmp_path / "a.db").read_bytes()
    with pytest.raises(ExportError, match="merges every stream"):
        ex.export_new(Store(tmp_path / "c.db"), tmp_path / "elsewhere")


def test_site_figures_count_every_stream(tmp_path, record):
    merge.rebuild_record([record], tmp_path / "all.db")

    def captured(db) -> int:
        store = Store(db)
        block = read_block(store, "2026-08")
        cells = cells_of(block, membership(store), [month("2026-08")])
        store.close()
        return cells[(TOTAL_ID, "2026-08")].counts["articles_captured"]

    each = [captured(tmp_path / f"{name}.db") for name in SHARDS]
    assert all(each) and captured(tmp_path / "all.db") == sum(each)


def test_verify_checks_every_stream_and_names_a_tampered_one(record):
    runner = CliRunner()
    result = runner.invoke(export_command, ["verify", "--chain-only", "--out", str(record)])
    assert result.exit_code == 0, result.output
    assert "stream hosted-1of2: 2 export files" in result.output and "2 streams verified" in result.output
    victim = batches(streams.folder(record, "hosted-2of2"))[0]
    victim.write_bytes(victim.read_bytes()[:-40])
    result = runner.invoke(export_command, ["verify", "--chain-only", "--out", str(record)])
    assert result.exit_code == 1 and "stream hosted-2of2:" in result.output
    result = runner.invoke(export_command, ["rebuild", "--out", str(record), "--db", str(record.parent / "x.db")])
    assert result.exit_code == 1 and "stream hosted-2of2:" in result.output and not (record.parent / "x.db").exists()


def test_a_stream_exports_only_into_its_own_folder(tmp_path, record):
    store = Store(tmp_path / "hosted-1of2.db")
    with pytest.raises(ExportError, match="belongs to stream hosted-2of2"):
        ex.export_new(store, streams.folder(record, "hosted-2of2"))
    with pytest.raises(streams.StreamError, match="holds stream 'hosted-1of2'"):
        with store.transaction() as conn:
            streams.set_stream(conn, "hosted-2of2")
    store.close()
    # A stream's own working database is rebuilt from its folder alone, and knows its stream.
    rebuilding.rebuild(streams.folder(record, "hosted-1of2"), tmp_path / "again.db")
    again = Store(tmp_path / "again.db")
    assert streams.stream_of(again.conn) == "hosted-1of2"
    again.close()


def test_one_article_two_streams_recorded_is_one_article_in_the_merged_database(tmp_path, outlets):  # noqa: F811
    """The same outlet collected by two streams (two vantages of one shard): the same article addresses."""
    root, warc = tmp_path / "record", tmp_path / "warc"
    for name, hours in (("hosted-1of1", 1), ("bd-1of1", 0)):  # bd's job saw them first
        store = _collect(tmp_path / f"{name}.db", outlets, name, ["robotsmap"], NOW + timedelta(hours=hours), warc)
        ex.export_new(store, streams.folder(root, name), warc_dir=warc, now=NOW + timedelta(hours=hours))
        store.close()
    found = merge.stream_folders([root])
    merge.merge(found, tmp_path / "a.db")
    merge.merge(dict(reversed(list(found.items()))), tmp_path / "b.db")
    assert (tmp_path / "a.db").read_bytes() == (tmp_path / "b.db").read_bytes()
    each = {n: sqlite3.connect(tmp_path / f"{n}.db") for n in ("hosted-1of1", "bd-1of1")}
    conn = sqlite3.connect(tmp_path / "a.db")
    keys = {n: dict(c.execute("SELECT url_key, id FROM articles")) for n, c in each.items()}
    both = keys["bd-1of1"].keys() & keys["hosted-1of1"].keys()
    assert len(both) >= 3
    # One article per address: the earlier-seen stream's where both recorded it.
    assert dict(conn.execute("SELECT url_key, id FROM articles")) == {**keys["hosted-1of1"], **keys["bd-1of1"]}
    # Every snapshot of both streams is kept, with its own id, about the one article of its address.
    snapshots = {r[0]: r[1] for c in each.values() for r in c.execute("SELECT s.id, url_key FROM snapshots s "
                                                                      "JOIN articles a ON a.id = s.article_id")}
    merged = dict(conn.execute("SELECT s.id, a.url_key FROM snapshots s JOIN articles a ON a.id = s.article_id"))
    assert merged == snapshots and len({k for k in snapshots.values() if k in both}) == len(both)
    folded = conn.execute("SELECT table_name, stream, how, COUNT(*) FROM sync_merged GROUP BY 1, 2, 3").fetchall()
    assert ("articles", "hosted-1of1", "folded", len(both)) in folded
    assert ("article_urls", "hosted-1of1", "folded", len(both)) in folded
    assert all(row[1] == "hosted-1of1" for row in folded)


def test_two_streams_checks_of_one_slot_are_both_kept(tmp_path):
    root = tmp_path / "record"
    for name, seen in (("hosted-1of1", "2026-08-13T05:00:00Z"), ("bd-1of1", "2026-08-13T04:00:00Z")):
        store = Store(tmp_path / f"{name}.db")
        with store.transaction() as conn:
            streams.set_stream(conn, name)
        run = store.insert("runs", {"command": "run", "started_at": seen, "vantage": name,
                                    "software_version": "0", "settings": "{}"})
        article = store.insert("articles", {"outlet_id": "o", "url_key": "https://o.test/a", "url": "https://o.test/a",
                                            "first_seen_at": seen, "first_seen_run": run})
        for slot in ("1h", "24h"):
            store.insert("checks", {"article_id": article, "slot": slot, "due_at": seen, "performed_at": seen,
                                    "run_id": run, "url": "https://o.test/a", "result": "ok", "request_chain": "[]",
                                    "outcome": "present"})
        ex.export_new(store, streams.folder(root, name), now=NOW)
        store.close()
    merge.rebuild_record([root], tmp_path / "all.db")
    conn = sqlite3.connect(tmp_path / "all.db")
    (article,) = conn.execute("SELECT id FROM articles").fetchall()
    assert streams.in_range("bd-1of1", article[0])
    slots = sorted(conn.execute("SELECT slot, article_id FROM checks"))
    assert slots == sorted([("1h", article[0]), ("24h", article[0]), ("1h@hosted-1of1", article[0]),
                            ("24h@hosted-1of1", article[0])])
    assert conn.execute("SELECT COUNT(*) FROM sync_merged WHERE how = 'relabelled'").fetchone()[0] == 2


def test_stream_names_are_checked():
    assert streams.stream_name("Dhaka BD", (2, 4)) == "dhaka-bd-2of4"
    for bad in ("", "-x", "A", "x/y", "x" * 64):
        with pytest.raises(Exception, match="stream name"):
            streams.check_name(bad)


def test_a_working_database_is_rebuilt_from_its_own_stream_alone(tmp_path, record):
    """sync_database.sh rebuilds with --stream .: the default stream's folder holds the others' too."""
    store = Store(tmp_path / "default.db")
    store.insert("runs", {"command": "run", "started_at": "t", "vantage": "hosted", "software_version": "0",
                          "settings": "{}"})
    ex.export_new(store, record, now=NOW)
    store.close()
    runner = CliRunner()
    for stream, runs in ((".", 1), ("hosted-1of2", 2)):
        db = tmp_path / f"again-{stream}.db"
        result = runner.invoke(export_command, ["rebuild", "--out", str(record), "--db", str(db), "--stream", stream])
        assert result.exit_code == 0, result.output
        again = Store(db)
        assert streams.stream_of(again.conn) == (None if stream == "." else stream)
        assert again.one("SELECT COUNT(*) AS n FROM runs")["n"] == runs
        again.close()
    merged = tmp_path / "merged.db"
    assert runner.invoke(export_command, ["rebuild", "--out", str(record), "--db", str(merged)]).exit_code == 0
    assert Store(merged).one("SELECT COUNT(*) AS n FROM runs")["n"] == 1 + 2 + 2
    result = runner.invoke(export_command, ["rebuild", "--out", str(record), "--db", str(tmp_path / "x.db"),
                                            "--stream", "nosuch"])
    assert result.exit_code == 1 and "no stream nosuch" in result.output
