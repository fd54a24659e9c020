"""Quiet articles: a pruned database holds none of their rows and revisits them as the full one does.

What a revisit reads of them is in the projections (record/fold.py, fold_latest.py, fold_visit.py), the same in
every database. (This was test_dormant.py, when a pruned database packed their rows in dormant rows.)
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from collector import settings
from collector.clock import iso
from collector.collect.prune import prune
from collector.collect.revisits import due_checks
from collector.publish.history import History
from collector.record import dormant, export, fold, fold_latest, fold_visit
from collector.record.fileformat import read_lines, repeated_id
from collector.record.rebuild import rebuild, resume
from collector.record.store import Store
from testing.farm import Reply
from tests.collect.test_left_out import PARAGRAPHS_ONE_CHAR, copy_tree, events, revisit, timeless
from tests.collect.test_prune import copy, news, record  # noqa: F401  (the fixture)
from tests.collect.test_prune_trim import capture_of, submit
from tests.collect.test_revisits import HEADLINE_NEW, T0, page

LATE = T0 + timedelta(days=400, hours=168, minutes=1)  # the 72 h and 168 h slots due


@pytest.fixture
def quiet(record, tmp_path):
    """Return (host, full database, record folder, ids, pruned database): three articles confirmed archived."""
    host, full, folder, ids = record
    store = Store(full)
    for name in ("same", "edited", "gone"):  # the archive job confirmed each capture: nothing awaits it
        submit(store, capture_of(store, ids[name]), T0 + timedelta(days=400, hours=3), "success",
               timestamp="20270205000000")
    export.export_new(store, folder, now=T0 + timedelta(days=400, hours=40))
    store.checkpoint()
    store.conn.close()
    working = tmp_path / "working.db"
    copy(full, working)
    prune(working, folder, LATE, History.open(tmp_path / "published"))
    return host, full, folder, ids, working


def due(db, now, outlets=None):
    store = Store(db)
    try:
        return [(d.article_id, d.outlet_id, d.url, d.slot, d.due_at, d.try_number)
                for d in due_checks(store, now, outlets=outlets)]
    finally:
        store.conn.close()


def rows_of(db, sql, params=()):
    store = Store(db)
    try:
        return [tuple(r) for r in store.query(sql, params)]
    finally:
        store.conn.close()


def test_a_quiet_articles_rows_are_left_out_and_it_is_scheduled_as_in_the_full_database(quiet):
    _host, full, _folder, ids, working = quiet
    articles = sorted(ids[n] for n in ("same", "edited", "gone"))
    assert rows_of(working, f"SELECT COUNT(*) FROM {dormant.TABLE}") == [(0,)]  # nothing packed
    for table in ("articles", "article_urls", "snapshots", "checks"):  # none of their rows is in the database,
        column = "id" if table == "articles" else "article_id"  # but a table's last (the boundary an export checks)
        assert rows_of(working, f"SELECT COUNT(*) FROM {table} WHERE {column} IN (?, ?, ?) AND id < "
                                f"(SELECT MAX(id) FROM {table})", articles) == [(0,)]
    # What its revisit reads besides: its address, its address keys, its latest check (record/fold_visit.py).
    full_visit, kept_visit = fold_visit.projection(Store(full).conn), fold_visit.projection(Store(working).conn)
    assert full_visit == fold_visit.from_rows(Store(full).conn)
    assert {a: full_visit[0][a] for a in articles} == {a: kept_visit[0][a] for a in articles}
    for article in articles:
        latest = max(c for c, (a, _d) in full_visit[1].items() if a == article)
        assert kept_visit[1][latest] == full_visit[1][latest]
        assert fold_visit.url_of(Store(working).conn, article) == rows_of(full, "SELECT url FROM articles "
                                                                              "WHERE id = ?", (article,))[0][0]
    # Its schedule is the articles' projection's (record/fold.py), the same row as the full database's.
    row = rows_of(working, f"SELECT {fold.text_sql('first_capture_us')}, slots FROM {fold.TABLE} WHERE article_id = ?", (ids["same"],))[0]
    assert row == (rows_of(full, "SELECT MIN(captured_at) FROM snapshots WHERE article_id = ? AND purpose = "
                                 "'capture'", (ids["same"],))[0][0], ",1h,6h,24h,")
    whole = fold.projection(Store(full).conn)
    kept = fold.projection(Store(working).conn)  # every article owed a check, or whose rows are kept
    assert kept == {a: whole[a] for a in kept} and whole == fold.from_rows(Store(full).conn)
    held = {r[0] for r in rows_of(working, "SELECT id FROM articles UNION SELECT article_id FROM snapshot_rows "
                                           "UNION SELECT article_id FROM checks")}
    owed = {d.article_id for d in due_checks(Store(full), LATE + timedelta(days=800))}
    assert set(kept) == owed | held and set(articles) <= owed  # an article owed nothing, its rows gone: left out
    for hours in (0, 72, 168, 720, 8760, 9000):  # every slot still owed falls due as the full database says
        at = LATE - timedelta(hours=168) + timedelta(hours=hours)
        assert due(working, at) == due(full, at)
    assert due(working, LATE, outlets={"alpha"}) == due(full, LATE, outlets={"alpha"}) != []
    assert due(working, LATE, outlets={"beta"}) == []


def test_a_quiet_articles_revisit_writes_the_full_databases_rows_and_export(quiet, tmp_path):
    host, full, folder, ids, working = quiet
    host.routes.update({news("edited"): page(headline=HEADLINE_NEW), news("same"): page(paragraphs=PARAGRAPHS_ONE_CHAR),
                        news("gone"): Reply(404)})
    for db, name in ((full, "warc-full"), (working, "warc-working")):
        assert revisit(db, tmp_path, name, folder)["performed"] == 6
    got, want = events(working), events(full)
    assert [timeless(e) for e in got] == [timeless(e) for e in want]
    assert {(e[1], e[2], e[3]) for e in got} == {(ids["same"], "changed", "text"), (ids["edited"], "changed", "headline")}
    checks = "SELECT id, article_id, slot, outcome, opens_absence, snapshot_id, result FROM checks WHERE id > ? ORDER BY id"
    top = rows_of(full, "SELECT MAX(id) FROM checks")[0][0] - 6
    assert rows_of(working, checks, (top,)) == rows_of(full, checks, (top,))
    compared = "SELECT id, article_id, snapshot_before, snapshot_after, outcome, how FROM comparisons ORDER BY id"
    assert rows_of(working, compared) == rows_of(full, compared)
    # The exports continue the record with the same lines: what each value repeats ({"$same": id}) too.
    written = {}
    for db, name in ((full, "full"), (working, "working")):
        out = tmp_path / f"record-{name}"
        copy_tree(folder, out)
        path = export.export_new(Store(db), out, now=LATE + timedelta(minutes=5)).path
        written[name] = [(line.get("t"), {k: repeated_id(v) for k, v in line.get("r", {}).items()
                                          if repeated_id(v) is not None}, line.get("r", {}).get("id"))
                         for line in read_lines(path)]
    assert written["working"] == written["full"]
    assert any(t == "snapshots" and same for t, same, _id in written["full"])  # the quiet articles' snapshots' values
    assert any(t == "checks" and same for t, same, _id in written["full"])  # and their checks' addresses
    # The record with the working database's file rebuilds whole.
    counts = rebuild(tmp_path / "record-working", tmp_path / "rebuilt.db")
    assert counts["checks"] == 8 + 9 + 6
    # Its schedule, folded in the pruned database, is the rebuilt one's and the full one's.
    rebuilt = Store(tmp_path / "rebuilt.db").conn
    whole, kept = fold.projection(rebuilt), fold.projection(Store(working).conn)
    assert whole == fold.from_rows(rebuilt) == fold.projection(Store(full).conn)
    assert kept == {a: whole[a] for a in kept} and set(ids.values()) - {ids["old"]} <= set(kept)


def test_the_next_pruning_leaves_them_out_again_with_every_slot_checked(quiet, tmp_path):
    host, full, folder, ids, working = quiet
    host.routes.update({news("edited"): page(headline=HEADLINE_NEW)})
    for db, name in ((full, "warc-full"), (working, "warc-working")):
        assert revisit(db, tmp_path, name, folder)["performed"] == 6
    export.export_new(Store(working), folder, now=LATE + timedelta(minutes=5))
    later = LATE + timedelta(days=3)
    prune(working, folder, later, History.open(tmp_path / "published"))
    assert rows_of(working, "SELECT COUNT(*) FROM checks WHERE article_id IN (?, ?, ?) AND id < "
                            "(SELECT MAX(id) FROM checks)", [ids[n] for n in ("same", "edited", "gone")]) == [(0,)]
    slots = rows_of(working, f"SELECT article_id, slots FROM {fold.TABLE} WHERE article_id IN (?, ?, ?) ORDER BY 1",
                    [ids[n] for n in ("same", "edited", "gone")])
    assert [(a, fold.slot_set(s)) for a, s in slots] == [
        (ids[n], {"1h", "6h", "24h", "72h", "168h"}) for n in ("same", "edited", "gone")]
    whole, kept = fold.projection(Store(full).conn), fold.projection(Store(working).conn)
    assert kept == {a: whole[a] for a in kept} and {ids[n] for n in ("same", "edited", "gone")} <= set(kept)
    assert rows_of(working, "SELECT COUNT(*) FROM checks WHERE article_id = ?", (ids["edited"],)) == [(0,)]
    at = LATE - timedelta(hours=168) + timedelta(hours=720)
    assert due(working, at) == due(full, at) != []
    # The latest snapshot it compares with is the revisit's: the next comparison is against the changed headline.
    host.routes.update({news("edited"): page(headline=HEADLINE_NEW)})
    for db, name in ((full, "warc-full-2"), (working, "warc-working-2")):
        assert revisit(db, tmp_path, name, folder, now=at)["performed"] == 3
    assert [timeless(e) for e in events(working)] == [timeless(e) for e in events(full)]


def test_a_resumed_file_continues_the_quiet_articles(quiet, tmp_path):
    _host, full, folder, ids, working = quiet
    # Another job (its cache lost) revisited with the full database and pushed: the saved pruned database
    # resumes that file, whose rows repeat the quiet articles' latest snapshot and check, which it left out.
    revisit(full, tmp_path, "warc-full", folder)
    path = export.export_new(Store(full), folder, now=LATE + timedelta(minutes=5)).path
    assert any(repeated_id(v) is not None for line in read_lines(path) if line.get("t") in ("snapshots", "checks")
               for v in line["r"].values())
    assert resume(folder, working)[0] == 1
    assert export.export_new(Store(working), folder, now=LATE + timedelta(minutes=6)).path is None  # in sync
    at = LATE - timedelta(hours=168) + timedelta(hours=720)
    assert due(working, at) == due(full, at) != []
    # Its latest snapshot, like the one it repeats, is left out here: what comparing with it needs is the full
    # database's (record/fold_latest.py).
    latest = []
    for db in (working, full):
        store = Store(db)
        found = fold_latest.previous(store.conn, ids["same"], "9999-12-31T23:59:59.999999Z", 0)
        latest.append((found.snapshot_id, found.captured_at, found.facts))
        store.conn.close()
    assert latest[0] == latest[1]
    assert rows_of(full, "SELECT MAX(id) FROM snapshots WHERE article_id = ?", (ids["same"],)) == [(latest[0][0],)]


def test_a_check_the_working_database_left_out_is_repeated_by_its_digest(quiet, tmp_path):
    """A resumed check repeating a check left out reads its address from the projection only when the digests
    agree; a database whose projection says otherwise refuses rather than guess (sync_database.sh rebuilds)."""
    _host, full, folder, ids, working = quiet
    revisit(full, tmp_path, "warc-full", folder)
    export.export_new(Store(full), folder, now=LATE + timedelta(minutes=5))
    damaged = tmp_path / "damaged.db"
    copy(working, damaged)
    store = Store(damaged)
    with store.transaction() as conn:
        conn.execute(f"UPDATE {fold.TABLE} SET url = url || '?moved' WHERE article_id = ?", (ids["same"],))
    store.conn.close()
    with pytest.raises(export.ExportError, match="checks.url repeats row"):
        resume(folder, damaged)
    assert resume(folder, working)[0] == 1
    urls = "SELECT id, url FROM checks WHERE article_id = ? ORDER BY id"
    assert rows_of(working, urls, (ids["same"],)) == rows_of(full, urls, (ids["same"],))[-2:]


def test_only_the_newest_hours_texts_stay_whole(record, tmp_path):
    _host, full, folder, _ids = record
    checked = T0 + timedelta(days=400, hours=30)  # the fixture's 1 h, 6 h and 24 h checks; captures at day 400
    whole = {}
    for name, hours in (("within", settings.WORKING_RECENT_HOURS - 1), ("after", settings.WORKING_RECENT_HOURS + 1)):
        working = tmp_path / f"{name}.db"
        copy(full, working)
        prune(working, folder, checked + timedelta(hours=hours), History.open(tmp_path / "published"))
        store = Store(working)
        try:
            rows = store.query("SELECT r.id, r.article_id, r.text_id, t.id IS NOT NULL AS whole FROM snapshot_rows r "
                               "LEFT JOIN snapshot_texts t ON t.id = r.text_id WHERE r.text_id IS NOT NULL")
            # Each text whole, or left out with its snapshot's digests held (record/fold_latest.py).
            assert all(r["whole"] or fold_latest.of(store.conn, r["article_id"], r["id"]) for r in rows)
            boundary = {store.one("SELECT MAX(id) FROM snapshot_texts")[0],
                        store.one("SELECT text_id FROM snapshot_rows ORDER BY id DESC LIMIT 1")[0]}
            whole[name] = {r["text_id"] for r in rows if r["whole"]} - boundary
        finally:
            store.conn.close()
    # Both prunings hold the same rows (the recent ledger is 2 days); only the newest hours' texts stay whole.
    assert len(whole["within"]) >= 2 and whole["after"] == set()


def test_a_stream_without_the_archives_answers_leaves_its_quiet_articles_out(record, tmp_path):
    """A collect stream's database never holds an archive answer (archive.yml writes its own stream).

    Kept for want of one (the default, a database the archive job reads), no article is ever quiet; with
    --no-archive-queue (sync_database.sh) they are, and are scheduled as in the full database.
    """
    _host, full, folder, ids = record
    articles = sorted(ids[n] for n in ("same", "edited", "gone"))
    assert rows_of(full, "SELECT COUNT(*) FROM archive_submissions") == [(0,)]
    queued, stream = tmp_path / "queued.db", tmp_path / "stream.db"
    copy(full, queued)
    copy(full, stream)
    prune(queued, folder, LATE, History.open(tmp_path / "published"))
    prune(stream, folder, LATE, History.open(tmp_path / "published"), archive_queue=False)
    assert rows_of(queued, "SELECT COUNT(*) FROM snapshot_rows WHERE purpose = 'capture' AND article_id IN "
                           "(?, ?, ?)", articles) == [(3,)]  # the archive's queue, kept whole
    assert rows_of(stream, "SELECT COUNT(*) FROM checks WHERE article_id IN (?, ?, ?) AND id < "
                           "(SELECT MAX(id) FROM checks)", articles) == [(0,)]
    assert rows_of(stream, "SELECT COUNT(*) FROM snapshot_rows WHERE article_id IN (?, ?, ?) AND id < "
                           "(SELECT MAX(id) FROM snapshot_rows)", articles) == [(0,)]
    for hours in (0, 72, 168, 720, 8760):
        at = LATE - timedelta(hours=168) + timedelta(hours=hours)
        assert due(stream, at) == due(full, at)


def test_the_working_databases_pruning_does_not_keep_the_archives_queue():
    """Every job that prunes with sync_database.sh works on a stream's own database, never the archive's."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    script = (root / ".github/scripts/sync_database.sh").read_text(encoding="utf-8")
    prunes = [line for line in script.splitlines() if "export prune" in line and not line.lstrip().startswith("#")]
    assert prunes and all("--no-archive-queue" in line for line in prunes)
    for workflow in sorted((root / ".github/workflows").glob("*.yml")):
        if "sync_database.sh" in workflow.read_text(encoding="utf-8"):
            assert workflow.name in {"collect.yml", "vantages.yml"}  # not archive.yml: it follows every stream


