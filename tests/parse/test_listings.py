"""Tests for collector/listings.py: real feeds, sitemap fixtures, hostile XML, the queue rule."""

from __future__ import annotations

import email.utils
import gzip
import html
import random
import re
import time
import tracemalloc
import zlib
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from collector import settings
from collector.parse.listings import (
    Entry, ListingParseError, ParsedListing, gunzip_capped, parse_listing, parse_w3c_date, queue_reason,
    sitemap_children_newest_first, validate_listing,
)
from collector.parse.feedvalues import parse_feed_date
from collector.urls import comparison_key

DATA = Path(__file__).resolve().parents[1] / "data"
FEEDS = DATA / "feeds"
SITEMAPS = DATA / "sitemaps"
UTC = timezone.utc
RUN = datetime(2026, 8, 13, 6, 0, tzinfo=UTC)  # two hours after the corpus feeds were fetched

# (file stem, address it was fetched from, kind, feedparser version, entries)
REAL_FEEDS = [
    ("prothomalo", "https://www.prothomalo.com/feed/", "rss", "rss20", 44),
    ("jagonews", "https://www.jagonews24.com/rss/rss.xml", "rss", "rss20", 50),
    ("ittefaq", "https://www.ittefaq.com.bd/feed/", "rss", "rss20", 100),
    ("banglatribune", "https://www.banglatribune.com/feed/", "rss", "rss20", 100),
    ("ekattor", "https://ekattor.tv/feed/", "rss", "rss20", 100),
    ("amarbanglabd", "https://www.amarbanglabd.com/feeds", "atom", "atom10", 50),
    ("bd24live", "https://www.bd24live.com/feed/", "rss", "rss20", 10),
]


def _feed_bytes(stem: str) -> bytes:
    return (FEEDS / f"{stem}__cloudphone-rss-reader_5dcfbf4.xml").read_bytes()


def _oracle(text: str) -> list[tuple[str, str | None, str | None, str | None]]:
    """(link, published, modified, title) per item, read from the file with regular expressions."""
    rows = []
    for item in re.findall(r"<item>.*?</item>|<entry>.*?</entry>", text, re.S):
        link = re.search(r"<link>\s*(.*?)\s*</link>|<link rel=\"alternate\" href=\"([^\"]+)\"", item, re.S)
        published = re.search(r"<pubDate>\s*(.*?)\s*</pubDate>", item)
        modified = re.search(r"<(?:atom:)?updated>\s*(.*?)\s*</(?:atom:)?updated>", item)
        # XML whitespace only: a U+00A0 the outlet put at a title's end is part of the title.
        title = re.search(r"<title>[ \t\r\n]*(<!\[CDATA\[)?(.*?)(?:\]\]>)?[ \t\r\n]*</title>", item, re.S)
        title_text = (title.group(2) if title.group(1) else html.unescape(title.group(2))).strip(" \t\r\n")
        rows.append((html.unescape(link.group(1) or link.group(2)), published and published.group(1),
                     modified and modified.group(1), title_text))
    return rows


@pytest.mark.parametrize("stem, url, kind, version, count", REAL_FEEDS)
def test_real_feed_parses_completely_in_order_with_dates_as_written(stem, url, kind, version, count):
    body = _feed_bytes(stem)
    listing = parse_listing(body, url)
    assert (listing.kind, listing.version, len(listing.entries)) == (kind, version, count)
    assert listing.compressed is False and listing.size == len(body) and listing.tolerated is None
    expected = _oracle(body.decode("utf-8"))
    assert len(expected) == count
    got = [(e.url, e.published_raw, e.modified_raw, e.title) for e in listing.entries]
    assert got == expected
    assert [e.position for e in listing.entries] == list(range(count))
    for entry in listing.entries:
        assert entry.absolute_url == entry.url
        if entry.published_raw:
            assert entry.published_utc == _rfc822_to_iso(entry.published_raw)


