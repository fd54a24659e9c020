"""Migrations 19 and 20 (record/renames.py): a database's own tables and a column renamed in place, on databases the
code before wrote."""

from __future__ import annotations

import gzip
import json
import shutil
import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest

from collector.evidence.bundle_streams import as_written
from collector.health.checks import Inputs
from collector.health.jobs import stream_names
from collector.publish import tallies
from collector.publish.cells import read_block
from collector.record import compare_merged, dormant, fold_latest, references, renames, schema, shadows, streams
from collector.record.fileformat import NOT_RECORDED
from collector.record.store import Store, open_read_only
from collector.record.tables import record_tables
from tests.record.migrating import refused_unchanged

DATA = Path(__file__).resolve().parent.parent / "data" / "renames"
# What may still start with export_ after the migration: the export's own state.
EXPORT_OWN = ("export_head", "export_stream", "export_written", "export_shadow_")


def _fixture(tmp_path: Path, name: str) -> Path:
    """Return a copy of a database the code before migration 19 wrote (tests/data/renames/, made at 881d76e by
    tests/collect/test_follow_level.py's (now test_follow_prune.py's) pruned pages follower, `export follow
    --prune-every 4 --for-figures`):
    pages-v18, that follower (export_tally_*, export_merged, export_followed, export_level); part-v18, by its
    first test's pruned archive follower 60 hours later, that follower's database of stream hosted-1of2
    (export_identities of the articles it left out, export_level). pages-v18-figures.json is what that code's
    read_block gave of pages-v18's month 2026-08."""
    out = tmp_path / f"{name}.db"
    with gzip.open(DATA / f"{name}.db.gz") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def _tables(conn) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _rows(conn, table: str) -> list[tuple]:
    """Return a table's rows, with their rowids where it has them (a rename keeps both)."""
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    if "WITHOUT ROWID" not in sql.upper():
        return [tuple(r) for r in conn.execute(f'SELECT rowid, * FROM "{table}" ORDER BY rowid')]
    width = len(conn.execute(f'PRAGMA table_info("{table}")').fetchall())
    order = ", ".join(str(i + 1) for i in range(width))
    return [tuple(r) for r in conn.execute(f'SELECT * FROM "{table}" ORDER BY {order}')]


def _block(store: Store) -> dict:
    block = read_block(store, "2026-08", update=False)
    return {"values": {str(k): v for k, v in block.values.items()},
            "delays": {str(k): sorted(v) for k, v in block.delays.items()}}


@pytest.mark.parametrize("name", ["pages-v18", "part-v18"])
def test_a_database_the_code_before_wrote_has_its_tables_renamed_in_place(tmp_path, name):
    path = _fixture(tmp_path, name)
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 18
    before = {old: _rows(raw, old) for old in renames.RENAMED if old in _tables(raw)}
    pruned_at = raw.execute("SELECT levelled_at FROM export_level").fetchone()[0]
    record = {t: _rows(raw, t) for t in record_tables(raw)}
    raw.close()
    assert {"export_merged", "export_followed", "export_level"} <= set(before)
    assert ("export_tally_counts" in before) == (name == "pages-v18")
    assert ("export_identities" in before) == (name == "part-v18")
    assert before["export_level"] and (bool(before["export_followed"]) == (name == "pages-v18"))
    assert bool(before.get("export_identities", True))  # a stream database's that left articles out: not empty

    store = Store(path)
    try:
        conn = store.conn
        assert store.schema_version() == len(schema.MIGRATIONS) and not store.tampering
        names = _tables(conn)
        for old, rows in before.items():  # every row, as it was, under the new name
            new = renames.RENAMED[old]
            if old == "export_compact_texts":  # folded into fold_latest by migration 21, then dropped
                assert old not in names and new not in names
            elif old == "export_dormant":  # repacked by migration 21 without the snapshot: the other rows as they were
                assert old not in names and [r[:-1] for r in _rows(conn, new)] == [r[:-1] for r in rows]
                assert [{t: dormant.unpack(r[-1])[t] for t in dormant.PACKED} for r in _rows(conn, new)] == [
                    {t: dormant.unpack(r[-1])[t] for t in dormant.PACKED} for r in rows]
            else:
                assert old not in names and new in names and _rows(conn, new) == rows, old
        assert [t for t in names if t.startswith("export_") and not t.startswith(EXPORT_OWN)] == []
        assert [t for t in names if t not in record_tables(conn) and not t.startswith(NOT_RECORDED)
                and not t.startswith("snapshots_fts") and t not in schema.STORAGE_TABLES] == []
        assert {t: _rows(conn, t) for t in record_tables(conn)} == record  # the record's rows untouched
        assert shadows.pruned_at(conn) == pruned_at and shadows.figures_from(conn) is not None
        assert "levelled_at" not in {r[1] for r in conn.execute("PRAGMA table_info(prune_state)")}  # migration 20
    finally:
        store.close()


def test_the_aggregates_give_the_figures_the_code_before_gave(tmp_path):
    path = _fixture(tmp_path, "pages-v18")
    store = Store(path)
    try:
        assert tallies.present(store.conn) and shadows.figures_as_aggregates(store.conn)
        indexes = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert "fold_tally_articles_j" in indexes and "export_tally_articles_j" not in indexes
        expected = json.loads((DATA / "pages-v18-figures.json").read_text())
        assert expected["values"] and _block(store) == expected
        tallies.update(store.conn)  # brought up to date under the new names: nothing new, nothing changed
        assert _block(store) == expected
    finally:
        store.close()


