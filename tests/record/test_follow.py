"""A database that follows every record stream, in sync with each stream's new files (collector/record/follow.py)."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

from collector.record import export as ex, fold, follow, merge, streams, tables
from collector.record.store import Store
from testing import replica

NOW = replica.FEED_SNAPSHOT_TIME


def _rows(db) -> dict[str, set[tuple]]:
    """Every record table's rows (state tables too), as sets."""
    conn = sqlite3.connect(db)
    try:
        return {t: set(conn.execute(f'SELECT * FROM "{t}"')) for t in tables.record_tables(conn)} | {
            "sync_merged": set(conn.execute("SELECT * FROM sync_merged"))}
    finally:
        conn.close()


class Writer:
    """One stream's job: its own database, exporting into its own folder of the record."""

    def __init__(self, tmp_path, root, name):
        self.name, self.root, self.stream = name, root, name
        self.store = Store(tmp_path / f"{name}.db")
        with self.store.transaction() as conn:
            streams.set_stream(conn, name)
        self.articles: dict[str, int] = {}
        self.exports = 0

    def run(self, seen: str, addresses: list[str], slots=("1h",)) -> None:
        """One run: the outlet's state, articles first seen at `seen`, their checks and queue rows."""
        store = self.store
        with store.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO outlet_groups (id, name, name_bn) VALUES ('g', ?, 'গ')",
                         (f"group as {self.name} saw it at {seen}",))
            conn.execute("INSERT OR REPLACE INTO outlets (id, name, name_bn, homepage, group_id, first_seen_at, "
                         "last_synced_at) VALUES ('o', 'O', 'ও', 'https://o.test/', 'g', ?, ?)", (seen, seen))
        run = store.insert("runs", {"command": "run", "started_at": seen, "vantage": self.name,
                                    "software_version": "0", "settings": "{}"})
        for address in addresses:
            url = f"https://o.test/{address}"
            if address not in self.articles:
                self.articles[address] = store.insert("articles", {
                    "outlet_id": "o", "url_key": url, "url": url, "first_seen_at": seen, "first_seen_run": run})
                store.insert("article_urls", {"article_id": self.articles[address], "url_key": url, "url": url,
                                              "how": "listing", "recorded_at": seen, "run_id": run})
            for slot in slots:
                store.insert("checks", {"article_id": self.articles[address], "slot": slot, "due_at": seen,
                                        "performed_at": seen, "run_id": run, "url": url, "result": "ok",
                                        "request_chain": "[]", "outcome": "present"})
            with store.transaction() as conn:
                conn.execute("INSERT OR REPLACE INTO capture_queue (url_key, url, outlet_id, article_id, reason, "
                             "queued_at, queued_run) VALUES (?, ?, 'o', ?, ?, ?, ?)",
                             (url, url, self.articles[address], f"queued by {self.name}", seen, run))
        self.exports += 1
        when = NOW + timedelta(minutes=15 * self.exports + len(self.name))
        assert ex.export_new(store, streams.folder(self.root, self.stream), now=when).path is not None


def _check(tmp_path, root, db, n: int) -> follow.Followed:
    """Follow, then compare with a full merge of the same files: every record row, sync_merged too."""
    done = follow.follow(db, [root])
    full = tmp_path / f"full-{n}.db"
    merge.rebuild_record([root], full)
    assert _rows(db) == _rows(full), n
    # The articles' projection (record/fold.py), folded as each increment's rows arrived, is the full merge's.
    followed, merged = sqlite3.connect(db), sqlite3.connect(full)
    assert fold.projection(followed) == fold.projection(merged) == fold.from_rows(merged), n
    followed.close(), merged.close()
    return done


def test_the_followed_database_equals_a_full_rebuild_after_every_increment_in_any_order(tmp_path):
    root, db = tmp_path / "record", tmp_path / "followed.db"
    a, b, c = (Writer(tmp_path, root, n) for n in ("hosted-1of2", "hosted-2of2", "bd-1of2"))
    # (writer, first seen, addresses, slots): b and c record addresses a recorded, later seen.
    steps = [
        [(a, "2026-08-13T04:00:00Z", ["x", "y"], ("1h",))],
        [(b, "2026-08-13T04:10:00Z", ["y", "z"], ("1h",)), (c, "2026-08-13T04:20:00Z", ["x"], ("1h",))],
        [(c, "2026-08-13T05:00:00Z", ["x", "w"], ("6h",))],
        [(a, "2026-08-13T06:00:00Z", ["x", "v"], ("24h",)), (b, "2026-08-13T06:05:00Z", ["v"], ("24h",))],
        [],  # nothing new: in sync already
    ]
    merged_anew = []
    for n, step in enumerate(steps):
        for writer, seen, addresses, slots in step:
            writer.run(seen, addresses, slots)
        done = _check(tmp_path, root, db, n)
        merged_anew.append(done.merged_anew)
        assert sum(done.files.values()) == len(step) or n == 0
    # Only the first follow writes the merged database whole; every later one reads only the new files.
    assert merged_anew == [True, False, False, False, False]
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM articles").fetchone()[0] == 5  # x y z w v: one each
    assert conn.execute("SELECT COUNT(*) FROM sync_merged WHERE how = 'folded'").fetchone()[0] > 0
    assert conn.execute("SELECT COUNT(*) FROM sync_merged WHERE how = 'relabelled'").fetchone()[0] > 0
    followed = dict(conn.execute("SELECT stream, through FROM sync_followed WHERE table_name = 'checks'"))
    assert followed == {w.name: w.store.one("SELECT MAX(id) AS n FROM checks")["n"] for w in (a, b, c)}