def _rfc822_to_iso(raw: str) -> str:
    return email.utils.parsedate_to_datetime(raw).astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_real_feed_quirks():
    ittefaq = _feed_bytes("ittefaq")
    assert ittefaq.startswith(b"\xef\xbb\xbf<?xml") and b"\r\n" in ittefaq  # the fixture is what we claim
    first = parse_listing(ittefaq, "https://www.ittefaq.com.bd/feed/").entries[0]
    assert first.url.startswith("https://www.ittefaq.com.bd/803832/%E0%A6%A6%E0%A7%80")
    assert (first.published_raw, first.published_utc) == ("Thu, 13 Aug 2026 10:19:43 +0600", "2026-08-13T04:19:43Z")
    assert first.modified_raw is None  # feedparser's updated->published fallback must not invent one

    prothomalo = _feed_bytes("prothomalo")
    assert prothomalo.startswith(b"<rss ")  # no XML declaration
    entry = parse_listing(prothomalo, "https://www.prothomalo.com/feed/").entries[0]
    assert (entry.modified_raw, entry.modified_utc) == ("2026-08-13T04:08:01.848Z", "2026-08-13T04:08:01Z")

    amar = parse_listing(_feed_bytes("amarbanglabd"), "https://www.amarbanglabd.com/feeds").entries[0]
    assert amar.url == "http://www.amarbanglabd.com/news/article/bangladesh/18357"
    assert amar.published_raw is None
    assert (amar.modified_raw, amar.modified_utc) == ("Wed, 12 Aug 2026 12:34:13 +0000", "2026-08-12T12:34:13Z")


@pytest.mark.parametrize("stem, url, kept", [
    ("banglatribune", "https://www.banglatribune.com/feed/", 7), ("ittefaq", "https://www.ittefaq.com.bd/feed/", 1),
    ("ekattor", "https://ekattor.tv/feed/", 1), ("amarbanglabd", "https://www.amarbanglabd.com/feeds", 1),
])
def test_a_titles_trailing_no_break_space_is_kept_as_the_feed_wrote_it(stem, url, kept):
    # feedparser's own title is str.strip()ped, which removes U+00A0 (issue 18, item 16)
    titles = [e.title for e in parse_listing(_feed_bytes(stem), url).entries]
    assert sum(t.endswith("\u00a0") for t in titles) == kept
    ittefaq = parse_listing(_feed_bytes("ittefaq"), "https://www.ittefaq.com.bd/feed/").entries
    assert any(e.title.endswith(" \u00a0") for e in ittefaq)  # a space, then the no-break space


def test_a_title_differing_from_feedparsers_by_more_than_stripping_is_feedparsers():
    body = ('<rss version="2.0"><channel><item><title>  এক\u00a0 </title><link>https://x.invalid/1</link></item>'
            '<item><title type="html">&lt;b&gt;দুই&lt;/b&gt;</title><link>https://x.invalid/2</link></item>'
            '</channel></rss>').encode()
    first, second = parse_listing(body, "https://x.invalid/feed").entries
    assert first.title == "এক\u00a0"  # XML whitespace stripped, the no-break space kept
    assert second.title == "<b>দুই</b>"


def test_u_fffd_from_the_corpus_fetcher_survives_into_titles():
    titles = [e.title for e in parse_listing(_feed_bytes("jagonews"), "https://www.jagonews24.com/rss/rss.xml").entries]
    assert any("\ufffd" in t for t in titles)


MINI_RSS = ('<rss version="2.0"><channel><title>t</title>'
            '<item><title>এক</title><link> https://www.banglatribune.com/1/%e0%a6%aa </link>'
            '<pubDate>Thu, 13 Aug 2026 10:20:00 +0600</pubDate></item>'
            '<item><title>দুই</title><link>/relative/2</link></item></channel></rss>')


