"""A pruned database leaves older texts out, holds their digests (record/fold_latest.py) and compares as the full one."""

from __future__ import annotations

from datetime import timedelta

from collector.collect.prune import prune
from collector.collect.revisits import run_rechecks
from collector.publish.history import History
from collector.record import export, fold_latest
from collector.record.fileformat import read_lines
from collector.record.rebuild import resume
from collector.record.store import Store
from tests.collect.test_prune import context, copy, news, record  # noqa: F401  (the fixture)
from tests.collect.test_revisits import HEADLINE_NEW, PARAGRAPHS_ONE_CHAR, T0, page

LATE = T0 + timedelta(days=400, hours=168, minutes=1)  # the 72 h and 168 h slots due; the 24 h ones 5 days old


def latest(store, article_id) -> int:
    return store.one("SELECT id FROM snapshots WHERE article_id = ? ORDER BY captured_at DESC, id DESC LIMIT 1",
                     (article_id,))[0]


def events(db) -> list[tuple]:
    store = Store(db)
    try:
        return [tuple(r) for r in store.query("SELECT * FROM events ORDER BY id")]
    finally:
        store.conn.close()


def timeless(event: tuple) -> tuple:
    """Return an event row with the instants of its check (detected_at, first_changed_at, the age) to the second."""
    return tuple(v[:19] if i in (6, 14) else round(v, 3) if i == 7 else v for i, v in enumerate(event))


def pruned(full, folder, tmp_path):
    working = tmp_path / "working.db"
    copy(full, working)
    done = prune(working, folder, LATE, History.open(tmp_path / "published"))
    return working, done


def revisit(db, tmp_path, name, folder, now=LATE):
    ctx = context(db, tmp_path, now, name)
    ctx.record_dir = folder
    summary = run_rechecks(ctx)
    ctx.finish()
    ctx.store.conn.close()
    return summary


def test_a_pruned_database_holds_older_texts_as_digests(record, tmp_path):
    _host, full, folder, ids = record
    working, done = pruned(full, folder, tmp_path)
    assert done.bytes_after < done.bytes_before
    store, whole = Store(working), Store(full)
    for name in ("same", "edited"):
        snapshot = latest(store, ids[name])
        text = whole.one("SELECT text FROM snapshots WHERE id = ?", (snapshot,))[0]
        facts = fold_latest.of(store.conn, ids[name], snapshot).facts
        assert facts == fold_latest.of(whole.conn, ids[name], snapshot).facts  # the full database's own
        assert facts.same("text", text) and facts.unchanged("text", text) and not facts.same("text", text + ".")
        assert store.one("SELECT text FROM snapshots WHERE id = ?", (snapshot,))[0] is None
        assert store.one("SELECT headline FROM snapshots WHERE id = ?", (snapshot,))[0] is not None
    # The highest text stays whole: a new text is numbered after it, never a left-out text's id.
    top = whole.one("SELECT MAX(id) FROM snapshot_texts")[0]
    assert store.one("SELECT MAX(id) FROM snapshot_texts")[0] == top
    assert store.one("SELECT MAX(text_id) FROM snapshot_rows WHERE text_id NOT IN (SELECT id FROM snapshot_texts)")[0] < top
    assert store.one("SELECT COUNT(*) FROM snapshot_texts")[0] < whole.one("SELECT COUNT(*) FROM snapshot_texts")[0]
    assert "prune_texts" not in store.db.table_names()


def test_a_pruning_keeps_each_articles_latest_facts_and_those_its_rows_name(record, tmp_path):
    _host, full, folder, _ids = record
    working, _done = pruned(full, folder, tmp_path)
    store, whole = Store(working), Store(full)
    kept, every = fold_latest.projection(store.conn), fold_latest.projection(whole.conn)
    want = {r[0] for r in store.query("SELECT id FROM snapshot_rows")}  # the rows it holds
    want |= {s for r in store.query("SELECT snapshot_before, snapshot_after FROM comparisons") for s in r}
    for (article,) in store.query("SELECT article_id FROM fold_articles"):  # owed a check, or rows kept
        mine = [(us, s) for s, (a, us, _facts) in every.items() if a == article]
        if mine:  # its latest by capture time, and by id (the export's "earlier row")
            want |= {max(mine)[1], max(s for _us, s in mine)}
    assert set(kept) == want and len(kept) < len(every)
    assert all(kept[s] == every[s] for s in kept)  # the full database's facts, as they were
    store.conn.close()
    whole.conn.close()


