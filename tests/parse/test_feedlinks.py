"""Tests for collector/feedlinks.py: feed addresses declared by real and small hand-written pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from collector.parse.feedlinks import COMMON_PATHS, find_feed_links
from collector.urls import is_acceptable_url

HTML = Path(__file__).resolve().parents[1] / "data" / "html"

# (file in tests/data/html, the address it was served from, expected result)
REAL_PAGES = [
    ("bdnews24.com__homepage_2022-03-01__sewebcourse-about.blade.html", "https://bdnews24.com/",
     [("https://bdnews24.com/?widgetName=rssfeed&widgetId=1150&getXmlFeed=true", "homepage_anchor")]),
    # WordPress announces the site feed, the comments feed and this post's comments
    # feed; only the first lists articles.
    ("../articles/ukbdnews.com__2020-08_23646__trafilatura-tests-eval.html", "https://ukbdnews.com/2020/08/23646/",
     [("https://ukbdnews.com/feed/", "homepage_link")]),
    ("tbsnews__section-latest__2025-12-12__evilgodfahim-tbs.flaresolverr.html", "https://www.tbsnews.net/latest", []),
    ("../cloudflare/challenge-khaborerkagoj.html",
     "https://khaborerkagoj.com/", []),
    ("jugantor__homepage__2018__silverfoxy-JSCryptoMinerStudy.textcopy.html", "http://www.jugantor.com/", []),
]


@pytest.mark.parametrize("name, base, expected", REAL_PAGES)
def test_real_pages(name, base, expected):
    assert find_feed_links((HTML / name).read_bytes(), base) == expected


def _page(head: str = "", body: str = "") -> bytes:
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'>{head}</head><body>{body}</body></html>".encode()


@pytest.mark.parametrize("head, expected", [
    ('<link rel="alternate" type="application/rss+xml" href="/feed/">', "https://www.ittefaq.com.bd/feed/"),
    ('<link rel="alternate" type="application/atom+xml" href="https://www.ittefaq.com.bd/atom.xml">',
     "https://www.ittefaq.com.bd/atom.xml"),
    ('<link rel="alternate" type="application/feed+json" href="/feed.json">', "https://www.ittefaq.com.bd/feed.json"),
    ('<link rel="alternate" type="application/json" title="JSON Feed" href="/all.json">',
     "https://www.ittefaq.com.bd/all.json"),
    ('<link rel="alternate" type="text/xml" href="/rss.xml">', "https://www.ittefaq.com.bd/rss.xml"),
    ('<link rel="alternate" type="application/x.atom+xml" href="/a">', "https://www.ittefaq.com.bd/a"),
    ('<link rel="alternate" type="application/x-atom+xml" href="/b">', "https://www.ittefaq.com.bd/b"),
    ('<link rel="alternate" type="application/rdf+xml" href="/index.rdf">', "https://www.ittefaq.com.bd/index.rdf"),
    ('<LINK REL="Alternate Home" TYPE="Application/RSS+XML; charset=utf-8" HREF=" rss.xml ">',
     "https://www.ittefaq.com.bd/bangladesh/rss.xml"),
    ('<link rel="alternate" type="application/rss+xml" href="https://feeds.feedburner.com/ittefaq">',
     "https://feeds.feedburner.com/ittefaq"),  # declared by the outlet itself, so kept off-site
])
def test_link_elements_that_announce_feeds(head, expected):
    assert find_feed_links(_page(head), "https://www.ittefaq.com.bd/bangladesh/") == [(expected, "homepage_link")]


@pytest.mark.parametrize("head", [
    '<link rel="alternate" type="application/rss+xml" title="Site &raquo; Comments Feed" href="/post/feed/">',
    '<link rel="alternate" type="application/rss+xml" href="/comments/feed/">',
    '<link rel="alternate" type="application/json" href="/wp-json/wp/v2/pages/7">',  # REST API, not a feed
    '<link rel="alternate" type="application/json+oembed" href="/wp-json/oembed/1.0/embed?url=x">',
    '<link rel="alternate" hreflang="en" href="https://en.prothomalo.com/">',
    '<link rel="stylesheet" type="text/css" href="/rss.css">',
    '<link rel="alternate" type="application/rss+xml">',
    '<link rel="alternate" type="application/rss+xml" href="javascript:void(0)">',
])
def test_links_that_are_not_article_feeds(head):
    assert find_feed_links(_page(head), "https://www.prothomalo.com/") == []


@pytest.mark.parametrize("href, found", [
    ("/feed", True), ("/feed/", True), ("/rss", True), ("/rss.xml", True), ("/atom.xml", True),
    ("/bangladesh.rss", True), ("/feeds", True), ("/rss/rss.xml", True), ("/rss/national.xml", True),
    ("/feed/rss.xml", True), ("/?feed=rss2", True), ("/index.php?format=feed&type=rss", True),
    ("https://www.jagonews24.com/rss/politics.xml", True), ("RSS.XML", True),
    ("/comments/feed/", False), ("/feedback", False), ("/rss-guide/help", False), ("/national", False),
    ("/?feedView=all", False), ("mailto:rss@jagonews24.com", False), ("#rss", False),
    ("https://www.facebook.com/jagonews24/rss", False),  # another site: a guess not worth a request
    ("https://www.linkedin.com/company/newagebd/posts/?feedView=all", False),
])
def test_anchor_heuristics(href, found):
    result = find_feed_links(_page(body=f'<a href="{href}">RSS</a>'), "https://www.jagonews24.com/")
    assert (len(result) == 1 and result[0][1] == "homepage_anchor") is found


def test_document_order_and_deduplication_by_comparison_key():
    page = _page(
        '<link rel="alternate" type="application/rss+xml" href="/rss/rss.xml">',
        '<a href="/feed/">Feed</a><a href="https://WWW.JAGONEWS24.COM/rss/rss.xml#top">RSS</a>'
        '<a href="/feed/?utm_source=footer">again</a><a href="/rss/sports.xml">Sports</a>',
    )
    assert find_feed_links(page, "https://www.jagonews24.com/") == [
        ("https://www.jagonews24.com/rss/rss.xml", "homepage_link"),
        ("https://www.jagonews24.com/feed/", "homepage_anchor"),
        ("https://www.jagonews24.com/rss/sports.xml", "homepage_anchor"),
    ]


def test_base_href_decides_how_relative_addresses_resolve():
    page = _page('<base href="https://khaborerkagoj.com/index.php/">', '<a href="rss.xml">RSS</a>')
    assert find_feed_links(page, "https://khaborerkagoj.com/editorial") == [
        ("https://khaborerkagoj.com/index.php/rss.xml", "homepage_anchor")]


@pytest.mark.parametrize("body", [b"", b"   ", b"error code: 500", b"\x00\xff\xfe garbage", "<p>কোনো ফিড নেই</p>".encode()])
def test_pages_with_nothing_to_offer(body):
    assert find_feed_links(body, "https://www.jagonews24.com/") == []


def test_common_paths_are_short_feeds_first_and_well_formed():
    assert 6 <= len(COMMON_PATHS) <= 14
    assert len(set(COMMON_PATHS)) == len(COMMON_PATHS)
    kinds = ["sitemap" if "sitemap" in p or "googlenews" in p else "feed" for p in COMMON_PATHS]
    assert kinds == sorted(kinds)  # every feed path comes before every sitemap path
    for path in COMMON_PATHS:
        assert path.startswith("/")
        assert is_acceptable_url("https://www.prothomalo.com" + path) == (True, "ok")
