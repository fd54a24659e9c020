"""Browsing the record: the metadata documents every table and column, every canned query runs,
and search finds whole Bangla words (and only whole words)."""

from __future__ import annotations

import asyncio
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
import yaml
from datasette.app import Datasette

from collector.publish import tallies  # a release writes them into the database it reads
from collector.record import search as fts, schema
from collector.record.store import Store

ROOT = Path(__file__).resolve().parent.parent
PLUGINS = ROOT / "datasette" / "plugins"
METADATA = yaml.safe_load((ROOT / "datasette" / "metadata.yml").read_text(encoding="utf-8"))
DB = METADATA["databases"]["takedownwatch"]
WORD = "কার্যালয়ে"  # "at the office": vowel signs and a virama inside one word
FRAGMENT = "কার্"
TEXT = f"প্রধানমন্ত্রীর {WORD} মঙ্গলবার বৈঠক হয়েছে। সিদ্ধান্ত জানানো হবে।"


def fill(store: Store, table: str, **given) -> int:
    """Insert a row, giving every other required column a plain value of its type."""
    row = dict(given)
    for _cid, name, kind, notnull, default, pk in store.conn.execute(f"PRAGMA table_info({table})"):
        if name in row or pk or not notnull or default is not None:
            continue
        row[name] = 0 if "INT" in (kind or "").upper() or "REAL" in (kind or "").upper() else "x"
    return store.insert(table, row)


@pytest.fixture(scope="module")
def record(tmp_path_factory) -> Path:
    """A database with a row in every table, named as `make browse` names it."""
    path = tmp_path_factory.mktemp("browse") / "takedownwatch.db"
    store = Store(path)
    store.insert("outlet_groups", {"id": "g1", "name": "Group", "name_bn": "গোষ্ঠী"})
    store.insert("outlets", {"id": "jago", "name": "Jago", "name_bn": "জাগো", "homepage": "https://jago.test/",
                             "group_id": "g1", "first_seen_at": "2026-08-13T04:30:00Z",
                             "last_synced_at": "2026-08-13T04:30:00Z"})
    run = fill(store, "runs", command="run", started_at="2026-08-13T04:30:00Z", vantage="github-actions-eastus",
               software_version="0.1.0", settings="{}")
    fill(store, "run_finishes", run_id=run, finished_at="2026-08-13T04:40:00Z", counts="{}")
    listing_request = fill(store, "requests", run_id=run, outlet_id="jago", purpose="listing", method="GET",
                           url="https://jago.test/rss.xml", attempt=1, sent=1, started_at="t", finished_at="t",
                           result="ok", status_code=200, vantage="v", elapsed_ms=120.5)
    fill(store, "requests", run_id=run, outlet_id="jago", purpose="capture", method="GET",
         url="https://jago.test/private", attempt=1, sent=0, started_at="t", finished_at="t",
         result="robots_disallowed", vantage="v")
    probe = fill(store, "source_probes", run_id=run, outlet_id="jago", url="https://jago.test/rss.xml",
                 found_via="homepage_link", request_id=listing_request, probed_at="t", outcome="valid", kind="rss")
    fill(store, "sources", outlet_id="jago", url="https://jago.test/rss.xml", kind="rss", found_via="homepage_link",
         probe_id=probe, run_id=run, validated_at="2026-08-13T04:31:00Z")
    listing = fill(store, "listings", run_id=run, outlet_id="jago", url="https://jago.test/rss.xml",
                   request_id=listing_request, fetched_at="2026-08-13T04:31:00Z", kind="rss", entry_count=1)
    url = "https://jago.test/national/news/1146758"
    entry = fill(store, "listing_entries", listing_id=listing, position=0, url=url, url_key=url, title=WORD,
                 queue_reason="recent")
    article = fill(store, "articles", outlet_id="jago", url_key=url, url=url, first_seen_at="2026-08-13T04:31:00Z",
                   first_seen_run=run)
    fill(store, "article_urls", article_id=article, url=url, url_key=url, how="listing", recorded_at="t", run_id=run)
    fill(store, "capture_queue", url_key=url, url=url, outlet_id="jago", article_id=article, reason="recent",
         listing_entry_id=entry, queued_at="t", queued_run=run, state="captured")
    snapshots = []
    for n, (purpose, text) in enumerate((("capture", TEXT), ("recheck", TEXT + " সংশোধিত"))):
        request = fill(store, "requests", run_id=run, outlet_id="jago", purpose=purpose, method="GET", url=url,
                       attempt=1, sent=1, started_at="t", finished_at="t", result="ok", status_code=200, vantage="v",
                       warc_file="2026/08/13/run-000001-043000-abcd.warc.gz", warc_offset=0, warc_length=10)
        snapshots.append(fill(
            store, "snapshots", article_id=article, request_id=request, run_id=run, purpose=purpose,
            captured_at=f"2026-08-13T0{5 + n}:00:00Z", status_code=200, final_url=url, headline="শিরোনাম",
            text=text, html_sha256="0" * 64, warc_file="2026/08/13/run-000001-043000-abcd.warc.gz",
            warc_offset=0, warc_length=10, extractor="e", extractor_info="{}"))
    check = fill(store, "checks", article_id=article, slot="1h", due_at="t", performed_at="t", run_id=run,
                 snapshot_id=snapshots[1], outcome="present")
    for kind, age in (("changed", 1.0), ("gone", 30.0)):
        fill(store, "events", article_id=article, kind=kind, detected_at="t", article_age_hours=age,
             check_id=check, evidence="{}", run_id=run, field="text" if kind == "changed" else None)
    fill(store, "archive_submissions", snapshot_id=snapshots[0], run_id=run, kind="submit", url=url,
         recorded_at="t", job_id="spn2-abc", status="pending")
    fill(store, "warc_files", name="2026/08/13/run-000001-043000-abcd.warc.gz", bytes=10, sha256="1" * 64,
         recorded_at="t", release_tag="warc-2026-08-13", asset_name="run-000001-043000-abcd.warc.gz")
    store.close()
    return path


