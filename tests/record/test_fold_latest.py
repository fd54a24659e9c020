"""The snapshots' projection (collector/record/fold_latest.py): each snapshot's digests and where its page is,
equal to its row's, kept by a pruning for what a revisit and an export read, and made from the databases the code
before wrote (their texts held as digests, their dormant rows' packed snapshots)."""

from __future__ import annotations

import gzip
import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from collector.collect.events import FIELDS
from collector.parse.textnorm import normalise_for_comparison
from collector.record import dormant, fold_latest
from collector.record.dormant_table import V15_TABLE
from collector.record.fileformat import REPEATS
from collector.record.store import Store, trigger_problems
from collector.record.tables import record_tables

DATA = Path(__file__).resolve().parent.parent / "data" / "fold"
VALUES = {"extractor": "x1-t2.3.1-abc", "html_sha256": "ab" * 32, "warc_file": "2026/01/01/run.warc.gz",
          "warc_offset": 12, "warc_length": 3456, "text": "প্রথম অনুচ্ছেদ।\n\n“উদ্ধৃতি” — শেষ", "headline": "শিরোনাম",
          "byline": None, "published_raw": "2026-01-01T10:00:00+06:00", "modified_raw": None,
          "final_url": "https://example.com.bd/a/1", "canonical_url": "https://example.com.bd/a/1"}


def test_the_repeated_columns_are_the_exports_and_every_compared_field_is_held():
    assert fold_latest.REPEATED == tuple(c for c, s in REPEATS["snapshots"].items() if s == "article_id")
    assert set(FIELDS) <= set(fold_latest.REPEATED) | set(fold_latest.FORMS)
    assert set(fold_latest.COLUMNS) >= set(FIELDS)


def test_facts_hold_each_values_digest_and_where_its_page_is():
    facts = fold_latest.unpack(fold_latest.pack(VALUES))
    assert (facts.extractor, facts.html_sha256, facts.warc_file, facts.warc_offset, facts.warc_length) == (
        VALUES["extractor"], VALUES["html_sha256"], VALUES["warc_file"], 12, 3456)
    for column in fold_latest.REPEATED:
        assert facts.same_or_none(column, VALUES[column]) and not facts.same_or_none(column, "other")
    assert facts.exact["text"] == hashlib.sha256(VALUES["text"].encode("utf-8")).digest()  # the whole SHA-256
    assert facts.same("headline", VALUES["headline"]) and not facts.same("byline", None)  # a NULL is never repeated
    # Unchanged in the comparison form: curly quotes, a dash, spaces; the joiners are kept (a change).
    text = VALUES["text"].replace("“", '"').replace("”", '"').replace("—", "-").replace("\n\n", "  ")
    assert normalise_for_comparison(text) == normalise_for_comparison(VALUES["text"])
    assert facts.unchanged("text", text) and not facts.same("text", text)
    assert not facts.unchanged("text", VALUES["text"] + " নতুন") and not facts.unchanged("text", "শিরো\u200dনাম")
    assert facts.unchanged("byline", "") and facts.unchanged("modified_raw", None)  # None counts as empty
    assert facts.unchanged("final_url", VALUES["final_url"]) and not facts.unchanged("final_url", "https://x/")
    assert facts.had_text() and not fold_latest.unpack(fold_latest.pack({**VALUES, "text": None})).had_text()
    none = fold_latest.unpack(fold_latest.pack({c: None for c in fold_latest.COLUMNS}))
    assert (none.extractor, none.warc_file, none.warc_offset, none.html_sha256) == (None, None, None, None)
    with pytest.raises(ValueError, match="format"):
        fold_latest.unpack(b"\x09" + fold_latest.pack(VALUES)[1:])


def test_a_digest_another_normalisation_made_never_passes_for_unchanged(monkeypatch):
    facts = fold_latest.unpack(fold_latest.pack(VALUES))
    text = VALUES["text"].replace("—", "-")
    assert facts.unchanged("text", text)
    monkeypatch.setattr(fold_latest, "normaliser", lambda: "f" * 16)
    assert not facts.unchanged("text", text)
    assert facts.unchanged("text", VALUES["text"])  # the exact value still is
    # Inherited from a snapshot of another normalisation, the form is unknown, never "unchanged".
    inherited = fold_latest.unpack(fold_latest.pack({**VALUES, "text": None}, {"text": facts}))
    assert inherited.same("text", VALUES["text"]) and inherited.forms["text"] == bytes(16)


