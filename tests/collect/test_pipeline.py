"""A whole collection run over loopback replicas of real outlets.

Five outlets, one per discovery path: sitemaps declared in robots.txt, a feed
linked only from the homepage, a feed found only at a common address, a site
whose robots.txt cannot be read, and a feed that lists another site's
articles.
"""

from __future__ import annotations

import email.utils
import re
from datetime import timedelta

import pytest

from collector.collect.pipeline import active_outlets, run_collection
from collector.registry import parse_registry
from collector.record.registry_mirror import sync_registry
from testing import replica
from testing.farm import Reply

NOW = replica.FEED_SNAPSHOT_TIME


def _pubdates(body: bytes):
    return [email.utils.parsedate_to_datetime(m.decode()) for m in re.findall(rb"<pubDate>([^<]+)</pubDate>", body)]


@pytest.fixture
def outlets(farm):
    hosts = {}
    page = replica.article_page()

    robotsmap = farm.add()
    sitemap_entries = [(robotsmap.url(f"/news/{i}"), when) for i, when in
                       enumerate(replica.fresh(NOW, 1, 10, 47.9, 49, 200))] + [(robotsmap.url("/news/undated"), None)]
    robotsmap.routes.update({
        "/robots.txt": replica.robots([robotsmap.url("/news_sitemap.xml")], disallow="/private"),
        "/news_sitemap.xml": Reply(200, replica.news_sitemap(sitemap_entries), content_type="application/xml"),
        "/": Reply(200, replica.homepage()),
        "/news/*": replica.article_route(page, robotsmap.base),
    })
    hosts["robotsmap"] = robotsmap

    homelink = farm.add()
    homelink.routes.update({
        "/robots.txt": Reply(404),
        "/": Reply(200, replica.homepage("/rss/rss.xml")),
        "/rss/rss.xml": Reply(200, replica.moved_feed("jagonews", homelink.base), content_type="application/rss+xml"),
        "/*": replica.article_route(page, homelink.base),
    })
    hosts["homelink"] = homelink

    commonpath = farm.add()
    commonpath.routes.update({
        "/robots.txt": Reply(404),
        "/": Reply(200, replica.homepage()),
        "/feed/": Reply(200, replica.moved_feed("ittefaq", commonpath.base), content_type="application/rss+xml"),
        "/*": replica.article_route(page, commonpath.base),
    })
    hosts["commonpath"] = commonpath

    hosts["nothing"] = farm.add({"/robots.txt": Reply(503)})

    elsewhere = farm.add()
    elsewhere.routes.update({
        "/robots.txt": Reply(404),
        "/": Reply(200, replica.homepage("/feed/")),
        "/feed/": Reply(200, replica.feed_file("bd24live").read_bytes(), content_type="application/rss+xml"),
    })
    hosts["elsewhere"] = elsewhere
    return hosts


def _run(make_ctx, store, hosts, now):
    registry = parse_registry(replica.registry_toml(hosts))
    ctx = make_ctx(now=now)
    sync_registry(store, registry, ctx.clock)
    run_collection(ctx, active_outlets(ctx))
    ctx.finish()
    return ctx


def probes(store, outlet):
    return [(r["found_via"], r["outcome"]) for r in store.query(
        "SELECT found_via, outcome FROM source_probes WHERE outlet_id = ? ORDER BY id", (outlet,))]


