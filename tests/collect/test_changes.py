"""Across an extractor upgrade on a fresh runner: the older HTML from its release asset, or no event at all."""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta

import pytest

from collector.clock import Clock, parse_instant
from collector.collect import capture
from collector.collect.context import RunContext
from collector.collect.revisits import run_rechecks
from collector.net.releases import ReleaseStore
from collector.record import export
from tests.collect.test_revisits import HEADLINE, HEADLINE_NEW, ROBOTS_OPEN, T0, article_html, capture_article
from tests.conftest import TEST_INTERVAL
from testing.farm import Reply
from testing.release_store import FakeReleaseStore

OLD = "x0-t2.2.0-000000000000"
TOKEN = "ghs_test_token"


def older_extractor(monkeypatch):
    """Make captures the work of an older extractor that kept the site's name in headlines."""
    real = capture.extract

    def older(body, content_type, url):
        page = real(body, content_type, url)
        return dataclasses.replace(page, headline=f"{page.headline} | সংবাদ", extractor=OLD)

    monkeypatch.setattr(capture, "extract", older)


def served(headline=HEADLINE, cache=0) -> Reply:
    """Return the article as served; `cache` changes bytes the extractor ignores (a served-by comment)."""
    return Reply(200, article_html(headline=headline) + f"<!-- served by cache {cache} -->".encode())


def runner(store, tmp_path, name, now, warc_store=None):
    """Return a run context on a fresh runner: its own, empty, WARC folder."""
    ctx = RunContext.open(store, "test", clock=Clock(now), vantage="test", warc_dir=tmp_path / name,
                          allow_loopback=True, interval=TEST_INTERVAL, backoff=(0.02, 0.04),
                          connect_timeout=2.0, read_timeout=1.0, total_timeout=3.0)
    if warc_store is not None:
        ctx.warc_store = ReleaseStore(ctx.fetcher, warc_store.base, TOKEN)
    return ctx


@pytest.fixture
def upgraded(farm, store, tmp_path, monkeypatch):
    """Return (host, fake release store, article ids) after captures by the older extractor, published."""
    host = farm.add({"/robots.txt": ROBOTS_OPEN, "/news/same": served(), "/news/edited": served()})
    releases = FakeReleaseStore(farm, token=TOKEN)
    with monkeypatch.context() as patch:
        older_extractor(patch)
        ctx = runner(store, tmp_path, "runner-1", T0)
        ids = {name: capture_article(ctx, "alpha", host.url(f"/news/{name}")) for name in ("same", "edited")}
        ctx.finish()
    exported = export.export_new(store, tmp_path / "record", warc_dir=tmp_path / "runner-1", now=T0)
    (name,) = exported.warc_files
    row = store.one("SELECT release_tag, asset_name FROM warc_files WHERE name = ?", (name,))
    releases.add(row["release_tag"], row["asset_name"], (tmp_path / "runner-1" / name).read_bytes())
    host.routes.update({"/news/same": served(cache=1), "/news/edited": served(HEADLINE_NEW, cache=1)})
    return host, releases, ids


def events_of(store, article):
    return store.query("SELECT * FROM events WHERE article_id = ? ORDER BY id", (article,))


def comparisons_of(store, article):
    return [(r["outcome"], r["how"]) for r in store.query(
        "SELECT outcome, how FROM comparisons WHERE article_id = ? ORDER BY id", (article,))]


def test_a_fresh_runner_reads_the_older_html_from_its_release_asset(upgraded, store, tmp_path):
    host, releases, ids = upgraded
    ctx = runner(store, tmp_path, "runner-2", T0 + timedelta(hours=1, minutes=7), releases)
    run_rechecks(ctx)
    # The older extractor's headlines end in "| সংবাদ": compared as stored, both would be "changed".
    assert events_of(store, ids["same"]) == []
    (event,) = events_of(store, ids["edited"])
    assert (event["field"], event["before"], event["after"]) == ("headline", HEADLINE, HEADLINE_NEW)
    assert (event["extractor_before"], json.loads(event["evidence"])["how"]) == (OLD, "release_asset")
    for article in ids.values():  # not comparable on this runner, then compared from the asset in the same run
        assert comparisons_of(store, article) == [("not_comparable", None), ("compared", "release_asset")]
    # Every download is in the ledger; the signed address served the second record without the API.
    downloads = store.query("SELECT url, status_code, result FROM requests WHERE purpose = 'evidence' ORDER BY id")
    assert [d["status_code"] for d in downloads] == [200, 302, 206, 206]
    assert "/releases/tags/" in downloads[0]["url"] and releases.downloads() == 2
    assert all("Authorization" not in s.headers for s in releases.objects.seen)  # never sent to the asset host
    requested = json.loads(store.one("SELECT request_ids FROM comparisons WHERE outcome = 'compared' "
                                     "AND article_id = ?", (ids["edited"],))[0])
    assert requested and set(requested) <= {r["id"] for r in store.query("SELECT id FROM requests")}


def test_without_the_older_html_the_check_is_not_comparable_until_it_can_be_compared(upgraded, store, tmp_path):
    host, releases, ids = upgraded
    releases.down = True
    first = T0 + timedelta(hours=1, minutes=7)
    run_rechecks(runner(store, tmp_path, "runner-2", first, releases))
    assert store.one("SELECT COUNT(*) FROM events")[0] == 0  # never a change on the strength of two extractors
    assert comparisons_of(store, ids["edited"]) == [("not_comparable", None), ("not_comparable", None)]
    releases.down = False
    later = T0 + timedelta(hours=2, minutes=7)
    run_rechecks(runner(store, tmp_path, "runner-3", later, releases))
    assert events_of(store, ids["same"]) == []
    (event,) = events_of(store, ids["edited"])
    assert (event["before"], event["after"]) == (HEADLINE, HEADLINE_NEW)
    # Dated by the snapshots it compared, though detected an hour later.
    old, new = store.query("SELECT captured_at FROM snapshots WHERE article_id = ? ORDER BY id", (ids["edited"],))
    assert (event["last_unchanged_at"], event["first_changed_at"]) == (old[0], new[0])
    assert parse_instant(event["detected_at"]) >= later
    assert comparisons_of(store, ids["edited"])[-1] == ("compared", "release_asset")


def test_without_a_release_store_nothing_is_downloaded_and_nothing_is_written(upgraded, store, tmp_path):
    _host, releases, ids = upgraded
    run_rechecks(runner(store, tmp_path, "runner-2", T0 + timedelta(hours=1, minutes=7)))
    assert store.one("SELECT COUNT(*) FROM events")[0] == 0
    assert comparisons_of(store, ids["edited"]) == [("not_comparable", None)]
    assert releases.api.seen == [] and releases.objects.seen == []
