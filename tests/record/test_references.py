"""A pruned database's rows may point into the record; the export checks every reference before it writes."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest

from collector.collect.prune import prune
from collector.publish.history import History
from collector import settings
from collector.record import export, references, shadows, streams
from collector.record.fileformat import ExportError
from collector.record.follow import tops
from collector.record.rebuild import rebuild
from collector.record.store import Store
from collector.record.tables import record_tables
from tests.collect.test_prune import copy, record  # noqa: F401 (record: the fixture)
from tests.collect.test_revisits import T0

NOW = T0 + timedelta(days=400, hours=72, minutes=1)


def new_run(store: Store, started: str) -> int:
    return store.insert("runs", {"command": "test", "started_at": started, "vantage": "test",
                                 "software_version": "0", "settings": {}})


def submission(store: Store, snapshot: int, run: int) -> int:
    """Record an archive check of a snapshot (the archive job's, for a capture it submitted before)."""
    return store.insert("archive_submissions", {"snapshot_id": snapshot, "run_id": run, "kind": "check",
                                                "url": "http://127.0.0.1/news/old", "status": "success",
                                                "recorded_at": "2027-02-09T00:00:00.000000Z"})


def files(folder) -> list:
    return sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())


def test_a_pruned_database_points_into_the_record_and_its_export_checks_it(record, tmp_path):  # noqa: F811
    _host, full, folder, ids = record
    working = tmp_path / "working.db"
    copy(full, working)
    prune(working, folder, NOW, History.open(tmp_path / "published"))
    store, whole = Store(working), Store(full)
    assert store.one("PRAGMA foreign_keys")[0] == 0 and whole.one("PRAGMA foreign_keys")[0] == 1
    held = {r[0] for r in store.query("SELECT id FROM snapshots")}
    left = max(r[0] for r in whole.query("SELECT id FROM snapshots WHERE article_id = ?", (ids["old"],))
               if r[0] not in held)  # a recheck's snapshot of the quiet article, left out: only the record has it
    run = new_run(store, "2027-02-09T00:00:00.000000Z")
    submission(store, left, run)
    written = export.export_new(store, folder, now=NOW)
    assert written.rows == {"runs": 1, "archive_submissions": 1}
    rebuilt = tmp_path / "rebuilt.db"
    rebuild(folder, rebuilt)  # refuses a row pointing at nothing (PRAGMA foreign_key_check)
    assert Store(rebuilt).one("SELECT snapshot_id FROM archive_submissions ORDER BY id DESC LIMIT 1")[0] == left

    # A snapshot id the record never had: the full database refuses it as it is written; the pruned one at export.
    never = whole.one("SELECT MAX(id) FROM snapshots")[0] + 1000
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
        submission(whole, never, new_run(whole, "2027-02-09T01:00:00.000000Z"))
    bad = submission(store, never, new_run(store, "2027-02-09T01:00:00.000000Z"))
    before = files(folder)
    with pytest.raises(ExportError, match=rf"archive_submissions row {bad}: snapshot_id = {never} is neither held"):
        export.export_new(store, folder, now=NOW + timedelta(hours=1))
    assert files(folder) == before
    assert store.one("SELECT COUNT(*) FROM archive_submissions WHERE id = ?", (bad,))[0] == 1  # kept, for a fix


def test_a_reference_above_what_the_record_holds_must_be_held(record, tmp_path):  # noqa: F811
    """An id at or below the record's last is in the record; above it, only a row the database holds will do."""
    _host, full, _folder, _ids = record
    store = Store(full)
    run = new_run(store, "2027-02-09T00:00:00.000000Z")
    top = store.one("SELECT MAX(id) FROM snapshots")[0]
    with references.unchecked(store.conn):  # as a bug writing with the keys off would
        assert store.one("PRAGMA foreign_keys")[0] == 0
        bad = submission(store, top + 1, run)
    assert store.one("PRAGMA foreign_keys")[0] == 1  # put back as it was
    assert references.unresolved(store.conn, {"snapshots": top}, (0, 10**12)) == [
        f"archive_submissions row {bad}: snapshot_id = {top + 1} is neither held in snapshot_rows nor in the record"]
    # Through covers it: in the record (a pruned database's case), resolved.
    assert references.unresolved(store.conn, {"snapshots": top + 1}, (0, 10**12)) == []


