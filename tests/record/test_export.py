"""The committed record: export -> rebuild gives back the database, and nothing is ever rewritten."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from collector.cli.export import export as export_command
from collector.record import export as ex

from collector.record import fileformat, folder, tables

from collector.record import rebuild as rebuilding
from collector.clock import Clock
from collector.collect.context import RunContext
from collector.collect.pipeline import active_outlets, run_collection
from collector.collect.revisits import run_rechecks
from collector.registry import parse_registry
from collector.record.store import Store
from collector.record.registry_mirror import sync_registry
from testing import replica
from tests.conftest import TEST_INTERVAL
from tests.collect.test_pipeline import outlets  # noqa: F401  (the loopback outlets fixture)

NOW = replica.FEED_SNAPSHOT_TIME
DAY = datetime(2026, 8, 13, 5, 0, tzinfo=timezone.utc)


def dump(db_path) -> dict[str, list[tuple]]:
    """Return every record table's rows, sorted, as plain tuples (the tables export covers)."""
    conn = sqlite3.connect(str(db_path))
    try:
        out = {}
        for table in tables.record_tables(conn):
            cols = ", ".join(f'"{c}"' for c in tables.columns(conn, table))
            out[table] = sorted(conn.execute(f'SELECT {cols} FROM "{table}"').fetchall(), key=repr)
        return out
    finally:
        conn.close()


def indexed(db_path) -> list[tuple]:
    """Return the snapshots the search index holds, with its vocabulary (not a record table)."""
    conn = sqlite3.connect(str(db_path))
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.vocab USING fts5vocab(main, snapshots_fts, 'row')")
        return [*conn.execute("SELECT id FROM snapshots_fts_docsize ORDER BY id"),
                *conn.execute("SELECT term, doc, cnt FROM temp.vocab ORDER BY term")]
    finally:
        conn.close()


def tree_digest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def collect(store: Store, hosts, now, warc_dir) -> RunContext:
    """One run as `python -m collector run` makes it: sync, collect, revisit, finish."""
    registry = parse_registry(replica.registry_toml(hosts))
    ctx = RunContext.open(store, "run", clock=Clock(now), vantage="test-vantage", warc_dir=warc_dir,
                          interval=TEST_INTERVAL, allow_loopback=True, backoff=(0.02, 0.04),
                          connect_timeout=2.0, read_timeout=1.0, total_timeout=3.0)
    sync_registry(store, registry, ctx.clock)
    run_collection(ctx, active_outlets(ctx))
    run_rechecks(ctx)
    ctx.finish()
    return ctx


# -- a whole loopback record, the way the collect workflow handles it ---------------

