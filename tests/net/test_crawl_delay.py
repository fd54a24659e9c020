"""A robots.txt Crawl-delay is obeyed (issue 32, item 6).

The host is paced at the larger of the interval and its Crawl-delay; over
settings.CRAWL_DELAY_MAX_SECONDS nothing is sent to it and its captures are
carried over; the interval used is in the run's record (run_finishes counts).
"""

from __future__ import annotations

import json

from collector import settings
from collector.collect import capture
from tests.collect.test_revisits import T0, page
from tests.conftest import TEST_INTERVAL
from testing.farm import Reply

DELAY = 0.3  # against TEST_INTERVAL (0.05 s): six intervals
JITTER = 0.015  # as tests/collect/test_revisits.py: a busy test process stamps requests late


def robots(delay) -> Reply:
    return Reply(200, f"User-agent: *\nCrawl-delay: {delay}\nAllow: /\n".encode(), content_type="text/plain")


def queue(ctx, host, count: int) -> None:
    for n in range(count):
        url = host.url(f"/news/{n}")
        article = ctx.store.insert("articles", {"outlet_id": "alpha", "url_key": url, "url": url,
                                               "first_seen_at": ctx.clock.now_iso(), "first_seen_run": ctx.run_id})
        ctx.store.insert("capture_queue", {"url_key": url, "url": url, "article_id": article, "outlet_id": "alpha",
                                           "reason": "listing", "queued_at": ctx.clock.now_iso(),
                                           "queued_run": ctx.run_id})


def finished_counts(store, ctx) -> dict:
    return json.loads(store.one("SELECT counts FROM run_finishes WHERE run_id = ?", (ctx.run_id,))["counts"])


def test_the_server_never_sees_two_requests_closer_than_its_crawl_delay(farm, make_ctx, store):
    host = farm.add({"/robots.txt": robots(DELAY), "/news/*": page()})
    ctx = make_ctx(T0)
    queue(ctx, host, 4)
    assert capture.capture_outlet(ctx, "alpha") == 4
    ctx.finish()
    arrivals = sorted(s.at for s in host.seen)
    assert len(arrivals) == 5  # robots.txt and four pages
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
    assert min(gaps) >= DELAY - JITTER, gaps
    assert finished_counts(store, ctx)["crawl_delay_seconds"] == {host.base.split("//")[1]: DELAY}


def test_a_crawl_delay_under_the_interval_changes_nothing(farm, make_ctx, store):
    host = farm.add({"/robots.txt": robots(TEST_INTERVAL / 10), "/news/*": page()})
    ctx = make_ctx(T0)
    queue(ctx, host, 2)
    assert capture.capture_outlet(ctx, "alpha") == 2
    ctx.finish()
    assert "crawl_delay_seconds" not in finished_counts(store, ctx)


def test_over_the_limit_the_hosts_captures_are_carried_over_unsent(farm, make_ctx, store, monkeypatch):
    monkeypatch.setattr(settings, "CRAWL_DELAY_MAX_SECONDS", 1.0)
    host = farm.add({"/robots.txt": robots(5), "/news/*": page()})
    ctx = make_ctx(T0)
    queue(ctx, host, 3)
    assert capture.capture_outlet(ctx, "alpha") == 0
    assert [s.path for s in host.seen] == ["/robots.txt"]
    states = store.query("SELECT state, attempts FROM capture_queue ORDER BY url_key")
    assert [(r["state"], r["attempts"]) for r in states] == [("pending", 0)] * 3
    results = {r["result"] for r in store.query("SELECT result FROM requests WHERE purpose = 'capture'")}
    assert results == {"crawl_delay_over_limit"}


def test_the_deadline_reserve_counts_the_hosts_crawl_delay(farm, make_ctx, store):
    host = farm.add({"/robots.txt": robots(DELAY), "/news/*": page()})
    ctx = make_ctx(T0)
    ctx.fetcher.get(host.url("/news/0"), purpose="test")
    assert ctx.fetch_reserve(host.url("/news/1")) - ctx.fetch_reserve() == settings.MAX_ATTEMPTS * (DELAY - TEST_INTERVAL)
