"""The polite fetcher, against loopback hosts that the tests start themselves."""

from __future__ import annotations

import gzip
import ipaddress
import subprocess
import sys
from pathlib import Path

import pytest

from collector import settings
from collector.net.fetcher import ConfigError, Fetcher
from tests.conftest import DATA, TEST_INTERVAL, loopback_only
from testing.farm import Reply, redirect, reset_mid_body, sequence, stall, stream_bytes, trickle

ROBOTS_OPEN = Reply(200, b"User-agent: *\nDisallow: /private\n", content_type="text/plain")
PAGE = Reply(200, b"<html><head><title>t</title></head><body><p>hello</p></body></html>")


def rows(ctx, where="1=1", params=()):
    return [dict(r) for r in ctx.store.query(
        f"SELECT * FROM requests WHERE run_id = ? AND {where} ORDER BY id", (ctx.run_id, *params))]


# A server thread in this busy test process can stamp a request late by a
# scheduling slice, which shortens the next gap it reports. Individual gaps
# get that much slack; the span over all requests (where such delays cancel)
# and the pacer's own start marks get none. `make bench` measures strictly,
# with servers in separate processes.
SERVER_JITTER = 0.015


def assert_paced(host, interval=TEST_INTERVAL):
    gaps = host.gaps()
    assert gaps, "expected at least two requests"
    assert min(gaps) >= interval - SERVER_JITTER, f"server saw a gap of {min(gaps):.4f}s < {interval}s"
    assert sum(gaps) >= len(gaps) * interval - SERVER_JITTER


# -- pacing ---------------------------------------------------------------------

def test_pacing_holds_across_redirects_and_retries(farm, make_ctx):
    host = farm.add({
        "/robots.txt": ROBOTS_OPEN,
        "/a": redirect("/b"), "/b": redirect("/c"),
        "/c": sequence([Reply(503), Reply(502), PAGE]),
    })
    ctx = make_ctx()
    response = ctx.fetcher.get(host.url("/a"), purpose="test")
    assert response.ok and response.final_url == host.url("/c")
    assert host.paths_seen() == ["/robots.txt", "/a", "/b", "/c", "/c", "/c"]
    assert_paced(host)


def test_redirect_to_another_host_is_paced_and_robots_checked_there(farm, make_ctx):
    target = farm.add({"/robots.txt": Reply(200, b"User-agent: *\nDisallow: /no\n", content_type="text/plain"),
                       "/yes": PAGE})
    origin = farm.add({"/robots.txt": ROBOTS_OPEN, "/go-yes": redirect(target.url("/yes")),
                       "/go-no": redirect(target.url("/no"))})
    ctx = make_ctx()
    assert ctx.fetcher.get(origin.url("/go-yes"), purpose="test").ok
    refused = ctx.fetcher.get(origin.url("/go-no"), purpose="test")
    assert refused.result == "robots_disallowed"
    assert target.paths_seen() == ["/robots.txt", "/yes"]
    row = rows(ctx, "url = ?", (target.url("/no"),))[0]
    assert row["sent"] == 0 and row["redirected_from"] is not None


def test_hosts_are_served_concurrently(farm, make_ctx):
    from concurrent.futures import ThreadPoolExecutor

    hosts = [farm.add({"/robots.txt": Reply(404), "/p*": PAGE}) for _ in range(4)]
    ctx = make_ctx(interval=0.1)

    def crawl(host):
        for i in range(5):
            ctx.fetcher.get(host.url(f"/p{i}"), purpose="test")

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(crawl, hosts))
    starts = sorted(s.at for h in hosts for s in h.seen)
    span = starts[-1] - starts[0]
    # Serial would take 4 hosts x 5 gaps x 0.1 s = 2 s; concurrent about 0.5 s.
    assert span < 1.2, span
    for host in hosts:
        assert_paced(host, 0.1)


def test_true_two_second_floor_once(farm, store, tmp_path):
    from collector.clock import Clock
    from collector.collect.context import RunContext

    host = farm.add({"/robots.txt": Reply(404), "/x": PAGE})
    ctx = RunContext.open(store, "test", clock=Clock(), vantage="v", warc_dir=tmp_path / "w",
                          allow_loopback=True)
    assert ctx.fetcher.interval == settings.MIN_INTERVAL_SECONDS == 2.0
    ctx.fetcher.get(host.url("/x"), purpose="test")
    assert min(host.gaps()) >= 2.0