def test_workflow_cycle_round_trips(tmp_path, outlets):  # noqa: F811
    """rebuild -> run -> export, twice: each rebuilt database equals the one exported."""
    record, warc = tmp_path / "record", tmp_path / "warc"
    first = Store(tmp_path / "first.db")
    collect(first, outlets, NOW, warc)
    one = ex.export_new(first, record, warc_dir=warc, now=NOW)
    assert one.path is not None and one.rows["snapshots"] > 0 and one.rows["capture_queue"] > 0
    assert one.warc_files and not one.missing_warc_files
    first.close()
    shutil.copyfile(tmp_path / "first.db", tmp_path / "cached.db")

    # The next job starts from the committed files only.
    rebuilding.rebuild(record, tmp_path / "second.db")
    assert dump(tmp_path / "second.db") == dump(tmp_path / "first.db")
    second = Store(tmp_path / "second.db")
    before = tree_digest(record)
    collect(second, outlets, NOW + timedelta(hours=2), warc)
    two = ex.export_new(second, record, warc_dir=warc, now=NOW + timedelta(hours=2))
    second.close()

    assert two.path is not None and two.path != one.path
    assert {k: v for k, v in tree_digest(record).items() if k in before} == before  # nothing rewritten
    assert folder.verify(record) == 2
    rebuilding.rebuild(record, tmp_path / "third.db")
    assert dump(tmp_path / "third.db") == dump(tmp_path / "second.db")
    searchable = indexed(tmp_path / "second.db")
    assert len(searchable) > 100 and indexed(tmp_path / "third.db") == searchable  # the search index too

    lines = [json.loads(x) for x in fileformat.read_text(two.path).splitlines()[1:]]
    # The collect workflow keeps its database in the Actions cache: a copy of the first
    # database, saved after its export, is brought in sync by reading only the second file.
    files, counts = rebuilding.resume(record, tmp_path / "cached.db")
    assert files == 1 and counts["snapshots"] == two.rows["snapshots"]
    assert dump(tmp_path / "cached.db") == dump(tmp_path / "second.db")
    # ...and goes on like the one it equals: its next run exports where the record left off.
    cached = Store(tmp_path / "cached.db")
    collect(cached, outlets, NOW + timedelta(hours=4), warc)
    three = ex.export_new(cached, record, warc_dir=warc, now=NOW + timedelta(hours=4))
    cached.close()
    assert three.path is not None and folder.verify(record) == 3
    rebuilding.rebuild(record, tmp_path / "fourth.db")
    assert dump(tmp_path / "fourth.db") == dump(tmp_path / "cached.db")

    # The hour-later listings repeat the first run's entries: written as ranges, not rows.
    listed = [x for x in lines if x["t"] == "listing_entries"]
    assert listed and all("parts" in x for x in listed)
    assert any(isinstance(p, list) for x in listed for p in x["parts"])
    # Captured articles were revisited (the 1 h slot fell due) and their unchanged text is a reference.
    rechecks = [x["r"] for x in lines if x["t"] == "snapshots" and x["r"]["purpose"] == "recheck"]
    assert rechecks and all(isinstance(r["text"], dict) and "$same" in r["text"] for r in rechecks)
    # Queue rows made in run 1 are not written again unless they changed.
    keys = [x.get("u", x.get("r"))["url_key"] for x in lines if x["t"] == "capture_queue"]
    assert len(keys) == len(set(keys))
    # The WARC manifest names each file with its digest and the release that publishes it.
    conn = sqlite3.connect(str(tmp_path / "third.db"))
    for name, sha, size, tag in conn.execute("SELECT name, sha256, bytes, release_tag FROM warc_files"):
        assert hashlib.sha256((warc / name).read_bytes()).hexdigest() == sha
        assert (warc / name).stat().st_size == size and tag == "warc-" + name[:10].replace("/", "-")
    conn.close()


# -- direct rows: each rule on its own ------------------------------------------------

def _run(store, when=DAY, command="run") -> int:
    return store.insert("runs", {"command": command, "started_at": when.isoformat(), "vantage": "t",
                                 "software_version": "0", "settings": {"MIN_INTERVAL_SECONDS": 2.0,
                                                                        "NOTE": "x" * 80}})


def _article(store, run_id, n) -> int:
    store.insert("outlet_groups", {"id": "g", "name": "G", "name_bn": "জি"}) if n == 0 else None
    if n == 0:
        store.insert("outlets", {"id": "o", "name": "O", "name_bn": "ও", "homepage": "https://o.test/",
                                 "group_id": "g", "first_seen_at": "t", "last_synced_at": "t"})
    return store.insert("articles", {"outlet_id": "o", "url_key": f"https://o.test/{n}",
                                     "url": f"https://o.test/{n}", "first_seen_at": "t", "first_seen_run": run_id})


def _snapshot(store, run_id, article_id, text, purpose="capture") -> int:
    request_id = store.insert("requests", {
        "run_id": run_id, "purpose": purpose, "method": "GET", "url": "https://o.test/a", "attempt": 1,
        "sent": 1, "started_at": "t", "finished_at": "t", "result": "ok", "vantage": "t",
        "elapsed_ms": 12.345, "bytes": 1000})
    return store.insert("snapshots", {
        "article_id": article_id, "request_id": request_id, "run_id": run_id, "purpose": purpose,
        "captured_at": "t", "status_code": 200, "final_url": "https://o.test/a", "headline": "শিরোনাম",
        "text": text, "html_sha256": "0" * 64, "warc_file": "w", "warc_offset": 0, "warc_length": 1,
        "extractor": "e", "extractor_info": {"trafilatura": "2.3.1", "pad": "y" * 80}})


