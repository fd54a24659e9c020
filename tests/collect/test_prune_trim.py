"""What pruning leaves out of the state and the archive's answers: nothing a job reads again."""

from __future__ import annotations

from datetime import timedelta

from collector.clock import iso
from collector.collect.prune import prune
from collector.publish.history import History
from collector.record.articles import known
from collector.publish.periods import week_start
from collector.publish.release import release
from collector.record import export, fold_keys
from collector.record.store import Store
from collector.wayback.answers import PERMANENT_EXTS
from collector.wayback.history import attempts_by_snapshot, candidates, confirmed_snapshot_ids
from tests.collect.test_prune import copy, record, two_groups  # noqa: F401  (the fixture)
from tests.collect.test_revisits import T0
from testing.synthetic import NOW, SyntheticRecord, populate

LATE = T0 + timedelta(days=400, hours=168, minutes=1)


def capture_of(store, article_id) -> int:
    return store.one("SELECT id FROM snapshots WHERE article_id = ? AND purpose = 'capture'", (article_id,))[0]


def submit(store, snapshot, at, status, **more) -> int:
    return store.insert("archive_submissions", {"snapshot_id": snapshot, "run_id": 1, "kind": "submit",
                                                "url": "http://example.invalid/", "recorded_at": iso(at),
                                                "status": status, **more})


def test_pruning_keeps_the_open_archive_answers_and_leaves_a_quiet_articles_out(record, tmp_path):
    _host, full, folder, ids = record
    store = Store(full)
    day = T0 + timedelta(days=400, hours=2)
    same, edited, gone = (capture_of(store, ids[n]) for n in ("same", "edited", "gone"))
    tried = submit(store, same, day, "error", status_ext="error:service-unavailable")
    confirmed = submit(store, same, day + timedelta(hours=1), "success", timestamp="20270201000000")
    later = submit(store, same, day + timedelta(hours=2), "success", timestamp="20270201010000")
    open_tries = [submit(store, edited, day + timedelta(minutes=m), "error", status_ext="error:service-unavailable")
                  for m in (0, 30)]
    refused = submit(store, gone, day, "error", status_ext=PERMANENT_EXTS[0])
    export.export_new(store, folder, now=day + timedelta(days=1))
    store.checkpoint()
    store.conn.close()
    working = tmp_path / "working.db"
    copy(full, working)
    done = prune(working, folder, LATE, History.open(tmp_path / "published"))
    kept = {r[0] for r in Store(working).query("SELECT id FROM archive_submissions")}
    # A snapshot still open keeps every try, one refused for good the answer that settled it.
    assert refused in kept and set(open_tries) <= kept
    # The article whose capture is confirmed is quiet, its rows left out (tests/collect/test_quiet.py): the
    # archive's answers about it are in the record, and the archive job reads the database following every
    # stream, not this one.
    assert Store(working).one("SELECT COUNT(*) FROM checks WHERE article_id = ?", (ids["same"],))[0] == 0
    assert not {tried, confirmed, later} & kept and done.left_out["archive_submissions"] == 3
    assert candidates(Store(working), LATE) == candidates(Store(full), LATE)
    assert confirmed_snapshot_ids(Store(working)) == confirmed_snapshot_ids(Store(full)) - {same}
    wanted = {s for s, _ in candidates(Store(full), LATE)}
    assert {k: v for k, v in attempts_by_snapshot(Store(working)).items() if k in wanted} == \
        {k: v for k, v in attempts_by_snapshot(Store(full)).items() if k in wanted}


def test_finished_queue_rows_are_left_out_and_the_export_sees_no_change(tmp_path):
    full, store, r, groups = two_groups(tmp_path)
    populate(r, groups, weeks=9)
    r.finish_run(NOW)
    with store.transaction() as conn:  # all captured but the first queued address
        first = conn.execute("SELECT url_key FROM capture_queue ORDER BY queued_at LIMIT 1").fetchone()[0]
        conn.execute("UPDATE capture_queue SET state = 'captured', done_at = queued_at WHERE url_key != ?", (first,))
    folder, published = tmp_path / "record", tmp_path / "published"
    export.export_new(store, folder, now=NOW)
    store.conn.close()
    assert release(Store(full), week_start(NOW) + timedelta(hours=25), History.open(published, published)).appended
    working = tmp_path / "working.db"
    copy(full, working)
    later = NOW + timedelta(days=9)
    done = prune(working, folder, later, History.open(published))
    store, whole = Store(working), Store(full)
    since = store.one("SELECT figures_from FROM prune_state")[0]
    kept = {r[0] for r in store.query("SELECT url_key FROM capture_queue")}
    assert kept == {r[0] for r in whole.query("SELECT url_key FROM capture_queue WHERE state = 'pending' "
                                              "OR queued_at >= ?", (since,))}
    assert whole.one("SELECT queued_at FROM capture_queue WHERE url_key = ?", (first,))[0] < since
    assert first in kept and done.left_out["capture_queue"] > 0  # pending, or queued in a month still to publish
    assert export.export_new(store, folder, now=later).path is None  # the rows left out are no change
    with store.transaction() as conn:
        conn.execute("UPDATE capture_queue SET state = 'failed', done_at = ? WHERE url_key = ?", (iso(later), first))
    assert export.export_new(store, folder, now=later + timedelta(minutes=1)).rows == {"capture_queue": 1}
    store.conn.close()


def test_an_article_left_out_is_known_by_its_addresses_digest(record, tmp_path):
    _host, full, folder, ids = record
    store = Store(full)
    old = capture_of(store, ids["old"])
    submit(store, old, T0 + timedelta(hours=1), "success", timestamp="20260101000000")  # archived: no job reads it
    r = SyntheticRecord(store)
    r.group("national")
    for outlet in ("alpha", "n2", "n3", "n4"):
        r.outlet(outlet, "national")
    export.export_new(store, folder, now=T0 + timedelta(days=400, hours=32))
    published = tmp_path / "published"
    release(store, LATE, History.open(published, published))  # the months before this one are published
    store.checkpoint()
    keys = {r[0] for r in store.query("SELECT url_key FROM article_urls UNION SELECT url_key FROM articles")}
    old_key = store.one("SELECT url_key FROM articles WHERE id = ?", (ids["old"],))[0]
    every_key = fold_keys.from_rows(store.conn)
    store.conn.close()
    working = tmp_path / "working.db"
    copy(full, working)
    done = prune(working, folder, LATE, History.open(published))
    store = Store(working)
    assert done.left_out["articles"] == 1 and store.one("SELECT COUNT(*) FROM articles WHERE id = ?",
                                                        (ids["old"],))[0] == 0
    assert all(known(store.conn, key) for key in keys)  # every address, kept or left out, is known
    assert not known(store.conn, "http://127.0.0.1/news/never-listed")
    # The address keys' projection (record/fold_keys.py), kept whole: the full database's rows' keys.
    assert fold_keys.projection(store.conn) == every_key and fold_keys.key_digest(old_key) in every_key
    store.conn.close()
    # Pruned again, the digests carry over; and the new article after the boundary row is numbered on.
    again = prune(working, folder, LATE, History.open(published))
    assert "articles" not in again.left_out
    store = Store(working)
    assert all(known(store.conn, key) for key in keys)
    store.conn.close()