def test_the_default_streams_new_rows_are_followed_by_increments_too(tmp_path):
    """The default stream (one hosted collect job: collect_matrix.py names no stream) is not a writer's."""
    root, db = tmp_path / "record", tmp_path / "followed.db"
    default, other = Writer(tmp_path, root, None), Writer(tmp_path, root, "bd-1of1")
    default.name = "hosted"  # its vantage; its stream is the default one
    steps = [[(default, "2026-08-13T04:00:00Z", ["x", "y"], ("1h",))],
             [(default, "2026-08-13T05:00:00Z", ["x", "z"], ("6h",)), (other, "2026-08-13T05:10:00Z", ["z"], ("6h",))],
             [(default, "2026-08-13T06:00:00Z", ["w"], ("24h",))]]
    for n, step in enumerate(steps):
        for writer, seen, addresses, slots in step:
            writer.run(seen, addresses, slots)
        done = _check(tmp_path, root, db, n)
        assert done.merged_anew == (n == 0) and done.files.get("") == 1
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM articles").fetchone()[0] == 4


def test_a_late_file_that_changes_an_earlier_decision_merges_anew_and_still_equals_a_rebuild(tmp_path):
    root, db = tmp_path / "record", tmp_path / "followed.db"
    hosted, bd = Writer(tmp_path, root, "hosted-1of1"), Writer(tmp_path, root, "bd-1of1")
    hosted.run("2026-08-13T05:00:00Z", ["x"])
    assert _check(tmp_path, root, db, 0).merged_anew
    bd.run("2026-08-13T04:00:00Z", ["x"])  # the Bangladesh runner's file arrives late: it saw x first
    done = _check(tmp_path, root, db, 1)
    assert done.merged_anew and "seen before" in done.why
    assert done.rebuilt == ["bd-1of1"]  # a stream new to it; hosted-1of1's own database was brought in sync
    hosted.run("2026-08-13T06:00:00Z", ["x", "y"], ("6h",))
    assert not _check(tmp_path, root, db, 2).merged_anew


def test_a_database_that_did_not_hold_what_the_streams_held_is_merged_anew(tmp_path):
    root, db = tmp_path / "record", tmp_path / "followed.db"
    a, b = Writer(tmp_path, root, "hosted-1of2"), Writer(tmp_path, root, "hosted-2of2")
    a.run("2026-08-13T04:00:00Z", ["x"])
    b.run("2026-08-13T04:00:00Z", ["y"])
    follow.follow(db, [root])
    saved = db.read_bytes()
    a.run("2026-08-13T05:00:00Z", ["z"])
    follow.follow(db, [root])
    db.write_bytes(saved)  # the merged database of before, the streams' databases of after (a job stopped)
    b.run("2026-08-13T05:00:00Z", ["w"])
    done = _check(tmp_path, root, db, 0)
    assert done.merged_anew and "did not hold" in done.why


def test_an_address_known_by_its_digest_alone_maps_a_later_streams_article_to_it(tmp_path):
    """A pruned stream's database (collect/follow_prune.py) knows an article it left out by its key's digest."""
    from collector.record.articles import CREATE_IDENTITIES, IDENTITIES, key_digest

    url = "https://o.test/x"
    early, late = Writer(tmp_path, tmp_path / "record", "hosted-1of1"), Writer(tmp_path, tmp_path / "record", "bd-1of1")
    early.run("2026-08-13T04:00:00Z", [])
    late.run("2026-08-14T04:00:00Z", ["x"])
    old = 12345 + streams.base("hosted-1of1")
    with early.store.transaction() as conn:
        conn.execute(CREATE_IDENTITIES)
        conn.execute(f"INSERT INTO {IDENTITIES} VALUES (?, ?, ?)", (key_digest(url), old, "2026-08-13T04:00:00Z"))
    parts = {"hosted-1of1": tmp_path / "hosted-1of1.db", "bd-1of1": tmp_path / "bd-1of1.db"}
    conn = sqlite3.connect(":memory:")
    merge.article_map(conn, parts, sorted(parts, key=streams.base))
    assert conn.execute("SELECT old, new FROM temp.article_map").fetchall() == [(late.articles["x"], old)]