TEXT = "প্রধানমন্ত্রীর কার্যালয়ে বৈঠক হয়েছে। " * 20


@pytest.fixture
def small(tmp_path):
    store = Store(tmp_path / "small.db")
    run_id = _run(store)
    article = _article(store, run_id, 0)
    _snapshot(store, run_id, article, TEXT)
    store.insert("capture_queue", {"url_key": "https://o.test/0", "url": "https://o.test/0", "outlet_id": "o",
                                   "article_id": article, "reason": "recent", "queued_at": "t",
                                   "queued_run": run_id})
    yield store, article, tmp_path / "record"
    store.conn.close()


def test_exporting_again_writes_nothing(small):
    store, _article_id, record = small
    assert ex.export_new(store, record, now=DAY).path is not None
    before = tree_digest(record)
    again = ex.export_new(store, record, now=DAY + timedelta(hours=1))
    assert again.path is None and again.rows == {}
    assert tree_digest(record) == before


def test_only_new_and_changed_rows_are_written(small):
    store, article, record = small
    ex.export_new(store, record, now=DAY)
    run2 = _run(store, DAY + timedelta(hours=1))
    store.execute("UPDATE capture_queue SET state = 'captured', done_at = 'later' WHERE url_key = ?",
                  ("https://o.test/0",))
    _snapshot(store, run2, article, TEXT, purpose="recheck")
    second = ex.export_new(store, record, now=DAY + timedelta(hours=1))
    assert second.rows == {"runs": 1, "requests": 1, "snapshots": 1, "capture_queue": 1}
    lines = [json.loads(x) for x in fileformat.read_text(second.path).splitlines()]
    header, rows = lines[0], lines[1:]
    assert header["after"]["snapshots"] == 1 and header["through"]["snapshots"] == 2
    queue = [x for x in rows if x["t"] == "capture_queue"]
    assert queue == [{"t": "capture_queue", "u": queue[0]["u"]}] and queue[0]["u"]["state"] == "captured"
    snapshot = next(x["r"] for x in rows if x["t"] == "snapshots")
    assert snapshot["text"] == {"$same": 1}  # the unchanged text of the article's earlier snapshot
    assert snapshot["extractor_info"] == {"$same": 1}
    assert snapshot["headline"] == "শিরোনাম"  # short values are written out
    run = next(x["r"] for x in rows if x["t"] == "runs")
    assert run["settings"] == {"$same": 1}


def test_changed_text_is_written_out(small):
    store, article, record = small
    run2 = _run(store, DAY + timedelta(hours=1))
    _snapshot(store, run2, article, TEXT + " সংশোধিত", purpose="recheck")
    result = ex.export_new(store, record, now=DAY)
    rows = [json.loads(x) for x in fileformat.read_text(result.path).splitlines()[1:]]
    texts = [x["r"]["text"] for x in rows if x["t"] == "snapshots"]
    assert texts == [TEXT, TEXT + " সংশোধিত"]


def test_round_trip_of_direct_rows_with_state_changes(small, tmp_path):
    store, article, record = small
    ex.export_new(store, record, now=DAY)
    for hour in range(1, 4):
        run_id = _run(store, DAY + timedelta(hours=hour))
        _snapshot(store, run_id, article, TEXT if hour != 2 else TEXT + "!", purpose="recheck")
        store.execute("UPDATE outlets SET last_synced_at = ? WHERE id = 'o'", (f"h{hour}",))
        store.insert("run_finishes", {"run_id": run_id, "finished_at": "t", "counts": "{}"})
        ex.export_new(store, record, now=DAY + timedelta(hours=hour))
    store.checkpoint()
    rebuilding.rebuild(record, tmp_path / "rebuilt.db")
    assert dump(tmp_path / "rebuilt.db") == dump(tmp_path / "small.db")
    assert folder.verify(record) == 4


