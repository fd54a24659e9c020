"""A release refuses a pruned working database that lacks the rows its figures are computed from."""

from __future__ import annotations

import shutil
from datetime import timedelta

import pytest
from click.testing import CliRunner

from collector.cli.main import cli
from collector.clock import iso
from collector.collect.prune import prune
from collector.errors import BadUsage
from collector.publish import tallies
from collector.publish.cells import read_block, read_block_rows
from collector.publish.history import History
from collector.publish.release import release
from collector.record import export
from collector.record.store import Store
from tests.collect.test_prune import copy, figures_record
from testing.synthetic import NOW, SyntheticRecord


@pytest.fixture
def for_figures(tmp_path):
    """Return (database pruned with --for-figures, the published history, when a release is due)."""
    full, folder, published, later = figures_record(tmp_path)
    working = tmp_path / "working.db"
    copy(full, working)
    prune(working, folder, later, History.open(published), figures=True)
    return working, published, later


@pytest.fixture
def pruned(tmp_path):
    """Return (database pruned without --for-figures, the published history, when a release is due)."""
    full, folder, published, later = figures_record(tmp_path)
    working = tmp_path / "working.db"
    copy(full, working)
    prune(working, folder, later, History.open(published))  # export prune, without --for-figures
    return working, published, later


def test_a_release_refuses_a_database_pruned_without_its_figures_rows(pruned, tmp_path):
    working, published, later = pruned
    kept = tmp_path / "kept"
    shutil.copytree(published, kept)
    before = (kept / "history.jsonl").read_bytes()
    store = Store(working)
    with pytest.raises(BadUsage, match=r"export prune --for-figures.*export rebuild"):
        release(store, later, History.open(kept, kept))
    store.conn.close()
    assert (kept / "history.jsonl").read_bytes() == before  # nothing appended


def test_a_pruning_for_figures_serves_its_own_history_not_an_earlier_one(for_figures):
    working, published, later = for_figures
    store = Store(working)
    try:
        assert release(store, later, History.open(published, published), write=False).periods  # as pruned for
        with pytest.raises(BadUsage, match="reads rows from 2026-09"):  # nothing published: September's are gone
            release(store, later, History.memory(), write=False)
    finally:
        store.conn.close()


def test_a_pruning_for_figures_of_a_database_with_nothing_observed_yet_keeps_every_row(tmp_path):
    db, folder, published = tmp_path / "working.db", tmp_path / "record", tmp_path / "published"
    store = Store(db)
    r = SyntheticRecord(store)
    r.group("g")
    r.outlet("a", "g")
    r.finish_run(NOW)  # a run, but nothing a figure counts
    export.export_new(store, folder, now=NOW)
    store.conn.close()
    prune(db, folder, NOW, History.open(published), figures=True)
    store = Store(db)
    try:
        assert store.one("SELECT figures_from FROM prune_state")[0] == ""
        SyntheticRecord(store).request("a", NOW + timedelta(days=1))  # the first observation, after the pruning
        assert release(store, NOW + timedelta(days=20), History.open(published, published), write=False).periods
    finally:
        store.conn.close()


def test_publish_exits_with_a_usage_error_naming_the_ways_out(pruned, tmp_path):
    working, published, later = pruned
    summary = tmp_path / "summary.md"
    result = CliRunner().invoke(cli, ["publish", "--db", str(working), "--published", str(published),
                                      "--decisions", str(published), "--now", iso(later),
                                      "--summary", str(summary)])
    assert result.exit_code == 2, result.output
    assert "pruned" in result.output and "export prune --for-figures" in result.output
    assert "export rebuild" in result.output
    assert "Nothing new was published" in summary.read_text(encoding="utf-8")


def test_a_pruning_for_figures_keeps_the_unpublished_weeks_as_aggregates_not_rows(for_figures):
    working, published, later = for_figures
    store = Store(working)
    try:
        recent = store.one("SELECT recent_from FROM prune_state")[0]
        kept_from = store.one("SELECT figures_from FROM prune_state")[0]
        assert kept_from < recent  # the figures are kept from the first unpublished month, before the recent ledger
        # Of the requests the figures count (not the listings' own, kept as each source's base), none older
        # than the recent ledger but the boundary an export continues from: the aggregates count them.
        counted = store.query("SELECT id FROM requests WHERE started_at < ? AND purpose = 'capture'", (recent,))
        assert len(counted) <= 1
        assert store.one(f"SELECT COUNT(*) FROM {tallies.COUNTS} WHERE week >= ? AND week < ?",
                         (kept_from[:10], recent[:10]))[0] > 0
        shown = release(store, later, History.open(published, published), write=False)
        assert shown.periods and shown.audit.passed
    finally:
        store.conn.close()


