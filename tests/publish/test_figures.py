"""True figures of a small hand-made record whose every number is known, per week and month."""

from __future__ import annotations

from datetime import timedelta

import pytest

from collector.clock import iso
from collector.publish.cells import read_block
from collector.publish.figures import cells_of, membership
from collector.publish.periods import month, week
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
    r.request("oa-17", W48 + timedelta(days=7), "ok")  # Monday 00:00 of W49: not in W48
    _relist(store, r, "oa-17", r.urls_a, W48 + timedelta(hours=8))
    r.article("ox-53", W48 + timedelta(hours=9), timedelta(days=6, hours=14, minutes=59))  # Sunday 23:59
    return r


def _relist(store, r, outlet, url, at):
    """List an already known address again, as a feed does on every run."""
    listing = store.insert("listings", {"run_id": r._run, "outlet_id": outlet, "url": "f", "fetched_at": iso(at),
                                        "kind": "rss", "entry_count": 1})
    store.insert("listing_entries", {"listing_id": listing, "position": 0, "url": url, "url_key": url})


def _cells(store):
    block = read_block(store, "2026-11")
    periods = [week(W47), week(W48), month("2026-11")]
    return cells_of(block, membership(store), periods), block


@pytest.mark.parametrize("period, measure, value, outlets", [
    ("2026-W47", "outlets_contributing", 1, ["oa-17"]),
    ("2026-W47", "sources_readable", 1, ["oa-17"]),  # ob-29's round of Thursday found nothing
    ("2026-W47", "articles_listed", 1, ["oa-17"]),
    ("2026-W47", "articles_captured", 1, ["oa-17"]),
    ("2026-W47", "articles_archived", 1, ["oa-17"]),
    ("2026-W48", "outlets_contributing", 1, ["ob-29"]),
    ("2026-W48", "articles_listed", 3, ["oa-17", "ob-29", "oc-31"]),  # oa-17's address listed again
    ("2026-W48", "articles_queued", 2, ["ob-29", "oc-31"]),
    ("2026-W48", "articles_captured", 1, ["ob-29"]),
    ("2026-W48", "articles_archived", 0, []),
    ("2026-W48", "requests", 4, ["ob-29", "oc-31"]),
    ("2026-11", "outlets_contributing", 2, ["oa-17", "ob-29"]),
    ("2026-11", "articles_listed", 3, ["oa-17", "ob-29", "oc-31"]),  # distinct over the month
    ("2026-11", "articles_captured", 2, ["oa-17", "ob-29"]),
    ("2026-11", "requests:timeout", 1, ["oc-31"]),
    ("2026-11", "requests:ok", 5, ["oa-17", "ob-29", "oc-31"]),
])
def test_figures_of_a_known_record(store, record, period, measure, value, outlets):
    cells, _ = _cells(store)
    cell = cells[("g", period)]
    assert cell.counts[measure] == value
    assert sorted(cell.per_outlet[measure]) == outlets
    assert "od-43" not in cell.members  # inactive: not a member of this month


def test_the_total_is_every_member_and_an_article_counts_in_its_week(store, record):
    cells, block = _cells(store)
    assert cells[("all-outlets", "2026-W48")].counts["articles_captured"] == 2  # ob-29, ox-53 (Sunday 23:59)
    assert cells[("h", "2026-W48")].delays == [pytest.approx((6 * 24 + 14) * 60 + 59, abs=0.01)]
    assert cells[("g", "2026-W48")].delays == [pytest.approx(240, abs=0.01)]
    assert block.results == ["ok", "timeout"]


def test_a_second_capture_does_not_count_again(store, record):
    article = store.one("SELECT id FROM articles WHERE outlet_id = 'oa-17'")[0]
    request = record.request("oa-17", W48 + timedelta(hours=3))
    store.insert("snapshots", {"article_id": article, "request_id": request, "run_id": record._run,
                               "purpose": "capture", "captured_at": iso(W48 + timedelta(hours=3)),
                               "status_code": 200, "final_url": "x", "html_sha256": "0", "warc_file": "w",
                               "warc_offset": 0, "warc_length": 1, "extractor": "t", "extractor_info": "{}"})
    cells, _ = _cells(store)
    assert cells[("g", "2026-W47")].counts["articles_captured"] == 1
    assert cells[("g", "2026-W48")].counts["articles_captured"] == 1  # ob-29 only
    # Contributing means an article first captured in the period: oa-17 did not in W48.
    assert cells[("g", "2026-W48")].counts["outlets_contributing"] == 1


def test_an_archive_copy_confirmed_after_the_cut_off_does_not_count(store, record):
    snapshot = store.one("SELECT s.id FROM snapshots s JOIN articles a ON a.id = s.article_id "
                         "WHERE a.outlet_id = 'ob-29'")[0]
    late = week(W48).cutoff + timedelta(seconds=1)
    store.insert("archive_submissions", {"snapshot_id": snapshot, "run_id": record._run, "kind": "submit",
                                         "url": "u", "recorded_at": iso(late), "status": "success",
                                         "timestamp": "20261201000000", "archive_url": "a"})
    cells, _ = _cells(store)
    assert cells[("g", "2026-W48")].counts["articles_archived"] == 0
