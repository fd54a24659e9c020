"""robots.txt per host: fetched once a run, and again once the copy is older than settings.ROBOTS_CACHE_SECONDS."""

from __future__ import annotations

from collector import settings
from testing.farm import Reply

ROBOTS = Reply(200, b"User-agent: *\nDisallow: /private\n", content_type="text/plain")
PAGE = Reply(200, b"<html><body><p>hello</p></body></html>")


class Later:
    """Wraps a run's clock so that its monotonic time can be moved forward by a test."""

    def __init__(self, clock):
        self.clock, self.ahead = clock, 0.0

    def __getattr__(self, name):
        return getattr(self.clock, name)

    def monotonic(self) -> float:
        return self.clock.monotonic() + self.ahead


def test_one_robots_fetch_per_host_within_the_age(farm, make_ctx):
    host = farm.add({"/robots.txt": ROBOTS, "/a": PAGE, "/b": PAGE, "/private": PAGE})
    ctx = make_ctx()
    for path in ("/a", "/b", "/private"):
        ctx.fetcher.get(host.url(path), purpose="test")
    assert host.paths_seen() == ["/robots.txt", "/a", "/b"]


def test_a_copy_older_than_the_cache_age_is_fetched_again(farm, make_ctx):
    host = farm.add({"/robots.txt": ROBOTS, "/a": PAGE, "/b": PAGE})
    ctx = make_ctx()
    later = Later(ctx.fetcher.clock)
    ctx.fetcher.clock = ctx.fetcher.robots.fetcher.clock = later
    ctx.fetcher.get(host.url("/a"), purpose="test")
    later.ahead = settings.ROBOTS_CACHE_SECONDS - 60
    ctx.fetcher.get(host.url("/b"), purpose="test")
    assert host.paths_seen().count("/robots.txt") == 1
    later.ahead = settings.ROBOTS_CACHE_SECONDS + 1
    ctx.fetcher.get(host.url("/a"), purpose="test")
    assert host.paths_seen() == ["/robots.txt", "/a", "/b", "/robots.txt", "/a"]