@pytest.mark.parametrize("body", [
    MINI_RSS.encode(),
    b"\xef\xbb\xbf" + b'<?xml version="1.0" encoding="UTF-8"?>\r\n' + MINI_RSS.replace("><", ">\r\n<").encode(),
    '<?xml version="1.0" encoding="UTF-16"?>'.encode("utf-16") + MINI_RSS.encode("utf-16-le"),
    b"<!-- generated -->\n" + MINI_RSS.encode(),
    b'<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" '
    b'"http://my.netscape.com/publish/formats/rss-0.91.dtd">\n' + MINI_RSS.encode(),
])
def test_small_feed_variants_parse_the_same(body):
    listing = parse_listing(body, "https://www.banglatribune.com/feed/")
    assert listing.kind == "rss"
    first, second = listing.entries
    assert first.url == "https://www.banglatribune.com/1/%e0%a6%aa"  # as written, hex case and all
    assert (first.title, first.published_utc) == ("এক", "2026-08-13T04:20:00Z")
    assert second.url == "/relative/2"
    assert second.absolute_url == "https://www.banglatribune.com/relative/2"
    assert second.published_raw is None and second.published_utc is None


def test_rdf_feed():
    body = (b'<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" '
            b'xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">'
            b'<channel rdf:about="https://ekattor.tv/"><title>x</title><link>https://ekattor.tv/</link></channel>'
            b'<item rdf:about="https://ekattor.tv/a/1"><title>a</title><link>https://ekattor.tv/a/1</link>'
            b'<dc:date>2026-08-13T10:00:00+06:00</dc:date></item></rdf:RDF>')
    listing = parse_listing(body, "https://ekattor.tv/index.rdf")
    assert listing.kind == "rdf"
    assert listing.entries[0].url == "https://ekattor.tv/a/1"
    assert listing.entries[0].date_utc == "2026-08-13T04:00:00Z"


def test_malformed_feed_is_tolerated_and_says_so():
    body = MINI_RSS.replace("<title>t</title>", "<title>News & Views</title>").encode()
    listing = parse_listing(body, "https://www.banglatribune.com/feed/")
    assert len(listing.entries) == 2
    assert listing.tolerated


@pytest.mark.parametrize("body, words", [
    (b"", "empty"),
    (b"   \r\n", "empty"),
    (b"<!DOCTYPE html><html><head><title>Just a moment...</title></head><body></body></html>", "not a feed"),
    (b'{"version": "https://jsonfeed.org/version/1.1", "items": []}', "not a feed"),
    (b"error code: 500", "not a feed"),
    (b"<urlset><url><loc>https://x/1</loc></url>", "malformed sitemap"),
])
def test_bodies_that_are_neither(body, words):
    with pytest.raises(ListingParseError, match=words):
        parse_listing(body, "https://ekattor.tv/feed/")


def test_bytes_that_look_like_a_path_are_never_opened(tmp_path):
    feed = tmp_path / "feed.xml"
    feed.write_bytes(MINI_RSS.encode())
    with pytest.raises(ListingParseError):
        parse_listing(str(feed).encode(), "https://ekattor.tv/feed/")  # feedparser would open a bytes path


# ------------------------------------------------------------------------------ sitemaps


def test_urlset_fixture():
    listing = parse_listing((SITEMAPS / "urlset.xml").read_bytes(), "https://www.ittefaq.com.bd/sitemap.xml")
    assert (listing.kind, listing.version) == ("urlset", "http://www.sitemaps.org/schemas/sitemap/0.9")
    rows = [(e.position, e.url, e.modified_raw, e.modified_utc, e.published_raw, e.title) for e in listing.entries]
    assert rows == [
        (0, "https://www.ittefaq.com.bd/803832/%E0%A6%A6%E0%A7%80%E0%A6%B0%E0%A7%8D%E0%A6%98-%E0%A7%A8%E0%A7%A9-"
            "%E0%A6%AC%E0%A6%9B%E0%A6%B0", "2026-08-13T10:19:43+06:00", "2026-08-13T04:19:43Z", None, None),
        (1, "https://www.ittefaq.com.bd/803830/%E0%A6%9C%E0%A6%BE%E0%A6%AE%E0%A6%BF%E0%A6%A8",
         "2026-08-13", "2026-08-13T00:00:00Z", None, None),
        (2, "https://www.ittefaq.com.bd/national", None, None, None, None),
        (3, "https://www.ittefaq.com.bd/politics?page=2&sort=new", "2024-01-05T08:00:00Z", "2024-01-05T08:00:00Z",
         None, None),
    ]
    assert listing.children == []


