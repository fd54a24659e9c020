"""Whole collection runs against outlets that misbehave the way real servers do.

Each case puts one misbehaviour (from tests/hostile.py) into an otherwise
quiet loopback outlet and runs the real pipeline: discovery, listings, queue
and capture through the one fetcher. Every case asserts that the run
finished, that the ledger holds the right rows with the right results, that
nothing but the expected articles was captured, and that memory stayed
within a stated bound while the run lasted.

Most cases are outlets of one shared "crowd": a single run over all of
them at once, then a second run an hour later, as the scheduler would make.
That is how the collector meets hostile sites in production (one bad site
among many must not disturb the others), and it keeps this file fast. Cases
that need their own fetcher limits or their own memory figure (timeouts,
huge bodies, bombs, XML attacks, the 100,000-child index) run alone.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import socket
import threading
import tracemalloc
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Callable

import pytest

from collector import settings
from collector.net.cloudflare import BLOCK_MARKERS, CHALLENGE_MARKERS
from collector.clock import Clock
from collector.collect.context import RunContext
from collector.collect.pipeline import active_outlets, run_collection
from collector.registry import parse_registry
from collector.record.store import Store
from collector.record.registry_mirror import sync_registry
from testing import hostile, replica
from tests.conftest import TEST_INTERVAL, loopback_only
from testing.farm import Farm, Host, Reply, redirect, reset_mid_body, stall, trickle

NOW = replica.FEED_SNAPSHOT_TIME
LATER = NOW + timedelta(hours=1)
GOOD = "/news/1"  # the well-behaved article every outlet lists
BAD = "/news/bad"  # the article a case makes misbehave
SECRET_PATH = "/news/secret"  # an article robots.txt disallows
MIB = hostile.MIB
# What one run needs, with room to spare: the largest legitimate body (an
# 8 MiB cap in the size cases) held about three times while it is read.
MEMORY_BOUND = 48 * MIB
# The crowd runs untraced (tracemalloc would triple its time). Its resident
# size grows by about 110 MiB: some fifty outlet threads, each with its own
# malloc arena and a page being extracted. A case that held a whole hostile
# body (200 MB, 1 GiB inflated) would go past it at once.
CROWD_MEMORY_BOUND = 192 * MIB
# Fetcher limits of every run here: short, so the whole file stays fast.
LIMITS = {"interval": TEST_INTERVAL, "backoff": (0.02, 0.04), "connect_timeout": 2.0,
          "read_timeout": 1.0, "total_timeout": 3.0, "max_bytes": 8 * MIB}


# -- memory and network guards ------------------------------------------------------

class MemoryWatch:
    """Measures the peak of Python allocations and the growth of resident memory while open.

    tracemalloc sees every Python object, bytes buffers included; the resident
    size, sampled every 10 ms, also sees what C libraries (libxml2, zlib)
    allocate outside Python's allocator.
    """

    def __init__(self, trace: bool = True):
        self.trace = trace
        self.traced_peak = 0

    def __enter__(self) -> "MemoryWatch":
        self.rss_start = self.rss_peak = _rss()
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()
        if self.trace:
            tracemalloc.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(0.01):
            self.rss_peak = max(self.rss_peak, _rss())

    def __exit__(self, *exc) -> None:
        if self.trace:
            self.traced_peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        self._stop.set()
        self._sampler.join()
        self.rss_peak = max(self.rss_peak, _rss())

    @property
    def rss_growth(self) -> int:
        return self.rss_peak - self.rss_start

    def assert_within(self, bound: int) -> None:
        assert self.traced_peak < bound, f"Python allocations peaked at {self.traced_peak / MIB:.1f} MiB"
        # tracemalloc's own bookkeeping lives in the resident size too.
        slack = 2 if self.trace else 1
        assert self.rss_growth < slack * bound, f"resident memory grew by {self.rss_growth / MIB:.1f} MiB"


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_the_suite_refuses_any_connection_outside_loopback():
    # conftest's guard runs around every test: real outlet names may be data, never a target.
    with pytest.raises(AssertionError, match="192.0.2.1"):
        with loopback_only():
            with socket.socket() as sock, pytest.raises(ConnectionRefusedError):
                sock.connect(("192.0.2.1", 80))  # TEST-NET-1: refused before a packet leaves


# -- running the pipeline -----------------------------------------------------------

def collect(store: Store, warc_dir, hosts: dict[str, Host], now, *, bound: int = MEMORY_BOUND,
            trace: bool = True, **options) -> tuple[RunContext, MemoryWatch]:
    """Return the context and memory figures of one whole run over the given outlet hosts."""
    ctx = RunContext.open(store, "test", clock=Clock(now), vantage="test-vantage", warc_dir=warc_dir,
                          allow_loopback=True, **{**LIMITS, **options})
    sync_registry(store, parse_registry(replica.registry_toml(hosts)), ctx.clock)
    with MemoryWatch(trace) as memory:
        summaries = run_collection(ctx, active_outlets(ctx))
        ctx.finish()
    # The run finished, and no outlet's misbehaviour became a bug.
    assert store.one("SELECT 1 FROM run_finishes WHERE run_id = ?", (ctx.run_id,))
    assert all("error" not in s for s in summaries), summaries
    memory.assert_within(bound)
    return ctx, memory


@pytest.fixture
def run(store, tmp_path):
    """Return a function that runs a whole collection over the given outlet hosts."""
    return lambda hosts, now=NOW, **options: collect(store, tmp_path / "warc", hosts, now, **options)[0]


def outlet(farm: Farm, *articles: str, extra: dict | None = None, **options) -> Host:
    """Return a host serving a quiet outlet that lists GOOD and the given articles.

    `extra` routes replace the outlet's own (an exact path beats "/news/*").
    """
    host = hostile.add_host(farm)
    host.routes.update(hostile.outlet_routes(host, NOW, (GOOD, *articles), **options))
    host.routes.update(extra or {})
    return host


# -- reading the record ---------------------------------------------------------------

def results(store, url: str) -> list[tuple[str, int, int]]:
    """Return (result, attempt, sent) of every request for url, in order."""
    return [(r["result"], r["attempt"], r["sent"]) for r in store.query(
        "SELECT result, attempt, sent FROM requests WHERE url = ? ORDER BY id", (url,))]


def captured(store, host: Host) -> set[str]:
    """Return the paths of host's queued articles that have a snapshot."""
    rows = store.query("SELECT q.url FROM snapshots s JOIN capture_queue q ON q.article_id = s.article_id "
                       "WHERE q.url LIKE ?", (host.base + "/%",))
    return {r["url"][len(host.base):] for r in rows}