def _resumable(small, tmp_path) -> tuple[Path, Path]:
    """Export the small database twice (two files); return (record, a copy in sync with file 1)."""
    store, article, record = small
    ex.export_new(store, record, now=DAY)
    store.checkpoint()
    shutil.copyfile(store.path, tmp_path / "cached.db")
    _snapshot(store, _run(store, DAY + timedelta(hours=1)), article, TEXT + " নতুন", purpose="recheck")
    store.execute("UPDATE capture_queue SET state = 'captured' WHERE url_key = 'https://o.test/0'")
    ex.export_new(store, record, now=DAY + timedelta(hours=1))
    store.checkpoint()
    return record, tmp_path / "cached.db"


def test_resume_reads_only_the_later_files_and_equals_a_rebuild(small, tmp_path):
    record, cached = _resumable(small, tmp_path)
    files, counts = rebuilding.resume(record, cached)
    assert files == 1 and counts == {"runs": 1, "requests": 1, "snapshots": 1, "capture_queue": 1}
    assert dump(cached) == dump(tmp_path / "small.db")
    assert rebuilding.resume(record, cached) == (0, {})  # in sync already: reads nothing
    # The state tables' shadows were brought in sync too: nothing is found to export again.
    again = ex.export_new(Store(cached), record, now=DAY + timedelta(hours=2))
    assert again.path is None


@pytest.mark.parametrize("change, refusal", [
    ("INSERT INTO runs (command, started_at, vantage, software_version, settings) "
     "VALUES ('run', 'later', 't', '0', '{}')", "never exported"),
    ("UPDATE capture_queue SET state = 'failed'", "differ from the record"),
])
def test_resume_refuses_a_database_holding_what_the_record_does_not(small, tmp_path, change, refusal):
    record, cached = _resumable(small, tmp_path)
    conn = sqlite3.connect(cached)
    conn.execute(change)
    conn.commit()
    conn.close()
    before = dump(cached)
    with pytest.raises(fileformat.ExportError, match=refusal):
        rebuilding.resume(record, cached)
    assert dump(cached) == before  # left as it was


def test_resume_refuses_a_changed_file_and_a_foreign_database(small, tmp_path):
    record, cached = _resumable(small, tmp_path)
    first = folder.batches(record)[0]
    original = first.read_bytes()
    first.write_bytes(fileformat.file_bytes(fileformat.read_text(first).replace("কার্যালয়ে", "কার্যালয়", 1), first))
    with pytest.raises(fileformat.ExportError, match="was changed"):
        rebuilding.resume(record, cached)
    first.write_bytes(original)
    other = Store(tmp_path / "other.db")
    other.close()
    with pytest.raises(fileformat.ExportError, match="not brought in sync"):
        rebuilding.resume(record, tmp_path / "other.db")
    with pytest.raises(fileformat.ExportError, match="does not exist"):
        rebuilding.resume(record, tmp_path / "absent.db")


def test_blobs_floats_and_nulls_survive(tmp_path):
    store = Store(tmp_path / "odd.db")
    store.execute("CREATE TABLE odd_state (k TEXT PRIMARY KEY, b BLOB, f REAL, n INTEGER)")
    store.execute("INSERT INTO odd_state VALUES ('a', ?, 0.1, NULL)", (b"\x00\xff bytes",))
    store.execute("INSERT INTO odd_state VALUES ('b', NULL, 1e-300, 9007199254740993)")
    ex.export_new(store, tmp_path / "record", now=DAY)
    store.checkpoint()
    rebuilt = Store(tmp_path / "rebuilt-schema.db")  # the table is not in the schema: make it first
    rebuilt.execute("CREATE TABLE odd_state (k TEXT PRIMARY KEY, b BLOB, f REAL, n INTEGER)")
    rebuilt.close()
    counts = {}
    conn = sqlite3.connect(str(tmp_path / "rebuilt-schema.db"))
    conn.row_factory = sqlite3.Row
    for path in folder.batches(tmp_path / "record"):
        rebuilding._load(conn, path, counts, {})
    assert conn.execute("SELECT * FROM odd_state ORDER BY k").fetchall() == \
        store.conn.execute("SELECT * FROM odd_state ORDER BY k").fetchall()
    conn.close()
    store.conn.close()


