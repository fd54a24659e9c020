"""Feeds and sitemaps parsed into listings: every entry, in order, dates as written.

Pure: bytes in, data out. The fetcher hands over a body, this module says what
it lists. A listing is evidence, so an entry keeps its address and dates
exactly as the outlet wrote them (whitespace stripped); parsed UTC values sit
beside them and are only used to decide what to capture.

XML from the network is hostile until proven otherwise: a body is refused,
unexpanded, when its prolog declares entities or an internal DTD subset
(billion laughs, external entities), gzip is inflated with a hard cap, and
sitemaps go through lxml with entity resolution, DTD loading and network
access switched off.
"""

from __future__ import annotations

import codecs
import io
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from urllib.parse import urljoin

import feedparser
from lxml import etree

from collector import settings
from collector.clock import iso_seconds
from collector.errors import TakedownWatchError
from collector.parse.feedvalues import (
    parse_feed_date, parse_w3c_date, raw_titles, struct_to_iso, title_as_written,
)
from collector.parse.inflate import GZIP, InflateError, TooLarge, inflate
from collector.urls import same_site

FEED_KINDS = frozenset({"rss", "atom", "rdf"})
SITEMAP_KINDS = frozenset({"urlset", "news_sitemap", "sitemapindex"})
_GZIP_MAGIC = b"\x1f\x8b"
_NAME = re.compile(rb"[A-Za-z_][-A-Za-z0-9_.:]*")
_SPACE = re.compile(rb"[ \t\r\n]*")
_XML_SPACE = " \t\r\n"
_DOCTYPE_BODY = re.compile(rb"""(?:[^\[>"']|"[^"]*"|'[^']*')*""")
_ABSOLUTE = re.compile(r"(?i)https?://[^/?#]")


class ListingParseError(TakedownWatchError):
    """The body is not a feed or sitemap this module will read; the message says why."""


@dataclass(frozen=True)
class Entry:
    position: int  # 0-based, in the order the listing wrote it
    # As written, XML whitespace stripped; None when the entry names none. For
    # feeds this is feedparser's link: <link>, a permalink <guid>, or Atom's
    # rel="alternate", resolved only against an xml:base the feed itself declares.
    url: str | None
    title: str | None = None
    published_raw: str | None = None
    published_utc: str | None = None  # ISO-8601 UTC, None when absent or unparseable
    modified_raw: str | None = None
    modified_utc: str | None = None
    absolute_url: str | None = None  # url resolved against the listing's address

    @property
    def date_utc(self) -> str | None:
        """Return the date the queue rule uses: publication, else modification."""
        return self.published_utc or self.modified_utc


@dataclass(frozen=True)
class ParsedListing:
    kind: str  # rss | atom | rdf | urlset | news_sitemap | sitemapindex
    version: str  # feedparser's version ('rss20', 'atom10', ...) or the sitemap namespace
    entries: list[Entry] = field(default_factory=list)
    children: list[Entry] = field(default_factory=list)  # sitemap indexes only
    title: str | None = None
    compressed: bool = False  # the body was gzip
    size: int = 0  # bytes parsed, after decompression
    tolerated: str | None = None  # what was wrong with a malformed feed that still parsed


def parse_listing(body: bytes, url: str, *, max_bytes: int = settings.SITEMAP_MAX_BYTES) -> ParsedListing:
    """Return the listing in body (fetched from url); raise ListingParseError if it is neither feed nor sitemap."""
    compressed = body[:2] == _GZIP_MAGIC
    data = gunzip_capped(body, max_bytes) if compressed else body
    if len(data) > max_bytes:
        raise ListingParseError(f"too large: {len(data)} bytes, limit {max_bytes}")
    if not data.strip():
        raise ListingParseError("empty body")
    root = root_element_name(data)
    local = root.rpartition(":")[2] if root else ""
    if local in ("urlset", "sitemapindex"):
        listing = _parse_sitemap(data, url)
    else:
        listing = _parse_feed(data, url)
    return _replace(listing, compressed=compressed, size=len(data))