def test_only_the_references_a_rebuild_permits_may_point_into_another_streams_range(record, tmp_path):  # noqa: F811
    """A submission's snapshot may be another stream's (references.CROSS_STREAM, as a rebuild); its run may not, nor a text."""
    _host, full, _folder, _ids = record
    store = Store(full)
    run = new_run(store, "2027-02-09T00:00:00.000000Z")
    top = store.one("SELECT MAX(id) FROM snapshots")[0]
    with references.unchecked(store.conn):
        bad = submission(store, top + 1, run)
        assert bad <= top  # inside the range (0, top] below, so the row itself is checked
        ours = (0, top)  # the stream's range ends at `top`: snapshot top + 1 is another stream's
        assert references.unresolved(store.conn, {}, ours) == []
        other = submission(store, 1, top + 7)  # a run in another stream's range: a rebuild refuses it
        assert other <= top
        assert references.unresolved(store.conn, {}, ours) == [
            f"archive_submissions row {other}: run_id = {top + 7} is neither held in runs nor in the record"]
        text = submission(store, "one", run)  # not an integer (an INTEGER column keeps such text): held or nothing
        assert f"archive_submissions row {text}: snapshot_id = 'one' is neither held" in "; ".join(
            references.unresolved(store.conn, {"snapshots": top, "runs": top}, ours))
        nowhere = [submission(store, v, run) for v in (0, -3, streams.TOP + 1)]  # in no stream's range
        problems = "; ".join(references.unresolved(store.conn, {"snapshots": top, "runs": top}, ours))
        assert all(f"archive_submissions row {i}: snapshot_id" in problems for i in nowhere)


def test_a_follower_checks_another_streams_reference_against_what_it_followed(record, tmp_path):  # noqa: F811
    """A database that follows a stream holds its rows up to what it followed: above that, an id must be held."""
    _host, full, _folder, _ids = record
    store = Store(full)
    run = new_run(store, "2027-02-09T00:00:00.000000Z")
    low = streams.base("inside-1of1")
    with references.unchecked(store.conn):
        followed = [submission(store, low + n, run) for n in (40, 50)]  # in its record (followed through low + 50)
        ahead = submission(store, low + 51, run)  # beyond what was followed, and not held
    ours = (0, settings.STREAM_ID_RANGE)
    assert references.unresolved(store.conn, {}, ours) == []  # a stream it does not follow vouches for both
    # What a follower writes of each stream it follows (follow.py `tops`: the record's table names).
    store.execute(f"INSERT INTO {streams.FOLLOWED_TABLE} (stream, table_name, through) VALUES (?, ?, ?)",
                  ("inside-1of1", "snapshots", low + 50))
    assert references.unresolved(store.conn, {}, ours) == [
        f"archive_submissions row {ahead}: snapshot_id = {low + 51} is neither held in snapshot_rows nor in the record"]
    assert max(followed) < ahead
    assert "snapshots" in record_tables(store.conn)  # the name follow.py writes the mark under


def test_follow_marks_the_record_tables_names(record, tmp_path):  # noqa: F811
    """sync_followed is written under the record's table names (a view's, not its storage table's): those
    `_followed` looks a parent up by."""
    _host, full, _folder, _ids = record
    marks = tops(full)
    assert marks["snapshots"] == Store(full).one("SELECT MAX(id) FROM snapshot_rows")[0] > 0
    assert "snapshot_rows" not in marks


def test_a_state_rows_references_are_checked_when_it_is_written(record, tmp_path):  # noqa: F811
    """A queue row changed since the last export is checked as it is exported; the others, written before, not."""
    _host, full, folder, _ids = record
    store = Store(full)
    never = store.one("SELECT MAX(id) FROM articles")[0] + 1000
    run = new_run(store, "2027-02-09T00:00:00.000000Z")
    with references.unchecked(store.conn):
        store.insert("capture_queue", {"url_key": "https://o.test/x", "url": "https://o.test/x", "outlet_id": "alpha",
                                       "article_id": never, "reason": "recent", "queued_at": "2027-02-09T00:00:00Z",
                                       "queued_run": run})
    head, notes = shadows.head(store.conn), store.query("SELECT * FROM export_written")
    with pytest.raises(ExportError, match=rf"capture_queue row url_key = 'https://o.test/x': article_id = {never} "
                                          "is neither held in articles nor in the record"):
        export.export_new(store, folder, now=NOW)
    # Nothing of the refused export stays: its shadows, head and the files its job may sign are as they were.
    assert shadows.head(store.conn) == head and store.query("SELECT * FROM export_written") == notes
    assert shadows.changed_rows(store.conn, "capture_queue")[0]["url_key"] == "https://o.test/x"
    # A state row not written by this export (its shadow holds it as it is) is not checked again.
    assert references.unresolved(store.conn, {}, (0, settings.STREAM_ID_RANGE), {"capture_queue": []}) == []


def test_keys_left_off_stay_off(tmp_path):
    conn = sqlite3.connect(tmp_path / "x.db")
    conn.execute("PRAGMA foreign_keys = OFF")
    with references.unchecked(conn):
        pass
    assert conn.execute("PRAGMA foreign_keys").fetchone()[0] == 0
