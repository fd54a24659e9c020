"""What a revisit reads of an article, folded (collector/record/fold_visit.py): its address, its address keys and
its checks' address digests, whatever order rows arrive in, kept by a pruning, and made from the dormant rows of
a working database the code before (migration 21) pruned."""

from __future__ import annotations

import gzip
import json
import random
import shutil
import sqlite3
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from collector.clock import iso
from collector.collect import outcomes
from collector.collect.prune import prune
from collector.collect.revisits import due_checks
from collector.record import dormant, export, fold_visit, schema
from collector.record.fold_keys import key_digest
from collector.record.store import Store, trigger_problems
from collector.record.tables import record_tables
from collector.net.fetcher import Response
from collector.parse.listings import parse_listing
from tests.record.migrating import refused_unchanged
from tests.record.test_fold import START, in_two_orders, insert, restored_after
from tests.record.test_fold_keys import addresses

DATA = Path(__file__).resolve().parent.parent / "data" / "fold"


def rows(seed: int) -> list[tuple[str, dict]]:
    """Return articles, article_urls and checks rows: each article's listing address, some a redirect's or a
    canonical one (another article's too), and a few checks of each, at its address or at another."""
    out = addresses(seed)
    rng = random.Random(seed)
    check = 0
    for table, row in list(out):
        if table != "articles":
            continue
        for slot in ("1h", "6h", "24h")[:rng.randrange(0, 4)]:
            check += 1
            url = row["url"] if rng.random() < 0.8 else row["url"] + "?page=2"
            out.append(("checks", {"id": check, "article_id": row["id"], "slot": slot, "due_at": iso(START),
                                   "performed_at": iso(START + timedelta(minutes=check)), "run_id": 1, "url": url,
                                   "result": "ok", "request_chain": "[]", "outcome": "present", "opens_absence": 0,
                                   "try_number": 1}))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_projection_is_the_rows_folded_whatever_order_they_arrive_in(tmp_path, seed):
    flat = rows(seed)
    in_order, other = in_two_orders(tmp_path, flat, seed)  # an address or a check before its article's row
    want = fold_visit.from_rows(in_order.conn)
    assert fold_visit.projection(in_order.conn) == want == fold_visit.projection(other.conn)
    with other.transaction() as conn:  # every row folded a second time: nothing changes
        fold_visit.refold(conn)
    assert fold_visit.projection(other.conn) == want
    articles, checks = want
    assert set(articles) == {r["id"] for t, r in flat if t == "articles"}
    assert len(checks) == sum(t == "checks" for t, _ in flat)
    for table, row in flat:
        if table == "articles":  # what classify reads: its row's key and every address recorded for it
            recorded = {key_digest(r["url_key"]) for t, r in flat if t == "article_urls" and r["article_id"] == row["id"]}
            assert outcomes.known_keys(other.conn, row["id"]) == recorded | {key_digest(row["url_key"])}
            assert fold_visit.addresses(other.conn, row["id"]) == recorded
            assert fold_visit.url_of(other.conn, row["id"]) == row["url"]
    assert trigger_problems(other.conn) == []
    assert {fold_visit.CHECKS, "fold_articles"}.isdisjoint(record_tables(other.conn))


def test_a_key_is_found_only_at_a_whole_digests_place():
    first, second = key_digest("https://a.test/1"), key_digest("https://a.test/2")
    keys = fold_visit.keys_with(fold_visit.keys_with(None, first), second)
    assert keys == first + second and fold_visit.keys_with(keys, second) == keys
    straddling = (first + second)[8:24]  # 16 bytes inside the two, at no digest's place
    assert fold_visit.keys_with(keys, straddling) == keys + straddling
    assert fold_visit.keys_with(keys, b"short") == keys  # not a digest: nothing added


