"""Finds an outlet's feeds and news sitemaps, recording every address tried.

Order, as the method says: the outlet's own declarations first (robots.txt
`Sitemap:` lines, then the homepage's feed links), then the operator's
candidates from the registry, then a short list of common addresses. A
candidate becomes a source only when it was fetched, parsed and shown to list
recent articles of the outlet's own site. Discovery stops early once a valid
feed and a valid news sitemap are in hand.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from urllib.parse import urljoin

from collector import settings
from collector.collect.context import RunContext
from collector.parse.feedlinks import COMMON_PATHS, find_feed_links
from collector.parse.listings import sitemap_children_newest_first, validate_listing
from collector.collect.sources import OutletRow, SourceReader
from collector.record.articles import article_key
from collector.urls import same_site
from collector.registry import expand_source_template

FEED_KINDS = ("rss", "atom", "rdf", "json")
SITEMAP_KINDS = ("news_sitemap", "urlset", "sitemapindex")


@dataclass
class Discovery:
    """What one discovery round tried and what validated."""

    outlet_id: str
    tried: list[tuple[str, str, str, str | None]] = field(default_factory=list)
    valid: list[tuple[str, str]] = field(default_factory=list)  # (url, kind)

    def has_feed(self) -> bool:
        return any(kind in FEED_KINDS for _, kind in self.valid)

    def has_news_sitemap(self) -> bool:
        return any(kind in ("news_sitemap", "sitemapindex") for _, kind in self.valid)

    def complete(self) -> bool:
        return self.has_feed() and self.has_news_sitemap()


class Discoverer:
    """Runs one discovery round for one outlet."""

    def __init__(self, ctx: RunContext, outlet: OutletRow, reader: SourceReader | None = None):
        self.ctx = ctx
        self.outlet = outlet
        self.reader = reader or SourceReader(ctx, outlet)
        self.result = Discovery(outlet.id)
        self._tried: set[str] = set()

    def run(self) -> Discovery:
        """Return the record of this round, after trying candidates in the method's order (until the deadline)."""
        if self.ctx.out_of_time("discovery"):
            return self.result
        host = self.ctx.fetcher.robots_for(self.outlet.homepage, self.outlet.id)
        if host.state == "unreachable":
            # The whole site is off limits: one probe says so, nothing is sent.
            self.probe(self.outlet.homepage, "homepage")
            return self.result
        sitemaps = list(host.rules.sitemaps) if host.rules is not None else []
        self.try_all((url, "robots") for url in sitemaps)
        if not self.result.complete():
            self.try_all(self.homepage_candidates())
        if not self.result.complete():
            now = self.ctx.clock.now()
            self.try_all((expand_source_template(url, now), "registry") for url in self.outlet.sources)
        if not self.result.complete():
            self.try_all((urljoin(self.outlet.homepage, path), "common_path") for path in COMMON_PATHS)
        return self.result

    def try_all(self, candidates) -> None:
        for url, found_via in candidates:
            if self.result.complete() or self.ctx.out_of_time("discovery"):
                return
            self.probe(url, found_via)

    def homepage_candidates(self) -> list[tuple[str, str]]:
        """Return the feed links the homepage declares (the homepage fetch is recorded)."""
        response = self.ctx.fetcher.get(self.outlet.homepage, purpose="discovery",
                                        outlet_id=self.outlet.id)
        if not response.ok:
            self._record_probe(self.outlet.homepage, "homepage", response.request_id,
                               "fetch_failed", response.result, None)
            return []
        return find_feed_links(response.body, response.final_url)

    def probe(self, url: str, found_via: str, depth: int = 0) -> str:
        """Return the outcome of trying one candidate address, recorded as a probe."""
        key = article_key(url)
        if key in self._tried:
            return "duplicate"
        self._tried.add(key)
        if found_via == "homepage":
            response = self.ctx.fetcher.get(url, purpose="discovery", outlet_id=self.outlet.id)
            self._record_probe(url, found_via, response.request_id, "fetch_failed",
                               response.result, None)
            return "fetch_failed"
        response, parsed, error = self.reader.fetch_and_parse(url, "discovery")
        if parsed is None:
            outcome = "fetch_failed" if not response.ok else "not_parseable"
            detail = response.result if not response.ok else error
            self._record_probe(url, found_via, response.request_id, outcome, detail, None)
            return outcome
        outcome, detail = validate_listing(parsed, self.outlet.homepage, self.ctx.clock.now())
        probe_id = self._record_probe(url, found_via, response.request_id, outcome, detail, parsed.kind)
        # Every listing fetched is stored whole; only a valid source feeds the queue.
        listing_id = self.reader.record(url, response.request_id, parsed, queue=outcome == "valid")
        if outcome == "index":
            outcome = self._probe_index(parsed, listing_id, depth)
            if outcome == "valid":
                self.reader.follow_children(parsed, listing_id, depth, queue=True)
        if outcome == "valid":
            self._add_source(url, parsed.kind, found_via, probe_id)
        return outcome

    def _probe_index(self, parsed, listing_id: int, depth: int) -> str:
        """Return 'valid' when a child of the sitemap index validates (newest first)."""
        if depth + 1 > settings.SITEMAP_MAX_DEPTH:
            return "index"
        children = sitemap_children_newest_first(parsed.children)[:settings.SITEMAP_MAX_CHILDREN]
        for child in children:
            if not same_site(child.url, self.outlet.homepage) or article_key(child.url) in self._tried:
                continue
            self._tried.add(article_key(child.url))
            response, child_parsed, error = self.reader.fetch_and_parse(child.url, "discovery")
            if child_parsed is None:
                self._record_probe(child.url, "sitemap_index_child", response.request_id,
                                   "fetch_failed" if not response.ok else "not_parseable",
                                   response.result if not response.ok else error, None)
                continue
            outcome, detail = validate_listing(child_parsed, self.outlet.homepage, self.ctx.clock.now())
            self._record_probe(child.url, "sitemap_index_child", response.request_id, outcome,
                               detail, child_parsed.kind)
            child_listing = self.reader.record(child.url, response.request_id, child_parsed,
                                               parent=listing_id, queue=outcome == "valid")
            if outcome == "index":  # an index of indexes: look one level further down
                outcome = self._probe_index(child_parsed, child_listing, depth + 1)
            if outcome == "valid":
                return "valid"
        return "index"

    def _record_probe(self, url, found_via, request_id, outcome, detail, kind) -> int:
        self.result.tried.append((url, found_via, outcome, detail))
        self.ctx.count("probes")
        return self.ctx.store.insert("source_probes", {
            "run_id": self.ctx.run_id, "outlet_id": self.outlet.id, "url": url,
            "found_via": found_via, "request_id": request_id, "probed_at": self.ctx.clock.now_iso(),
            "outcome": outcome, "detail": detail, "kind": kind,
        })

    def _add_source(self, url: str, kind: str, found_via: str, probe_id: int) -> None:
        self.result.valid.append((url, kind))
        self.ctx.count("sources_validated")
        self.ctx.store.insert("sources", {
            "outlet_id": self.outlet.id, "url": url, "kind": kind, "found_via": found_via,
            "probe_id": probe_id, "run_id": self.ctx.run_id, "validated_at": self.ctx.clock.now_iso(),
        })


def current_sources(ctx: RunContext, outlet_id: str) -> list[tuple[str, str]]:
    """Return (url, kind) of the sources of the latest round that validated any, if recent.

    Only a round of this run or of a run that finished counts: a run killed
    mid-discovery may have stored its feed but not yet its news sitemap, and
    taking that half round for a whole one would skip the sitemap for a week.
    """
    since = ctx.clock.now() - timedelta(days=settings.SOURCE_REVALIDATE_DAYS)
    from collector.clock import iso

    rows = ctx.store.query(
        "SELECT url, kind FROM sources WHERE outlet_id = ? AND run_id = "
        "(SELECT MAX(run_id) FROM sources WHERE outlet_id = ? AND "
        "(run_id = ? OR run_id IN (SELECT run_id FROM run_finishes))) AND validated_at >= ? ORDER BY id",
        (outlet_id, outlet_id, ctx.run_id, iso(since)))
    return [(row["url"], row["kind"]) for row in rows]
