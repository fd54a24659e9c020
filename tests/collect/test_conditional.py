"""Conditional requests for feeds and sitemaps: a 304 is a listing whose entries are the last one's.

The server side follows RFC 9110: a 304 answers an If-None-Match naming the
current entity tag (13.1.1), or an If-Modified-Since no earlier than the last
modification when no If-None-Match is sent (13.1.3), and carries the ETag a
200 would have had (15.4.5). The client side is what feedparser's `etag` and
`modified` arguments do (feedparser/http.py sends both headers).
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from collector.collect.pipeline import active_outlets, run_collection
from collector.record import export as ex
from collector.record import rebuild as rebuilding
from collector.record.registry_mirror import sync_registry
from collector.registry import parse_registry
from testing import hostile, replica
from testing.farm import Reply

NOW = replica.FEED_SNAPSHOT_TIME
MODIFIED = "Thu, 13 Aug 2026 03:00:00 GMT"


def conditional(reply: Reply, etag: str | None = '"v1"', modified: str | None = MODIFIED):
    """Return a route that answers 304 to a request whose validators match, else the reply."""
    validators = {k: v for k, v in (("ETag", etag), ("Last-Modified", modified)) if v}

    def route(handler):
        match = handler.headers.get("If-None-Match")
        since = handler.headers.get("If-Modified-Since")
        fresh = (match == etag) if match is not None else (since is not None and since == modified)
        if fresh:
            return Reply(304, b"", dict(validators), content_type=None)
        return Reply(reply.status, reply.body, {**reply.headers, **validators}, reply.content_type)

    return route


@pytest.fixture
def outlet(farm):
    host = hostile.add_host(farm)
    routes = hostile.outlet_routes(host, NOW, ["/news/1", "/news/2", "/news/3"])
    for path in (hostile.FEED_PATH, hostile.SITEMAP_PATH):
        routes[path] = conditional(routes[path])
    host.routes.update(routes)
    return host


def run(make_ctx, store, host, now):
    ctx = make_ctx(now=now)
    sync_registry(store, parse_registry(replica.registry_toml({"o": host})), ctx.clock)
    run_collection(ctx, active_outlets(ctx))
    ctx.finish()
    return ctx


def entries(store, listing_id):
    return [(r["position"], r["url"], r["title"], r["published_raw"]) for r in store.query(
        "SELECT * FROM listing_entries WHERE listing_id = ? ORDER BY position", (listing_id,))]


def listings(store, run_id):
    return [dict(r) for r in store.query("SELECT * FROM listings WHERE run_id = ? ORDER BY id", (run_id,))]


def test_a_304_is_a_listing_whose_complete_entry_list_is_the_one_it_names(make_ctx, store, outlet):
    first = run(make_ctx, store, outlet, NOW)
    queued = store.one("SELECT COUNT(*) FROM capture_queue")[0]
    second = run(make_ctx, store, outlet, NOW + timedelta(hours=1))
    third = run(make_ctx, store, outlet, NOW + timedelta(hours=2))
    listing_requests = [s for s in outlet.seen if s.path in (hostile.FEED_PATH, hostile.SITEMAP_PATH)]
    # Run 1 sent no validators; the later runs sent the first response's back.
    assert all("If-None-Match" not in s.headers for s in listing_requests[:2])
    later = listing_requests[-4:]
    assert {(s.headers.get("If-None-Match"), s.headers.get("If-Modified-Since")) for s in later} == {('"v1"', MODIFIED)}
    held = {row["url"]: row for row in listings(store, first.run_id) if row["entries_of"] is None}
    for ctx in (second, third):
        repeats = listings(store, ctx.run_id)
        assert len(repeats) == len(held) == 2
        for row in repeats:
            holder = held[row["url"]]
            # Named by the listing that holds the entries, never by another repeat.
            assert row["entries_of"] == holder["id"] and row["kind"] == holder["kind"]
            assert row["entry_count"] == holder["entry_count"] == 3
            assert entries(store, row["id"]) == entries(store, holder["id"])
            assert store.one("SELECT status_code FROM requests WHERE id = ?", (row["request_id"],))[0] == 304
    assert store.one("SELECT COUNT(*) FROM capture_queue")[0] == queued  # nothing queued twice
    # Expanded entries are no rows of their own: nothing to export twice, no queue reason.
    expanded = store.query("SELECT id, queue_reason FROM listing_entries WHERE listing_id = ?",
                           (listings(store, second.run_id)[0]["id"],))
    assert {(r["id"], r["queue_reason"]) for r in expanded} == {(None, None)}
    counts = store.one("SELECT counts FROM run_finishes WHERE run_id = ?", (third.run_id,))[0]
    assert '"listings_not_modified": 2' in counts and "listing_failures" not in counts


def test_a_changed_source_is_read_whole_again(make_ctx, store, outlet):
    run(make_ctx, store, outlet, NOW)
    feed = outlet.routes[hostile.FEED_PATH]
    outlet.routes[hostile.FEED_PATH] = conditional(
        Reply(200, hostile.rss([(outlet.url("/news/4"), NOW)]), content_type=hostile.RSS_TYPE), etag='"v2"')
    second = run(make_ctx, store, outlet, NOW + timedelta(hours=1))
    fresh = [r for r in listings(store, second.run_id) if r["url"].endswith(hostile.FEED_PATH)][0]
    assert fresh["entries_of"] is None and [e[1] for e in entries(store, fresh["id"])] == [outlet.url("/news/4")]
    outlet.routes[hostile.FEED_PATH] = feed


def test_a_304_nobody_asked_for_is_no_listing(make_ctx, store, farm):
    host = hostile.add_host(farm)
    host.routes.update(hostile.outlet_routes(host, NOW, ["/news/1"]))
    run(make_ctx, store, host, NOW)  # no validators in these answers
    host.routes[hostile.FEED_PATH] = Reply(304, b"", content_type=None)
    second = run(make_ctx, store, host, NOW + timedelta(hours=1))
    assert not [r for r in listings(store, second.run_id) if r["url"].endswith(hostile.FEED_PATH)]


def test_the_record_of_a_304_rebuilds_to_the_same_listings(make_ctx, store, outlet, tmp_path):
    record = tmp_path / "record"
    run(make_ctx, store, outlet, NOW)
    run(make_ctx, store, outlet, NOW + timedelta(hours=1))
    ex.export_new(store, record, now=NOW)  # the hourly export: the 304s end this file
    # Then the feed changes: its next listing is written against the base the 304 named.
    # (/news/1 as the feed first listed it: equal to the entry the 304 repeated)
    outlet.routes[hostile.FEED_PATH] = conditional(Reply(200, hostile.rss(
        [(outlet.url("/news/1"), NOW - timedelta(hours=1)), (outlet.url("/news/9"), NOW)]),
        content_type=hostile.RSS_TYPE), etag='"v3"')
    run(make_ctx, store, outlet, NOW + timedelta(hours=2))
    ex.export_new(store, record, now=NOW + timedelta(hours=2))
    rebuilt = tmp_path / "rebuilt.db"
    rebuilding.rebuild(record, rebuilt)
    from collector.record.store import Store

    again = Store(rebuilt)
    query = "SELECT listing_id, position, url, title, queue_reason FROM listing_entries ORDER BY listing_id, position"
    assert [tuple(r) for r in again.query(query)] == [tuple(r) for r in store.query(query)]
    assert again.one("SELECT COUNT(*) FROM listings WHERE entries_of IS NOT NULL")[0] == 3  # feed, sitemap; sitemap
    again.close()


def test_an_index_answered_304_still_has_its_children_read(make_ctx, store, farm):
    host = hostile.add_host(farm)
    urls = [(host.url(f"/news/{i}"), NOW - timedelta(hours=1 + i)) for i in range(2)]
    children = [host.url("/sm/a.xml"), host.url("/sm/b.xml")]
    host.routes.update({
        "/robots.txt": Reply(200, hostile.robots_txt(host, ["/sm/index.xml"]), content_type="text/plain"),
        "/": Reply(200, replica.homepage()),
        "/sm/index.xml": conditional(Reply(200, hostile.sitemap_index(children), content_type=hostile.XML_TYPE)),
        "/sm/a.xml": conditional(Reply(200, replica.news_sitemap(urls[:1]), content_type=hostile.XML_TYPE)),
        "/sm/b.xml": conditional(Reply(200, replica.news_sitemap(urls[1:]), content_type=hostile.XML_TYPE)),
        "/news/*": replica.article_route(replica.article_page(), host.base),
    })
    first = run(make_ctx, store, host, NOW)
    second = run(make_ctx, store, host, NOW + timedelta(hours=1))
    assert sorted(r["url"] for r in listings(store, first.run_id)) == sorted(r["url"] for r in listings(store, second.run_id))
    again = {r["url"]: r for r in listings(store, second.run_id)}
    assert all(r["entries_of"] is not None for r in again.values())
    index = again[host.url("/sm/index.xml")]
    assert {again[c]["parent_listing_id"] for c in children} == {index["id"]}
    assert [e[1] for e in entries(store, index["id"])] == children
    assert [s.headers.get("If-None-Match") for s in host.seen if s.path.startswith("/sm/")][-3:] == ['"v1"'] * 3