def test_reduced_interval_refused_for_non_loopback():
    with pytest.raises(ConfigError):
        Fetcher(ledger=None, interval=0.1, allow_loopback=False)


# -- robots.txt -----------------------------------------------------------------

@pytest.mark.parametrize("robots_reply, expected_result, page_requested", [
    (Reply(200, b"User-agent: *\nDisallow: /\n", content_type="text/plain"), "robots_disallowed", False),
    (Reply(200, b"User-agent: *\nAllow: /\n", content_type="text/plain"), "ok", True),
    (Reply(404), "ok", True),
    (Reply(410), "ok", True),
    (Reply(401), "ok", True),
    (Reply(403), "ok", True),
    (Reply(500), "robots_unreachable", False),
    (Reply(503), "robots_unreachable", False),
    # Our one departure from RFC 9309 2.3.1.3 (a 4xx MAY mean no rules): a 429
    # is a server asking us to slow down, unreachable as Google reads it.
    (Reply(429), "robots_unreachable", False),
])
def test_robots_status_codes(farm, make_ctx, robots_reply, expected_result, page_requested):
    host = farm.add({"/robots.txt": robots_reply, "/page": PAGE})
    ctx = make_ctx()
    response = ctx.fetcher.get(host.url("/page"), purpose="test")
    assert response.result == expected_result
    assert ("/page" in host.paths_seen()) == page_requested
    robots_rows = rows(ctx, "purpose = 'robots'")
    assert len({r["url"] for r in robots_rows}) == 1
    if not page_requested:
        assert rows(ctx, "url = ?", (host.url("/page"),))[0]["sent"] == 0


def test_robots_timeout_puts_site_off_limits(farm, make_ctx):
    host = farm.add({"/robots.txt": stall(1.5), "/page": PAGE})
    ctx = make_ctx(read_timeout=0.3)
    assert ctx.fetcher.get(host.url("/page"), purpose="test").result == "robots_unreachable"
    assert ctx.fetcher.get(host.url("/other"), purpose="test").result == "robots_unreachable"
    assert "/page" not in host.paths_seen()


def test_robots_fetched_once_per_host_per_run(farm, make_ctx):
    host = farm.add({"/robots.txt": ROBOTS_OPEN, "/p*": PAGE})
    ctx = make_ctx()
    for i in range(3):
        ctx.fetcher.get(host.url(f"/p{i}"), purpose="test")
    assert host.paths_seen().count("/robots.txt") == 1


def test_robots_redirect_chain_followed_five_hops(farm, make_ctx):
    host = farm.add({
        **{f"/r{i}": redirect(f"/r{i + 1}") for i in range(4)},
        "/robots.txt": redirect("/r0"),
        "/r4": Reply(200, b"User-agent: *\nDisallow: /x\n", content_type="text/plain"),
        "/y": PAGE,
    })
    ctx = make_ctx()
    assert ctx.fetcher.get(host.url("/x"), purpose="test").result == "robots_disallowed"
    assert ctx.fetcher.get(host.url("/y"), purpose="test").ok
    assert_paced(host)


# -- retries --------------------------------------------------------------------

@pytest.mark.parametrize("status, attempts, result", [
    (500, 3, "server_error"), (502, 3, "server_error"), (503, 3, "server_error"),
    (404, 1, "not_found"), (410, 1, "gone"), (403, 1, "http_error"), (400, 1, "http_error"),
])
def test_retry_counts(farm, make_ctx, status, attempts, result):
    host = farm.add({"/robots.txt": Reply(404), "/p": Reply(status)})
    ctx = make_ctx()
    response = ctx.fetcher.get(host.url("/p"), purpose="test")
    assert response.result == result
    assert host.paths_seen().count("/p") == attempts
    assert [r["attempt"] for r in rows(ctx, "purpose = 'test'")] == list(range(1, attempts + 1))


def test_timeout_is_retried_three_times(farm, make_ctx):
    host = farm.add({"/robots.txt": Reply(404), "/slow": stall(1.0)})
    ctx = make_ctx(read_timeout=0.2)
    assert ctx.fetcher.get(host.url("/slow"), purpose="test").result == "timeout"
    assert host.paths_seen().count("/slow") == 3