# -- refusals --------------------------------------------------------------------------

def test_a_database_that_does_not_continue_the_record_is_refused(small, tmp_path):
    store, _article_id, record = small
    ex.export_new(store, record, now=DAY)
    other = Store(tmp_path / "other.db")
    _run(other, DAY, command="archive")  # run 1 differs from the exported run 1
    with pytest.raises(fileformat.ExportError, match="does not continue"):
        ex.export_new(other, record, now=DAY)
    other.conn.close()


def test_a_changed_or_missing_file_breaks_the_chain(small):
    store, article, record = small
    ex.export_new(store, record, now=DAY)
    _snapshot(store, _run(store), article, "new")
    second = ex.export_new(store, record, now=DAY + timedelta(days=1))
    first = folder.batches(record)[0]
    assert folder.verify(record) == 2
    original = first.read_bytes()
    first.write_bytes(fileformat.file_bytes(fileformat.read_text(first).replace("কার্যালয়ে", "কার্যালয়", 1), first))
    with pytest.raises(fileformat.ExportError, match="chain broken"):
        folder.verify(record)
    first.write_bytes(original)
    first.unlink()
    with pytest.raises(fileformat.ExportError, match="sequence 2, expected 1"):
        folder.verify(record)
    assert second.path.exists()


def test_rebuild_never_overwrites(small, tmp_path):
    store, _article_id, record = small
    ex.export_new(store, record, now=DAY)
    (tmp_path / "there.db").write_bytes(b"")
    with pytest.raises(fileformat.ExportError, match="exists"):
        rebuilding.rebuild(record, tmp_path / "there.db")


def test_files_are_partitioned_by_day_and_numbered(small):
    store, article, record = small
    first = ex.export_new(store, record, now=DAY)
    _snapshot(store, _run(store), article, "x")
    second = ex.export_new(store, record, now=DAY + timedelta(days=1))
    assert first.path.relative_to(record).as_posix() == "2026/08/13/000001.jsonl.bz2"
    assert second.path.relative_to(record).as_posix() == "2026/08/14/000002.jsonl.bz2"


def test_release_tag_follows_the_warc_files_day():
    assert ex.release_tag("2026/08/13/run-000001-043000-abcd.warc.gz", DAY) == "warc-2026-08-13"
    assert ex.release_tag("odd.warc.gz", DAY) == "warc-2026-08-13"


def test_command_line(small, tmp_path):
    store, _article_id, record = small
    store.close()
    runner = CliRunner()
    db = str(tmp_path / "small.db")
    wrote = runner.invoke(export_command, ["new", "--db", db, "--out", str(record)])
    assert wrote.exit_code == 0 and "wrote" in wrote.output
    again = runner.invoke(export_command, ["new", "--db", db, "--out", str(record)])
    assert again.exit_code == 0 and "nothing new" in again.output
    unsigned = runner.invoke(export_command, ["verify", "--out", str(record)])  # signing: tests/evidence/
    assert unsigned.exit_code == 1 and "000001.jsonl.bz2 has no signature" in unsigned.output
    rebuilt = runner.invoke(export_command, ["rebuild", "--out", str(record), "--db", str(tmp_path / "r.db")])
    assert rebuilt.exit_code == 0, rebuilt.output
    assert "read 1/1 export files (100%)" in rebuilt.output  # progress, on standard error
    refused = runner.invoke(export_command, ["rebuild", "--out", str(record), "--db", str(tmp_path / "r.db")])
    assert refused.exit_code == 1 and "exists" in refused.output
    resumed = runner.invoke(export_command, ["rebuild", "--resume", "--out", str(record), "--db", str(tmp_path / "r.db")])
    assert resumed.exit_code == 0 and "already in sync" in resumed.output, resumed.output
    for command in ("new", "rebuild", "verify"):
        assert "Example:" in runner.invoke(export_command, [command, "--help"]).output


