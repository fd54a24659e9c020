"""Captures: a failed capture is tried again by later runs while its entry is within the capture window."""

from __future__ import annotations

from datetime import timedelta

import pytest

from collector import settings
from collector.collect.pipeline import active_outlets, run_collection
from collector.record.registry_mirror import sync_registry
from collector.registry import parse_registry
from testing import hostile, replica
from testing.farm import Reply

NOW = replica.FEED_SNAPSHOT_TIME
DOWN = Reply(503, b"busy", content_type="text/plain")


def hourly(make_ctx, store, hosts, hours):
    """Run a whole collection at each of the given hours after NOW."""
    for hour in hours:
        ctx = make_ctx(now=NOW + timedelta(hours=hour))
        sync_registry(store, parse_registry(replica.registry_toml(hosts)), ctx.clock)
        summaries = run_collection(ctx, active_outlets(ctx))
        assert all("error" not in s for s in summaries), summaries
        ctx.finish()


def outlet(farm, *paths, dated=None):
    """Return a quiet outlet listing the paths (dated an hour apart from NOW, or as `dated` says)."""
    host = hostile.add_host(farm)
    host.routes.update(hostile.outlet_routes(host, NOW, paths))
    if dated is not None:
        entries = [(host.url(p), dated) for p in paths]
        host.routes[hostile.FEED_PATH] = Reply(200, hostile.rss(entries), content_type=hostile.RSS_TYPE)
        host.routes[hostile.SITEMAP_PATH] = Reply(200, replica.news_sitemap(entries), content_type=hostile.XML_TYPE)
    return host


def attempts(store, url):
    """Return (try number, result, outcome) of every capture attempt of the article at url."""
    return [tuple(r) for r in store.query(
        "SELECT a.try_number, a.result, a.outcome FROM capture_attempts a JOIN capture_queue q "
        "ON q.url_key = a.url_key WHERE q.url = ? ORDER BY a.id", (url,))]


def queue(store, url):
    return tuple(store.one("SELECT state, attempts FROM capture_queue WHERE url = ?", (url,)))


def asked(store, url):
    return store.one("SELECT COUNT(*) FROM requests WHERE url = ? AND purpose = 'capture'", (url,))[0]


def test_an_article_failing_through_a_six_hour_outage_is_captured_when_it_returns(farm, make_ctx, store):
    host = outlet(farm, "/news/1")
    host.routes["/news/1"] = DOWN
    hourly(make_ctx, store, {"o": host}, range(6))
    url = host.url("/news/1")
    assert queue(store, url) == ("pending", 6)
    host.routes["/news/1"] = Reply(200, replica.article_page())
    hourly(make_ctx, store, {"o": host}, [6, 7])
    assert attempts(store, url) == [(n, "server_error", "retry") for n in range(1, 7)] + [(7, "ok", "captured")]
    assert queue(store, url) == ("captured", 7)
    assert asked(store, url) == 6 * settings.MAX_ATTEMPTS + 1  # every request of every try is in the ledger
    assert store.one("SELECT COUNT(*) FROM snapshots s JOIN capture_attempts a ON a.snapshot_id = s.id")[0] == 1


def test_retries_are_bounded_by_runs(farm, make_ctx, store, monkeypatch):
    monkeypatch.setattr(settings, "CAPTURE_MAX_RUNS", 3)
    host = outlet(farm, "/news/1")
    host.routes["/news/1"] = DOWN
    hourly(make_ctx, store, {"o": host}, range(5))
    url = host.url("/news/1")
    assert attempts(store, url) == [(1, "server_error", "retry"), (2, "server_error", "retry"),
                                    (3, "server_error", "failed")]
    assert queue(store, url) == ("failed", 3) and asked(store, url) == 3 * settings.MAX_ATTEMPTS


def test_no_retry_once_the_entry_has_left_the_capture_window(farm, make_ctx, store):
    dated = NOW - timedelta(hours=settings.CAPTURE_WINDOW_HOURS - 1)
    host = outlet(farm, "/news/1", dated=dated)
    host.routes["/news/1"] = DOWN
    hourly(make_ctx, store, {"o": host}, [0, 2])
    url = host.url("/news/1")
    assert attempts(store, url) == [(1, "server_error", "retry")]  # the second run asked nothing
    assert queue(store, url) == ("failed", 1) and asked(store, url) == settings.MAX_ATTEMPTS


@pytest.mark.parametrize("reply, result", [(Reply(404, b"no"), "not_found"), (Reply(410, b"no"), "gone"),
                                           (hostile.pdf_as_html(), "ok")])
def test_an_answer_is_not_retried(farm, make_ctx, store, reply, result):
    host = outlet(farm, "/news/1")
    host.routes["/news/1"] = reply
    hourly(make_ctx, store, {"o": host}, [0, 1])
    url = host.url("/news/1")
    assert attempts(store, url) == [(1, result, "failed")] and queue(store, url) == ("failed", 1)


def test_a_host_that_keeps_failing_leaves_its_other_captures_for_the_next_run(farm, make_ctx, store):
    paths = [f"/news/{i}" for i in range(6)]
    host = outlet(farm, *paths)
    host.routes["/news/*"] = DOWN
    hourly(make_ctx, store, {"o": host}, [0])
    tried = [p for p in paths if attempts(store, host.url(p))]
    assert len(tried) == settings.CAPTURE_HOST_DOWN_AFTER  # the newest three
    assert all(queue(store, host.url(p)) == ("pending", 0) for p in paths if p not in tried)
    assert all(asked(store, host.url(p)) == 0 for p in paths if p not in tried)


def test_captures_per_outlet_per_run_are_budgeted_newest_first(farm, make_ctx, store, monkeypatch):
    monkeypatch.setattr(settings, "CAPTURES_PER_OUTLET_PER_RUN", 2)
    paths = [f"/news/{i}" for i in range(5)]  # /news/0 is the newest
    host = outlet(farm, *paths)
    hourly(make_ctx, store, {"o": host}, [0])
    assert [queue(store, host.url(p))[0] for p in paths] == ["captured"] * 2 + ["pending"] * 3
    hourly(make_ctx, store, {"o": host}, [1, 2])
    assert [queue(store, host.url(p))[0] for p in paths] == ["captured"] * 5
