"""The address keys' projection (collector/record/fold_keys.py): every key, folded whatever order rows arrive in,
kept whole by a pruning, and made from the known keys of the databases the code before wrote."""

from __future__ import annotations

import gzip
import random
import shutil
import sqlite3
from pathlib import Path

import pytest

from collector.clock import iso
from collector.record import fold_keys, schema
from collector.record.articles import known
from collector.record.store import Store, trigger_problems
from tests.record.migrating import refused_unchanged
from collector.record.tables import record_tables
from tests.record.test_fold import START, in_two_orders, insert

DATA = Path(__file__).resolve().parent.parent / "data" / "fold"


def _fixture(tmp_path: Path, name: str) -> Path:
    """Return a copy of a database the code before migration 18 wrote (tests/data/fold/, made at d65710c by
    the dormant tests' `quiet` fixture and tests/collect/test_follow_level.py's, now test_follow_prune.py's,
    first follow and pruning): working-v17, a pruned working database (export_known_keys) and full-v17, the full
    one it was pruned from; part-v17, a follower's pruned database of stream hosted-1of2 (export_known_keys and
    export_identities) and part-whole-v17, that stream's own database, never pruned."""
    out = tmp_path / f"{name}.db"
    with gzip.open(DATA / f"{name}.db.gz") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def addresses(seed: int, articles: int = 40) -> list[tuple[str, dict]]:
    """Return articles and article_urls rows as collections write them: each article's listing address, and for
    some a redirect's or a canonical address, one of them another article's listing address."""
    rng = random.Random(seed)
    rows: list[tuple[str, dict]] = []
    url_id = 0
    for article in range(1, articles + 1):
        url = f"https://o{article % 3}.test/news/{article}-{'ঢাকা' * (article % 2)}"
        seen = iso(START.replace(minute=article % 60, microsecond=article))
        rows.append(("articles", {"id": article, "outlet_id": f"o{article % 3}", "url_key": url, "url": url,
                                  "first_seen_at": seen, "first_seen_run": 1}))
        others = [(url, "listing")]
        if rng.random() < 0.4:
            others.append((f"https://o{article % 3}.test/amp/{article}", rng.choice(("redirect", "canonical"))))
        if article > 1 and rng.random() < 0.2:  # another article's listing address, as its canonical one
            other = rng.randrange(1, article)
            others.append((f"https://o{other % 3}.test/news/{other}-{'ঢাকা' * (other % 2)}", "canonical"))
        for address, how in others:
            url_id += 1
            rows.append(("article_urls", {"id": url_id, "article_id": article, "url": address, "url_key": address,
                                          "how": how, "recorded_at": seen, "run_id": 1}))
    return rows


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_projection_is_the_rows_folded_whatever_order_they_arrive_in(tmp_path, seed):
    rows = addresses(seed)
    in_order, other = in_two_orders(tmp_path, rows, seed)  # an address before its article's row, another's first
    want = fold_keys.from_rows(in_order.conn)
    assert fold_keys.projection(in_order.conn) == want == fold_keys.projection(other.conn)
    # One row a key, whatever gave it (a listing, a redirect, a canonical address), nothing else.
    keys = {r["url_key"] for _, r in rows}
    assert want == {fold_keys.key_digest(k) for k in keys} and len(want) == len(keys)
    assert all(known(other.conn, k) for k in keys) and not known(other.conn, "https://o1.test/news/never")
    assert trigger_problems(other.conn) == []


def test_the_projection_is_never_exported_and_a_writer_without_its_function_is_refused(tmp_path):
    store = insert(tmp_path / "db.db", addresses(6, 5))
    assert fold_keys.TABLE not in record_tables(store.conn)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.conn.execute("UPDATE article_urls SET url_key = 'x' WHERE id = 1")
    store.close()
    # A connection that cannot compute the digest cannot write an address (as the search index's folding):
    # no address ever goes into the record unknown to the projection.
    raw = sqlite3.connect(tmp_path / "db.db")
    with pytest.raises(sqlite3.OperationalError, match=f"no such function: {fold_keys.FUNCTION}"):
        raw.execute("INSERT INTO article_urls (id, article_id, url, url_key, how, recorded_at, run_id) "
                    "VALUES (999, 1, 'u', 'u', 'redirect', 't', 1)")
    raw.close()