def test_429_honours_short_retry_after_and_skips_long(farm, make_ctx):
    host = farm.add({
        "/robots.txt": Reply(404),
        "/short": sequence([Reply(429, headers={"Retry-After": "0"}), PAGE]),
        "/long": Reply(429, headers={"Retry-After": "3600"}),
    })
    ctx = make_ctx()
    assert ctx.fetcher.get(host.url("/short"), purpose="test").ok
    assert ctx.fetcher.get(host.url("/long"), purpose="test").result == "rate_limited"
    assert host.paths_seen().count("/long") == 1


# -- challenges -----------------------------------------------------------------

CHALLENGE_HTML = DATA / "cloudflare" / "challenge-khaborerkagoj.html"
NORMAL_CF_HTML = DATA / "cloudflare" / "normal-samakal-opinion.html"


@pytest.mark.parametrize("status, headers, body, expected", [
    (403, {"cf-mitigated": "challenge", "Server": "cloudflare"}, b"<html></html>", "challenge"),
    (403, {"Server": "cloudflare", "CF-RAY": "1"}, "challenge", "challenge"),
    (503, {"Server": "cloudflare"}, "challenge", "challenge"),
    (200, {"Server": "cloudflare", "CF-RAY": "1"}, "normal", "ok"),
    (403, {}, "challenge", "http_error"),  # markers without Cloudflare headers
    (403, {"Server": "cloudflare"}, b"<title>Attention Required! | Cloudflare</title>", "blocked"),
])
def test_challenge_detection(farm, make_ctx, status, headers, body, expected):
    if body == "challenge":
        body = CHALLENGE_HTML.read_bytes()
    elif body == "normal":
        body = NORMAL_CF_HTML.read_bytes()
    host = farm.add({"/robots.txt": Reply(404), "/p": Reply(status, body, headers)})
    ctx = make_ctx()
    assert ctx.fetcher.get(host.url("/p"), purpose="test").result == expected
    # A challenge is recorded once, never retried.
    assert host.paths_seen().count("/p") == 1


# -- limits ---------------------------------------------------------------------

def test_trickling_server_is_cut_off(farm, make_ctx):
    host = farm.add({"/robots.txt": Reply(404), "/t": trickle(1000, every=0.1)})
    ctx = make_ctx(total_timeout=0.6, read_timeout=2.0, backoff=(0.01, 0.01))
    response = ctx.fetcher.get(host.url("/t"), purpose="test")
    assert response.result == "timeout"
    for row in rows(ctx, "purpose = 'test'"):
        assert row["elapsed_ms"] < 1500


def test_body_size_cap(farm, make_ctx):
    host = farm.add({"/robots.txt": Reply(404), "/big": stream_bytes(5 * 1024 * 1024)})
    ctx = make_ctx(max_bytes=1024 * 1024)
    response = ctx.fetcher.get(host.url("/big"), purpose="test")
    assert response.result == "too_large"
    assert host.paths_seen().count("/big") == 1


def test_gzip_bomb_stopped_by_decompressed_size(farm, make_ctx):
    bomb = gzip.compress(b"\0" * (50 * 1024 * 1024), compresslevel=9)
    assert len(bomb) < 100 * 1024
    host = farm.add({"/robots.txt": Reply(404),
                     "/bomb": Reply(200, bomb, {"Content-Encoding": "gzip"})})
    ctx = make_ctx(max_bytes=2 * 1024 * 1024)
    assert ctx.fetcher.get(host.url("/bomb"), purpose="test").result == "too_large"


def test_gzip_body_is_decoded_and_warc_keeps_bytes_as_received(farm, make_ctx):
    html = b"<html><body>\xe0\xa6\xac\xe0\xa6\xbe\xe0\xa6\x82\xe0\xa6\xb2\xe0\xa6\xbe</body></html>"
    packed = gzip.compress(html)
    host = farm.add({"/robots.txt": Reply(404), "/z": Reply(200, packed, {"Content-Encoding": "gzip"})})
    ctx = make_ctx()
    response = ctx.fetcher.get(host.url("/z"), purpose="test")
    assert response.ok and response.body == html
    from warcio.archiveiterator import ArchiveIterator

    with open(ctx.warc.path, "rb") as fh:
        fh.seek(response.warc.offset)
        record = next(iter(ArchiveIterator(fh)))
        assert record.rec_type == "response"
        assert record.raw_stream.read() == packed