def queue_state(store, url: str) -> str:
    return store.one("SELECT state FROM capture_queue WHERE url = ?", (url,))["state"]


def probe(store, url: str):
    return store.one("SELECT outcome, detail FROM source_probes WHERE url = ? ORDER BY id", (url,))


def snapshot(store, url: str):
    return store.one("SELECT s.* FROM snapshots s JOIN capture_queue q ON q.article_id = s.article_id "
                     "WHERE q.url = ?", (url,))


def requests_in_run(store, ctx, url: str) -> int:
    return store.one("SELECT COUNT(*) AS n FROM requests WHERE run_id = ? AND url = ?",
                     (ctx.run_id, url))["n"]


# -- the crowd: many hostile outlets in one run ------------------------------------------

CROWD: dict[str, Callable[[Farm], "Case"]] = {}


def crowd_case(name: str):
    """Register a builder (farm -> Case) of one outlet of the crowd."""
    def register(build):
        CROWD[name] = build
        return build
    return register


@dataclass
class Case:
    host: Host
    others: dict[str, Host] = field(default_factory=dict)  # hosts that are not outlets


@dataclass
class Crowd:
    store: Store
    cases: dict[str, Case]
    first: RunContext
    second: RunContext
    memory: list[MemoryWatch]

    def __getitem__(self, name: str) -> Case:
        return self.cases[name]


@pytest.fixture(scope="module")
def crowd(tmp_path_factory):
    """Return the record of two runs (now, and an hour later) over every crowd case at once."""
    tmp = tmp_path_factory.mktemp("crowd")
    farm = Farm()
    with loopback_only(), contextlib.ExitStack() as stack:
        stack.callback(hostile.close_all, farm)
        cases = {name: build(farm) for name, build in CROWD.items()}
        hosts = {_outlet_id(name): case.host for name, case in cases.items()}
        store = Store(tmp / "record.db")
        first, memory1 = collect(store, tmp / "warc", hosts, NOW, trace=False, bound=CROWD_MEMORY_BOUND)
        second, memory2 = collect(store, tmp / "warc", hosts, LATER, trace=False, bound=CROWD_MEMORY_BOUND)
        yield Crowd(store, cases, first, second, [memory1, memory2])
        store.conn.close()


def _outlet_id(name: str) -> str:
    """Return a registry id made of a case name ("robots 2 MB" -> "robots-2-mb")."""
    return "".join(c if c.isalnum() else "-" for c in name.lower())


def assert_crowd_bounded(crowd: Crowd) -> None:
    for memory in crowd.memory:
        memory.assert_within(CROWD_MEMORY_BOUND)


# -- server errors and broken bodies (crowd) ---------------------------------------------