def test_a_pruned_working_database_of_the_code_before_knows_every_key_after_the_migration(tmp_path):
    working_path, full_path = _fixture(tmp_path, "working-v17"), _fixture(tmp_path, "full-v17")
    raw = sqlite3.connect(working_path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 17
    old = {bytes(r[0]) for r in raw.execute("SELECT digest FROM export_known_keys")}
    assert old and raw.execute("SELECT COUNT(*) FROM articles").fetchone()[0] < 4  # articles left out
    raw.close()
    working, full = Store(working_path), Store(full_path)
    try:
        assert working.schema_version() == full.schema_version() == len(schema.MIGRATIONS)
        assert working.tampering == [] and full.tampering == []
        assert not working.one("SELECT 1 FROM sqlite_master WHERE name = 'export_known_keys'")
        # Every key of the full database, of the rows it kept and of those it left out (its old table's).
        assert fold_keys.projection(working.conn) == fold_keys.projection(full.conn) == fold_keys.from_rows(full.conn)
        assert old < fold_keys.projection(working.conn)
        for (key,) in full.query("SELECT url_key FROM articles UNION SELECT url_key FROM article_urls"):
            assert known(working.conn, key)
    finally:
        working.close()
        full.close()


def test_a_followers_pruned_stream_database_of_the_code_before_keeps_its_identities(tmp_path):
    """Its known keys become the projection; export_identities, which a merge maps one address of two streams
    by (record/merge.py article_map), is not folded yet and stays as it was, named prune_identities (migration 19)."""
    part_path, whole_path = _fixture(tmp_path, "part-v17"), _fixture(tmp_path, "part-whole-v17")
    raw = sqlite3.connect(part_path)
    identities = raw.execute("SELECT * FROM export_identities ORDER BY 1").fetchall()
    assert identities and raw.execute("SELECT COUNT(*) FROM articles").fetchone()[0] == 1
    raw.close()
    part, whole = Store(part_path), Store(whole_path)
    try:
        assert fold_keys.projection(part.conn) == fold_keys.projection(whole.conn) == fold_keys.from_rows(whole.conn)
        assert [tuple(r) for r in part.query("SELECT * FROM prune_identities ORDER BY 1")] == identities
    finally:
        part.close()
        whole.close()


def test_a_migration_with_a_damaged_known_key_fails_whole(tmp_path):
    damage = "UPDATE export_known_keys SET digest = x'00' WHERE digest = (SELECT MIN(digest) FROM export_known_keys)"
    refused_unchanged(_fixture(tmp_path, "working-v17"), damage, "export_known_keys holds a damaged digest", 17).close()


def test_restoring_a_dropped_trigger_of_the_projection_folds_the_addresses_written_without_it(tmp_path):
    from collector.record.integrity import restore_triggers

    rows = addresses(7, 6)
    store = insert(tmp_path / "db.db", rows)
    store.conn.execute(f"DROP TRIGGER {fold_keys.TABLE}_address")  # an operator's shell, or a damaged migration
    late = "https://o1.test/amp/late"
    with store.transaction() as conn:
        conn.execute("INSERT INTO article_urls (id, article_id, url, url_key, how, recorded_at, run_id) "
                     "VALUES (9999, 1, ?, ?, 'redirect', ?, 1)", (late, late, iso(START)))
    store.tampering = trigger_problems(store.conn)
    assert not known(store.conn, late) and store.tampering
    found = restore_triggers(store, "A. Rahman", "trigger dropped by hand", iso(START))
    assert found == [f"trigger {fold_keys.TABLE}_address is missing"] and store.tampering == []
    assert fold_keys.projection(store.conn) == fold_keys.from_rows(store.conn) and known(store.conn, late)