def test_the_export_repeats_a_checks_address_by_its_digest_whether_or_not_its_row_is_held(tmp_path):
    """The earlier check of an article an export repeats is found in CHECKS, its row held or not (a pruning
    keeps its entry, not its row), within the stream's range only."""
    url = "https://o1.test/news/an-address-longer-than-forty-eight-characters-written-out"
    lines = {}
    for held in (True, False):
        store = insert(tmp_path / f"held-{held}.db", rows(4))
        with store.transaction() as conn:
            if held:
                _check(conn, 100, "72h", url)
            else:  # what a pruning keeps of a check whose row it left out
                conn.execute(f"INSERT INTO {fold_visit.CHECKS} VALUES (1, 100, ?)", (fold_visit.url_digest(url),))
            _check(conn, 101, "168h", url)
        assert fold_visit.check_before(store.conn, 1, 101) == (100, fold_visit.url_digest(url))
        assert fold_visit.check_before(store.conn, 1, 101, low=100) is None  # another stream's: never repeated
        lines[held] = []
        export._append_lines(store.conn, "checks", 100, lines[held])
        store.close()
    assert lines[True] == lines[False] and json.loads(lines[False][0])["r"]["url"] == {"$same": 100}


def _check(conn, check_id: int, slot: str, url: str, article: int = 1) -> None:
    conn.execute("INSERT INTO checks (id, article_id, slot, due_at, performed_at, run_id, url, result, request_chain, "
                 "outcome, opens_absence, try_number) VALUES (?, ?, ?, ?, ?, 1, ?, 'ok', '[]', 'present', 0, 1)",
                 (check_id, article, slot, iso(START), iso(START), url))


def test_a_redirect_to_an_address_recorded_for_the_article_is_the_article(tmp_path):
    store = insert(tmp_path / "db.db", rows(1))
    moved = "https://o1.test/amp/1"  # recorded for article 1 (its redirect or canonical address) or not
    recorded = moved in {r["url_key"] for t, r in rows(1) if t == "article_urls" and r["article_id"] == 1}
    page = b"<html><head><title>t</title></head><body><p>text</p></body></html>"
    answer = Response("https://o1.test/news/1-", moved, "ok", 200, {"content-type": "text/html"}, page)
    known = outcomes.known_keys(store.conn, 1)
    # A one-segment path with no date is a front page unless it is one of the article's own addresses.
    front = outcomes.front_page_reason("https://o1.test/news/1-", replace(answer, final_url="https://o1.test/x"),
                                       known)
    assert front is not None
    assert (outcomes.front_page_reason("https://o1.test/news/1-", answer, known) is None) == (
        recorded or outcomes.front_page_reason("https://o1.test/news/1-", answer, frozenset()) is None)
    with store.transaction() as conn:
        conn.execute("INSERT INTO article_urls (id, article_id, url, url_key, how, recorded_at, run_id) "
                     "VALUES (999, 1, 'https://o1.test/x', 'https://o1.test/x', 'redirect', ?, 1)", (iso(START),))
    assert outcomes.front_page_reason("https://o1.test/news/1-", replace(answer, final_url="https://o1.test/x"),
                                      outcomes.known_keys(store.conn, 1)) is None


def test_restoring_a_dropped_trigger_folds_the_rows_inserted_without_it(tmp_path):
    store = insert(tmp_path / "db.db", rows(5))
    store.conn.execute(f"DROP TRIGGER {fold_visit.CHECKS}_check")
    store.conn.execute("DROP TRIGGER fold_articles_key")
    restored_after(store, _moved(), fold_visit, fold_visit.CHECKS)


def test_restoring_an_altered_trigger_replaces_what_it_folded_wrong(tmp_path):
    store = insert(tmp_path / "db.db", rows(5))
    wrong = {"fold_articles_key": "INSERT INTO fold_articles (article_id, keys) VALUES (NEW.article_id, "
                                  "x'00000000000000000000000000000000') ON CONFLICT (article_id) DO UPDATE SET "
                                  "keys = tw_keys_with(fold_articles.keys, excluded.keys)",
             f"{fold_visit.CHECKS}_check": f"INSERT INTO {fold_visit.CHECKS} VALUES (NEW.article_id, NEW.id, "
                                          "zeroblob(32)) ON CONFLICT DO NOTHING"}
    for name, body in wrong.items():
        table = "article_urls" if "key" in name else "checks"
        store.conn.execute(f"DROP TRIGGER {name}")
        store.conn.execute(f"CREATE TRIGGER {name} AFTER INSERT ON {table} BEGIN {body}; END")
    restored_after(store, _moved(), fold_visit, fold_visit.CHECKS)


