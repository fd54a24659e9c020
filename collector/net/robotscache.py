"""robots.txt per host, fetched once per run through the fetcher and kept for the run, 24 h at most.

RFC 9309 section 2.3.1: a 2xx body is parsed; a 4xx means no rules; a 5xx,
a timeout or a network error means the whole site is off limits for the run.
Redirects of robots.txt are followed for up to five hops, each paced.

One deliberate departure: a 429 (Too Many Requests) is read as "unreachable",
not as "unavailable". RFC 9309 2.3.1.3 says that after any 4xx a crawler MAY
access everything; a site that answers robots.txt with 429 is asking us to
slow down, and Google's crawlers treat 429 as a server error for the same
reason ("How Google interprets the robots.txt specification", Google Search
Central: all 4xx errors "except 429" are treated as if no robots.txt
existed). The method page says so too.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

from collector import settings
from collector.net import robots

# RFC 9309 2.3.1.2: crawlers should follow at least five redirects, and may
# treat robots.txt as unavailable (no rules) after more.
ROBOTS_MAX_HOPS = 5
# Results that mean "unavailable" (4xx-like): no restrictions apply. A 429
# ("rate_limited") is missing on purpose: it makes the site unreachable.
UNAVAILABLE = ("not_found", "gone", "http_error", "too_many_redirects", "redirect_loop")


@dataclass
class HostRobots:
    """What one host's robots.txt said this run: rules, or unreachable."""

    rules: robots.RobotsRules | None
    state: str  # parsed, unavailable, unreachable
    detail: str
    request_id: int | None
    fetched_at: float = 0.0  # monotonic time of the fetch


class RobotsBook:
    """Remembers each host's robots.txt for the run, and never longer than max_age.

    RFC 9309 section 2.4: a crawler should not use a cached copy for more
    than 24 hours. A run lasts an hour at most, so in practice each host's
    robots.txt is fetched once per run; a longer run fetches it again.
    """

    def __init__(self, fetcher, max_age: float = settings.ROBOTS_CACHE_SECONDS):
        self.fetcher = fetcher
        self.max_age = max_age
        self._hosts: dict[str, HostRobots] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def for_url(self, url: str, outlet_id: str | None = None) -> HostRobots:
        """Return the robots state of the url's host, fetching robots.txt the first time."""
        parts = urlsplit(url)
        authority = f"{parts.scheme}://{parts.netloc.lower()}"
        with self._guard:
            lock = self._locks.setdefault(authority, threading.Lock())
        with lock:
            known = self._hosts.get(authority)
            if known is None or self.fetcher.clock.monotonic() - known.fetched_at >= self.max_age:
                known = self._hosts[authority] = self._fetch(authority, outlet_id)
            return known

    def verdict(self, url: str, outlet_id: str | None = None) -> tuple[str, str | None]:
        """Return ('allowed' | 'robots_disallowed' | 'robots_unreachable', detail)."""
        host = self.for_url(url, outlet_id)
        if host.state == "unreachable":
            return "robots_unreachable", host.detail
        if host.rules is None or host.rules.allowed(url):
            return "allowed", None
        return "robots_disallowed", host.rules.matching_rule(url)

    def _fetch(self, authority: str, outlet_id: str | None) -> HostRobots:
        parts = urlsplit(authority)
        robots_url = urlunsplit((parts.scheme, parts.netloc, "/robots.txt", "", ""))
        response = self.fetcher.get(robots_url, purpose="robots", outlet_id=outlet_id,
                                    robots=False, max_hops=ROBOTS_MAX_HOPS)
        at = self.fetcher.clock.monotonic()
        if response.ok:
            return HostRobots(robots.parse_robots(response.body), "parsed",
                              f"robots.txt read ({len(response.body)} bytes)", response.request_id, at)
        if response.result in UNAVAILABLE:
            return HostRobots(robots.allow_all(), "unavailable",
                              f"robots.txt {response.result} ({response.status}): no restrictions",
                              response.request_id, at)
        return HostRobots(None, "unreachable",
                          f"robots.txt {response.result}"
                          + (f" ({response.status})" if response.status else "")
                          + ": site off limits for this run", response.request_id, at)