SERVER_ERRORS = {"500 then ok": (500,), "502 then ok": (502,), "503 then ok": (503,),
                 "500, 502 then ok": (500, 502)}
for _name, _statuses in SERVER_ERRORS.items():
    crowd_case(_name)(lambda farm, statuses=_statuses: Case(outlet(farm, BAD, extra={
        BAD: hostile.failing_then(statuses, Reply(200, replica.article_page()))})))


@pytest.mark.parametrize("name", SERVER_ERRORS)
def test_server_errors_then_success_are_retried_and_captured(crowd, name):
    host, statuses = crowd[name].host, SERVER_ERRORS[name]
    expected = [("server_error", i + 1, 1) for i in range(len(statuses))] + [("ok", len(statuses) + 1, 1)]
    assert results(crowd.store, host.url(BAD)) == expected
    assert captured(crowd.store, host) == {GOOD, BAD}
    assert_crowd_bounded(crowd)


BROKEN = {
    # name: (route, result of every attempt, attempts)
    "503 forever": (Reply(503, b"busy", content_type="text/plain"), "server_error", 3),
    "reset mid-body": (reset_mid_body(b"<html><body>partial", 100_000), "connection_error", 3),
    "truncated gzip": (hostile.truncated_gzip(replica.article_page()), "content_error", 1),
}
for _name, (_route, _result, _attempts) in BROKEN.items():
    crowd_case(_name)(lambda farm, route=_route: Case(outlet(farm, BAD, extra={BAD: route})))


@pytest.mark.parametrize("name", BROKEN)
def test_broken_responses_are_recorded_and_not_captured(crowd, name):
    host = crowd[name].host
    _route, result, attempts = BROKEN[name]
    # A failure that passes (5xx, a dropped connection) is asked its attempts again by the
    # second run, an hour later, and stays queued; one that will not pass is asked once.
    again = result in settings.CAPTURE_RETRY_RESULTS
    asked = [(result, i + 1, 1) for i in range(attempts)]
    assert results(crowd.store, host.url(BAD)) == asked * (2 if again else 1)
    assert queue_state(crowd.store, host.url(BAD)) == ("pending" if again else "failed")
    assert captured(crowd.store, host) == {GOOD}
    assert_crowd_bounded(crowd)


@pytest.mark.parametrize("status, result", [(404, "not_found"), (410, "gone")])
def test_404_and_410_are_asked_once_and_never_again(crowd, status, result):
    host = crowd[f"{status}"].host
    assert results(crowd.store, host.url(BAD)) == [(result, 1, 1)]
    assert host.paths_seen().count(BAD) == 1  # in two runs
    assert queue_state(crowd.store, host.url(BAD)) == "failed"
    assert captured(crowd.store, host) == {GOOD}
    assert_crowd_bounded(crowd)


for _status in (404, 410):
    crowd_case(f"{_status}")(lambda farm, status=_status: Case(outlet(farm, BAD, extra={
        BAD: Reply(status, b"no such article", content_type="text/plain")})))


# -- sitemap indexes (crowd) ------------------------------------------------------------

INDEX = "/sitemap_index.xml"
SELF_SPELLINGS = {"index names itself": "", "index names itself with utm": "?utm_source=loop"}


def _self_index(farm, spelling):
    host = outlet(farm, listed_first=[INDEX])
    children = [host.url(INDEX + spelling), host.url(hostile.SITEMAP_PATH)]
    host.routes[INDEX] = Reply(200, hostile.sitemap_index(children), content_type=hostile.XML_TYPE)
    return Case(host)


for _name, _spelling in SELF_SPELLINGS.items():
    crowd_case(_name)(lambda farm, spelling=_spelling: _self_index(farm, spelling))


@pytest.mark.parametrize("name", SELF_SPELLINGS)
def test_a_sitemap_index_that_names_itself_is_read_once_per_run(crowd, name):
    host, spelling = crowd[name].host, SELF_SPELLINGS[name]
    store = crowd.store
    # It validated through its other child, so the second run reads it as a source.
    assert store.one("SELECT kind FROM sources WHERE url = ?", (host.url(INDEX),))["kind"] == "sitemapindex"
    for ctx in (crowd.first, crowd.second):
        assert requests_in_run(store, ctx, host.url(INDEX)) == 1
        assert requests_in_run(store, ctx, host.url(hostile.SITEMAP_PATH)) == 1
    assert store.one("SELECT COUNT(*) AS n FROM listings WHERE url = ?", (host.url(INDEX),))["n"] == 2
    if spelling:  # another spelling of the same address is the same address
        assert host.url(INDEX + spelling) not in {s.path for s in host.seen}
    assert captured(store, host) == {GOOD}
    assert_crowd_bounded(crowd)