def test_a_database_no_job_revisits_from_leaves_a_quiet_articles_later_rows_out(quiet, tmp_path):
    """A follower's merged database (revisited=False) only leaves its quiet articles out. The projection
    still says such an article is owed its later slots after its capture was left out (record/fold.py); a
    revisit merged in later (a stream's check) is kept while recent, then left out like the rest, not kept
    to the end of its window for want of the capture a dormant row would pack (`bench/follower_db.py --days
    200 --outlets 40`: the pages job's follower 2.36 GiB at day 200 before this, 1.44 GiB after)."""
    _host, full, folder, ids, _working = quiet
    merged = tmp_path / "merged.db"
    copy(full, merged)
    prune(merged, folder, LATE, History.open(tmp_path / "published"), revisited=False)
    assert rows_of(merged, "SELECT COUNT(*) FROM snapshot_rows WHERE article_id = ? AND purpose = 'capture'",
                   (ids["same"],)) == [(0,)]  # left out, not packed
    assert rows_of(merged, f"SELECT slots FROM {fold.TABLE} WHERE article_id = ?", (ids["same"],)) == [(",1h,6h,24h,",)]
    store = Store(merged)  # streams' revisits at the 72 h slot, merged in: "same" then "edited" (the last row)
    store.conn.execute("PRAGMA foreign_keys = OFF")
    with store.transaction() as conn:
        last = conn.execute("SELECT * FROM checks WHERE id = (SELECT MAX(id) FROM checks)").fetchone()
        for step, name in enumerate(("same", "edited"), start=1):
            row = dict(zip(last.keys(), last)) | {
                "id": last["id"] + step, "article_id": ids[name], "slot": "72h", "outcome": "present",
                "performed_at": iso(LATE + timedelta(minutes=step)), "follows_check_id": None, "retry_of": None,
                "try_number": 1, "opens_absence": 0}
            conn.execute(f"INSERT INTO checks ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
                         list(row.values()))
        revisit = last["id"] + 1
    store.conn.close()
    kept = {}
    for name, hours in (("recent", 1), ("later", 7)):  # within settings.WORKING_RECENT_HOURS, and after them
        copy(merged, tmp_path / f"{name}.db")
        prune(tmp_path / f"{name}.db", None, LATE + timedelta(hours=hours), revisited=False,
              check=lambda source: None)
        kept[name] = rows_of(tmp_path / f"{name}.db", "SELECT id FROM checks WHERE article_id = ?", (ids["same"],))
        assert rows_of(tmp_path / f"{name}.db", f"SELECT slots FROM {fold.TABLE} WHERE article_id = ?",
                       (ids["same"],)) == [(",1h,6h,24h,72h,",)]  # still known to be owed its later slots
    assert kept["recent"] == [(revisit,)] and kept["later"] == []


