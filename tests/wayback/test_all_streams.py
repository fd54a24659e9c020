"""The archive job over every record stream: it follows them all and writes a stream of its own."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

from collector.collect.context import RunContext
from collector.record import export as ex, follow, merge, streams, tables
from collector.record.fileformat import read_header
from collector.record.folder import batches, verify
from collector.record.store import Store
from collector.wayback.history import confirmed_snapshot_ids
from tests.conftest import TEST_INTERVAL
from tests.wayback.runs import START, VirtualClock, run_archive, seed

ARCHIVE = "archive"


def _rows(db) -> dict[str, set[tuple]]:
    conn = sqlite3.connect(db)
    try:
        return {t: set(conn.execute(f'SELECT * FROM "{t}"')) for t in tables.record_tables(conn)}
    finally:
        conn.close()


def _stream(tmp_path, name) -> Store:
    store = Store(tmp_path / f"{name}.db")
    with store.transaction() as conn:
        streams.set_stream(conn, name)
    return store


def test_the_archive_job_submits_every_streams_captures_and_exports_only_its_own_stream(tmp_path, fake):
    root, db = tmp_path / "record", tmp_path / "archive.db"
    captured = {}
    for name, marker in (("hosted-1of2", "moved"), ("hosted-2of2", "ok")):
        store = _stream(tmp_path, name)
        (captured[name],) = seed(store, fake, [marker])
        ex.export_new(store, streams.folder(root, name), now=START - timedelta(hours=1))
        store.close()
    assert follow.follow(db, [root], writes=ARCHIVE).merged_anew
    store = Store(db)
    run_archive(store, tmp_path, fake, VirtualClock())
    # A capture of either stream is submitted and confirmed, stream hosted-2of2's too.
    assert confirmed_snapshot_ids(store) == set(captured.values())
    assert sorted(s.url for s in fake.submissions) == ["https://outlet.example/moved/story-0",
                                                       "https://outlet.example/ok/story-0"]
    written = ex.export_new(store, streams.folder(root, ARCHIVE), now=START + timedelta(minutes=30))
    # Then the job time-stamps its file: a run of its own, recorded after the export, sent by the next.
    RunContext.open(store, "timestamp", clock=VirtualClock(START + timedelta(minutes=31)), vantage="test",
                    warc_dir=tmp_path / "warc", interval=TEST_INTERVAL, allow_loopback=True).finish()
    store.close()
    # Its file is its own stream's, and holds its own rows alone: its run, requests and submissions.
    header = read_header(written.path)
    assert header["stream"] == ARCHIVE and set(header["rows"]) <= {"runs", "requests", "request_intents",
                                                                     "archive_submissions", "run_finishes"}
    assert header["rows"]["archive_submissions"] >= 2 and header["rows"]["runs"] == 1
    assert all(streams.in_range(ARCHIVE, header["through"][t]) for t in header["rows"] if t != "run_finishes")
    # The collect streams' chains are untouched: each exports on from its own last file.
    store = Store(tmp_path / "hosted-2of2.db")
    seed(store, fake, ["slow"])  # a later capture of that stream
    assert ex.export_new(store, streams.folder(root, "hosted-2of2"), now=START + timedelta(hours=1)).path
    store.close()
    assert all(verify(streams.folder(root, n)) == 1 + (n == "hosted-2of2") for n in captured)
    # The next run's database follows on, incrementally, and equals the whole record merged.
    done = follow.follow(db, [root], writes=ARCHIVE)
    assert not done.merged_anew and done.files == {"hosted-1of2": 0, "hosted-2of2": 1, ARCHIVE: 1}
    merge.rebuild_record([root], tmp_path / "full.db")
    followed, unsent = _rows(db), Store(db).one("SELECT id FROM runs WHERE command = 'timestamp'")["id"]
    assert {(t, r) for t in ("runs", "run_finishes") for r in followed[t] - _rows(tmp_path / "full.db")[t]} == {
        ("runs", next(r for r in followed["runs"] if r[0] == unsent)),
        ("run_finishes", next(r for r in followed["run_finishes"] if r[0] == unsent))}
    assert {t: r for t, r in followed.items() if t not in ("runs", "run_finishes")} == {
        t: r for t, r in _rows(tmp_path / "full.db").items() if t not in ("runs", "run_finishes")}
    full = sqlite3.connect(tmp_path / "full.db")
    submitted = {r[0] for r in full.execute("SELECT snapshot_id FROM archive_submissions")}
    assert submitted == set(captured.values())  # the merged record: submissions of hosted-2of2's capture
    # A second run submits the new capture only, and its export continues its own chain.
    store = Store(db)
    job = run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(hours=2)))
    assert len(confirmed_snapshot_ids(store)) == 3 and not job.stopped
    second = ex.export_new(store, streams.folder(root, ARCHIVE), now=START + timedelta(hours=2))
    store.close()
    assert second.rows["runs"] == 2 and second.rows["run_finishes"] == 2  # the time-stamping run's too
    assert verify(streams.folder(root, ARCHIVE)) == 2
    assert [read_header(f)["stream"] for f in batches(streams.folder(root, ARCHIVE))] == [ARCHIVE, ARCHIVE]
    assert not follow.follow(db, [root], writes=ARCHIVE).merged_anew
    merge.rebuild_record([root], tmp_path / "again.db")
    assert _rows(db) == _rows(tmp_path / "again.db")