def test_what_reads_a_database_without_opening_it_reads_one_the_code_before_wrote(tmp_path):
    """The evidence bundle, `export verify` and the health checks read a database read-only (open_read_only),
    so without migrating it: one the code before wrote still says export_merged and export_followed."""
    old_path = _fixture(tmp_path, "pages-v18")
    (tmp_path / "new").mkdir()
    new_path = _fixture(tmp_path / "new", "pages-v18")
    Store(new_path).close()
    old, new = open_read_only(old_path), open_read_only(new_path)
    try:
        assert renames.name_in(old, streams.MERGED_TABLE) == "export_merged"
        assert renames.name_in(new, streams.MERGED_TABLE) == streams.MERGED_TABLE
        assert renames.column_in(new, "prune_state", "pruned_at") == "pruned_at"
        assert renames.column_in(new, "prune_state", "no_such") is None
        names = {n: stream_names(Inputs(c, datetime.now(timezone.utc), p)) for n, c, p in
                 (("old", old, old_path), ("new", new, new_path))}
        assert names["old"] == names["new"] and len(names["new"]) == 5  # four streams and the default
        written = {}
        for side, conn in (("old", old), ("new", new)):
            rows = {t: [dict(r) for r in conn.execute(f'SELECT * FROM "{t}" ORDER BY id')]
                    for t in ("articles", "article_urls", "checks")}
            written[side] = (as_written(conn, rows, [None if n == "default" else n for n in names[side].values()]),
                             rows)
        assert written["old"] == written["new"] and written["new"][0][0]  # the folded rows' entries, used
        # `export verify`: the migrated database as the merged record, the one the code before wrote as the given
        compared = compare_merged._compare(new, old, {})
        assert compared.difference is None and compared.rows > 0, compared
    finally:
        old.close()
        new.close()


def test_a_database_newer_code_wrote_is_refused_and_left_as_it_was(tmp_path):
    """Older code reading it would not find its tables by their new names (a pruning's state, the aggregates)
    and would take it for a database never pruned: it is refused; the jobs then rebuild from the record."""
    path = tmp_path / "new.db"
    Store(path).close()
    raw = refused_unchanged(path, f"PRAGMA user_version = {len(schema.MIGRATIONS) + 1}",
                            f"schema {len(schema.MIGRATIONS) + 1}, newer than this code's", len(schema.MIGRATIONS) + 1)
    raw.close()


def test_a_database_holding_both_names_is_refused_and_left_as_it_was(tmp_path):
    # Which of the two holds its state is unknown.
    refused_unchanged(_fixture(tmp_path, "part-v18"), f"CREATE TABLE {streams.MERGED_TABLE} (x)",
                      "both export_merged and sync_merged", 18).close()


def test_a_pruning_read_without_migrating_is_read_under_the_columns_former_name(tmp_path):
    """A stream's own database read by a plain connection (record/follow.py `pruned`): migration 20 has not run."""
    path = _fixture(tmp_path, "part-v18")
    raw = sqlite3.connect(path)
    try:
        raw.execute("ALTER TABLE export_level RENAME TO prune_state")  # as migration 19 left it, 20 not yet run
        assert "levelled_at" in {r[1] for r in raw.execute("PRAGMA table_info(prune_state)")}
        assert shadows.pruned_at(raw) == raw.execute("SELECT levelled_at FROM prune_state").fetchone()[0]
        assert references.pruned(raw) and shadows.figures_as_aggregates(raw) is False
    finally:
        raw.close()


def test_a_pruning_holding_both_column_names_is_refused_and_left_as_it_was(tmp_path):
    refused_unchanged(_fixture(tmp_path, "part-v18"), "ALTER TABLE export_level ADD COLUMN pruned_at TEXT",
                      "both levelled_at and pruned_at are columns of prune_state", 18).close()


def test_a_new_database_has_no_table_by_a_former_name(tmp_path):
    store = Store(tmp_path / "new.db")
    try:
        tallies.ensure(store.conn)
        names = _tables(store.conn)
        assert not names & set(renames.RENAMED) and {"sync_merged", "sync_followed", "fold_tally_marks"} <= names
    finally:
        store.close()


def test_a_dormant_row_packed_before_wakes_after_the_migrations_its_snapshot_folded(tmp_path):
    """A dormant row packed before (format 1) named its text's digests by export_compact_texts: migration 21
    folds its latest snapshot into fold_latest, texts held as digests included. A follower's stream database
    (this one) keeps the row as it was; woken, it puts back the article, its addresses, its latest check and
    snapshot, its text left out (the facts are folded)."""
    store = Store(_fixture(tmp_path, "part-v18"))
    try:
        conn = store.conn
        asleep = [r[0] for r in conn.execute(f"SELECT article_id FROM {dormant.TABLE} ORDER BY 1")]
        assert asleep
        packed = {a: dormant.unpack(b) for a, b in conn.execute(f"SELECT article_id, rows FROM {dormant.TABLE}")}
        assert all(rows["snapshot_rows"] for rows in packed.values())  # a follower's: format 1 kept
        with store.transaction():
            assert dormant.wake(conn, asleep) == len(asleep)
        for article in asleep:
            assert conn.execute("SELECT COUNT(*) FROM articles WHERE id = ?", (article,)).fetchone()[0] == 1
            assert conn.execute("SELECT COUNT(*) FROM checks WHERE article_id = ?", (article,)).fetchone()[0] == len(
                packed[article]["checks"])
            latest = fold_latest.previous(conn, article, "9999-12-31T23:59:59.999999Z", 0)
            assert latest is not None and latest.facts.had_text(), article
            assert latest.snapshot_id == packed[article]["snapshot_rows"][0]["id"]
            assert conn.execute("SELECT COUNT(*) FROM snapshot_rows WHERE id = ?", (latest.snapshot_id,)).fetchone()[0]
        assert not conn.execute("SELECT 1 FROM sqlite_master WHERE name IN ('prune_texts', "
                                "'export_compact_texts')").fetchone()
    finally:
        store.close()