def test_a_whole_run(make_ctx, store, outlets):
    _run(make_ctx, store, outlets, NOW)

    # Sitemaps declared in robots.txt are tried first, and validate.
    assert probes(store, "robotsmap")[0] == ("robots", "valid")
    # A feed linked only from the homepage.
    assert ("homepage_link", "valid") in probes(store, "homelink")
    # A feed found only at a common address; everything tried before it is recorded.
    commonpath = probes(store, "commonpath")
    assert commonpath[-1] == ("common_path", "valid") or ("common_path", "valid") in commonpath
    assert all(found == "common_path" for found, _ in commonpath)
    # Nothing readable: one probe says why, nothing but robots.txt was requested.
    assert probes(store, "nothing") == [("homepage", "fetch_failed")]
    # (robots.txt itself got its three attempts: a 503 is a server error)
    assert outlets["nothing"].paths_seen() == ["/robots.txt"] * 3
    assert store.one("SELECT result FROM requests WHERE outlet_id = 'nothing' AND sent = 0")["result"] == "robots_unreachable"
    # A feed of another site's articles is not a source.
    assert ("homepage_link", "other_site") in probes(store, "elsewhere")
    assert store.one("SELECT COUNT(*) AS n FROM sources WHERE outlet_id IN ('nothing', 'elsewhere')")["n"] == 0

    # Every listing fetched is stored whole, in order, as written.
    jago = replica.moved_feed("jagonews", outlets["homelink"].base)
    listing = store.one("SELECT id, entry_count FROM listings WHERE outlet_id = 'homelink' AND kind = 'rss'")
    entries = [r["url"] for r in store.query(
        "SELECT url FROM listing_entries WHERE listing_id = ? ORDER BY position", (listing["id"],))]
    assert entries == replica.feed_links(jago) and listing["entry_count"] == 50
    other = store.one("SELECT entry_count FROM listings WHERE outlet_id = 'elsewhere'")
    assert other["entry_count"] == 10  # stored, though nothing of it is queued

    # The queue rule: within 48 h, or undated in a news sitemap.
    reasons = {r["url"].rsplit("/", 1)[-1]: r["reason"] for r in store.query(
        "SELECT url, reason FROM capture_queue WHERE outlet_id = 'robotsmap'")}
    assert reasons == {"0": "recent", "1": "recent", "2": "recent", "undated": "undated-news-sitemap"}
    expected_jago = sum(1 for d in _pubdates(jago) if d >= NOW - timedelta(hours=48))
    assert store.one("SELECT COUNT(*) AS n FROM capture_queue WHERE outlet_id = 'homelink'")["n"] == expected_jago

    # Every queued address was captured once, from a successful HTML response.
    queued = store.one("SELECT COUNT(*) AS n FROM capture_queue")["n"]
    assert store.one("SELECT COUNT(*) AS n FROM snapshots")["n"] == queued > 0
    assert store.one("SELECT COUNT(*) AS n FROM capture_queue WHERE state != 'captured'")["n"] == 0
    texts = [r["text"] for r in store.query("SELECT text FROM snapshots")]
    assert all("\u200d" in t for t in texts)  # the page's ZWJ survives into the record

    # Captures went newest first.
    order = [r["url"].rsplit("/", 1)[-1] for r in store.query(
        "SELECT q.url FROM snapshots s JOIN capture_queue q ON q.article_id = s.article_id "
        "WHERE q.outlet_id = 'robotsmap' ORDER BY s.id")]
    assert order == ["0", "1", "2", "undated"]


def test_second_run_lists_again_and_captures_nothing_twice(make_ctx, store, outlets):
    _run(make_ctx, store, outlets, NOW)
    snapshots = store.one("SELECT COUNT(*) AS n FROM snapshots")["n"]
    listings = store.one("SELECT COUNT(*) AS n FROM listings")["n"]
    second = _run(make_ctx, store, outlets, NOW + timedelta(hours=1))
    assert store.one("SELECT COUNT(*) AS n FROM snapshots")["n"] == snapshots
    assert store.one("SELECT COUNT(*) AS n FROM listings WHERE run_id = ?", (second.run_id,))["n"] >= 3
    assert store.one("SELECT COUNT(*) AS n FROM listings")["n"] > listings
    # Sources are not rediscovered within a week.
    assert store.one("SELECT COUNT(*) AS n FROM source_probes WHERE run_id = ? AND outlet_id = 'homelink'",
                     (second.run_id,))["n"] == 0


def test_index_of_indexes_is_searched_within_the_depth_limit(make_ctx, store, farm):
    host = farm.add()
    index = ('<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
             '<sitemap><loc>{}</loc></sitemap></sitemapindex>')
    host.routes.update({
        "/robots.txt": replica.robots([host.url("/index.xml")]),
        "/index.xml": Reply(200, index.format(host.url("/inner.xml")).encode(), content_type="application/xml"),
        "/inner.xml": Reply(200, index.format(host.url("/news.xml")).encode(), content_type="application/xml"),
        "/news.xml": Reply(200, replica.news_sitemap([(host.url("/a/1"), NOW)]), content_type="application/xml"),
        "/": Reply(200, replica.homepage()),
        "/a/*": replica.article_route(replica.article_page(), host.base),
    })
    _run(make_ctx, store, {"nested": host}, NOW)
    assert store.one("SELECT url FROM sources WHERE outlet_id = 'nested'")["url"] == host.url("/index.xml")
    assert probes(store, "nested")[:3] == [("robots", "index"), ("sitemap_index_child", "index"),
                                           ("sitemap_index_child", "valid")]
    assert store.one("SELECT COUNT(*) AS n FROM snapshots")["n"] == 1