def _fixture(tmp_path: Path, name: str) -> Path:
    out = tmp_path / f"{name}.db"
    with gzip.open(DATA / f"{name}.db.gz") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def test_a_full_database_of_the_code_before_folds_every_snapshot_as_its_trigger_does(tmp_path):
    store = Store(_fixture(tmp_path, "full-v17"))
    try:
        folded = fold_latest.projection(store.conn)
        assert folded and folded == fold_latest.from_rows(store.conn)
        assert set(folded) == {r[0] for r in store.query("SELECT id FROM snapshot_rows")}
        assert fold_latest.TABLE not in record_tables(store.conn) and trigger_problems(store.conn) == []
        # A snapshot written after: folded by the trigger, as from its row.
        row = dict(store.one("SELECT * FROM snapshots ORDER BY id DESC LIMIT 1"))
        row.update(id=row["id"] + 1, captured_at="2099-01-01T00:00:00.000000Z", text=row["text"] + " আরও",
                   request_id=store.one("SELECT MAX(id) FROM requests")[0] + 1)
        store.conn.execute("PRAGMA foreign_keys = OFF")  # its request is not written here
        with store.transaction() as conn:
            conn.execute(f"INSERT INTO snapshots ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
                         list(row.values()))
        assert fold_latest.projection(store.conn) == fold_latest.from_rows(store.conn)
        latest = fold_latest.previous(store.conn, row["article_id"], "2099-12-31T00:00:00.000000Z", 0)
        assert latest.snapshot_id == row["id"] and latest.captured_at == row["captured_at"]
        assert fold_latest.before_id(store.conn, row["article_id"], row["id"]).snapshot_id < row["id"]
    finally:
        store.close()


def test_a_working_database_of_the_code_before_holds_the_full_ones_facts_after_the_migration(tmp_path):
    """working-v17 held three quiet articles as dormant rows (format 1: their latest snapshot packed, its text as
    digests) and older texts as digests (prune_texts): migration 21 folds them in, equal to the full database's
    (whose rows hold every text), repacks the dormant rows and drops prune_texts."""
    raw = sqlite3.connect(_fixture(tmp_path, "working-v17"))
    packed = {a: dormant.unpack(b) for a, b in raw.execute(f"SELECT article_id, rows FROM {V15_TABLE}")}
    digests = raw.execute("SELECT COUNT(*) FROM export_compact_texts").fetchone()[0]
    raw.close()
    assert packed and all(rows["snapshot_rows"] for rows in packed.values()) and digests
    working, full = Store(tmp_path / "working-v17.db"), Store(_fixture(tmp_path, "full-v17"))
    try:
        assert working.tampering == [] and "prune_texts" not in working.db.table_names()
        theirs = fold_latest.projection(full.conn)
        ours = fold_latest.projection(working.conn)
        for rows in packed.values():  # each dormant article's latest snapshot, not held, known as the full's
            snapshot = rows["snapshot_rows"][0]["id"]
            assert snapshot in ours and ours[snapshot] == theirs[snapshot]
        left_out = [r[0] for r in working.query("SELECT id FROM snapshot_rows WHERE text_id IS NOT NULL AND text_id "
                                                "NOT IN (SELECT id FROM snapshot_texts)")]
        assert left_out and all(ours[s] == theirs[s] for s in left_out)  # held rows whose texts were digests
        assert all(ours[s] == theirs[s] for s in ours)  # and every other: the same facts
        for article, blob in working.query(f"SELECT article_id, rows FROM {dormant.TABLE}"):
            assert blob[0] == 2 and dormant.unpack(blob)["snapshot_rows"] == []
            assert {t: dormant.unpack(blob)[t] for t in dormant.PACKED} == {t: packed[article][t]
                                                                          for t in dormant.PACKED}
    finally:
        working.close()
        full.close()


def test_a_damaged_digest_of_a_held_text_is_refused_and_the_database_left_as_it_was(tmp_path):
    from tests.record.migrating import refused_unchanged

    refused_unchanged(_fixture(tmp_path, "working-v17"), "UPDATE export_compact_texts SET sha256 = 'zz'",
                      "digests are damaged", 17).close()