def test_a_database_not_in_sync_with_the_folder_reads_the_folder(small):
    """A database whose export bookkeeping is lost still writes only what the files lack."""
    store, _article_id, record = small
    ex.export_new(store, record, now=DAY)
    store.execute("DELETE FROM export_head")
    store.execute('DROP TABLE "export_shadow_capture_queue"')
    assert ex.export_new(store, record, now=DAY).path is None
    store.execute("UPDATE capture_queue SET state = 'failed' WHERE url_key = 'https://o.test/0'")
    store.execute("DELETE FROM export_head")
    result = ex.export_new(store, record, now=DAY)
    assert result.rows == {"capture_queue": 1}


def test_a_column_added_by_a_migration_is_carried(small, tmp_path):
    store, _article_id, record = small
    ex.export_new(store, record, now=DAY)
    store.execute("ALTER TABLE capture_queue ADD COLUMN priority INTEGER NOT NULL DEFAULT 5")
    result = ex.export_new(store, record, now=DAY)
    assert result.rows == {"capture_queue": 1}  # the state row now has a value the files lack
    assert ex.export_new(store, record, now=DAY).path is None


def test_an_export_dated_before_the_last_file_is_filed_after_it(small):
    store, article, record = small
    ex.export_new(store, record, now=DAY + timedelta(days=1))
    _snapshot(store, _run(store), article, "replayed")
    late = ex.export_new(store, record, now=DAY)  # a replay's clock, a day behind
    assert late.path.relative_to(record).as_posix() == "2026/08/14/000002.jsonl.bz2"
    assert folder.last_batch(record) == late.path and folder.verify(record) == 2


# -- the files as stored ---------------------------------------------------------------

def test_export_files_are_bzip2_json_lines_any_tool_can_read(small):
    import bz2

    store, _article_id, record = small
    path = ex.export_new(store, record, now=DAY).path
    assert path.name == "000001.jsonl.bz2" and path.read_bytes()[:3] == b"BZh"
    text = bz2.decompress(path.read_bytes()).decode("utf-8")  # what `bzcat` prints
    header, *rows = [json.loads(line) for line in text.splitlines()]
    assert header["batch"] == 1 and header["record"] == "takedownwatch"
    assert any(r["t"] == "snapshots" and r["r"]["text"] == TEXT for r in rows)  # Bangla as written
    # The same rows written again compress to the same bytes: a file is reproducible from its text.
    assert fileformat.file_bytes(text, path) == path.read_bytes()


def test_plain_files_of_the_first_exports_chain_with_compressed_ones(small, tmp_path):
    """A record begun with uncompressed .jsonl files goes on, verifies and rebuilds the same."""
    store, article, record = small
    first = ex.export_new(store, record, now=DAY).path
    plain = first.with_name("000001.jsonl")
    plain.write_text(fileformat.read_text(first), encoding="utf-8")
    first.unlink()
    _snapshot(store, _run(store, DAY + timedelta(hours=1)), article, TEXT + " আরও", purpose="recheck")
    store.execute("UPDATE export_head SET batch = '2026/08/13/000001.jsonl', sha256 = ?",
                  (fileformat.file_sha256(plain),))
    second = ex.export_new(store, record, now=DAY + timedelta(hours=1))
    assert second.path.name == "000002.jsonl.bz2"
    assert fileformat.read_header(second.path)["previous_sha256"] == fileformat.file_sha256(plain)
    assert folder.verify(record) == 2
    store.checkpoint()
    rebuilding.rebuild(record, tmp_path / "mixed.db")
    assert dump(tmp_path / "mixed.db") == dump(tmp_path / "small.db")