def get(path: Path, url: str):
    async def fetch():
        datasette = Datasette([str(path)], metadata=METADATA, plugins_dir=str(PLUGINS))
        await datasette.invoke_startup()
        return await datasette.client.get(url)

    return asyncio.run(fetch())


# -- search ---------------------------------------------------------------------------

def test_the_migrations_use_the_tokenizer_of_fts_module():
    indexes = [m for m in schema.MIGRATIONS if "USING fts5" in (m if isinstance(m, str) else m.__doc__ or "")]
    assert len(indexes) == 2 and all(f'tokenize="{fts.TOKENIZE}"' in m for m in indexes)  # migrations 3 and 7


def test_the_default_tokenizer_breaks_bangla_words_and_ours_does_not():
    assert fts.tokens(WORD) == [WORD]
    broken = fts.tokens(WORD, fts.DEFAULT_TOKENIZE)
    assert len(broken) > 1 and WORD not in broken  # split at the vowel signs and the virama


def test_a_whole_word_is_found_and_a_fragment_is_not(record):
    store = Store(record)
    try:
        assert sorted(fts.search(store, WORD)) == [1, 2]
        assert fts.search(store, f"{WORD} সংশোধিত") == [2]
        assert fts.search(store, FRAGMENT) == []
        assert sorted(fts.search(store, "শিরোনাম")) == [1, 2]  # headlines are indexed too
    finally:
        store.conn.close()


def test_with_the_default_tokenizer_the_fragment_would_have_matched(record, tmp_path):
    copy = tmp_path / "copy.db"
    copy.write_bytes(record.read_bytes())
    conn = sqlite3.connect(str(copy))
    try:
        conn.execute("CREATE VIRTUAL TABLE plain USING fts5(headline, text, content='snapshots', "
                     "content_rowid='id')")  # the same index with SQLite's default tokenizer
        conn.execute("INSERT INTO plain (plain) VALUES ('rebuild')")
        plain = lambda q: [r[0] for r in conn.execute(  # noqa: E731
            "SELECT rowid FROM plain WHERE plain MATCH ? ORDER BY rowid", (fts.match_expression(q),))]
        assert plain(WORD) == [1, 2]
        assert plain(FRAGMENT) == [1, 2]  # the fragment matches: the default index holds no whole words
    finally:
        conn.close()