def _moved() -> list[tuple[str, dict]]:
    """Return an address and a check of article 2 at it: rows a missing or altered trigger folds wrong."""
    return [("article_urls", {"id": 900, "article_id": 2, "url": "https://x.test/moved", "url_key": "https://x.test/moved",
                              "how": "redirect", "recorded_at": iso(START), "run_id": 1}),
            ("checks", {"id": 900, "article_id": 2, "slot": "72h", "due_at": iso(START), "performed_at": iso(START),
                        "run_id": 1, "url": "https://x.test/moved", "result": "ok", "request_chain": "[]",
                        "outcome": "present", "opens_absence": 0, "try_number": 1})]


def _fixture(tmp_path: Path, name: str) -> Path:
    """Return a copy of a database the code before migration 22 wrote (tests/data/fold/, made by the code of
    6369e57 with tests/collect/test_dormant.py's `quiet` fixture, the test helper's addresses made as long as
    tests/collect/test_prune.py's SLUG now makes them, that commit's own being too short to be repeated):
    working-v21, a pruned working database holding its three quiet articles as dormant rows (format 2: each its article, addresses and latest check), and full-v21, the full one it was pruned from.
    v21-ids.json names the fixture's articles."""
    out = tmp_path / f"{name}.db"
    with gzip.open(DATA / f"{name}.db.gz") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def test_a_working_database_of_the_code_before_reads_what_the_full_one_does_after_the_migration(tmp_path):
    ids = json.loads((DATA / "v21-ids.json").read_text())
    quiet = [ids[n] for n in ("same", "edited", "gone")]
    working_path, full_path = _fixture(tmp_path, "working-v21"), _fixture(tmp_path, "full-v21")
    raw = sqlite3.connect(working_path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 21
    packed = {r[0]: dormant.unpack(r[1]) for r in raw.execute(f"SELECT article_id, rows FROM {dormant.TABLE}")}
    assert sorted(packed) == quiet and raw.execute("SELECT COUNT(*) FROM checks WHERE article_id IN (?, ?, ?) AND "
                                                   "id < (SELECT MAX(id) FROM checks)", quiet).fetchone() == (0,)
    raw.close()
    working, full = Store(working_path), Store(full_path)
    assert working.schema_version() == full.schema_version() == len(schema.MIGRATIONS)
    assert working.one(f"SELECT COUNT(*) FROM {dormant.TABLE}")[0] == 0  # folded, then dropped
    assert fold_visit.from_rows(full.conn) == fold_visit.projection(full.conn)
    whole, kept = fold_visit.projection(full.conn), fold_visit.projection(working.conn)
    for article in quiet:  # its address and keys, and its latest check, as the full database holds them
        assert kept[0][article] == whole[0][article]
        latest = max(c for c, (a, _d) in whole[1].items() if a == article)
        assert kept[1][latest] == whole[1][latest] and latest == packed[article]["checks"][0]["id"]
        assert len(fold_visit.url_of(working.conn, article)) >= export.REPEAT_MIN_CHARS
    for hours in (0, 72, 168, 720, 8760):  # every check still owed falls due at the same address
        at = START.replace(year=2028) + timedelta(hours=hours)
        assert [(d.article_id, d.url, d.slot) for d in due_checks(working, at)] == \
               [(d.article_id, d.url, d.slot) for d in due_checks(full, at)]
    # A check of a quiet article written now is exported as the full database writes it: its address repeated.
    lines = {}
    for name, store in (("working", working), ("full", full)):
        top = full.one("SELECT MAX(id) FROM checks")[0]
        with store.transaction() as conn:
            conn.execute("INSERT INTO checks (id, article_id, slot, due_at, performed_at, run_id, url, result, "
                         "request_chain, outcome, opens_absence, try_number) "
                         "VALUES (?, ?, '720h', ?, ?, 1, ?, 'ok', '[]', 'present', 0, 1)",
                         (top + 1, ids["same"], iso(START), iso(START), fold_visit.url_of(full.conn, ids["same"])))
        lines[name] = []
        export._append_lines(store.conn, "checks", top, lines[name])
    assert lines["working"] == lines["full"] and '"$same"' in lines["full"][0]
    working.close()
    full.close()
    # The migration dropped its dormant rows, its next pruning makes none, and what the revisits read of the
    # quiet articles stays.
    prune(working_path, None, START.replace(year=2028), archive_queue=False, check=lambda source: None)
    working = Store(working_path)
    assert working.one(f"SELECT COUNT(*) FROM {dormant.TABLE}")[0] == 0
    after = fold_visit.projection(working.conn)
    assert {a: after[0][a] for a in quiet} == {a: kept[0][a] for a in quiet}
    assert all(after[1][c] == kept[1][c] for c, (a, _d) in kept[1].items() if a in quiet and c in after[1])
    assert {a for a, _d in after[1].values()} >= set(quiet)
    working.close()


def test_a_damaged_dormant_row_is_refused_and_the_database_left_as_it_was(tmp_path):
    path = _fixture(tmp_path, "working-v21")
    for n, rows_value in enumerate(("x'09'", "x'02ffeeddccbbaa00112233'")):  # not a format; not zlib
        copy = tmp_path / f"damaged-{n}.db"
        shutil.copy(path, copy)
        damage = (f"UPDATE {dormant.TABLE} SET rows = {rows_value} "
                  f"WHERE article_id = (SELECT MIN(article_id) FROM {dormant.TABLE})")
        refused_unchanged(copy, damage, "packed rows are damaged", 21).close()


def test_a_followers_stream_database_keeps_its_dormant_rows_through_the_migration(tmp_path):
    """Its merge still reads them (record/dormant.py); what they pack is folded as well."""
    from collector.record.dormant_table import V15_TABLE  # its name before migration 19
    from tests.record.test_fold_keys import _fixture as v17

    path = v17(tmp_path, "part-v17")
    raw = sqlite3.connect(path)
    before = {r[0]: dormant.unpack(r[1]) for r in raw.execute(f"SELECT article_id, rows FROM {V15_TABLE}")}
    raw.close()
    assert before and all(rows["snapshot_rows"] for rows in before.values())
    part = Store(path)
    after = {r[0]: dormant.unpack(r[1]) for r in part.query(f"SELECT article_id, rows FROM {dormant.TABLE}")}
    assert sorted(after) == sorted(before) and all(rows["snapshot_rows"] for rows in after.values())
    for article_id, rows in before.items():
        assert fold_visit.url_of(part.conn, article_id) == rows["articles"][0]["url"]
    part.close()


FEEDS = Path(__file__).resolve().parents[1] / "data" / "feeds"
TRICKY = ["", "=", "~", "~%E0%A6%AC", "=https://a.test/", "https://a.test/%e0%a6%ac",  # lower-case escapes
          "https://a.test/%E0%A6", "https://a.test/%E0%A6%AC%E0", "https://a.test/%C0%AF",  # cut, overlong
          "https://a.test/%ED%A0%80",  # a surrogate's bytes
          "https://a.test/%E0%A6%AC%e0%a6%be", "https://a.test/%E0%A6%ACx%E0%A6%BE%", "https://a.test/%%E0%A6%AC",
          "https://a.test/বাংলা", "https://a.test/বাং%E0%A6%AC", "https://a.test/%20%E0%A6%AC%2F?q=%E0%A6%AC#%E0%A6%AC",
          "https://a.test/%F0%9F%98%80", "https://a.test/\u200c%E0%A6%AC", "%E0%A6%AC%E0%A6%BE"]


def test_an_address_is_held_exactly_and_a_bangla_one_in_a_third_of_its_escapes():
    real = [e.url for path in sorted(FEEDS.glob("*.xml"))
            for e in parse_listing(path.read_bytes(), "https://feeds.test/feed").entries if e.url]
    assert len(real) > 100 and any("%E0%A6" in u for u in real)
    for url in real + TRICKY:
        held = fold_visit.held_address(url)
        assert held[:1] in ("=", "~") and fold_visit.address(held) == url, url
    assert fold_visit.held_address("https://a.test/%E0%A6%AC%E0%A6%BE") == "~https://a.test/বা"
    assert fold_visit.held_address("https://a.test/%e0%a6%ac")[0] == "="  # lower-case: held verbatim
    escaped = [u for u in real if "%E0%A6" in u]
    assert sum(len(fold_visit.held_address(u).encode("utf-8")) for u in escaped) < 0.6 * sum(len(u) for u in escaped)
    with pytest.raises(ValueError, match="no form held_address writes"):
        fold_visit.address("https://a.test/")
