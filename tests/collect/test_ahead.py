"""Fetching ahead: a host's next capture is on its way while the last one is extracted."""

from __future__ import annotations

import statistics
import threading
import time
from datetime import timedelta

import pytest

from collector.collect import capture, revisits
from collector.collect.ahead import fetched_ahead
from collector.collect.pipeline import active_outlets, run_collection
from collector.errors import RecordWriteError
from collector.record.registry_mirror import sync_registry
from collector.registry import parse_registry
from testing import hostile, replica
from testing.farm import Reply
from tests.collect.test_revisits import ROBOTS_OPEN, T0, capture_article, page

NOW = replica.FEED_SNAPSHOT_TIME
INTERVAL = 0.3
ANSWER_TAKES = 0.15  # the site's time to answer a page
EXTRACTION_TAKES = 0.25  # our time to extract and write it: together, more than the interval


def test_a_hosts_next_capture_is_not_held_back_by_the_work_on_its_last(farm, make_ctx, store, monkeypatch):
    # In turn, each capture would start 0.40 s after the last (its answer, then its
    # extraction); fetched ahead, the interval alone spaces them.
    paths = [f"/news/{n}" for n in range(7)]
    host = hostile.add_host(farm)
    host.routes.update(hostile.outlet_routes(host, NOW, paths))

    def slow_page(handler):
        time.sleep(ANSWER_TAKES)
        return Reply(200, replica.article_page())

    host.routes["/news/*"] = slow_page
    real = capture.extract

    def slow_extract(*args, **kwargs):
        time.sleep(EXTRACTION_TAKES)
        return real(*args, **kwargs)

    monkeypatch.setattr(capture, "extract", slow_extract)
    ctx = make_ctx(now=NOW, interval=INTERVAL)
    sync_registry(store, parse_registry(replica.registry_toml({"o": host})), ctx.clock)
    summaries = run_collection(ctx, active_outlets(ctx))
    assert summaries[0]["captured"] == len(paths)
    arrivals = sorted(s.at for s in host.seen if s.path.startswith("/news/"))
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
    assert len(gaps) == len(paths) - 1
    assert min(gaps) >= INTERVAL  # pacing holds
    assert statistics.median(gaps) < ANSWER_TAKES + EXTRACTION_TAKES - 0.03, gaps


def test_a_hosts_next_recheck_is_not_held_back_by_the_work_on_its_last(farm, make_ctx, store, monkeypatch):
    host = farm.add({"/robots.txt": ROBOTS_OPEN, "/news/a/1": page()})
    article = capture_article(make_ctx(now=T0), "alpha", host.url("/news/a/1"))
    answer = page()

    def slow_page(handler):
        time.sleep(ANSWER_TAKES)
        return answer

    host.routes["/news/a/1"] = slow_page
    real = revisits.perform

    def slow_perform(*args, **kwargs):
        time.sleep(EXTRACTION_TAKES)
        return real(*args, **kwargs)

    monkeypatch.setattr(revisits, "perform", slow_perform)
    seen = len(host.seen)
    summary = revisits.run_rechecks(make_ctx(now=T0 + timedelta(days=31), interval=INTERVAL))
    assert summary["performed"] == summary["present"] == 6  # six slots overdue, all checked
    assert store.one("SELECT COUNT(*) FROM checks WHERE article_id = ?", (article,))[0] == 6
    arrivals = sorted(s.at for s in host.seen[seen:] if s.path == "/news/a/1")
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:])]
    assert len(gaps) == 5 and min(gaps) >= INTERVAL
    assert statistics.median(gaps) < ANSWER_TAKES + EXTRACTION_TAKES - 0.03, gaps


def test_answers_come_in_order_once_each_and_an_error_reaches_the_caller():
    def answers():
        yield 1
        yield 2
        raise RecordWriteError("the record cannot be written")

    got = []
    with pytest.raises(RecordWriteError):
        for answer in fetched_ahead(answers(), depth=1):
            got.append(answer)
    assert got == [1, 2]


def test_a_caller_that_stops_stops_the_fetching_and_its_thread():
    produced, closed = [], threading.Event()

    def answers():
        try:
            for n in range(100):
                produced.append(n)
                yield n
        finally:
            closed.set()  # the generator's cleanup ran

    before = threading.active_count()
    for answer in fetched_ahead(answers(), depth=1):
        if answer == 2:
            break
    assert closed.is_set() and threading.active_count() == before
    assert len(produced) <= 2 + 1 + 1 + 1  # the three taken, one queued, one in the fetcher's hand
