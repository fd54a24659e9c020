"""The record: migrations, and observations that can never be updated or deleted."""

from __future__ import annotations

import sqlite3
import unicodedata

import pytest

from collector.record import schema
from collector.record.store import Store


def _seed(store: Store) -> dict[str, int]:
    ids = {}
    ids["run"] = store.insert("runs", dict(command="t", started_at="2026-01-01T00:00:00Z", vantage="v",
                                           software_version="0", settings={}))
    ids["request"] = store.insert("requests", dict(run_id=ids["run"], purpose="capture", method="GET",
                                                   url="http://127.0.0.1/a", attempt=1, sent=1,
                                                   started_at="a", finished_at="b", result="ok", vantage="v"))
    ids["article"] = store.insert("articles", dict(outlet_id="o", url_key="k", url="u",
                                                   first_seen_at="a", first_seen_run=ids["run"]))
    ids["snapshot"] = store.insert("snapshots", dict(
        article_id=ids["article"], request_id=ids["request"], run_id=ids["run"], purpose="capture",
        captured_at="a", status_code=200, final_url="u", text="t", html_sha256="0" * 64,
        warc_file="f", warc_offset=0, warc_length=1, extractor="x", extractor_info="{}"))
    return ids


def test_migrations_reach_the_latest_version(tmp_path):
    store = Store(tmp_path / "a.db")
    assert store.schema_version() == len(schema.MIGRATIONS)
    store.conn.close()
    # Opening again applies nothing twice.
    again = Store(tmp_path / "a.db")
    assert again.schema_version() == len(schema.MIGRATIONS)


def test_every_observation_table_has_both_triggers(store):
    triggers = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type='trigger'")}
    for table in schema.APPEND_ONLY_TABLES:
        assert f"{table}_no_update" in triggers and f"{table}_no_delete" in triggers


@pytest.mark.parametrize("statement", [
    "UPDATE snapshots SET text = 'edited'",
    "DELETE FROM snapshots",
    "UPDATE requests SET result = 'ok'",
    "DELETE FROM requests",
    "UPDATE articles SET url = 'x'",
    "DELETE FROM articles",
    # A run's software version and settings are observations too (migration 10).
    "UPDATE runs SET software_version = '9.9'",
    "UPDATE runs SET settings = '{}'",
    "DELETE FROM runs",
])
def test_observations_cannot_be_updated_or_deleted(store, statement):
    _seed(store)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.execute(statement)
    # Nor through a raw connection that bypasses the Store class.
    raw = sqlite3.connect(store.path)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        raw.execute(statement)
    raw.close()


def test_state_tables_may_change(store):
    ids = _seed(store)
    store.insert("capture_queue", dict(url_key="k", url="u", outlet_id="o", article_id=ids["article"],
                                       reason="recent", queued_at="a", queued_run=ids["run"]))
    store.execute("UPDATE capture_queue SET state = 'captured'")
    assert store.one("SELECT state FROM capture_queue")["state"] == "captured"


def test_failed_transaction_leaves_nothing(store):
    ids = _seed(store)
    before = store.one("SELECT COUNT(*) AS n FROM requests")["n"]
    with pytest.raises(RuntimeError):
        with store.transaction() as conn:
            conn.execute("INSERT INTO requests (run_id, purpose, method, url, attempt, sent, started_at, "
                         "finished_at, result, vantage) VALUES (?, 'x', 'GET', 'u', 1, 1, 'a', 'b', 'ok', 'v')",
                         (ids["run"],))
            raise RuntimeError("killed halfway")
    assert store.one("SELECT COUNT(*) AS n FROM requests")["n"] == before


def test_wal_mode(store):
    assert store.one("PRAGMA journal_mode")[0] == "wal"


# -- listing entries: a view over values stored once (migration 4) ------------------

ENTRY_COLUMNS = ("url", "url_key", "title", "published_raw", "published_utc", "modified_raw",
                 "modified_utc", "queue_reason")


def _listing(store: Store, run: int) -> int:
    return store.insert("listings", dict(run_id=run, outlet_id="o", url="http://127.0.0.1/feed",
                                         fetched_at="2026-01-01T00:00:00Z", kind="rss", entry_count=2))


def _entry(listing: int, position: int, url: str, title: str | None, **more) -> dict:
    return dict(listing_id=listing, position=position, url=url, url_key=url, title=title, **more)


