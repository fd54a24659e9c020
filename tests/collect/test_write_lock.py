"""Extraction and comparison run before the write, not inside the store's only lock (issue 32, item 8).

Every outlet's ledger rows are written through one lock (record/store.py).
A capture or a check that extracted its page, or read an older page again to
compare it, inside its write transaction made every other outlet's writes
wait for that CPU work and those file reads. Here the extractor is
instrumented: it notes whether the thread calling it holds the store's lock.
"""

from __future__ import annotations

from datetime import timedelta

from collector.collect import capture, changes, events, outcomes
from collector.collect.revisits import run_rechecks
from collector.parse import extract as extraction
from tests.collect.test_changes import older_extractor
from tests.collect.test_revisits import HEADLINE_NEW, ROBOTS_OPEN, T0, capture_article, page


def watched(monkeypatch, store) -> list[bool]:
    """Return the list that records, for each extraction, whether the store's lock was held by its thread."""
    held: list[bool] = []
    real = extraction.extract

    def extract(body, content_type, url):
        held.append(store._lock._is_owned())
        return real(body, content_type, url)

    for module in (capture, events, outcomes, changes):
        if getattr(module, "extract", None) is not None:
            monkeypatch.setattr(module, "extract", extract)
    return held


def test_a_capture_extracts_its_page_outside_the_write_lock(farm, make_ctx, store, monkeypatch):
    host = farm.add({"/robots.txt": ROBOTS_OPEN, **{f"/news/{n}": page() for n in range(3)}})
    ctx = make_ctx(T0)
    for n in range(3):
        url = host.url(f"/news/{n}")
        article = store.insert("articles", {"outlet_id": "alpha", "url_key": url, "url": url,
                                           "first_seen_at": ctx.clock.now_iso(), "first_seen_run": ctx.run_id})
        store.insert("capture_queue", {"url_key": url, "url": url, "article_id": article, "outlet_id": "alpha",
                                       "reason": "listing", "queued_at": ctx.clock.now_iso(),
                                       "queued_run": ctx.run_id})
    held = watched(monkeypatch, store)
    assert capture.capture_outlet(ctx, "alpha") == 3
    assert held == [False, False, False]


def test_a_check_extracts_and_compares_outside_the_write_lock(farm, make_ctx, store, monkeypatch):
    host = farm.add({"/robots.txt": ROBOTS_OPEN, "/news/1": page()})
    with monkeypatch.context() as patch:
        older_extractor(patch)  # the check compares across extractors: the older page is read again
        article = capture_article(make_ctx(T0), "alpha", host.url("/news/1"))
    host.routes["/news/1"] = page(headline=HEADLINE_NEW)
    held = watched(monkeypatch, store)
    ctx = make_ctx(T0 + timedelta(hours=1, minutes=1))
    summary = run_rechecks(ctx)
    assert summary["present"] == 1
    kinds = [r["field"] for r in store.query("SELECT field FROM events WHERE article_id = ?", (article,))]
    assert kinds == ["headline"]
    assert len(held) == 2 and not any(held), held  # the new page, and the older one read again from its WARC record