@crowd_case("index nested 20 deep")
def _deep_index(farm):
    host = outlet(farm, listed_first=["/idx/0.xml"])
    leaf = replica.news_sitemap([(host.url("/news/deep"), NOW)])
    host.routes.update(hostile.nested_indexes(host, 20, leaf))
    return Case(host)


def test_a_sitemap_index_nested_20_levels_is_followed_only_to_the_depth_limit(crowd):
    host = crowd["index nested 20 deep"].host
    levels = [p for p in host.paths_seen() if p.startswith("/idx/")]
    assert levels[0] == "/idx/0.xml"
    assert len(set(levels)) <= settings.SITEMAP_MAX_DEPTH + 1
    assert "/news/deep" not in host.paths_seen()
    assert captured(crowd.store, host) == {GOOD}
    assert_crowd_bounded(crowd)


# -- redirects (crowd) ------------------------------------------------------------------

@crowd_case("redirect loop")
def _redirect_loop(farm):
    return Case(outlet(farm, BAD, extra={BAD: redirect("/loop/b"), "/loop/b": redirect(BAD)}))


def test_a_redirect_loop_is_refused_where_it_closes(crowd):
    host = crowd["redirect loop"].host
    assert results(crowd.store, host.url(BAD)) == [("redirect", 1, 1), ("redirect_loop", 1, 0)]
    assert results(crowd.store, host.url("/loop/b")) == [("redirect", 1, 1)]
    assert captured(crowd.store, host) == {GOOD}
    assert_crowd_bounded(crowd)


@crowd_case("30-hop chain")
def _long_chain(farm):
    return Case(outlet(farm, BAD, extra=hostile.redirect_chain(BAD, 30, Reply(200, replica.article_page()))))


def test_a_30_hop_redirect_chain_stops_at_the_hop_limit(crowd):
    host = crowd["30-hop chain"].host
    hops = settings.MAX_REDIRECT_HOPS
    sent = [p for p in host.paths_seen() if p == BAD or p.startswith("/hop/")]
    assert sent == [BAD] + [f"/hop/{i}" for i in range(1, hops + 1)]
    assert results(crowd.store, host.url(f"/hop/{hops + 1}")) == [("too_many_redirects", 1, 0)]
    assert captured(crowd.store, host) == {GOOD}
    assert_crowd_bounded(crowd)


@crowd_case("redirect to another host")
def _other_host(farm):
    target = hostile.add_host(farm, {
        "/robots.txt": hostile.robots_reply(b"User-agent: *\nDisallow: /private\n"),
        "/story": Reply(200, replica.article_page())})
    host = outlet(farm, BAD, "/news/bad2", extra={
        BAD: redirect(target.url("/story")), "/news/bad2": redirect(target.url("/private/x"))})
    return Case(host, {"target": target})


def test_a_redirect_to_another_host_is_paced_and_robots_checked_there(crowd):
    case = crowd["redirect to another host"]
    host, target = case.host, case.others["target"]
    # robots.txt of the new host first, then the page; the disallowed hop never sent.
    assert target.paths_seen() == ["/robots.txt", "/story"]
    assert min(target.gaps()) >= TEST_INTERVAL - 0.015
    refused = crowd.store.one("SELECT * FROM requests WHERE url = ?", (target.url("/private/x"),))
    assert (refused["result"], refused["sent"]) == ("robots_disallowed", 0)
    assert refused["redirected_from"] is not None
    assert snapshot(crowd.store, host.url(BAD))["final_url"] == target.url("/story")
    assert captured(crowd.store, host) == {GOOD, BAD}
    assert_crowd_bounded(crowd)


@crowd_case("forbidden redirect targets")
def _forbidden(farm):
    routes = {f"/news/to-{name}": redirect(location)
              for name, (location, _result) in hostile.FORBIDDEN_TARGETS.items()}
    return Case(outlet(farm, *routes, extra=routes))


@pytest.mark.parametrize("name", hostile.FORBIDDEN_TARGETS)
def test_redirects_to_forbidden_targets_are_refused_without_sending(crowd, name):
    host = crowd["forbidden redirect targets"].host
    location, result = hostile.FORBIDDEN_TARGETS[name]
    assert results(crowd.store, host.url(f"/news/to-{name}")) == [("redirect", 1, 1)]
    assert results(crowd.store, location) == [(result, 1, 0)]
    assert captured(crowd.store, host) == {GOOD}
    assert_crowd_bounded(crowd)


# -- spider traps (crowd) --------------------------------------------------------------

TRAPS = (hostile.trap_path(), hostile.long_path(10_000))