def test_equal_entries_are_stored_once_and_read_back_whole(store):
    run = _seed(store)["run"]
    first, second = _listing(store, run), _listing(store, run)
    ids = [store.insert("listing_entries", _entry(first, 0, "http://127.0.0.1/a", "ক", queue_reason="recent")),
           store.insert("listing_entries", _entry(first, 1, "http://127.0.0.1/b", None)),
           # The next listing repeats both; the first without its queue reason, so that one is a new value.
           store.insert("listing_entries", _entry(second, 0, "http://127.0.0.1/a", "ক")),
           store.insert("listing_entries", _entry(second, 1, "http://127.0.0.1/b", None))]
    assert ids == [1, 2, 3, 4]
    assert store.one("SELECT COUNT(*) FROM listing_entry_values")[0] == 3
    assert store.one("SELECT COUNT(*) FROM listing_items")[0] == 4
    rows = [tuple(r) for r in store.query("SELECT * FROM listing_entries ORDER BY id")]
    assert rows == [
        (1, first, 0, "http://127.0.0.1/a", "http://127.0.0.1/a", "ক", None, None, None, None, "recent"),
        (2, first, 1, "http://127.0.0.1/b", "http://127.0.0.1/b", None, None, None, None, None, None),
        (3, second, 0, "http://127.0.0.1/a", "http://127.0.0.1/a", "ক", None, None, None, None, None),
        (4, second, 1, "http://127.0.0.1/b", "http://127.0.0.1/b", None, None, None, None, None, None)]
    # An explicit id (as a rebuild writes) is kept.
    store.insert("listing_entries", {"id": 10, **_entry(second, 2, "http://127.0.0.1/c", "গ")})
    assert store.one("SELECT listing_id, position, url FROM listing_entries WHERE id = 10")[:] == (
        second, 2, "http://127.0.0.1/c")
    with pytest.raises(sqlite3.IntegrityError):  # one entry per listing position, as before
        store.insert("listing_entries", _entry(second, 2, "http://127.0.0.1/d", None))


@pytest.mark.parametrize("statement", [
    "UPDATE listing_entries SET title = 'edited'",
    "DELETE FROM listing_entries",
    "UPDATE listing_items SET position = 5",
    "DELETE FROM listing_items",
    "UPDATE listing_entry_values SET title = 'edited'",
    "DELETE FROM listing_entry_values",
])
def test_listing_entries_and_their_storage_cannot_be_edited(store, statement):
    run = _seed(store)["run"]
    store.insert("listing_entries", _entry(_listing(store, run), 0, "http://127.0.0.1/a", "ক"))
    for conn in (store.conn, sqlite3.connect(store.path)):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute(statement)
    assert store.one("SELECT title FROM listing_entries")[0] == "ক"


def _database_at_version(path, version: int) -> sqlite3.Connection:
    """Return a raw connection to a new database migrated only up to `version`, holding run 1."""
    from collector.record.store import _split_sql

    raw = sqlite3.connect(path)
    for script in schema.MIGRATIONS[:version]:
        for statement in _split_sql(script):
            raw.execute(statement)
    raw.execute(f"PRAGMA user_version = {version}")
    raw.execute("INSERT INTO runs (id, command, started_at, vantage, software_version, settings) "
                "VALUES (1, 't', 'a', 'v', '0', '{}')")
    return raw


