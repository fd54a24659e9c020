"""Reads an outlet's sources and records every listing, every entry, and the capture queue.

The complete entry list of every feed and sitemap fetched is stored, captured
or not. Only entries that the method's queue rule selects, on the outlet's
own site and not seen before, join the capture queue, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urljoin

from collector import settings
from collector.collect.context import RunContext
from collector.parse.listings import Entry, ListingParseError, ParsedListing, parse_listing, queue_reason
from collector.parse.listings import sitemap_children_newest_first
from collector.record import articles
from collector.record.articles import article_key
from collector.urls import is_acceptable_url, same_site
from collector.record.streams import next_id


@dataclass(frozen=True)
class OutletRow:
    """The registry facts a stage needs about one outlet."""

    id: str
    homepage: str
    sources: tuple[str, ...] = ()


def record_listing(ctx: RunContext, outlet: OutletRow, url: str, request_id: int | None,
                   parsed: ParsedListing, *, parent: int | None = None,
                   queue: bool = True) -> int:
    """Return the id of a new listing row, with every entry recorded and queued as the rule says."""
    now = ctx.clock.now()
    items = parsed.children if parsed.kind == "sitemapindex" else parsed.entries
    with ctx.store.transaction() as conn:
        listing_id = conn.execute(
            "INSERT INTO listings (id, run_id, outlet_id, url, request_id, parent_listing_id, "
            "fetched_at, kind, entry_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (next_id(conn, "listings"), ctx.run_id, outlet.id, url, request_id, parent, ctx.clock.now_iso(),
             parsed.kind, len(items))).lastrowid
        queued = 0
        for entry in items:
            reason = None
            if queue and parsed.kind != "sitemapindex":
                reason = _queue_if_new(ctx, conn, outlet, entry, parsed.kind, now)
            conn.execute(
                "INSERT INTO listing_entries (id, listing_id, position, url, url_key, title, "
                "published_raw, published_utc, modified_raw, modified_utc, queue_reason) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (next_id(conn, "listing_items"), listing_id, entry.position, entry.url or "",
                 article_key(entry.absolute_url or entry.url or ""), entry.title,
                 entry.published_raw, entry.published_utc, entry.modified_raw,
                 entry.modified_utc, reason))
            queued += reason is not None
    ctx.count("listings")
    ctx.count("entries", len(items))
    ctx.count("queued", queued)
    return listing_id


def _queue_if_new(ctx: RunContext, conn, outlet: OutletRow, entry, kind: str,
                  now: datetime) -> str | None:
    """Return the queue reason when the entry joins the capture queue now, else None."""
    reason = queue_reason(entry, kind, now)
    url = entry.absolute_url or entry.url  # a relative link resolved against the listing
    if reason is None or not url or not same_site(url, outlet.homepage):
        return None
    acceptable, _why = is_acceptable_url(url)
    if not acceptable:
        return None
    key = article_key(url)
    # An address queued or captured before (under any spelling or as a
    # canonical address) is the same article: it is not queued again.
    if articles.known(conn, key):
        return None
    stamp = ctx.clock.now_iso()
    article_id = articles.new_article(conn, outlet.id, url, key, stamp, ctx.run_id)
    conn.execute(
        "INSERT INTO capture_queue (url_key, url, outlet_id, article_id, reason, sort_time, "
        "queued_at, queued_run) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (key, url, outlet.id, article_id, reason,
         entry.published_utc or entry.modified_utc, stamp, ctx.run_id))
    return reason


class SourceReader:
    """Reads the sources of one outlet in one run, following sitemap indexes within limits."""

    def __init__(self, ctx: RunContext, outlet: OutletRow):
        self.ctx = ctx
        self.outlet = outlet
        self._read: set[str] = set()  # a child already read in this run is not read again

    def fetch_and_parse(self, url: str, purpose: str, headers: dict[str, str] | None = None):
        """Return (response, parsed listing or None, parse error text or None)."""
        response = self.ctx.fetcher.get(url, purpose=purpose, outlet_id=self.outlet.id, headers=headers)
        if not response.ok:
            return response, None, None
        try:
            return response, parse_listing(response.body, response.final_url), None
        except ListingParseError as exc:
            return response, None, str(exc)

    def read(self, url: str, *, depth: int = 0, parent: int | None = None,
             queue: bool = True) -> int | None:
        """Return the listing id of one source read now (None when it failed).

        The request is conditional on the last listing of the source (RFC 9110
        13.1.1 If-None-Match, 13.1.3 If-Modified-Since, with the validators of
        the response that gave its entries, as feedparser's etag and modified
        do): a 304 is recorded as a listing whose entries are that listing's.
        """
        key = article_key(url)
        if key in self._read or self.ctx.out_of_time("listing"):
            return None
        self._read.add(key)
        last = last_listing(self.ctx, self.outlet.id, url)
        headers = conditional_headers(last)
        response, parsed, _error = self.fetch_and_parse(url, "listing", headers)
        if response.result == "not_modified" and headers:
            listing_id = record_repeat(self.ctx, self.outlet, url, response.request_id, last, parent)
            if last["kind"] == "sitemapindex":
                self.follow_children(_repeated(self.ctx, last["holder"], url), listing_id, depth, queue)
            return listing_id
        if parsed is None:
            self.ctx.count("listing_failures")
            return None
        listing_id = self.record(url, response.request_id, parsed, parent=parent, queue=queue)
        if parsed.kind == "sitemapindex":
            self.follow_children(parsed, listing_id, depth, queue)
        return listing_id

    def record(self, url: str, request_id: int | None, parsed: ParsedListing, *,
               parent: int | None = None, queue: bool = True) -> int:
        """Return the id of the listing recorded for an already fetched source."""
        self._read.add(article_key(url))
        return record_listing(self.ctx, self.outlet, url, request_id, parsed,
                              parent=parent, queue=queue)

    def follow_children(self, parsed: ParsedListing, listing_id: int, depth: int,
                        queue: bool) -> None:
        """Read an index's children, newest first, within the depth and count limits."""
        if depth + 1 > settings.SITEMAP_MAX_DEPTH:
            self.ctx.warnings.append(f"{self.outlet.id}: sitemap index nested deeper than "
                                     f"{settings.SITEMAP_MAX_DEPTH} levels not followed")
            return
        children = sitemap_children_newest_first(parsed.children)
        for child in children[: settings.SITEMAP_MAX_CHILDREN]:
            url = child.absolute_url or child.url
            if url and same_site(url, self.outlet.homepage):
                self.read(url, depth=depth + 1, parent=listing_id, queue=queue)


