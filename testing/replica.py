"""Loopback replicas of real outlets, built from the real files under tests/data/.

A replica serves an outlet's real feed with its addresses moved to the
loopback host (the bytes are otherwise untouched: BOM, CRLF, percent-encoded
Bangla slugs), news sitemaps written with chosen dates, and real article
pages whose canonical address is made to name the page's own address.
"""

from __future__ import annotations

import email.utils
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from xml.sax.saxutils import escape

from testing import TEST_DATA
from testing.farm import Handler, Host, Reply

DATA = TEST_DATA
FEEDS = DATA / "feeds"
ARTICLES = DATA / "articles"

# The instant the saved feeds were fetched (SOURCES.md: 2026-08-13 ~10:24 +0600).
FEED_SNAPSHOT_TIME = datetime(2026, 8, 13, 4, 30, tzinfo=timezone.utc)

REAL_HOSTS = {
    "prothomalo": ("https://www.prothomalo.com",),
    "jagonews": ("https://www.jagonews24.com",),
    "ittefaq": ("https://www.ittefaq.com.bd",),
    "banglatribune": ("https://www.banglatribune.com",),
    "ekattor": ("https://ekattor.tv",),
    "bd24live": ("https://www.bd24live.com",),
    "amarbanglabd": ("http://www.amarbanglabd.com", "https://www.amarbanglabd.com"),
}


def feed_file(outlet: str) -> Path:
    return next(FEEDS.glob(f"{outlet}__*.xml"))


def moved_feed(outlet: str, base: str) -> bytes:
    """Return the outlet's real feed with its own addresses moved to `base`."""
    body = feed_file(outlet).read_bytes()
    for real in REAL_HOSTS[outlet]:
        body = body.replace(real.encode(), base.encode())
    return body


def feed_links(body: bytes) -> list[str]:
    """Return the item links of an RSS feed in document order (for assertions)."""
    return [m.decode().strip() for m in re.findall(rb"<item>.*?<link>\s*([^<]+?)\s*</link>", body, re.S)]


def news_sitemap(entries: list[tuple[str, datetime | None]], title: str = "খবর") -> bytes:
    """Return a Google News sitemap listing (address, publication date or None)."""
    items = []
    for url, when in entries:
        date = f"<news:publication_date>{when.isoformat()}</news:publication_date>" if when else ""
        items.append(
            f"<url><loc>{escape(url)}</loc><news:news><news:publication><news:name>Replica</news:name>"
            f"<news:language>bn</news:language></news:publication>{date}"
            f"<news:title>{escape(title)}</news:title></news:news></url>")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
            'xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">'
            + "".join(items) + "</urlset>").encode()


def article_page(name: str = "synthetic-jagonews-1146758-zwj-jsonld-graph.html") -> bytes:
    return (ARTICLES / name).read_bytes()


_CANONICAL = re.compile(rb'(<link rel="canonical" href=")[^"]*(")')


def article_route(page: bytes, host_base: str):
    """Return a route serving `page` with its canonical naming the requested address."""

    def route(handler: Handler) -> Reply:
        own = (host_base + handler.path.split("?")[0]).encode()
        return Reply(200, _CANONICAL.sub(rb"\g<1>" + own + rb"\g<2>", page, count=1))

    return route


def homepage(feed_path: str | None = None, title: str = "Replica") -> bytes:
    """Return a small homepage, with a feed <link> when feed_path is given."""
    link = f'<link rel="alternate" type="application/rss+xml" href="{feed_path}">' if feed_path else ""
    return (f'<!doctype html><html lang="bn"><head><meta charset="utf-8"><title>{title}</title>{link}'
            f"</head><body><h1>{title}</h1></body></html>").encode()


def robots(sitemaps: list[str] = (), disallow: str = "") -> Reply:
    lines = ["User-agent: *", f"Disallow: {disallow}"] + [f"Sitemap: {s}" for s in sitemaps]
    return Reply(200, ("\n".join(lines) + "\n").encode(), content_type="text/plain")


def fresh(now: datetime, *hours: float) -> list[datetime]:
    """Return instants the given numbers of hours before now."""
    return [now - timedelta(hours=h) for h in hours]


def registry_toml(outlets: dict[str, Host], groups: dict[str, list[str]] | None = None) -> str:
    """Return an outlets.toml naming each loopback host as an outlet."""
    groups = groups or {"replicas": list(outlets)}
    text = []
    for gid in groups:
        text.append(f'[groups.{gid}]\nname = "Replica group {gid}"\nname_bn = "প্রতিরূপ {gid}"\n')
    for gid, members in groups.items():
        for oid in members:
            text.append(f'[outlets.{oid}]\nname = "Replica {oid}"\nname_bn = "প্রতিরূপ {oid}"\n'
                        f'homepage = "{outlets[oid].base}/"\nlanguage = "bn"\ngroup = "{gid}"\n')
    return "\n".join(text)


_RFC822 = re.compile(rb"(<(pubDate|updated|published)>)([^<]+)(</\2>)")


def shifted_feed(outlet: str, base: str, now: datetime) -> bytes:
    """Return the moved feed with every RFC-822 date moved so the newest is about `now`.

    Only the dates change, by one offset for the whole feed, so the items'
    order and spacing stay as the outlet published them.
    """
    body = moved_feed(outlet, base)
    delta = now - FEED_SNAPSHOT_TIME

    def shift(match: re.Match) -> bytes:
        raw = match.group(3).decode().strip()
        try:
            when = email.utils.parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return match.group(0)
        moved = email.utils.format_datetime(when + delta)
        return match.group(1) + moved.encode() + match.group(4)

    return _RFC822.sub(shift, body)