def _replace(listing: ParsedListing, **changes) -> ParsedListing:
    """Return a copy of listing with some fields changed."""
    return ParsedListing(**{**listing.__dict__, **changes})


def gunzip_capped(body: bytes, max_bytes: int) -> bytes:
    """Return the inflated gzip body; raise ListingParseError('too large') past max_bytes."""
    try:
        return inflate(body, max_bytes, GZIP)
    except TooLarge as error:
        raise ListingParseError(f"too large: {error}") from None
    except InflateError as error:
        raise ListingParseError(f"bad gzip: {error}") from None


def root_element_name(data: bytes) -> str | None:
    """Return the root element's name, refusing any prolog that declares a DTD subset or entities."""
    text = _ascii_compatible(data)
    i = len(codecs.BOM_UTF8) if text.startswith(codecs.BOM_UTF8) else 0
    while i < len(text):
        i = _SPACE.match(text, i).end()
        if text.startswith(b"<?", i):
            i = _after(text, b"?>", i + 2)
        elif text.startswith(b"<!--", i):
            i = _after(text, b"-->", i + 4)
        elif text[i:i + 9].upper() == b"<!DOCTYPE":
            i = _after_doctype(text, i + 9)
        elif text.startswith(b"<!", i):
            raise ListingParseError("refused: markup declaration before the root element (<!ENTITY ...?)")
        elif text.startswith(b"<", i) and _NAME.match(text, i + 1):
            return _NAME.match(text, i + 1).group(0).decode("ascii")
        else:
            # Stray text before the root (a PHP warning, say): feedparser may
            # still recover the feed, so keep looking for the first tag.
            next_tag = text.find(b"<", i + 1)
            i = next_tag if next_tag >= 0 else len(text)
    return None