# -- conditional requests ---------------------------------------------------------

def last_listing(ctx: RunContext, outlet_id: str, url: str):
    """Return the source's last listing (holder: the listing with its entries) and validators, or None."""
    return ctx.store.one(
        "SELECT h.id AS holder, h.kind AS kind, h.entry_count AS entry_count, r.etag AS etag, "
        "r.last_modified AS last_modified FROM listings AS l "
        "JOIN listings AS h ON h.id = COALESCE(l.entries_of, l.id) "
        "LEFT JOIN requests AS r ON r.id = h.request_id "
        "WHERE l.outlet_id = ? AND l.url = ? AND l.run_id < ? ORDER BY l.id DESC LIMIT 1",
        (outlet_id, url, ctx.run_id))


def conditional_headers(last) -> dict[str, str] | None:
    """Return If-None-Match / If-Modified-Since from a last listing's response, or None without validators."""
    if last is None:
        return None
    headers = {}
    if last["etag"]:
        headers["If-None-Match"] = last["etag"]
    if last["last_modified"]:
        headers["If-Modified-Since"] = last["last_modified"]
    return headers or None


def record_repeat(ctx: RunContext, outlet: OutletRow, url: str, request_id: int | None, last,
                  parent: int | None) -> int:
    """Return the id of the listing a 304 makes: the entries of `last`'s holder, nothing queued.

    Every entry was listed, and queued if the rule chose it, when the holder
    was read; the same entries a run later add nothing to the queue.
    """
    listing_id = ctx.store.insert("listings", {
        "run_id": ctx.run_id, "outlet_id": outlet.id, "url": url, "request_id": request_id,
        "parent_listing_id": parent, "fetched_at": ctx.clock.now_iso(), "kind": last["kind"],
        "entry_count": last["entry_count"], "entries_of": last["holder"]})
    ctx.count("listings")
    ctx.count("listings_not_modified")
    ctx.count("entries", last["entry_count"])
    return listing_id


def _repeated(ctx: RunContext, holder: int, url: str) -> ParsedListing:
    """Return a sitemap index's children as its holder listing recorded them."""
    rows = ctx.store.query(
        "SELECT position, url, modified_raw, modified_utc FROM listing_entries "
        "WHERE listing_id = ? ORDER BY position", (holder,))
    children = [Entry(r["position"], r["url"], modified_raw=r["modified_raw"], modified_utc=r["modified_utc"],
                      absolute_url=urljoin(url, r["url"]) if r["url"] else None) for r in rows]
    return ParsedListing("sitemapindex", "", children=children)