def test_datasette_searches_snapshots_through_the_index(record):
    found = get(record, f"/takedownwatch/snapshots.json?_search={WORD}&_shape=array")
    assert found.status_code == 200 and sorted(r["id"] for r in found.json()) == [1, 2]
    fragment = get(record, f"/takedownwatch/snapshots.json?_search={FRAGMENT}&_shape=array")
    assert fragment.status_code == 200 and fragment.json() == []


# -- metadata ---------------------------------------------------------------------------

def documented_tables(path: Path) -> dict[str, list[str]]:
    conn = sqlite3.connect(str(path))
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') "
                                            "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        shadows = ("snapshots_fts_", "export_shadow_")
        return {n: [c[1] for c in conn.execute(f'PRAGMA table_info("{n}")')]
                for n in names if not n.startswith(shadows)}
    finally:
        conn.close()


def test_every_table_and_column_is_described(record):
    tables = documented_tables(record)
    assert "snapshots_fts" in tables and "warc_files" in tables and "listing_entries" in tables
    missing = [f"{t}.{c}" for t, cols in tables.items() for c in cols
               if not DB["tables"].get(t, {}).get("columns", {}).get(c)]
    undescribed = [t for t in tables if not DB["tables"].get(t, {}).get("description")]
    assert missing == [] and undescribed == []


def test_metadata_names_a_licence_decision_title_and_source():
    assert METADATA["title"] and METADATA["description"] and METADATA["source"]
    assert "to be decided" in METADATA["license"].lower()
    assert DB["tables"]["snapshots"]["fts_table"] == "snapshots_fts"
    assert DB["tables"]["snapshots"]["fts_pk"] == "id"


# -- canned queries --------------------------------------------------------------------

PARAMS = {"url": "https://jago.test/national/news/1146758", "run_id": "1", "words": WORD, "now": ""}


@pytest.mark.parametrize("name", sorted(DB["queries"]))
def test_every_canned_query_runs(record, name):
    sql = re.sub(r"'[^']*'", "''", DB["queries"][name]["sql"])  # a string's ':' names no parameter
    params = "&".join(f"{p}={PARAMS[p]}" for p in sorted(set(re.findall(r":(\w+)", sql))))
    response = get(record, f"/takedownwatch/{name}.json?_shape=array&{params}")
    assert response.status_code == 200, response.text
    assert response.json(), f"{name} returned no rows on a record with a row in every table"


def test_canned_queries_answer_what_they_say(record):
    snapshots = get(record, f"/takedownwatch/article_snapshots.json?_shape=array&url={PARAMS['url']}").json()
    assert [(s["snapshot_id"], s["purpose"], s["warc_release"]) for s in snapshots] == [
        (1, "capture", "warc-2026-08-13"), (2, "recheck", "warc-2026-08-13")]
    events = get(record, "/takedownwatch/events_review_order.json?_shape=array").json()
    assert [e["kind"] for e in events] == ["gone", "changed"]  # the older article at detection first
    waiting = get(record, "/takedownwatch/archive_awaiting_confirmation.json?_shape=array").json()
    assert [(w["snapshot_id"], w["last_status"]) for w in waiting] == [(1, "pending")]
    results = get(record, "/takedownwatch/requests_by_result_per_run.json?_shape=array").json()
    assert {r["result"]: r["requests"] for r in results} == {"ok": 3, "robots_disallowed": 1}
    sources = get(record, "/takedownwatch/sources_by_outlet_and_status.json?_shape=array").json()
    assert [(s["outlet_id"], s["status"], s["last_entry_count"]) for s in sources] == [("jago", "current", 1)]


def test_the_running_aggregates_tables_are_described_and_hidden(record, tmp_path):
    copy = tmp_path / "released.db"
    shutil.copyfile(record, copy)
    conn = sqlite3.connect(copy)
    try:
        assert tallies.update(conn) > 0
        conn.commit()
    finally:
        conn.close()
    tables = {t: cols for t, cols in documented_tables(copy).items() if t.startswith("fold_tally_")}
    assert sorted(tables) == sorted(tallies.TABLES)
    assert [f"{t}.{c}" for t, cols in tables.items() for c in cols
            if not DB["tables"].get(t, {}).get("columns", {}).get(c)] == []
    assert all(DB["tables"][t].get("hidden") and DB["tables"][t].get("description") for t in tables)