def test_a_release_refuses_a_database_whose_kept_aggregates_are_missing(for_figures):
    working, published, later = for_figures
    store = Store(working)
    try:
        for table in tallies.TABLES:
            store.conn.execute(f"DROP TABLE {table}")
        with pytest.raises(BadUsage, match="running aggregates, and they are missing"):
            release(store, later, History.open(published, published), write=False)
        assert not tallies.present(store.conn)  # refused before anything was rebuilt from the rows left
    finally:
        store.conn.close()


def _capture(store, article: int, outlet: str, at) -> None:
    """Insert a capture of an article with the ids the record gives it next (as a follow copies them)."""
    run = store.one("SELECT MAX(id) FROM runs")[0]
    request = store.insert("requests", {
        "id": store.one("SELECT MAX(id) FROM requests")[0] + 1, "run_id": run, "outlet_id": outlet,
        "purpose": "capture", "method": "GET", "url": "https://x.example/", "attempt": 1, "sent": 1,
        "started_at": iso(at), "finished_at": iso(at), "result": "ok", "vantage": "t"})
    store.insert("snapshots", {
        "id": store.one("SELECT MAX(id) FROM snapshot_rows")[0] + 1, "article_id": article, "request_id": request,
        "run_id": run, "purpose": "capture", "captured_at": iso(at), "status_code": 200,
        "final_url": "https://x.example/", "html_sha256": "0" * 64, "warc_file": "x.warc.gz", "warc_offset": 0,
        "warc_length": 1, "extractor": "t", "extractor_info": {}})


def test_captures_arriving_after_a_pruning_for_figures_count_as_in_the_full_database(tmp_path):
    """Another stream's capture of an article first captured in a published month (not its first capture),
    and a capture of an article whose own row the pruning left out (first seen days before, never captured,
    mapped onto it by its key's digest): the pruned database's aggregates count them as the full rows do."""
    full, folder, published, later = figures_record(tmp_path)
    f = Store(full)
    run = f.one("SELECT MAX(id) FROM runs")[0]
    seen, url = NOW - timedelta(days=2), "https://n2.example/news/late-capture"
    listing = f.insert("listings", {"run_id": run, "outlet_id": "n2", "url": "https://n2.example/feed",
                                    "fetched_at": iso(seen), "kind": "rss", "entry_count": 1})
    f.insert("listing_entries", {"listing_id": listing, "position": 0, "url": url, "url_key": url})
    uncaptured = f.insert("articles", {"outlet_id": "n2", "url_key": url, "url": url, "first_seen_at": iso(seen),
                                       "first_seen_run": run})
    other = "https://n2.example/news/another"  # a later article, so the one above is no boundary row
    f.insert("articles", {"outlet_id": "n2", "url_key": other, "url": other,
                          "first_seen_at": iso(NOW + timedelta(days=2)), "first_seen_run": run})
    export.export_new(f, folder, now=NOW)
    f.conn.close()
    working = tmp_path / "working.db"
    copy(full, working)
    prune(working, folder, NOW + timedelta(days=3), History.open(published), figures=True)
    w, f = Store(working), Store(full)
    try:
        assert w.one("SELECT COUNT(*) FROM articles WHERE id = ?", (uncaptured,))[0] == 0  # left out
        old = w.one("""SELECT a.id, a.outlet_id FROM articles a JOIN snapshot_rows s ON s.article_id = a.id
                        WHERE s.purpose = 'capture' AND s.captured_at < '2026-11-01' ORDER BY a.id LIMIT 1""")
        assert old is not None  # kept: its revisits are still owed
        w.conn.execute("PRAGMA foreign_keys = OFF")  # as a follow copies a stream's rows
        for store in (w, f):
            _capture(store, old[0], old[1], NOW - timedelta(days=1))
            _capture(store, uncaptured, "n2", NOW + timedelta(days=3, hours=1))
        aggregated, counted = read_block(w, "2026-11"), read_block_rows(f, "2026-11")
        assert aggregated.values == counted.values
        assert {k: sorted(v) for k, v in aggregated.delays.items()} == {k: sorted(v) for k, v in counted.delays.items()}
    finally:
        w.conn.close()
        f.conn.close()


@pytest.mark.parametrize("first", ["without figures", "aggregates dropped"])
def test_a_pruning_for_figures_of_a_pruned_database_claims_no_more_than_it_holds(tmp_path, first):
    full, folder, published, later = figures_record(tmp_path)
    working = tmp_path / "working.db"
    copy(full, working)
    prune(working, folder, later, History.open(published), figures=first != "without figures")
    store = Store(working)
    held = store.one("SELECT recent_from FROM prune_state")[0]
    if first == "aggregates dropped":
        for table in tallies.TABLES:
            store.conn.execute(f"DROP TABLE {table}")
    store.conn.close()
    prune(working, folder, later, History.open(published), figures=True)
    store = Store(working)
    try:
        assert store.one("SELECT figures_from FROM prune_state")[0] == held  # not the unpublished month's start
        with pytest.raises(BadUsage, match="keeping only the rows"):
            release(store, later, History.open(published, published), write=False)
    finally:
        store.conn.close()
