"""The capture_delays view: every article's minutes from the first listing that named it to its first capture."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

import pytest

from collector.clock import iso
from testing.synthetic import NOW, SyntheticRecord

T = NOW - timedelta(days=3)


def _listing(store, record, outlet, url, at, entries_of=None):
    """Record a listing fetched at `at` naming url (or, for a 304, repeating listing entries_of)."""
    listing = store.insert("listings", {"run_id": record._run, "outlet_id": outlet, "url": "feed", "kind": "rss",
                                        "fetched_at": iso(at), "entry_count": 1, "entries_of": entries_of})
    if entries_of is None:
        store.insert("listing_entries", {"listing_id": listing, "position": 0, "url": url, "url_key": url})
    return listing


def _snapshot(store, record, article, at, purpose):
    request = record.request("oa", at, "ok", purpose)
    store.insert("snapshots", {"article_id": article, "request_id": request, "run_id": record._run,
                               "purpose": purpose, "captured_at": iso(at), "status_code": 200, "final_url": "x",
                               "html_sha256": "0", "warc_file": "w", "warc_offset": 0, "warc_length": 1,
                               "extractor": "t", "extractor_info": "{}"})


def _article(store, record, url, at):
    article = store.insert("articles", {"outlet_id": "oa", "url_key": url, "url": url, "first_seen_at": iso(at),
                                        "first_seen_run": record._run})
    store.insert("article_urls", {"article_id": article, "url": url, "url_key": url, "how": "listing",
                                  "recorded_at": iso(at), "run_id": record._run})
    return article


@pytest.fixture
def delays(store):
    """Return {url: delay in minutes or None} of a record whose every delay is known, and the record."""
    r = SyntheticRecord(store)
    r.group("g")
    r.outlet("oa", "g")
    plain = r.article("oa", T, timedelta(minutes=90))  # listed, captured 90 minutes later
    relisted = r.article("oa", T + timedelta(hours=1), timedelta(hours=5))
    first = store.one("SELECT l.id FROM listings l JOIN listing_entries e ON e.listing_id = l.id "
                      "WHERE e.url_key = ?", (relisted,))[0]
    _listing(store, r, "oa", relisted, T + timedelta(hours=2))  # listed again: the first listing counts
    _listing(store, r, "oa", None, T + timedelta(hours=3), entries_of=first)  # a 304 repeating it
    # An article first listed under an older address that now redirects: its earliest listing is that one's.
    moved = "https://oa.example/news/moved"
    _listing(store, r, "oa", moved + "-old", T - timedelta(minutes=30))
    _listing(store, r, "oa", moved, T)
    article = _article(store, r, moved, T)
    store.insert("article_urls", {"article_id": article, "url": moved + "-old", "url_key": moved + "-old",
                                  "how": "redirect", "recorded_at": iso(T), "run_id": r._run})
    _snapshot(store, r, article, T + timedelta(minutes=12), "capture")
    _snapshot(store, r, article, T + timedelta(minutes=2), "recheck")  # not a capture: no delay of its own
    _snapshot(store, r, article, T + timedelta(hours=7), "capture")  # a second capture: the first counts
    # Captured before any listing named it (its address joined later, through a canonical link): no delay.
    early = "https://oa.example/news/canonical"
    article = _article(store, r, early, T)
    _snapshot(store, r, article, T, "capture")
    _listing(store, r, "oa", early, T + timedelta(hours=1))
    rows = store.query("SELECT a.url, d.delay_minutes FROM capture_delays d JOIN articles a ON a.id = d.article_id")
    return {url: delay for url, delay in rows}, {
        "plain": plain, "relisted": relisted, "moved": moved, "early": early}


def test_every_article_has_its_delay_from_its_first_listing_to_its_first_capture(store, delays):
    got, url = delays
    assert got[url["plain"]] == pytest.approx(90, abs=1e-3)
    assert got[url["relisted"]] == pytest.approx(300, abs=1e-3)  # not from the later listing or the 304
    assert got[url["moved"]] == pytest.approx(42, abs=1e-3)  # from the old address's listing, to the 1st capture
    assert got[url["early"]] is None  # captured before it was listed
    assert len(got) == store.one("SELECT COUNT(*) FROM articles")[0]  # one row for every article


def test_the_view_names_the_listing_and_the_snapshot_it_measured(store, delays):
    _, url = delays
    row = store.one("SELECT d.listed_at, d.captured_at, s.purpose, l.fetched_at FROM capture_delays d "
                    "JOIN articles a ON a.id = d.article_id JOIN snapshots s ON s.id = d.snapshot_id "
                    "JOIN listings l ON l.id = d.listing_id WHERE a.url = ?", (url["moved"],))
    assert tuple(row) == (iso(T - timedelta(minutes=30)), iso(T + timedelta(minutes=12)), "capture",
                   iso(T - timedelta(minutes=30)))


def test_an_article_never_captured_is_in_the_view_without_a_delay(store):
    r = SyntheticRecord(store)
    r.outlet("oa", None)
    url = "https://oa.example/news/waiting"
    _listing(store, r, "oa", url, T)
    _article(store, r, url, T)
    rows = store.query("SELECT captured_at, snapshot_id, listed_at, delay_minutes FROM capture_delays")
    assert [tuple(r) for r in rows] == [(None, None, iso(T), None)]


def test_the_view_is_read_only(store, delays):
    with pytest.raises(sqlite3.Error):
        store.conn.execute("INSERT INTO capture_delays (article_id) VALUES (1)")
    with pytest.raises(sqlite3.Error):
        store.conn.execute("UPDATE capture_delays SET delay_minutes = 0")