def test_a_revisit_of_held_texts_writes_the_full_databases_events(record, tmp_path):
    host, full, folder, ids = record
    working, _done = pruned(full, folder, tmp_path)
    host.routes.update({news("edited"): page(headline=HEADLINE_NEW), news("same"): page(paragraphs=PARAGRAPHS_ONE_CHAR)})
    for db, name in ((full, "warc-full"), (working, "warc-working")):
        assert revisit(db, tmp_path, name, folder)["performed"] == 6  # the 72 h and 168 h slots of each
    seen = events(working)
    # Every column: ids, before and after, evidence; the check's instants (the runs' clocks ran apart by ms) to the second.
    assert [timeless(e) for e in seen] == [timeless(e) for e in events(full)]
    fields = {(e[1], e[2], e[3]) for e in seen}
    assert fields == {(ids["same"], "changed", "text"), (ids["edited"], "changed", "headline")}
    # Both databases' exports continue the record with the same rows: an unchanged text repeats its row.
    lines = {}
    for db, name in ((full, "full"), (working, "working")):
        out = tmp_path / f"record-{name}"
        copy_tree(folder, out)
        written = export.export_new(Store(db), out, now=LATE + timedelta(minutes=5))
        lines[name] = [(line["r"]["id"], line["r"]["text"], line["r"]["headline"])
                       for line in read_lines(written.path) if line.get("t") == "snapshots"]
    assert lines["full"] == lines["working"] and len(lines["full"]) == 6
    assert sum(isinstance(text, dict) for _id, text, _headline in lines["full"]) == 5  # {"$same": id}: all but one


def test_a_held_text_that_cannot_be_read_is_not_comparable_and_compared_later(record, tmp_path):
    host, full, folder, ids = record
    working, _done = pruned(full, folder, tmp_path)
    host.routes.update({news("same"): page(paragraphs=PARAGRAPHS_ONE_CHAR)})
    # No record folder, and the WARC folder of this runner lacks the older page: no event on a guess.
    assert revisit(working, tmp_path, "warc-fresh", None)["performed"] == 6
    store = Store(working)
    assert store.one("SELECT COUNT(*) FROM events")[0] == 0
    tried = store.one("SELECT outcome, detail FROM comparisons WHERE article_id = ?", (ids["same"],))
    assert tried["outcome"] == "not_comparable" and "digest" in tried["detail"]
    store.conn.close()
    # The next run has the record folder: the comparison is made, and the event is the full database's.
    revisit(working, tmp_path, "warc-fresh", folder, now=LATE + timedelta(hours=1))
    revisit(full, tmp_path, "warc-full", folder)
    got, want = events(working), events(full)
    assert len(got) == len(want) == 1
    assert got[0][1:6] == want[0][1:6] and got[0][13] == want[0][13]  # article, kind, field, before, after, since
    assert '"how": "held_text"' in got[0][9]


def test_a_resumed_row_repeating_a_text_left_out_shares_it_and_the_boundary_is_whole(record, tmp_path):
    _host, full, folder, ids = record
    working, _done = pruned(full, folder, tmp_path)
    # Another job revisits with the full database and exports: its unchanged texts repeat texts left out here.
    revisit(full, tmp_path, "warc-full", folder)
    written = export.export_new(Store(full), folder, now=LATE + timedelta(minutes=5))
    lines = [line["r"] for line in read_lines(written.path) if line.get("t") == "snapshots"]
    store = Store(working)
    # Rows repeating a row held without its text (a row not held at all: test_quiet.py's resumed file).
    shared = {}
    for row in (r for r in lines if isinstance(r["text"], dict)):
        held = store.one("SELECT text, text_id FROM snapshots s JOIN snapshot_rows r USING (id) WHERE s.id = ?",
                         (row["text"]["$same"],))
        if held is not None and held["text"] is None:
            shared[row["id"]] = (row, held["text_id"])
    assert shared  # the file repeats texts this database left out
    store.conn.close()
    assert resume(folder, working)[0] == 1
    store, whole = Store(working), Store(full)
    last = max(row["id"] for row in lines)
    for snapshot, (row, text_id) in shared.items():
        held = store.one("SELECT text_id, text FROM snapshots s JOIN snapshot_rows r USING (id) WHERE s.id = ?",
                         (snapshot,))
        if snapshot == last:  # the boundary an export checks: read back from the record, whole
            assert held["text"] == whole.one("SELECT text FROM snapshots WHERE id = ?", (snapshot,))[0]
            continue
        # Held, sharing the text it repeats (left out here too), nothing read from the record.
        assert (held["text_id"], held["text"]) == (text_id, None)
        assert fold_latest.of(store.conn, row["article_id"], snapshot).facts == \
            fold_latest.of(whole.conn, row["article_id"], snapshot).facts  # its facts folded in all the same
    assert export.export_new(store, folder, now=LATE + timedelta(minutes=6)).path is None  # in sync, continues
    store.conn.close()


def copy_tree(source, target) -> None:
    import shutil

    shutil.copytree(source, target)
