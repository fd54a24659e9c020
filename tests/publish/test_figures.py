"""Coverage figures from a small hand-made record whose every number is known."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from collector.clock import iso
from collector.publish.periods import build_timeline, julian_day, from_julian_day
from collector.publish.figures import compute_stats, format_stats_text, stats_for_publication
from testing.synthetic import NOW, SyntheticRecord

W47 = NOW - timedelta(days=10, hours=12)  # Monday 16 November 00:00
W48 = W47 + timedelta(days=7)  # Monday 23 November 00:00
IDS = ("oa-17", "ob-29", "oc-31", "od-43", "ox-53")


@pytest.fixture
def record(store):
    """Return a record of group 'g' (oa, ob, oc active; od inactive) and group 'h' (ox)."""
    r = SyntheticRecord(store)
    r.group("g", "Group G")
    r.group("h", "Group H")
    for outlet in IDS[:3]:
        r.outlet(outlet, "g")
    r.outlet("od-43", "g", active=False)
    r.outlet("ox-53", "h")
    r.source("oa-17", W47 - timedelta(days=3))
    r.source("ob-29", W47 - timedelta(days=3))
    r.source("ob-29", W47 + timedelta(days=3), valid=False)  # its latest round found nothing
    r.urls_a = r.article("oa-17", W47 + timedelta(hours=9), timedelta(hours=2), archived=True)
    r.article("ob-29", W48 + timedelta(days=1, hours=9), timedelta(hours=4), archived=False)
    r.article("oc-31", W48 + timedelta(days=2, hours=9), captured_after=None)
    r.request("oc-31", W48 + timedelta(days=2, hours=10), "timeout")
    r.request(None, W48 + timedelta(days=2), "ok", purpose="archive")  # no outlet: not counted
    r.request("oa-17", NOW + timedelta(hours=1), "ok")  # after now: not counted
    _relist(store, r, "oa-17", r.urls_a, W48 + timedelta(hours=8))
    r.article("ox-53", W48 + timedelta(hours=9), NOW - W48 - timedelta(hours=9))  # captured exactly at now: counted
    return r


def _relist(store, r, outlet, url, at):
    """List an already known address again, as a feed does on every run."""
    listing = store.insert("listings", {"run_id": r._run, "outlet_id": outlet, "url": "f", "fetched_at": iso(at),
                                        "kind": "rss", "entry_count": 1})
    store.insert("listing_entries", {"listing_id": listing, "position": 0, "url": url, "url_key": url})


def _figures(stats, group, period):
    """Return {measure: figure} of one group and period."""
    return {f["measure"]: f for f in stats["figures"] if f["group"] == group and f["period"] == period}


def test_timeline_cells_partition_every_period():
    timeline = build_timeline(NOW - timedelta(days=20), NOW)
    ids = [p.id for p in timeline.periods]
    assert ids == ["all", "7d", "30d", "2026-W45", "2026-W46", "2026-W47", "2026-W48"]
    for (_, end), (start, _) in zip(timeline.cells, timeline.cells[1:]):
        assert end == start  # cells are contiguous, no gaps, no overlaps
    weeks = [c for p in timeline.periods if p.kind == "week" for c in p.cells]
    assert len(weeks) == len(set(weeks))
    seven = timeline.period("7d")
    assert timeline.cells[seven.cells[0]][0] == NOW - timedelta(days=7)
    assert timeline.cells[seven.cells[-1]][1] == NOW == timeline.period("2026-W48").end
    assert abs(from_julian_day(julian_day(NOW)) - NOW) < timedelta(milliseconds=1)


@pytest.mark.parametrize("period, measure, value, outlets", [
    ("all", "outlets_monitored", 3, ["oa-17", "ob-29", "oc-31"]),
    ("all", "outlets_contributing", 2, ["oa-17", "ob-29"]),
    ("all", "sources_readable", 1, ["oa-17"]),
    ("all", "articles_listed", 3, ["oa-17", "ob-29", "oc-31"]),
    ("all", "articles_queued", 3, ["oa-17", "ob-29", "oc-31"]),
    ("all", "articles_captured", 2, ["oa-17", "ob-29"]),
    ("all", "articles_archived", 1, ["oa-17"]),
    ("all", "capture_rate", 0.6667, ["oa-17", "ob-29"]),
    ("all", "archive_rate", 0.5, ["oa-17"]),
    ("all", "median_delay_hours", 3.0, ["oa-17", "ob-29"]),
    ("all", "requests", 6, ["oa-17", "ob-29", "oc-31"]),
    ("all", "requests:timeout", 1, ["oc-31"]),
    ("all", "share:ok", 0.8333, ["oa-17", "ob-29", "oc-31"]),
    ("2026-W48", "articles_listed", 3, ["oa-17", "ob-29", "oc-31"]),
    ("2026-W48", "articles_queued", 2, ["ob-29", "oc-31"]),
    ("2026-W48", "articles_captured", 1, ["ob-29"]),
    ("2026-W48", "median_delay_hours", 4.0, ["ob-29"]),
    ("2026-W47", "articles_listed", 1, ["oa-17"]),
    ("2026-W47", "articles_archived", 1, ["oa-17"]),
    ("2026-W47", "sources_readable", 1, ["oa-17"]),
    ("7d", "articles_captured", 1, ["ob-29"]),
    ("30d", "articles_captured", 2, ["oa-17", "ob-29"]),
])
def test_figures_of_a_known_record(store, record, period, measure, value, outlets):
    figure = _figures(compute_stats(store, NOW), "g", period)[measure]
    assert figure["value"] == value
    assert figure["outlets"] == outlets


def test_readable_source_follows_the_latest_round(store, record):
    stats = compute_stats(store, NOW)
    # Before ob-29's failed round (W46 ends before it) both validated sources count.
    assert _figures(stats, "g", "2026-W46")["sources_readable"]["value"] == 2


def test_total_adds_the_groups_and_excludes_what_follows_now(store, record):
    stats = compute_stats(store, NOW)
    total = _figures(stats, "all-outlets", "all")
    assert total["articles_captured"]["value"] == 3
    assert total["requests"]["value"] == 8  # 6 of g, 2 of h; archive and future requests left out
    assert total["outlets_monitored"]["value"] == 4


def test_an_article_counts_once_in_the_week_of_its_first_capture(store, record):
    article = store.one("SELECT id FROM articles WHERE outlet_id = 'oa-17'")[0]
    request = record.request("oa-17", W48 + timedelta(hours=3))
    store.insert("snapshots", {"article_id": article, "request_id": request, "run_id": record._run,
                               "purpose": "capture", "captured_at": iso(W48 + timedelta(hours=3)),
                               "status_code": 200, "final_url": "x", "html_sha256": "0", "warc_file": "w",
                               "warc_offset": 0, "warc_length": 1, "extractor": "t", "extractor_info": "{}"})
    stats = compute_stats(store, NOW)
    assert _figures(stats, "g", "2026-W47")["articles_captured"]["value"] == 1
    assert _figures(stats, "g", "2026-W48")["articles_captured"]["value"] == 1  # ob-29 only
    assert _figures(stats, "g", "all")["articles_captured"]["value"] == 2
    # It still makes oa-17 a contributor in W48: a capture snapshot fell in it.
    assert _figures(stats, "g", "2026-W48")["outlets_contributing"]["value"] == 2


def test_internal_stats_are_json_and_carry_atoms(store, record):
    stats = json.loads(json.dumps(compute_stats(store, NOW)))
    captured = {tuple(a[:3]): a[3] for a in stats["atoms"]["articles_captured"]}
    assert sum(captured.values()) == 3
    assert all(isinstance(cell, int) for _, cell, _ in captured)


def test_published_stats_hold_no_outlet_id(store, record):
    text = json.dumps(stats_for_publication(store, NOW), ensure_ascii=False)
    for outlet in IDS:
        assert outlet not in text
    assert '"withheld": true' in text  # group g has two contributors, h one


def test_text_table_shows_groups_and_withheld(store, record):
    text = format_stats_text(stats_for_publication(store, NOW))
    assert "Group G" in text and "All outlets" in text
    assert "withheld" in text
    assert "== weekly articles captured ==" in text