def test_truncated_gzip_is_a_content_error(farm, make_ctx):
    packed = gzip.compress(b"<html>" + b"x" * 5000 + b"</html>")[:-20]
    host = farm.add({"/robots.txt": Reply(404), "/z": Reply(200, packed, {"Content-Encoding": "gzip"})})
    ctx = make_ctx()
    assert ctx.fetcher.get(host.url("/z"), purpose="test").result == "content_error"


def test_connection_reset_mid_body(farm, make_ctx):
    host = farm.add({"/robots.txt": Reply(404), "/r": reset_mid_body(b"<html>partial", 100000)})
    ctx = make_ctx()
    response = ctx.fetcher.get(host.url("/r"), purpose="test")
    assert response.result == "connection_error"
    assert host.paths_seen().count("/r") == 3


@pytest.mark.parametrize("location, result", [
    ("file:///etc/passwd", "invalid_url"),
    ("ftp://example.org/x", "invalid_url"),
    ("javascript:alert(1)", "invalid_url"),
    # Private and link-local addresses (RFC 1918, RFC 3927's cloud metadata address), named only as
    # the Location a loopback host answers: the fetcher must refuse them before connecting, and the
    # in-process guard (tests/conftest.py loopback_only) fails the test if anything tries.
    (f"http://{ipaddress.ip_network('10.0.0.0/8')[1]}/x", "blocked_address"),
    (f"http://{ipaddress.ip_network('192.168.0.0/16')[257]}/x", "blocked_address"),
    (f"http://{ipaddress.ip_network('169.254.0.0/16')[43518]}/latest/meta-data/", "blocked_address"),
])
def test_redirects_to_forbidden_targets_are_not_followed(farm, make_ctx, location, result):
    host = farm.add({"/robots.txt": Reply(404), "/r": redirect(location)})
    ctx = make_ctx()
    with loopback_only() as attempts:
        response = ctx.fetcher.get(host.url("/r"), purpose="test")
    assert attempts == []  # never a connection outside 127.0.0.0/8
    assert response.result == result
    last = rows(ctx)[-1]
    assert last["sent"] == 0 and last["result"] == result


def test_redirect_loop_and_hop_cap(farm, make_ctx):
    host = farm.add({"/robots.txt": Reply(404), "/loop1": redirect("/loop2"), "/loop2": redirect("/loop1"),
                     **{f"/c{i}": redirect(f"/c{i + 1}") for i in range(40)}})
    ctx = make_ctx()
    assert ctx.fetcher.get(host.url("/loop1"), purpose="test").result == "redirect_loop"
    assert ctx.fetcher.get(host.url("/c0"), purpose="test").result == "too_many_redirects"
    assert host.paths_seen().count("/c0") == 1
    assert len([p for p in host.paths_seen() if p.startswith("/c")]) == settings.MAX_REDIRECT_HOPS + 1


def test_overlong_url_is_not_requested(farm, make_ctx):
    host = farm.add({"/robots.txt": Reply(404)})
    ctx = make_ctx()
    response = ctx.fetcher.get(host.url("/" + "a" * 10000), purpose="test")
    assert response.result == "invalid_url"
    assert host.paths_seen() == []


# -- ledger and WARC --------------------------------------------------------------