@crowd_case("trap addresses in listings")
def _trap_listings(farm):
    return Case(outlet(farm, *TRAPS))


def test_trap_addresses_in_listings_are_stored_but_never_queued_or_requested(crowd):
    host, store = crowd["trap addresses in listings"].host, crowd.store
    for path in TRAPS:
        url = host.url(path)
        # Kept whole in every listing that named it (feed and sitemap, two runs)...
        assert store.one("SELECT COUNT(*) AS n FROM listing_entries WHERE url = ?", (url,))["n"] == 4
        # ...and never queued, never requested.
        assert store.one("SELECT 1 FROM capture_queue WHERE url = ?", (url,)) is None
        assert results(store, url) == []
    assert len(host.url(TRAPS[1])) > 10_000
    assert captured(store, host) == {GOOD}
    assert_crowd_bounded(crowd)


@crowd_case("growing redirects")
def _growing(farm):
    return Case(outlet(farm, "/trap/start", extra={"/trap/*": hostile.growing_redirect}))


def test_redirects_that_grow_the_address_stop_at_the_hop_limit(crowd):
    host = crowd["growing redirects"].host
    assert len([p for p in host.paths_seen() if p.startswith("/trap/")]) == settings.MAX_REDIRECT_HOPS + 1
    last = crowd.store.query("SELECT result, sent FROM requests WHERE url LIKE ? ORDER BY id DESC LIMIT 1",
                             (host.url("/trap/") + "%",))[0]
    assert (last["result"], last["sent"]) == ("too_many_redirects", 0)
    assert captured(crowd.store, host) == {GOOD}
    assert_crowd_bounded(crowd)


# -- encodings (crowd) ------------------------------------------------------------------

ENCODINGS = {"windows-1252 declared utf-8": hostile.cp1252_declared_utf8(),
             "invalid utf-8": hostile.invalid_utf8(), "nul bytes": hostile.nul_bytes(),
             "pdf served as html": hostile.pdf_as_html()}
for _name, _reply in ENCODINGS.items():
    crowd_case(_name)(lambda farm, reply=_reply: Case(outlet(farm, BAD, extra={BAD: reply})))


@pytest.mark.parametrize("name", ENCODINGS)
def test_mislabelled_and_broken_encodings(crowd, name):
    host, store = crowd[name].host, crowd.store
    assert results(store, host.url(BAD)) == [("ok", 1, 1)]
    if name == "pdf served as html":  # a PDF is never a snapshot, whatever its label
        assert queue_state(store, host.url(BAD)) == "failed"
        assert captured(store, host) == {GOOD}
        return
    page = snapshot(store, host.url(BAD))
    # The snapshot keeps the bytes as received, and says how they were read.
    assert page["html_sha256"] == hashlib.sha256(ENCODINGS[name].body).hexdigest()
    expected = {"windows-1252 declared utf-8": ("Café “quoted”", "detected"),
                "invalid utf-8": ("খবর শিরোনাম", "utf-8-fallback"),
                "nul bytes": ("Headline", "http-header")}[name]
    assert (page["headline"], page["encoding_source"]) == expected
    assert "\x00" not in page["text"]
    if name == "windows-1252 declared utf-8":
        assert page["encoding"] != "utf-8" and "\ufffd" not in page["text"]
    if name == "invalid utf-8":  # damaged bytes marked, the rest intact
        assert "\ufffd" in page["text"] and "বাংলাদেশের সংবাদ" in page["text"]
    assert captured(store, host) == {GOOD, BAD}
    assert_crowd_bounded(crowd)


# -- Cloudflare (crowd) --------------------------------------------------------------------

def _cloudflare_cases() -> dict[str, tuple[Reply, str, int]]:
    """Return article name -> (reply, expected result, attempts)."""
    cases = {}
    statuses = (403, 503, 429)
    for i, marker in enumerate(CHALLENGE_MARKERS):
        reply = hostile.cloudflare_reply(statuses[i % 3], hostile.challenge_page(marker))
        cases[f"challenge-marker-{i}"] = (reply, "challenge", 1)
    for i, marker in enumerate(BLOCK_MARKERS):
        cases[f"block-marker-{i}"] = (hostile.cloudflare_reply(403, hostile.challenge_page(marker)), "blocked", 1)
    real = hostile.cloudflare_file("challenge-khaborerkagoj.html")
    cases["real-challenge"] = (hostile.cloudflare_reply(403, real, **{"cf-mitigated": "challenge"}), "challenge", 1)
    for name in ("normal-samakal-opinion", "normal-dhakapost-opinion"):
        cases[name] = (hostile.cloudflare_reply(200, hostile.cloudflare_file(f"{name}.html")), "ok", 1)
    cases["error-502"] = (hostile.cloudflare_reply(502, hostile.cloudflare_file("error-502-dhakapost.html")),
                          "server_error", 3)
    cases["error-405"] = (hostile.cloudflare_reply(405, hostile.cloudflare_file("error-405-samakal.html")),
                          "http_error", 1)
    return cases