def test_a_truncated_file_is_reported_not_half_read(small, tmp_path):
    store, article, record = small
    ex.export_new(store, record, now=DAY)
    _snapshot(store, _run(store), article, "x")
    path = ex.export_new(store, record, now=DAY + timedelta(hours=1)).path
    path.write_bytes(path.read_bytes()[:-40])
    with pytest.raises(fileformat.ExportError, match="cannot read its header|unreadable"):
        folder.verify(record)
    with pytest.raises(fileformat.ExportError, match=str(path.name)):
        rebuilding.rebuild(record, tmp_path / "half.db")


def test_repeated_entries_rebuild_as_the_listing_had_them_and_a_bad_range_is_refused(small, tmp_path):
    store, _article_id, record = small
    run_id = _run(store, DAY)

    def listing(urls):
        listing_id = store.insert("listings", {"run_id": run_id, "outlet_id": "o", "url": "https://o.test/feed",
                                               "fetched_at": "t", "kind": "rss", "entry_count": len(urls)})
        for position, url in enumerate(urls):
            store.insert("listing_entries", {"listing_id": listing_id, "position": position, "url": url,
                                             "url_key": url, "title": f"শিরোনাম {url[-1]}"})

    listing(["https://o.test/1", "https://o.test/2", "https://o.test/3"])
    ex.export_new(store, record, now=DAY)
    listing(["https://o.test/4", "https://o.test/1", "https://o.test/2", "https://o.test/3"])
    second = ex.export_new(store, record, now=DAY + timedelta(hours=1)).path
    store.checkpoint()
    (line,) = [x for x in map(json.loads, fileformat.read_text(second).splitlines()[1:]) if x["t"] == "listing_entries"]
    assert line["parts"][1:] == [[0, 3]] and line["parts"][0]["url"] == "https://o.test/4"
    rebuilding.rebuild(record, tmp_path / "good.db")
    assert dump(tmp_path / "good.db") == dump(tmp_path / "small.db")

    text = fileformat.read_text(second).replace(',[0,3]]', ',[1,3]]')  # one entry more than the base listing holds
    assert text != fileformat.read_text(second)
    second.write_bytes(fileformat.file_bytes(text, second))
    with pytest.raises(fileformat.ExportError, match="repeats entries listing 1 lacks"):
        rebuilding.rebuild(record, tmp_path / "bad.db")


def test_a_stale_partial_file_of_a_killed_export_does_not_stop_the_next(small):
    # A killed export leaves NNNNNN.jsonl.bz2.partial behind; the next export
    # of that number replaces it, and no partial is left to be committed.
    store, _article, record = small
    stale = record / "2026/08/13/000001.jsonl.bz2.partial"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"half an export")
    first = ex.export_new(store, record, now=DAY)
    assert first.path.relative_to(record).as_posix() == "2026/08/13/000001.jsonl.bz2"
    assert fileformat.read_header(first.path)["batch"] == 1
    assert not list(record.rglob("*.partial"))
    assert folder.verify(record) == 1


def test_a_partial_file_is_never_committed():
    # commit_record.sh stages the record folder with `git add`, which skips ignored files.
    import subprocess

    root = Path(__file__).resolve().parents[2]
    probe = "data/record/2026/08/13/000001.jsonl.bz2.partial"
    ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", probe], cwd=root)
    assert ignored.returncode == 0, f"{probe} is not ignored by git"


def test_export_new_takes_the_time_from_now(small, tmp_path):
    """`export new --now` files the export under that day and writes that time in its header."""
    store, _article_id, record = small
    store.close()
    db = str(tmp_path / "small.db")
    result = CliRunner().invoke(export_command, ["new", "--db", db, "--out", str(record),
                                                 "--now", "2027-03-04T05:06:07Z"])
    assert result.exit_code == 0, result.output
    (path,) = folder.batches(record)
    assert path.relative_to(record).as_posix().startswith("2027/03/04/")
    assert fileformat.read_header(path)["written_at"] == "2027-03-04T05:06:07Z"