def test_ledger_is_complete_and_warc_valid(farm, make_ctx):
    host = farm.add({"/robots.txt": ROBOTS_OPEN, "/ok": PAGE, "/missing": Reply(404),
                     "/err": Reply(500), "/r": redirect("/ok")})
    ctx = make_ctx()
    for path in ("/ok", "/missing", "/err", "/r", "/private/x"):
        ctx.fetcher.get(host.url(path), purpose="test", outlet_id="o1")
    sent = rows(ctx, "sent = 1")
    # Every request the server saw has exactly one ledger row, in order.
    assert [r["url"].replace(host.base, "") for r in sent] == host.paths_seen()
    unsent = rows(ctx, "sent = 0")
    assert [r["result"] for r in unsent] == ["robots_disallowed"]
    for row in sent:
        assert row["vantage"] == "test-vantage"
        assert row["remote_ip"] == host.address
        assert row["started_at"] <= row["finished_at"]
        assert row["warc_file"] and row["warc_offset"] is not None
    ctx.warc.close()
    check = subprocess.run([str(Path(sys.executable).parent / "warcio"), "check", str(ctx.warc.path)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_user_agent_identifies_us(farm, make_ctx):
    host = farm.add({"/robots.txt": Reply(404), "/p": PAGE})
    ctx = make_ctx()
    ctx.fetcher.get(host.url("/p"), purpose="test")
    agents = {s.headers.get("User-Agent") for s in host.seen}
    assert agents == {settings.USER_AGENT}
    assert "TakedownWatch" in settings.USER_AGENT and "activaterights.org" in settings.USER_AGENT


# -- failures classified as urllib3 raises them ------------------------------------

def test_a_refused_connection_is_a_connection_error_not_a_timeout(make_ctx):
    # urllib3 2.x raises NewConnectionError for ECONNREFUSED, and NewConnectionError
    # subclasses ConnectTimeoutError (urllib3/exceptions.py; requests' adapter
    # checks for it before calling anything a ConnectTimeout, requests/adapters.py).
    import socket

    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ctx = make_ctx()
    response = ctx.fetcher.get(f"http://127.0.0.1:{port}/p", purpose="test", robots=False)
    assert response.result == "connection_error"
    assert "NewConnectionError" in response.detail
    assert [r["result"] for r in rows(ctx)] == ["connection_error"] * settings.MAX_ATTEMPTS


# -- credentials stay with their origin ---------------------------------------------

SECRETS = {"Authorization": "LOW key:secret", "Cookie": "session=1", "Proxy-Authorization": "Basic eA=="}


def test_credentials_are_dropped_on_a_redirect_to_another_host_and_kept_on_the_same(farm, make_ctx):
    elsewhere = farm.add({"/robots.txt": Reply(404), "/landing": PAGE})
    archive = farm.add({"/robots.txt": Reply(404), "/save": redirect("/status"),
                        "/status": redirect(elsewhere.url("/landing")), })
    ctx = make_ctx()
    response = ctx.fetcher.request("POST", archive.url("/save"), purpose="archive", robots=False,
                                   data={"url": "x"}, headers=SECRETS)
    assert response.ok
    same_host = [s.headers for s in archive.seen if s.path in ("/save", "/status")]
    assert all(h.get("Authorization") == "LOW key:secret" and h.get("Cookie") for h in same_host)
    landing = [s.headers for s in elsewhere.seen if s.path == "/landing"][0]
    assert not {k.lower() for k in landing} & {"authorization", "cookie", "proxy-authorization"}


@pytest.mark.parametrize("old, new", [
    # The cases of requests' own tests of should_strip_auth (tests/test_requests.py).
    ("http://example.com/foo", "http://another.example.com/"),
    ("http://example.com/foo", "https://example.com/bar"),
    ("http://example.com:80/foo", "https://example.com/bar"),
    ("http://example.com/foo", "https://example.com:443/bar"),
    ("https://example.com/foo", "http://example.com/bar"),
    ("http://example.com:8080/foo", "https://example.com/bar"),
    ("http://example.com/foo", "https://example.com:8443/bar"),
    ("https://example.com:443/foo", "https://example.com/bar"),
    ("http://example.com:80/foo", "http://example.com/bar"),
    ("https://example.com/foo", "https://example.com:8443/bar"),
    ("http://example.com/foo", "http://example.com:8000/bar"),
    ("https://web.archive.org/save", "https://web.archive.org/web/2026/x"),
])
def test_the_origin_rule_is_requests_own(old, new):
    import requests

    from collector.net.fetcher import strips_credentials

    assert strips_credentials(old, new) == requests.Session().should_strip_auth(old, new)


def test_a_warc_file_that_cannot_be_written_stops_the_run_not_the_address(farm, make_ctx, monkeypatch):
    import errno

    from collector.errors import RecordWriteError

    host = farm.add({"/robots.txt": Reply(404), "/p": PAGE})
    ctx = make_ctx()

    def full(_data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ctx.warc._file, "write", full)
    with pytest.raises(RecordWriteError, match="No space left on device"):
        ctx.fetcher.get(host.url("/p"), purpose="test")
    assert "client_error" not in {r["result"] for r in rows(ctx)}


# -- retries wait in the host's queue, not in its thread ------------------------------------

def test_a_retry_waits_in_the_queue_while_the_hosts_other_addresses_go_on(farm, make_ctx):
    host = farm.add({"/robots.txt": Reply(404), "/flaky": sequence([Reply(503), Reply(503), PAGE]),
                     "/down": Reply(503), "/gone": Reply(410), "/p*": PAGE})
    backoff = (0.3, 0.6)
    ctx = make_ctx(backoff=backoff)
    paths = ["/flaky", "/down", "/gone", *[f"/p{i}" for i in range(20)]]
    answers = dict(ctx.fetcher.fetch_each(paths, host.url, purpose="test"))
    assert answers["/flaky"].ok and answers["/down"].result == "server_error"
    assert answers["/gone"].result == "gone" and all(answers[f"/p{i}"].ok for i in range(20))
    seen = host.paths_seen()
    assert seen.count("/flaky") == seen.count("/down") == settings.MAX_ATTEMPTS and seen.count("/gone") == 1
    times = {path: [s.at for s in host.seen if s.path == path] for path in ("/flaky", "/down")}
    for attempts in times.values():  # the back-off is unchanged: at least 0.3 s, then 0.6 s
        assert attempts[1] - attempts[0] >= backoff[0] - SERVER_JITTER
        assert attempts[2] - attempts[1] >= backoff[1] - SERVER_JITTER
    # Meanwhile the host's other addresses were asked for, one interval apart.
    first, second = seen.index("/flaky"), len(seen) - 1 - seen[::-1].index("/flaky")
    assert sum(p.startswith("/p") for p in seen[first:second]) >= 10
    assert_paced(host)
    rows_of = rows(ctx, "url = ?", (host.url("/down"),))
    assert [r["attempt"] for r in rows_of] == [1, 2, 3]
    # Sequential retries would have idled the host for 2 x (0.3 + 0.6) s.
    starts = [s.at for s in host.seen]
    assert starts[-1] - starts[0] < 2 * sum(backoff) + len(seen) * TEST_INTERVAL


def test_a_capture_waiting_to_retry_lets_the_next_capture_go_first(farm, make_ctx, store):
    from collector.collect.pipeline import active_outlets, run_collection
    from collector.record.registry_mirror import sync_registry
    from collector.registry import parse_registry
    from testing import hostile, replica

    now = replica.FEED_SNAPSHOT_TIME
    host = hostile.add_host(farm)
    host.routes.update(hostile.outlet_routes(host, now, ["/news/flaky", "/news/1", "/news/2"]))
    host.routes["/news/flaky"] = sequence([Reply(503), PAGE])
    ctx = make_ctx(now=now, backoff=(0.4, 0.8))
    sync_registry(store, parse_registry(replica.registry_toml({"o": host})), ctx.clock)
    run_collection(ctx, active_outlets(ctx))
    order = [r["url"].rsplit("/", 1)[-1] for r in rows(ctx, "purpose = 'capture'")]
    assert order == ["flaky", "1", "2", "flaky"]
    assert store.one("SELECT COUNT(*) FROM capture_queue WHERE state = 'captured'")[0] == 3


def test_a_failure_of_ours_after_the_intent_completes_the_intent(farm, make_ctx, monkeypatch):
    from collector.net import wire

    host = farm.add({"/robots.txt": Reply(404), "/p": PAGE, "/q": PAGE})
    ctx = make_ctx()

    def broken(*args, **kwargs):
        raise RuntimeError("a bug below the fetcher")

    monkeypatch.setattr("collector.net.fetcher.send_once", broken)
    response = ctx.fetcher.get(host.url("/p"), purpose="test", robots=False)
    assert response.result == "client_error" and "a bug below the fetcher" in response.detail
    row = rows(ctx)[-1]
    assert row["result"] == "client_error" and row["intent_id"] is not None
    open_intents = ctx.store.one("SELECT COUNT(*) FROM request_intents i WHERE NOT EXISTS "
                                 "(SELECT 1 FROM requests r WHERE r.intent_id = i.id)")[0]
    assert open_intents == 0
    monkeypatch.setattr("collector.net.fetcher.send_once", wire.send_once)
    assert ctx.fetcher.get(host.url("/q"), purpose="test", robots=False).ok  # and the fetcher goes on
