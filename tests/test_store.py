"""The record: migrations, and observations that can never be updated or deleted."""

from __future__ import annotations

import sqlite3

import pytest

from collector import schema
from collector.store import Store


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