def test_migration_4_keeps_every_listing_entry_and_the_capture_queue(tmp_path):
    """A database written before migration 4 reads the same, row for row, after it."""
    path = tmp_path / "v3.db"
    raw = _database_at_version(path, 3)
    for listing in (1, 2, 3):
        raw.execute("INSERT INTO listings (id, run_id, outlet_id, url, fetched_at, kind, entry_count) "
                    "VALUES (?, 1, 'o', 'http://127.0.0.1/feed', 'a', 'rss', 3)", (listing,))
    before = []
    next_id = 1
    for listing in (1, 2, 3):
        for position, (url, title, published) in enumerate([
                ("http://127.0.0.1/a", "ক", "Tue, 01 Sep 2026 05:30:00 +0600"),
                ("http://127.0.0.1/b", None, None),
                (f"http://127.0.0.1/only-{listing}", "খ", None)]):
            row = (next_id + 7, listing, position, url, url.lower(), title, published,
                   None, None, None, "recent" if listing == 1 else None)
            raw.execute("INSERT INTO listing_entries VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
            before.append(row)
            next_id += 1
    raw.execute("INSERT INTO articles (id, outlet_id, url_key, url, first_seen_at, first_seen_run) "
                "VALUES (1, 'o', 'k', 'u', 'a', 1)")
    raw.execute("INSERT INTO capture_queue (url_key, url, outlet_id, article_id, reason, listing_entry_id, "
                "queued_at, queued_run, state) VALUES ('k', 'u', 'o', 1, 'recent', 8, 'a', 1, 'captured')")
    raw.commit()
    queue_before = raw.execute("SELECT * FROM capture_queue").fetchall()
    raw.close()

    store = Store(path)
    assert store.schema_version() == len(schema.MIGRATIONS)
    assert [tuple(r) for r in store.query("SELECT * FROM listing_entries ORDER BY id")] == before
    # 9 entries, 7 distinct sets of values: listing 1's three (queued), listing 2's three (not queued),
    # and listing 3's own address; its a and b repeat listing 2's.
    assert store.one("SELECT COUNT(*) FROM listing_entry_values")[0] == 7
    # Later migrations add columns (migration 10: attempts); the rows keep what they held.
    width = len(queue_before[0])
    assert [tuple(r)[:width] for r in store.query("SELECT * FROM capture_queue")] == [tuple(r) for r in queue_before]
    assert store.query("PRAGMA foreign_key_check") == []
    # The queue may still change (a state table), and still refers to an entry's id.
    store.execute("UPDATE capture_queue SET state = 'pending'")
    with pytest.raises(sqlite3.IntegrityError):
        store.execute("UPDATE capture_queue SET listing_entry_id = 999")


# -- snapshot text: once per article and distinct text (migration 5) ----------------------------

def _recheck(store: Store, ids: dict, text: str | None, headline: str = "শিরোনাম", article=None) -> int:
    request = store.insert("requests", dict(run_id=ids["run"], purpose="recheck", method="GET",
                                            url="http://127.0.0.1/a", attempt=1, sent=1, started_at="a",
                                            finished_at="b", result="ok", vantage="v"))
    return store.insert("snapshots", dict(
        article_id=article or ids["article"], request_id=request, run_id=ids["run"], purpose="recheck",
        captured_at="b", status_code=200, final_url="u", headline=headline, text=text, html_sha256="1" * 64,
        warc_file="f", warc_offset=0, warc_length=1, extractor="x", extractor_info="{}"))


def test_unchanged_text_is_stored_once_and_every_snapshot_reads_it(store):
    ids = _seed(store)  # its capture snapshot's text is "t"
    same = [_recheck(store, ids, "t") for _ in range(3)]
    changed = _recheck(store, ids, "t, সংশোধিত")
    back = _recheck(store, ids, "t")
    empty = _recheck(store, ids, None)
    other = store.insert("articles", dict(outlet_id="o", url_key="k2", url="u2", first_seen_at="a",
                                          first_seen_run=ids["run"]))
    elsewhere = _recheck(store, ids, "t", article=other)  # another article's equal text is its own row
    assert same == [ids["snapshot"] + 1, ids["snapshot"] + 2, ids["snapshot"] + 3]
    assert store.one("SELECT COUNT(*) FROM snapshot_texts")[0] == 3
    texts = {r["id"]: r["text"] for r in store.query("SELECT id, text FROM snapshots")}
    assert texts == {ids["snapshot"]: "t", **{s: "t" for s in same}, changed: "t, সংশোধিত", back: "t",
                     empty: None, elsewhere: "t"}
    columns = [r[1] for r in store.query("PRAGMA table_info(snapshots)")]
    assert columns[:3] == ["id", "article_id", "request_id"] and columns[16] == "text" and len(columns) == 29


def test_search_holds_each_distinct_headline_and_text_once_under_its_first_snapshot(store):
    from collector.record.search import search

    ids = _seed(store)  # the capture: no headline, text "t"
    first = _recheck(store, ids, "t")  # the headline appears: indexed
    repeat = _recheck(store, ids, "t")  # headline and text as the one before: not indexed again
    retitled = _recheck(store, ids, "t", headline="নতুন শিরোনাম")
    rewritten = _recheck(store, ids, "কার্যালয়ে বৈঠক")
    assert sorted(search(store, "শিরোনাম")) == sorted([first, retitled, rewritten])
    assert search(store, "নতুন") == [retitled]
    assert search(store, "কার্যালয়ে") == [rewritten]
    assert search(store, "কার্যালয়") == []  # a fragment of the word is not a word
    indexed = store.query("SELECT id FROM snapshots_fts_docsize ORDER BY id")  # one row per indexed snapshot
    assert [r[0] for r in indexed] == [ids["snapshot"], first, retitled, rewritten]
    assert repeat not in search(store, "শিরোনাম")


@pytest.mark.parametrize("statement", [
    "UPDATE snapshot_rows SET headline = 'edited'",
    "DELETE FROM snapshot_rows",
    "UPDATE snapshot_texts SET text = 'edited'",
    "DELETE FROM snapshot_texts",
])
def test_snapshot_storage_cannot_be_edited(store, statement):
    _seed(store)
    for conn in (store.conn, sqlite3.connect(store.path)):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute(statement)
    assert store.one("SELECT text FROM snapshots")[0] == "t"


def test_migration_5_keeps_every_snapshot_and_what_points_at_it(tmp_path):
    """A database written before migration 5 reads the same, row for row, after it."""
    path = tmp_path / "v4.db"
    raw = _database_at_version(path, 4)
    for article in (1, 2):
        raw.execute("INSERT INTO articles (id, outlet_id, url_key, url, first_seen_at, first_seen_run) "
                    "VALUES (?, 'o', ?, 'u', 'a', 1)", (article, f"k{article}"))
    texts = ["কার্যালয়ে বৈঠক", "কার্যালয়ে বৈঠক", None, "কার্যালয়ে বৈঠক হয়েছে", "কার্যালয়ে বৈঠক"]
    for n, text in enumerate(texts, start=1):
        raw.execute("INSERT INTO requests (id, run_id, purpose, method, url, attempt, sent, started_at, "
                    "finished_at, result, vantage) VALUES (?, 1, 'capture', 'GET', 'u', 1, 1, 'a', 'b', 'ok', 'v')",
                    (n,))
        raw.execute("INSERT INTO snapshots (id, article_id, request_id, run_id, purpose, captured_at, status_code, "
                    "final_url, headline, text, html_sha256, warc_file, warc_offset, warc_length, extractor, "
                    "extractor_info) VALUES (?, ?, ?, 1, 'capture', ?, 200, 'u', 'শিরোনাম', ?, ?, 'f', 0, 1, "
                    "'x', '{}')", (n * 10, 1 if n < 5 else 2, n, f"c{n}", text, str(n) * 64))
    raw.execute("INSERT INTO checks (id, article_id, slot, due_at, performed_at, run_id, url, result, "
                "request_chain, snapshot_id, outcome) VALUES (1, 1, '1h', 'a', 'b', 1, 'u', 'ok', '[2]', 20, "
                "'present')")
    raw.execute("INSERT INTO archive_submissions (id, snapshot_id, run_id, kind, url, recorded_at, status) "
                "VALUES (1, 10, 1, 'submit', 'u', 'a', 'pending')")
    raw.commit()
    before = raw.execute("SELECT * FROM snapshots ORDER BY id").fetchall()
    raw.close()

    store = Store(path)
    assert store.schema_version() == len(schema.MIGRATIONS)
    assert [tuple(r) for r in store.query("SELECT * FROM snapshots ORDER BY id")] == before
    assert store.one("SELECT COUNT(*) FROM snapshot_texts")[0] == 3  # article 1: two texts; article 2: one
    assert store.query("PRAGMA foreign_key_check") == []
    # The checks and submissions that point at snapshots now point at their rows, by the same ids.
    sql = {r[0]: r[1] for r in store.query("SELECT name, sql FROM sqlite_master WHERE type = 'table'")}
    assert "REFERENCES snapshot_rows(id)" in sql["checks"].replace('"', "")
    assert "REFERENCES snapshot_rows(id)" in sql["archive_submissions"].replace('"', "")
    with pytest.raises(sqlite3.IntegrityError):  # and the reference is still enforced
        store.insert("archive_submissions", dict(snapshot_id=999, run_id=1, kind="submit", url="u",
                                                 recorded_at="a", status="pending"))
    # Searched: the first snapshot of each distinct headline and text.
    assert [r[0] for r in store.query("SELECT id FROM snapshots_fts_docsize ORDER BY id")] == [10, 30, 40, 50]


def test_an_older_database_with_its_triggers_migrates_without_a_finding(tmp_path):
    raw = _database_at_version(tmp_path / "v5.db", 5)
    from collector.record.store import _split_sql

    for table in (*schema.APPEND_ONLY_TABLES, *schema.STORAGE_TABLES):  # as every open used to make them
        if raw.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone():
            for statement in _split_sql(schema.append_only_triggers(table)):
                raw.execute(statement)
    raw.commit()
    raw.close()
    store = Store(tmp_path / "v5.db")
    assert store.schema_version() == len(schema.MIGRATIONS) and store.tampering == []
    store.insert("request_intents", {"run_id": 1, "purpose": "capture", "method": "GET", "url": "u",
                                     "attempt": 1, "vantage": "v", "intended_at": "t"})
    with pytest.raises(sqlite3.IntegrityError):  # the table migration 9 made has its triggers
        store.execute("UPDATE request_intents SET url = 'x'")
    store.close()


def test_a_trigger_missing_from_an_older_table_is_reported_not_recreated(tmp_path):
    _database_at_version(tmp_path / "v5.db", 5).commit()
    store = Store(tmp_path / "v5.db")
    assert "trigger requests_no_update is missing" in store.tampering
    assert "trigger request_intents_no_update is missing" not in store.tampering
    store.close()
    assert "trigger requests_no_update is missing" in Store(tmp_path / "v5.db").tampering


def test_an_added_trigger_is_reported(store):
    store.execute("CREATE TRIGGER sneaky AFTER INSERT ON requests BEGIN SELECT 1; END")
    store.close()
    assert Store(store.path).tampering == ["trigger sneaky is not part of the schema"]


def test_migration_7_folds_the_index_of_snapshots_written_before_it(tmp_path):
    """A database indexed as stored (migrations 1-6) is re-indexed folded; its rows and texts stay as they were."""
    from collector.record.search import search

    path = tmp_path / "v6.db"
    raw = _database_at_version(path, 6)
    raw.execute("INSERT INTO articles (id, outlet_id, url_key, url, first_seen_at, first_seen_run) "
                "VALUES (1, 'o', 'k', 'u', 'a', 1)")
    stored = ["র\u200d্যাবের অভিযানে", "হ\u09df\u09c7ছে", unicodedata.normalize("NFD", "কোনো ক্ষতি হতো না")]
    for n, text in enumerate(stored, start=1):
        raw.execute("INSERT INTO requests (id, run_id, purpose, method, url, attempt, sent, started_at, "
                    "finished_at, result, vantage) VALUES (?, 1, 'capture', 'GET', 'u', 1, 1, 'a', 'b', 'ok', 'v')",
                    (n,))
        raw.execute("INSERT INTO snapshots (id, article_id, request_id, run_id, purpose, captured_at, status_code, "
                    "final_url, headline, text, html_sha256, warc_file, warc_offset, warc_length, extractor, "
                    "extractor_info) VALUES (?, 1, ?, 1, 'capture', 'c', 200, 'u', 'শিরোনাম', ?, ?, 'f', 0, 1, "
                    "'x', '{}')", (n, n, text, str(n) * 64))
    raw.commit()
    before = raw.execute("SELECT * FROM snapshots ORDER BY id").fetchall()
    unfolded = raw.execute("SELECT rowid FROM snapshots_fts WHERE snapshots_fts MATCH '\"র্যাবের\"'").fetchall()
    raw.close()
    assert unfolded == []  # before: the reader's spelling of র‍্যাবের was not found

    store = Store(path)
    try:
        assert store.schema_version() == len(schema.MIGRATIONS)
        assert [tuple(r) for r in store.query("SELECT * FROM snapshots ORDER BY id")] == before
        assert search(store, "র্যাবের") == [1] and search(store, "হ\u09af\u09bc\u09c7ছে") == [2]
        assert search(store, "কোনো ক্ষতি") == [3]
        assert store.query("SELECT rowid FROM snapshots_fts WHERE text IS NOT NULL") == []  # no copy of any text
        later = _recheck(store, {"run": 1, "article": 1}, "নতুন র\u200c্যাব")  # written after: indexed folded
        assert search(store, "র্যাব") == [later]
    finally:
        store.close()
    # A connection without the folding function can read the record, and cannot write a snapshot unfolded.
    plain = sqlite3.connect(path)
    assert plain.execute("SELECT COUNT(*) FROM snapshots").fetchone()[0] == 4
    with pytest.raises(sqlite3.OperationalError, match="search_fold|tw_snapshot_facts"):  # either unregistered
        plain.execute("INSERT INTO snapshots (article_id, request_id, run_id, purpose, captured_at, status_code, "
                      "final_url, html_sha256, warc_file, warc_offset, warc_length, extractor, extractor_info) "
                      "VALUES (1, 1, 1, 'recheck', 'c', 200, 'u', 'h', 'f', 0, 1, 'x', '{}')")
    plain.close()