CLOUDFLARE = _cloudflare_cases()


@crowd_case("cloudflare")
def _cloudflare(farm):
    routes = {f"/news/cf-{name}": reply for name, (reply, _result, _attempts) in CLOUDFLARE.items()}
    return Case(outlet(farm, *routes, extra=routes))


@pytest.mark.parametrize("name", CLOUDFLARE)
def test_cloudflare_challenges_are_recorded_and_normal_cloudflare_pages_captured(crowd, name):
    host = crowd["cloudflare"].host
    _reply, result, attempts = CLOUDFLARE[name]
    path = f"/news/cf-{name}"
    runs = 2 if result in settings.CAPTURE_RETRY_RESULTS else 1  # a passing failure: asked again an hour later
    assert results(crowd.store, host.url(path)) == [(result, i + 1, 1) for i in range(attempts)] * runs
    assert (path in captured(crowd.store, host)) == (result == "ok")
    normal = {f"/news/cf-{n}" for n, (_r, res, _a) in CLOUDFLARE.items() if res == "ok"}
    assert captured(crowd.store, host) == {GOOD} | normal
    assert_crowd_bounded(crowd)


# -- robots.txt (crowd) --------------------------------------------------------------------

def _robots_outlet(farm, robots_for, extra_for, articles) -> Case:
    host = outlet(farm, *articles)
    host.routes["/robots.txt"] = robots_for(host)
    host.routes.update(extra_for(host) if extra_for else {})
    return Case(host)


def _robots_chain(hops: int):
    """Return a builder of routes: robots.txt reached after `hops` redirects."""
    def routes(host):
        real = hostile.robots_reply(hostile.robots_txt(host, [hostile.FEED_PATH, hostile.SITEMAP_PATH], SECRET_PATH))
        return hostile.redirect_chain("/robots.txt", hops, real, prefix="/r/")
    return routes


ROBOTS = {
    # name: (host -> robots.txt route, host -> more routes, the secret article's expected result)
    "robots 503": (lambda h: Reply(503, b"down", content_type="text/plain"), None, "robots_unreachable"),
    "robots timeout": (lambda h: stall(2.0), None, "robots_unreachable"),
    "robots 404": (lambda h: Reply(404, b"none", content_type="text/plain"), None, "ok"),
    "robots 401": (lambda h: Reply(401, b"who?", content_type="text/plain"), None, "ok"),
    "robots 403": (lambda h: Reply(403, b"no", content_type="text/plain"), None, "ok"),
    "robots redirect chain": (lambda h: redirect("/r/1"), _robots_chain(4), "robots_disallowed"),
    "robots redirect chain past five hops": (lambda h: redirect("/r/1"), _robots_chain(7), "ok"),
    "robots 2 MB": (lambda h: hostile.robots_huge(h, SECRET_PATH, "/news/late"), None, "robots_disallowed"),
    "robots byte-order mark": (lambda h: hostile.robots_with_bom(h, SECRET_PATH), None, "robots_disallowed"),
    "robots Sitemap inside a group": (lambda h: hostile.robots_sitemap_in_group(h, SECRET_PATH), None,
                                      "robots_disallowed"),
}
for _name, (_robots, _extra, _result) in ROBOTS.items():
    _articles = (SECRET_PATH, "/news/late") if _name == "robots 2 MB" else (SECRET_PATH,)
    crowd_case(_name)(lambda farm, robots=_robots, extra=_extra, articles=_articles:
                      _robots_outlet(farm, robots, extra, articles))