def _ascii_compatible(data: bytes) -> bytes:
    """Return data, transcoded to UTF-8 when it is UTF-16 or UTF-32 so markup is ASCII."""
    for bom, codec in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                       (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            return data.decode(codec, "replace").encode("utf-8")
    if data[:2] in (b"<\x00", b"\x00<"):
        return data.decode("utf-16-le" if data[:1] == b"<" else "utf-16-be", "replace").encode("utf-8")
    return data


def _after(text: bytes, terminator: bytes, start: int) -> int:
    """Return the index just past terminator, or the end when it never comes."""
    end = text.find(terminator, start)
    return len(text) if end < 0 else end + len(terminator)


def _after_doctype(text: bytes, start: int) -> int:
    """Return the index past a DOCTYPE without an internal subset; refuse one that has it."""
    end = _DOCTYPE_BODY.match(text, start).end()  # quoted ids may hold '[' or '>'
    if text[end:end + 1] == b"[":
        raise ListingParseError("refused: DOCTYPE with an internal subset; entities are never expanded")
    return end + 1


def _parse_feed(data: bytes, url: str) -> ParsedListing:
    """Return an RSS, Atom or RDF listing parsed by feedparser."""
    # A stream, never bytes: feedparser opens a bytes argument as a file name.
    parsed = feedparser.parse(io.BytesIO(data), sanitize_html=False, resolve_relative_uris=False)
    kind = _feed_kind(parsed.get("version") or "")
    if kind is None:
        problem = parsed.get("bozo_exception") if parsed.get("bozo") else None
        raise ListingParseError(f"not a feed or sitemap{f': {problem}' if problem else ''}")
    titles = raw_titles(data)
    if titles is None or len(titles) != len(parsed.entries):
        titles = [None] * len(parsed.entries)  # what lxml reads is no help: feedparser's titles stand
    entries = [_feed_entry(position, item, url, title) for position, (item, title)
               in enumerate(zip(parsed.entries, titles))]
    tolerated = str(parsed.get("bozo_exception")) if parsed.get("bozo") else None
    title = dict.get(parsed.feed, "title")
    return ParsedListing(kind, parsed.version, entries=entries, title=title, tolerated=tolerated)


def _feed_kind(version: str) -> str | None:
    """Return rss, atom or rdf for a feedparser version string, None for anything else."""
    if version in ("rss090", "rss10"):
        return "rdf"
    if version.startswith("rss"):
        return "rss"
    if version.startswith("atom"):
        return "atom"
    return None


def _feed_entry(position: int, item: dict, base: str, raw_title: str | None = None) -> Entry:
    """Return one feed item as an Entry, title and dates as written."""
    # dict.get, not item.get: FeedParserDict answers 'updated' with the
    # publication date when there is none, which would invent a modification.
    link = _stripped(dict.get(item, "link"))
    published, modified = _stripped(dict.get(item, "published")), _stripped(dict.get(item, "updated"))
    return Entry(
        position=position,
        url=link,
        title=title_as_written(raw_title, dict.get(item, "title")),
        published_raw=published,
        published_utc=struct_to_iso(dict.get(item, "published_parsed")) or parse_feed_date(published),
        modified_raw=modified,
        modified_utc=struct_to_iso(dict.get(item, "updated_parsed")) or parse_feed_date(modified),
        absolute_url=_absolute(base, link),
    )


def _absolute(base: str, url: str | None) -> str | None:
    """Return url resolved against base (the listing's own address)."""
    if url is None or _ABSOLUTE.match(url):
        return url  # the common case, and urljoin is the slowest step of a 50k-entry sitemap
    return urljoin(base, url)


def _stripped(value: str | None) -> str | None:
    """Return value without surrounding XML whitespace, None when nothing is left."""
    # Not str.strip(): a trailing U+00A0 is part of what the outlet wrote.
    return value.strip(_XML_SPACE) or None if isinstance(value, str) else None


def _parse_sitemap(data: bytes, url: str) -> ParsedListing:
    """Return a urlset, news sitemap or sitemap index, parsed with flat memory."""
    records = etree.iterparse(
        io.BytesIO(data), events=("end",), tag=("{*}url", "{*}sitemap"),
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
        remove_comments=True, remove_pis=True,
    )
    items: list[Entry] = []
    namespace, is_news = "", False
    try:
        for _, element in records:
            parent = element.getparent()
            if parent is None or parent.getparent() is not None:
                continue  # a <url> nested below the top level is not an entry
            namespace = etree.QName(parent).namespace or ""
            entry, has_news = _sitemap_entry(len(items), element, url)
            items.append(entry)
            is_news = is_news or has_news
            # Drop what has been read so a 50 MB sitemap never becomes a tree.
            element.clear(keep_tail=False)
            while element.getprevious() is not None:
                del parent[0]
    except etree.XMLSyntaxError as error:
        raise ListingParseError(f"malformed sitemap: {error}") from None
    root = records.root
    if etree.QName(root).localname == "sitemapindex":
        return ParsedListing("sitemapindex", etree.QName(root).namespace or namespace, children=items)
    kind = "news_sitemap" if is_news else "urlset"
    return ParsedListing(kind, etree.QName(root).namespace or namespace, entries=items)


def _sitemap_entry(position: int, element, base: str) -> tuple[Entry, bool]:
    """Return (Entry, whether it carried news:news) for one <url> or <sitemap>."""
    values: dict[str, str | None] = {}
    has_news = False
    for child in element:
        if not isinstance(child.tag, str):
            continue  # an unexpanded entity reference is not content
        name = _local(child.tag)
        if name in ("loc", "lastmod"):
            values[name] = _stripped(child.text)
        elif name == "news":
            has_news = True
            for part in child.iter("{*}publication_date", "{*}title"):
                values[_local(part.tag)] = _stripped(part.text)
    loc = values.get("loc")
    entry = Entry(
        position=position, url=loc, title=values.get("title"),
        published_raw=values.get("publication_date"),
        published_utc=parse_w3c_date(values.get("publication_date")),
        modified_raw=values.get("lastmod"), modified_utc=parse_w3c_date(values.get("lastmod")),
        absolute_url=_absolute(base, loc),
    )
    return entry, has_news


def _local(tag: str) -> str:
    """Return an element name without its {namespace}."""
    return tag.rpartition("}")[2]


def sitemap_children_newest_first(children: list[Entry]) -> list[Entry]:
    """Return sitemap-index children by lastmod, newest first; undated last, ties in document order."""
    dated = sorted((c for c in children if c.modified_utc), key=lambda c: c.modified_utc, reverse=True)
    # sorted() is stable even with reverse=True, so equal dates keep document order.
    return dated + [c for c in children if not c.modified_utc]


def queue_reason(entry: Entry, kind: str, run_time: datetime,
                 window_hours: float = settings.CAPTURE_WINDOW_HOURS) -> str | None:
    """Return why entry is queued for capture, or None.

    'recent', 'future-dated', 'undated-feed' or 'undated-news-sitemap'; an
    entry whose stated date could not be read is 'unreadable-date-feed' or
    'unreadable-date-news-sitemap'.

    The window is closed at its old end: an entry dated exactly window_hours
    before run_time is 'recent'. An entry dated up to FUTURE_SKEW_SECONDS
    after run_time is clock jitter and also 'recent'. One dated further ahead
    is queued as 'future-dated': a wrong clock or time zone at the outlet
    (local time labelled +0000 lands six hours ahead) must not cost the
    record an article, but a reviewer should be able to see it. Sitemap-index
    children are sitemaps, not articles, and are never queued.
    """
    if kind == "sitemapindex":
        return None
    when = entry.date_utc
    if when is None:
        # A date stated but unreadable is told apart from no date at all.
        state = "unreadable-date" if entry.published_raw or entry.modified_raw else "undated"
        if kind in FEED_KINDS:
            return f"{state}-feed"
        return f"{state}-news-sitemap" if kind == "news_sitemap" else None
    moment = datetime.fromisoformat(when)
    now = _aware(run_time)
    if moment > now + timedelta(seconds=settings.FUTURE_SKEW_SECONDS):
        return "future-dated"
    return "recent" if moment >= now - timedelta(hours=window_hours) else None


def _aware(moment: datetime) -> datetime:
    """Return moment with a time zone, a naive one taken as UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def validate_listing(parsed: ParsedListing, homepage: str, run_time: datetime) -> tuple[str, str]:
    """Return (outcome, detail): 'valid', 'index', 'no_recent_articles', 'other_site' or 'empty'."""
    items = parsed.children if parsed.kind == "sitemapindex" else parsed.entries
    if not items:
        return "empty", f"{parsed.kind} lists no entries"
    own = [e for e in items if e.absolute_url and same_site(e.absolute_url, homepage)]
    if not own:
        return "other_site", f"none of {len(items)} entries is on the site of {homepage}"
    if parsed.kind == "sitemapindex":
        return "index", f"{len(own)} of {len(items)} child sitemaps on the outlet's site"
    since = _aware(run_time) - timedelta(days=settings.SOURCE_RECENT_DAYS)
    dates = [datetime.fromisoformat(e.date_utc) for e in own if e.date_utc]
    recent = [d for d in dates if d >= since]
    if recent:
        return "valid", f"{len(recent)} of {len(own)} own-site entries dated within {settings.SOURCE_RECENT_DAYS} days"
    if not dates and parsed.kind in FEED_KINDS and len(own) >= settings.SOURCE_MIN_UNDATED_ENTRIES:
        return "valid", f"undated feed with {len(own)} own-site entries"
    if not dates:
        return "no_recent_articles", f"{len(own)} own-site entries, none dated"
    return "no_recent_articles", f"newest own-site entry dated {iso_seconds(max(dates))}"