def _secondless(event: tuple) -> tuple:
    """Return an event row as timeless does, its interval's start (last_unchanged_at) and its age too."""
    return tuple(v[:19] if i == 13 and v else round(v, 3) if i == 15 and v is not None else v
                 for i, v in enumerate(timeless(event)))


def test_an_absence_open_while_quiet_meets_the_gone_rule_and_reappears_from_the_projection(quiet, tmp_path):
    """Two absent checks, three follow-ups that say nothing (403: inconclusive, never retried), then the article
    is quiet with its absence open; its next slot's absent check meets the gone rule over checks it no longer
    holds, the evidence naming each of them; quiet again, recorded gone, it reappears at the slot after, from
    its last absent check, as the full database decides both. ("same" is the article: its checks come before
    the others' of a slot, so none of them is a table's last row, which a pruning keeps.)"""
    host, full, folder, ids, working = quiet
    article = ids["same"]
    for at, reply in ((LATE, Reply(404)), (LATE + timedelta(hours=6, minutes=1), Reply(403))):
        host.routes.update({news("same"): reply})
        for db, name in ((full, "warc-full"), (working, "warc-working")):
            revisit(db, tmp_path, f"{name}-{at:%H%M}", folder, now=at)
    outcomes = "SELECT outcome, COUNT(*) FROM checks WHERE article_id = ? GROUP BY 1 ORDER BY 1"
    assert rows_of(full, outcomes, (article,)) == [("absent", 2), ("inconclusive", 3), ("present", 3)]
    export.export_new(Store(working), folder, now=LATE + timedelta(hours=7))
    prune(working, folder, LATE + timedelta(hours=14), History.open(tmp_path / "published"))
    checks = "SELECT COUNT(*) FROM checks WHERE article_id = ?"
    # Its absence open, its checks left out (its last follow-up is the table's last row, kept: the boundary).
    assert rows_of(working, checks + " AND id < (SELECT MAX(id) FROM checks)", (article,)) == [(0,)]
    host.routes.update({news("same"): Reply(404)})
    at = LATE - timedelta(hours=168) + timedelta(hours=720)
    for db, name in ((full, "warc-full-3"), (working, "warc-working-3")):
        assert revisit(db, tmp_path, name, folder, now=at)["performed"] == 3
    kinds = "SELECT kind, check_id, evidence FROM events WHERE article_id = ? ORDER BY id"
    assert [r[0] for r in rows_of(full, kinds, (article,))] == ["gone"]
    assert rows_of(working, kinds, (article,)) == rows_of(full, kinds, (article,))
    last_absent = rows_of(working, "SELECT MAX(performed_at) FROM checks WHERE article_id = ? AND outcome = "
                                   "'absent'", (article,))[0][0]
    export.export_new(Store(working), folder, now=at + timedelta(hours=1))
    prune(working, folder, at + timedelta(hours=14), History.open(tmp_path / "published"))
    assert rows_of(working, checks, (article,)) == [(0,)]  # recorded gone, its checks left out
    host.routes.update({news("same"): page()})
    at = LATE - timedelta(hours=168) + timedelta(hours=2160)
    for db, name in ((full, "warc-full-4"), (working, "warc-working-4")):
        assert revisit(db, tmp_path, name, folder, now=at)["performed"] == 3
    assert [r[0] for r in rows_of(full, kinds, (article,))] == ["gone", "reappeared"]
    assert rows_of(working, kinds, (article,)) == rows_of(full, kinds, (article,))
    # (Each database's runs read their own clock: the instants agree to the second.)
    assert [_secondless(e) for e in events(working)] == [_secondless(e) for e in events(full)]
    assert rows_of(working, "SELECT last_unchanged_at FROM events WHERE kind = 'reappeared'") == [(last_absent,)]