def test_news_sitemap_fixture_and_its_gzip_twin():
    plain = parse_listing((SITEMAPS / "news_sitemap.xml").read_bytes(), "https://www.prothomalo.com/news_sitemap.xml")
    packed_body = (SITEMAPS / "news_sitemap.xml.gz").read_bytes()
    packed = parse_listing(packed_body, "https://www.prothomalo.com/news_sitemap.xml.gz")
    assert plain.kind == packed.kind == "news_sitemap"
    assert plain.entries == packed.entries
    assert packed.compressed and packed.size == plain.size == len((SITEMAPS / "news_sitemap.xml").read_bytes())
    first, second, third = plain.entries
    assert first.title == "এক প্রজন্ম পর নাটকীয় সূর্যগ্রহণ দেখল কোটি কোটি মানুষ"  # not the image:title
    assert (first.published_raw, first.published_utc) == ("2026-08-13T10:08:01+06:00", "2026-08-13T04:08:01Z")
    assert (first.modified_raw, first.modified_utc) == ("2026-08-13T04:08:01.848Z", "2026-08-13T04:08:01Z")
    assert (second.published_raw, second.title) == ("2026-08-12T23:55:13+00:00", "রাজশাহীতে বৃষ্টি & বন্যা")
    assert (third.url, third.date_utc) == ("https://www.prothomalo.com/opinion/column/undated00x", None)


def test_sitemap_index_fixture_and_newest_first_order():
    listing = parse_listing((SITEMAPS / "sitemapindex.xml").read_bytes(), "https://www.banglanews24.com/sitemap.xml")
    assert listing.kind == "sitemapindex" and listing.entries == []
    assert len(listing.children) == 6
    ordered = [c.url.rsplit("banglanews24.com/", 1)[1] for c in sitemap_children_newest_first(listing.children)]
    assert ordered == [
        "daily-sitemap/2026-08-13/sitemap.xml",  # 04:20Z, written as +06:00; first in the document
        "news-sitemap.xml",  # also 04:20Z: ties keep document order
        "daily-sitemap/2026-08-12/sitemap.xml",
        "daily-sitemap/2026-08-11/sitemap.xml",
        "sitemap-pages.xml",  # undated, in document order, last
        "sitemap-tags.xml",
    ]


def test_sitemap_without_namespace_and_with_nested_noise():
    body = (b"<urlset><url><loc>https://ekattor.tv/1</loc><lastmod>2026-08</lastmod></url>"
            b"<extra><url><loc>https://ekattor.tv/not-an-entry</loc></url></extra></urlset>")
    listing = parse_listing(body, "https://ekattor.tv/sitemap.xml")
    assert [(e.url, e.modified_utc) for e in listing.entries] == [("https://ekattor.tv/1", "2026-08-01T00:00:00Z")]


def test_large_sitemap_parses_every_entry():
    rows = "".join(f"<url><loc>https://www.jagonews24.com/national/news/{i}</loc>"
                   f"<lastmod>2026-08-13T10:00:00+06:00</lastmod></url>" for i in range(50_000))
    body = f'<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{rows}</urlset>'.encode()
    started = time.perf_counter()
    listing = parse_listing(body, "https://www.jagonews24.com/sitemap.xml")
    assert time.perf_counter() - started < 10
    assert len(listing.entries) == 50_000
    assert listing.entries[-1].url.endswith("/49999") and listing.entries[-1].position == 49_999


@pytest.mark.parametrize("raw, expected", [
    ("2026-08-13T10:19:43+06:00", "2026-08-13T04:19:43Z"),
    ("2026-08-13T10:19+0600", "2026-08-13T04:19:00Z"),
    ("2026-08-13T04:08:01.848Z", "2026-08-13T04:08:01Z"),
    ("2026-08-13T04:08:01", "2026-08-13T04:08:01Z"),  # no zone: UTC
    ("2026-08-13", "2026-08-13T00:00:00Z"),
    ("2026-08", "2026-08-01T00:00:00Z"),
    ("2026", "2026-01-01T00:00:00Z"),
    ("Thu, 13 Aug 2026 10:20:00 +0600", "2026-08-13T04:20:00Z"),
    ("yesterday", None),
    ("", None),
    (None, None),
])
def test_parse_w3c_date(raw, expected):
    assert parse_w3c_date(raw) == expected


