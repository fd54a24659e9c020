"""Feed addresses a homepage declares, and the few common addresses worth probing after them.

Pure: HTML bytes in, candidate addresses out. Nothing here decides that a
candidate is a source; discovery fetches and validates every one, and records
each try.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urljoin, urlsplit

from lxml import etree
from lxml import html as lxml_html

from collector.urls import comparison_key, same_site

# Probed, in this order, only after robots.txt and the homepage named nothing
# usable: feeds first (cheaper to read, dated), then news sitemaps. Every path
# was seen at a Bangladeshi outlet or is probed by ultimate-sitemap-parser,
# Media Cloud or trafilatura (research/discovery.md). Kept short because each
# probe costs the outlet a request and us two seconds.
COMMON_PATHS = (
    "/feed/",
    "/feed",
    "/rss.xml",
    "/rss/rss.xml",
    "/feed/rss.xml",
    "/rss",
    "/news_sitemap.xml",
    "/news-sitemap.xml",
    "/sitemaps/news-sitemap.xml",
    "/googlenews.xml",
    "/sitemap_news.xml",
    "/sitemap-news.xml",
)

# <link rel="alternate"> types that announce a feed (feed_seeker's list plus
# RDF and JSON Feed). Plain application/json only counts when the address or
# title says feed, because WordPress also announces its REST API that way.
FEED_TYPES = frozenset({
    "application/rss+xml", "application/atom+xml", "application/feed+json",
    "text/xml", "application/x.atom+xml", "application/x-atom+xml", "application/rdf+xml",
})
_FEED_SUFFIXES = ("/feed", "/feed/", "/rss", "/rss/", "rss.xml", "atom.xml", ".rss", "/feeds", "/feeds/")
_FEED_SEGMENTS = frozenset({"rss", "feed", "feeds"})
_FEED_QUERY_PREFIXES = ("rss", "atom", "feed")  # ?feed=rss2, ?format=feed&type=rss, ?widgetName=rssfeed


def find_feed_links(html: bytes, base_url: str) -> list[tuple[str, str]]:
    """Return (absolute address, 'homepage_link' | 'homepage_anchor') pairs in document order, deduplicated."""
    document = _parse(html)
    if document is None:
        return []
    base = _document_base(document, base_url)
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    for element in document.iter("link", "a"):
        how = _classify(element, base, base_url)
        if how is None:
            continue
        address = urljoin(base, element.get("href").strip())
        key = comparison_key(address)
        if key not in seen:
            seen.add(key)
            found.append((address, how))
    return found


def _parse(page: bytes):
    """Return the parsed page, or None when there is nothing to parse."""
    if not page.strip():
        return None
    try:
        return lxml_html.document_fromstring(page, parser=lxml_html.HTMLParser(recover=True, no_network=True))
    except (etree.LxmlError, ValueError):
        return None


def _document_base(document, page_url: str) -> str:
    """Return the address relative links resolve against: <base href> if present, else the page."""
    for base in document.iter("base"):
        href = (base.get("href") or "").strip()
        if href:
            return urljoin(page_url, href)
    return page_url


def _classify(element, base: str, page_url: str) -> str | None:
    """Return how element names a feed, or None when it does not."""
    href = (element.get("href") or "").strip()
    if not href or "comments" in href.lower():
        return None  # comment feeds list reader comments, not articles
    address = urljoin(base, href)
    if urlsplit(address).scheme.lower() not in ("http", "https"):
        return None
    if element.tag == "link":
        return "homepage_link" if _is_feed_link(element, address) else None
    # Anchors are guesses, so only the outlet's own site is worth a request.
    if same_site(address, page_url) and _looks_like_feed(address):
        return "homepage_anchor"
    return None


def _is_feed_link(element, address: str) -> bool:
    """Return True for <link rel="alternate"> with a feed type (not a comments feed)."""
    rels = (element.get("rel") or "").lower().split()
    kind = (element.get("type") or "").split(";")[0].strip().lower()
    title = (element.get("title") or "").lower()
    if "alternate" not in rels or "comments" in title:
        return False
    if kind == "application/json":
        return "feed" in title or _looks_like_feed(address)
    return kind in FEED_TYPES


def _looks_like_feed(address: str) -> bool:
    """Return True when an address's path or query obviously names a feed."""
    parts = urlsplit(address)
    path = parts.path.lower()
    if path.endswith(_FEED_SUFFIXES):
        return True
    if any(segment in _FEED_SEGMENTS for segment in path.split("/")):
        return True
    values = [value.lower() for _, value in parse_qsl(parts.query)]
    return any(value.startswith(_FEED_QUERY_PREFIXES) for value in values)