@pytest.mark.parametrize("name", ROBOTS)
def test_robots_txt_answers(crowd, name):
    host, store = crowd[name].host, crowd.store
    _route, _extra, secret = ROBOTS[name]
    robots_rows = store.query("SELECT result, run_id FROM requests WHERE purpose = 'robots' AND url = ?",
                              (host.url("/robots.txt"),))
    if secret == "robots_unreachable":
        # Three attempts a run, then the whole site is off limits: nothing else is sent.
        assert [r["result"] for r in robots_rows] == [("server_error" if "503" in name else "timeout")] * 6
        assert set(host.paths_seen()) == {"/robots.txt"}
        assert probe(store, host.url("/"))["outcome"] == "fetch_failed"
        assert captured(store, host) == set()
        return
    # Read once per run, whatever it took.
    assert [r["run_id"] for r in robots_rows] == [crowd.first.run_id, crowd.second.run_id]
    secret_rows = results(store, host.url(SECRET_PATH))
    assert secret_rows == [(secret, 1, 0 if secret == "robots_disallowed" else 1)]
    expected = {GOOD} | ({SECRET_PATH} if secret == "ok" else set())
    if name == "robots 2 MB":  # a rule past the 500 KiB parsed (RFC 9309 2.5) does not count
        expected.add("/news/late")
    assert captured(store, host) == expected
    if name == "robots Sitemap inside a group":  # both Sitemap lines found, the group not cut
        assert {r["url"] for r in store.query(
            "SELECT url FROM sources WHERE found_via = 'robots' AND url LIKE ?", (host.base + "/%",))} == {
            host.url(hostile.FEED_PATH), host.url(hostile.SITEMAP_PATH)}
    assert_crowd_bounded(crowd)


# -- cases that run alone: timeouts ---------------------------------------------------------

TIMEOUTS = {
    # name: (route, fetcher limits)
    "read timeout": (stall(2.0), {"read_timeout": 0.3}),
    "one byte a second": (trickle(100, every=1.0), {"read_timeout": 1.5, "total_timeout": 0.5}),
}


@pytest.mark.parametrize("name", TIMEOUTS)
def test_slow_servers_time_out_three_times_and_are_not_captured(farm, run, store, name):
    route, limits = TIMEOUTS[name]
    host = outlet(farm, BAD, extra={BAD: route})
    run({"hostile": host}, **limits)
    assert results(store, host.url(BAD)) == [("timeout", 1, 1), ("timeout", 2, 1), ("timeout", 3, 1)]
    assert queue_state(store, host.url(BAD)) == "pending"  # tried again by the next run
    assert captured(store, host) == {GOOD}
    # Each attempt was cut off by its deadlines, not left to trickle on. The
    # whole-response deadline is checked between reads, so one read may pass it.
    limit = limits.get("total_timeout", LIMITS["total_timeout"]) + limits["read_timeout"]
    longest = store.one("SELECT MAX(elapsed_ms) AS ms FROM requests WHERE url = ?", (host.url(BAD),))["ms"]
    assert longest < limit * 1000


# -- cases that run alone: huge bodies and gzip bombs ---------------------------------------

@pytest.mark.parametrize("where", ["article", "listing"])
def test_a_200_mb_response_is_cut_off_at_the_cap(farm, run, store, where):
    path = BAD if where == "article" else "/huge.xml"
    firehose = hostile.Firehose(200 * MIB, content_type="text/html" if where == "article" else hostile.XML_TYPE)
    if where == "article":
        host = outlet(farm, BAD, extra={BAD: firehose})
    else:
        host = outlet(farm, listed_first=[path], extra={path: firehose})
    run({"hostile": host})
    assert results(store, host.url(path)) == [("too_large", 1, 1)]
    # The client hung up after the 8 MiB cap: the server was not read to the end.
    assert firehose.done.wait(10)
    assert firehose.closed_by_client and firehose.sent < 64 * MIB
    if where == "listing":
        assert probe(store, host.url(path))["outcome"] == "fetch_failed"
    assert captured(store, host) == {GOOD}


# name: (path, reply factory, result of the request, probe outcome or None for an article)
BOMBS = {
    "article as Content-Encoding": (
        BAD, lambda: hostile.bomb_reply(hostile.gzip_bomb(), content_encoding=True), "too_large", None),
    "feed as Content-Encoding": (
        "/bomb/feed", lambda: hostile.bomb_reply(hostile.gzip_bomb(), content_encoding=True,
                                                 content_type=hostile.RSS_TYPE), "too_large", "fetch_failed"),
    "feed gzipped inside Content-Encoding": (
        "/bomb/feed2", lambda: hostile.bomb_reply(hostile.double_gzip_bomb(), content_encoding=True,
                                                  content_type=hostile.RSS_TYPE), "ok", "not_parseable"),
    "sitemap .xml.gz": (
        "/bomb/sitemap.xml.gz", lambda: hostile.bomb_reply(hostile.gzip_bomb(), content_encoding=False,
                                                           content_type="application/x-gzip"), "ok", "not_parseable"),
    "sitemap .xml.gz inside Content-Encoding": (
        "/bomb/sitemap2.xml.gz", lambda: hostile.bomb_reply(hostile.double_gzip_bomb(), content_encoding=True,
                                                            content_type="application/x-gzip"), "ok", "not_parseable"),
}