# ---------------------------------------------------------------------- hostile XML


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE {root} [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
"""
RSS_USING = '<rss version="2.0"><channel><item><title>&{name};</title><link>https://ekattor.tv/&{name};</link></item></channel></rss>'
SITEMAP_USING = '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>https://ekattor.tv/&{name};</loc></url></urlset>'


def _attacks(secret_file: Path) -> list[bytes]:
    uri = secret_file.as_uri()
    external = f'<?xml version="1.0"?>\n<!DOCTYPE {{root}} [ <!ENTITY xxe SYSTEM "{uri}"> ]>\n'
    bodies = []
    for root, doc in (("rss", RSS_USING), ("urlset", SITEMAP_USING)):
        bodies += [
            (BILLION_LAUGHS.format(root=root) + doc.format(name="lol9")).encode(),
            (external.format(root=root) + doc.format(name="xxe")).encode(),
            # Lower case, a comment hiding a fake root first, and UTF-16: still a DOCTYPE with a subset.
            (external.format(root=root).replace("DOCTYPE", "doctype") + doc.format(name="xxe")).encode(),
            ("<!-- <a> -->" + external.format(root=root)[21:] + doc.format(name="xxe")).encode(),
            (external.format(root=root).replace("<?xml version=\"1.0\"?>", "") + doc.format(name="xxe")).encode("utf-16"),
            # An entity declaration with no DOCTYPE around it.
            (f'<!ENTITY xxe SYSTEM "{uri}">' + doc.format(name="xxe")).encode(),
        ]
    return bodies


def test_entity_declarations_are_refused_before_any_parser_sees_them(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-MARKER")
    for body in _attacks(secret):
        started = time.perf_counter()
        with pytest.raises(ListingParseError, match="refused"):
            parse_listing(body, "https://ekattor.tv/feed/")
        assert time.perf_counter() - started < 1


@pytest.mark.parametrize("prolog", ["<!DOCTYPE rss []>", "<!DOCTYPE rss SYSTEM 'x.dtd' [\n]>", "<!DOCTYPE rss\n[]>"])
def test_any_internal_subset_is_refused_even_an_empty_one(prolog):
    with pytest.raises(ListingParseError, match="internal subset"):
        parse_listing((prolog + MINI_RSS).encode(), "https://www.banglatribune.com/feed/")


def test_external_dtd_without_a_subset_is_never_loaded(tmp_path):
    # No internal subset, so the prolog check lets it through to the parsers;
    # neither may read the DTD, so &xxe; must never become the marker.
    dtd = tmp_path / "evil.dtd"
    dtd.write_text('<!ENTITY xxe "TOP-SECRET-MARKER">')
    for root, doc in (("rss", RSS_USING), ("urlset", SITEMAP_USING)):
        body = f'<?xml version="1.0"?>\n<!DOCTYPE {root} SYSTEM "{dtd.as_uri()}">\n{doc.format(name="xxe")}'.encode()
        listing = parse_listing(body, "https://ekattor.tv/feed/")
        assert len(listing.entries) == 1
        assert "TOP-SECRET-MARKER" not in repr(listing)


def test_a_bracket_inside_a_quoted_system_id_is_not_a_subset():
    body = b'<!DOCTYPE rss SYSTEM "http://example.org/[x].dtd">' + MINI_RSS.encode()
    assert len(parse_listing(body, "https://www.banglatribune.com/feed/").entries) == 2


def test_parsers_behind_the_check_do_not_expand_entities_either():
    # Defence in depth: call the parsers directly, as if the prolog check had a hole.
    from collector.parse import listings

    started = time.perf_counter()
    feed = (BILLION_LAUGHS.format(root="rss") + RSS_USING.format(name="lol9")).encode()
    (entry,) = listings._parse_feed(feed, "https://ekattor.tv/feed/").entries
    assert entry.title == "&lol9;"  # feedparser dropped the declarations; the reference stays text
    sitemap = (BILLION_LAUGHS.format(root="urlset") + SITEMAP_USING.format(name="lol9")).encode()
    try:
        entries = listings._parse_sitemap(sitemap, "https://ekattor.tv/sitemap.xml").entries
    except ListingParseError as error:
        assert "amplification" in str(error)  # libxml2's own guard (lxml 6.1.3)
    else:
        assert all("lol" not in (e.url or "") for e in entries)
    assert time.perf_counter() - started < 2


def _gzip_bomb(megabytes: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"<" + b"\0" * (1024 * 1024 - 1)
    return b"".join(packer.compress(block) for _ in range(megabytes)) + packer.flush()


def test_gzip_bomb_stops_at_the_cap_without_inflating_it():
    bomb = _gzip_bomb(64)
    assert len(bomb) < 1024 * 1024
    tracemalloc.start()
    try:
        with pytest.raises(ListingParseError, match="too large"):
            parse_listing(bomb, "https://ekattor.tv/sitemap.xml.gz", max_bytes=2 * 1024 * 1024)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12 * 1024 * 1024  # the cap plus working buffers, not 64 MB


def test_gzip_bomb_stops_at_the_default_cap():
    with pytest.raises(ListingParseError, match="too large"):
        parse_listing(_gzip_bomb(settings.SITEMAP_MAX_BYTES // (1024 * 1024) + 1), "https://ekattor.tv/s.xml.gz")


def test_gzip_exactly_at_the_cap_is_accepted_and_one_byte_over_is_not():
    data = b"x" * 5000
    assert gunzip_capped(gzip.compress(data), 5000) == data
    with pytest.raises(ListingParseError, match="too large"):
        gunzip_capped(gzip.compress(data + b"x"), 5000)


def test_plain_body_over_the_cap_is_refused():
    with pytest.raises(ListingParseError, match="too large"):
        parse_listing(MINI_RSS.encode(), "https://x/feed", max_bytes=100)


def test_gzip_members_padding_truncation_and_corruption():
    body = (SITEMAPS / "news_sitemap.xml").read_bytes()
    half = len(body) // 2
    assert gunzip_capped(gzip.compress(body[:half]) + gzip.compress(body[half:]), 10**6) == body
    assert gunzip_capped(gzip.compress(body) + b"\0" * 16, 10**6) == body
    # A small member, then one far longer than the inflater's input chunk.
    noise = random.Random(1).randbytes(300_000)
    assert gunzip_capped(gzip.compress(body) + gzip.compress(noise), 10**6) == body + noise
    packed = gzip.compress(body)
    with pytest.raises(ListingParseError, match="truncated"):
        parse_listing(packed[: len(packed) // 2], "https://x/s.xml.gz")
    with pytest.raises(ListingParseError, match="bad gzip"):
        parse_listing(packed[:10] + b"\xff" * 40 + packed[50:], "https://x/s.xml.gz")


# ---------------------------------------------------------------------- the queue rule


def _dated(moment: datetime | None, modified: datetime | None = None) -> Entry:
    iso = lambda m: m.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if m else None  # noqa: E731
    return Entry(0, "https://ekattor.tv/1", published_utc=iso(moment), modified_utc=iso(modified))


WINDOW = timedelta(hours=settings.CAPTURE_WINDOW_HOURS)
SKEW = timedelta(seconds=settings.FUTURE_SKEW_SECONDS)


@pytest.mark.parametrize("kind", ["rss", "atom", "rdf", "news_sitemap", "urlset"])
@pytest.mark.parametrize("offset, expected", [
    (-WINDOW, "recent"),  # exactly 48 h before the run is inside
    (-WINDOW - timedelta(seconds=1), None),
    (-WINDOW + timedelta(seconds=1), "recent"),
    (timedelta(0), "recent"),
    (SKEW, "recent"),
    (SKEW + timedelta(seconds=1), "future-dated"),
    (timedelta(hours=6), "future-dated"),  # Dhaka time labelled +0000
    (-timedelta(days=400), None),
])
def test_queue_rule_at_the_window_edges(kind, offset, expected):
    assert queue_reason(_dated(RUN + offset), kind, RUN) == expected


@pytest.mark.parametrize("kind, expected", [
    ("rss", "undated-feed"), ("atom", "undated-feed"), ("rdf", "undated-feed"),
    ("news_sitemap", "undated-news-sitemap"), ("urlset", None), ("sitemapindex", None),
])
def test_queue_rule_for_undated_entries(kind, expected):
    assert queue_reason(_dated(None), kind, RUN) == expected


def test_queue_rule_prefers_publication_over_modification_and_takes_naive_run_time_as_utc():
    old_but_edited = _dated(RUN - timedelta(days=30), modified=RUN - timedelta(hours=1))
    assert queue_reason(old_but_edited, "rss", RUN) is None
    only_modified = _dated(None, modified=RUN - timedelta(hours=1))
    assert queue_reason(only_modified, "urlset", RUN) == "recent"
    assert queue_reason(_dated(RUN - WINDOW), "rss", RUN.replace(tzinfo=None)) == "recent"
    assert queue_reason(_dated(RUN - WINDOW), "rss", RUN, window_hours=47) is None


FEED_DATES = [
    ("Sunday, January 08, 2023, 18:06  +0530", "2023-01-08T12:36:00Z"),  # a real feed's form (issue 18, item 17)
    ("Sun, 08 Jan 2023 18:06:00 +0530", "2023-01-08T12:36:00Z"),
    ("2023-01-08 18:06:00+05:30", "2023-01-08T12:36:00Z"),
    ("Monday, January 08, 2023, 18:06  +0530", None),  # the weekday says another day: two readings
    ("January 08, 2023, 18:06", None),  # no zone: an instant somewhere
    ("Sun, 08 Jan 2023 18:06:00 -0000", None),  # RFC 5322: -0000 is 'zone unknown'
    ("৮ জানুয়ারি ২০২৩", None),
    ("08/01/2023 18:06 +0530", None),  # day or month first: two readings
    ("", None), (None, None),
]


@pytest.mark.parametrize("raw, expected", FEED_DATES)
def test_a_feed_date_feedparser_cannot_read_is_read_when_it_has_one_reading(raw, expected):
    assert parse_feed_date(raw) == expected


def test_an_unreadable_date_is_kept_and_queued_apart_from_a_missing_one():
    body = ('<rss version="2.0"><channel><title>t</title>'
            '<item><title>a</title><link>https://x.invalid/1</link>'
            '<pubDate>Sunday, January 08, 2023, 18:06  +0530</pubDate></item>'
            '<item><title>b</title><link>https://x.invalid/2</link><pubDate>৮ জানুয়ারি ২০২৩</pubDate></item>'
            '<item><title>c</title><link>https://x.invalid/3</link></item></channel></rss>').encode()
    months_old, unreadable, undated = parse_listing(body, "https://x.invalid/feed").entries
    # feedparser leaves the first undated; read, it is months old and not captured
    assert (months_old.published_raw, months_old.published_utc) == ("Sunday, January 08, 2023, 18:06  +0530",
                                                                    "2023-01-08T12:36:00Z")
    assert queue_reason(months_old, "rss", RUN) is None
    assert (unreadable.published_raw, unreadable.published_utc) == ("৮ জানুয়ারি ২০২৩", None)
    assert queue_reason(unreadable, "rss", RUN) == "unreadable-date-feed"
    assert queue_reason(undated, "rss", RUN) == "undated-feed"
    news = Entry(0, "https://x.invalid/4", published_raw="গতকাল")
    assert queue_reason(news, "news_sitemap", RUN) == "unreadable-date-news-sitemap"
    assert queue_reason(news, "urlset", RUN) is None


def test_queue_rule_on_a_real_feed_matches_its_raw_dates():
    listing = parse_listing(_feed_bytes("ittefaq"), "https://www.ittefaq.com.bd/feed/")
    run = datetime(2026, 8, 15, 0, 0, tzinfo=UTC)  # the window edge falls inside the feed
    expected = sum(1 for e in listing.entries
                   if email.utils.parsedate_to_datetime(e.published_raw) >= run - WINDOW)
    reasons = [queue_reason(e, listing.kind, run) for e in listing.entries]
    assert 0 < reasons.count("recent") == expected < len(listing.entries)
    assert set(reasons) <= {"recent", None}


# -------------------------------------------------------------------- source validation


def test_real_feeds_validate_against_their_own_homepage():
    prothomalo = parse_listing(_feed_bytes("prothomalo"), "https://www.prothomalo.com/feed/")
    outcome, detail = validate_listing(prothomalo, "https://www.prothomalo.com/", RUN)
    # Six of 44 items are on sister sites (kishoralo.com, haal.fashion, ...).
    assert outcome == "valid" and "of 38 own-site" in detail
    assert validate_listing(prothomalo, "https://www.ittefaq.com.bd/", RUN)[0] == "other_site"
    assert validate_listing(prothomalo, "https://www.prothomalo.com/", RUN + timedelta(days=30))[0] == "no_recent_articles"
    amar = parse_listing(_feed_bytes("amarbanglabd"), "https://www.amarbanglabd.com/feeds")
    assert validate_listing(amar, "https://www.amarbanglabd.com/", RUN)[0] == "valid"  # dated by <updated> only


def _listing(kind: str, urls: list[str], dated: bool = False) -> ParsedListing:
    date = "2026-08-13T00:00:00Z" if dated else None
    items = [Entry(i, u, published_utc=date, absolute_url=u) for i, u in enumerate(urls)]
    if kind == "sitemapindex":
        return ParsedListing(kind, "", children=items)
    return ParsedListing(kind, "", entries=items)


@pytest.mark.parametrize("listing, outcome", [
    (_listing("rss", []), "empty"),
    (_listing("rss", ["https://ekattor.tv/1", "https://ekattor.tv/2", "https://ekattor.tv/3"]), "valid"),
    (_listing("rss", ["https://ekattor.tv/1", "https://ekattor.tv/2", "https://other.tv/3"]), "no_recent_articles"),
    (_listing("news_sitemap", ["https://ekattor.tv/1", "https://ekattor.tv/2", "https://ekattor.tv/3"]),
     "no_recent_articles"),
    (_listing("urlset", ["https://ekattor.tv/1"], dated=True), "valid"),
    (_listing("urlset", ["https://other.tv/1"], dated=True), "other_site"),
    (_listing("sitemapindex", ["https://ekattor.tv/s1.xml"]), "index"),
    (_listing("sitemapindex", ["https://other.tv/s1.xml"]), "other_site"),
    (_listing("sitemapindex", []), "empty"),
])
def test_validate_listing_outcomes(listing, outcome):
    assert validate_listing(listing, "https://ekattor.tv/", RUN)[0] == outcome


def test_undated_feed_needs_the_minimum_of_own_site_entries():
    enough = ["https://ekattor.tv/%d" % i for i in range(settings.SOURCE_MIN_UNDATED_ENTRIES)]
    assert validate_listing(_listing("atom", enough), "https://ekattor.tv/", RUN)[0] == "valid"
    assert validate_listing(_listing("atom", enough[:-1]), "https://ekattor.tv/", RUN)[0] == "no_recent_articles"


def test_recent_means_source_recent_days():
    edge = RUN - timedelta(days=settings.SOURCE_RECENT_DAYS)
    inside = ParsedListing("rss", "", entries=[Entry(0, "https://ekattor.tv/1", absolute_url="https://ekattor.tv/1",
                                                     published_utc=edge.strftime("%Y-%m-%dT%H:%M:%SZ"))])
    assert validate_listing(inside, "https://ekattor.tv/", RUN)[0] == "valid"
    assert validate_listing(inside, "https://ekattor.tv/", RUN + timedelta(seconds=1))[0] == "no_recent_articles"


def test_comparison_key_of_sitemap_entries_matches_raw_utf8():
    listing = parse_listing((SITEMAPS / "urlset.xml").read_bytes(), "https://www.ittefaq.com.bd/sitemap.xml")
    raw = "https://www.ittefaq.com.bd/803830/জামিন"
    assert comparison_key(listing.entries[1].url) == comparison_key(raw)