@pytest.mark.parametrize("name", BOMBS)
def test_gzip_bombs_stop_at_the_decompressed_limit(farm, run, store, name):
    path, reply, result, outcome = BOMBS[name]
    bomb = reply()
    assert len(bomb.body) < 2 * MIB  # a small download that inflates to 1 GiB
    if outcome is None:
        host = outlet(farm, path, extra={path: bomb})
    else:
        host = outlet(farm, listed_first=[path], extra={path: bomb})
    # A listing may be inflated up to the sitemap protocol's 50 MB
    # (settings.SITEMAP_MAX_BYTES) before it is refused, never to 1 GiB; the
    # inflater holds its last piece beside what it has, so twice that at most.
    parse_bound = 2 * settings.SITEMAP_MAX_BYTES + 16 * MIB
    run({"hostile": host}, bound=parse_bound if outcome == "not_parseable" else MEMORY_BOUND)
    assert results(store, host.url(path)) == [(result, 1, 1)]
    if outcome:
        found = probe(store, host.url(path))
        assert found["outcome"] == outcome
        assert outcome == "fetch_failed" or "too large" in found["detail"]
        assert store.one("SELECT 1 FROM listings WHERE url = ?", (host.url(path),)) is None
    assert captured(store, host) == {GOOD}


# -- cases that run alone: XML attacks -----------------------------------------------------

SECRET = "TAKEDOWNWATCH-SECRET-7f3a9c"
SPY_MARKER = "SPY-DTD-WAS-LOADED"


def record_text(store, ctx) -> str:
    """Return the whole database as SQL text plus every WARC record's bytes, inflated."""
    ctx.warc.close()
    warcs = [gzip.decompress(p.read_bytes()).decode("utf-8", "replace") for p in ctx.warc.root.rglob("*.warc.gz")]
    return "\n".join(store.conn.iterdump()) + "\n".join(warcs)


@pytest.mark.parametrize("kind", ["feed", "sitemap"])
def test_xml_attacks_are_never_expanded_or_resolved(farm, run, store, tmp_path, kind):
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    spy = hostile.add_host(farm, {"/*": Reply(200, f'<!ENTITY xxe "{SPY_MARKER}">'.encode(),
                                              content_type="application/xml-dtd")})
    host = hostile.add_host(farm)
    attacks = hostile.xml_attacks(kind, str(secret), spy, host.url(GOOD))
    paths = {name: f"/attack/{name}.xml" for name in attacks}
    host.routes.update(hostile.outlet_routes(host, NOW, (GOOD,), listed_first=paths.values()))
    content_type = hostile.RSS_TYPE if kind == "feed" else hostile.XML_TYPE
    host.routes.update({paths[name]: Reply(200, body, content_type=content_type)
                        for name, (body, _refused) in attacks.items()})
    ctx = run({"hostile": host})

    for name, (_body, refused) in attacks.items():
        url = host.url(paths[name])
        assert results(store, url) == [("ok", 1, 1)], name
        found = probe(store, url)
        listed = store.one("SELECT 1 FROM listings WHERE url = ?", (url,))
        if refused:  # refused before any parser saw it
            assert found["outcome"] == "not_parseable" and found["detail"].startswith("refused"), name
            assert listed is None, name
        else:  # read, without the DTD or what it names
            assert found["outcome"] == "valid" and listed is not None, name
    assert spy.seen == []
    text = record_text(store, ctx)
    for leaked in (SECRET, SPY_MARKER, "root:x:0:0", "lollollollol"):
        assert leaked not in text
    assert captured(store, host) == {GOOD}


# -- cases that run alone: 100,000 children ------------------------------------------------

def test_a_sitemap_index_of_100000_children_is_stored_whole_and_read_within_limits(farm, run, store):
    host = outlet(farm, listed_first=[INDEX])
    host.routes[INDEX] = Reply(200, hostile.wide_index(host, 100_000), content_type=hostile.XML_TYPE)
    host.routes["/sm/*"] = Reply(200, replica.news_sitemap([(host.url(GOOD), NOW)]), content_type=hostile.XML_TYPE)
    # tracemalloc would make this 100,000-entry run ten times slower; the
    # resident size alone bounds it.
    run({"hostile": host}, bound=160 * MIB, trace=False)
    index = store.one("SELECT id, entry_count FROM listings WHERE url = ?", (host.url(INDEX),))
    stored = store.one("SELECT COUNT(*) AS n FROM listing_entries WHERE listing_id = ?", (index["id"],))["n"]
    assert index["entry_count"] == stored == 100_000
    children = [p for p in host.paths_seen() if p.startswith("/sm/")]
    assert 1 <= len(children) <= settings.SITEMAP_MAX_CHILDREN
    assert len(children) == len(set(children))
    assert captured(store, host) == {GOOD}
