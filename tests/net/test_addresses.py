"""Addresses as they go on the wire: IRIs, raw UTF-8 Location headers, and the address guard."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote

import pytest
from warcio.archiveiterator import ArchiveIterator

from collector.collect.pipeline import active_outlets, run_collection
from collector.record.registry_mirror import sync_registry
from collector.registry import parse_registry
from collector.urls import to_uri
from collector.net.wire import location_text
from testing import hostile, replica
from testing.farm import Reply

PAGE = Reply(200, "<html><head><title>খবর</title></head><body><p>নিজস্ব প্রতিবেদক</p></body></html>".encode())
SLUG = "/news/বাংলাদেশে-বন্যা"  # as a Bangla outlet writes it in its feed: raw UTF-8, not escaped
SLUG_URI = "/news/" + "".join(c if c.isascii() else "".join(f"%{b:02X}" for b in c.encode())
                              for c in "বাংলাদেশে-বন্যা")


def rows(ctx):
    return [dict(r) for r in ctx.store.query("SELECT * FROM requests WHERE run_id = ? ORDER BY id", (ctx.run_id,))]


def warc_records(ctx):
    ctx.warc.close()
    with open(ctx.warc.path, "rb") as fh:
        return [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), r.http_headers)
                for r in ArchiveIterator(fh) if r.rec_type in ("request", "response")]


# -- IRI to URI (RFC 3987 3.1) -------------------------------------------------------------

@pytest.mark.parametrize("iri, uri", [
    # RFC 3987 3.1's own example: each non-ASCII character as its UTF-8 octets, escaped.
    ("http://www.example.org/red%09ros\u00e9#red", "http://www.example.org/red%09ros%C3%A9#red"),
    ("https://o.test" + SLUG, "https://o.test" + SLUG_URI),
    ("https://o.test/a?q=এক দুই", "https://o.test/a?q=%E0%A6%8F%E0%A6%95%20%E0%A6%A6%E0%A7%81%E0%A6%87"),
    ("https://o.test/%e0%a6%95", "https://o.test/%e0%a6%95"),  # a URI already: nothing encoded twice
    ("https://বাংলা.test/a", "https://xn--54b7fta0cc.test/a"),  # 3.1: a DNS host name in IDNA form
    ("https://o.test/slug\u00a0", "https://o.test/slug%C2%A0"),  # a trailing no-break space is kept
])
def test_an_iri_maps_to_its_uri(iri, uri):
    assert to_uri(iri) == uri


@pytest.mark.parametrize("header, meant", [
    ("/খবর/১".encode().decode("latin-1"), "/খবর/১"),  # raw UTF-8 as http.client hands it over
    ("/caf\u00e9", "/caf%E9"),  # an octet that is no UTF-8: kept, escaped, never guessed at
    ("/plain", "/plain"),
])
def test_a_location_header_is_read_as_utf8(header, meant):
    assert location_text(header) == meant


def test_a_raw_bangla_address_is_sent_recorded_and_archived_as_its_uri(farm, make_ctx):
    host = farm.add({"/robots.txt": Reply(404), "/news/*": PAGE})
    ctx = make_ctx()
    response = ctx.fetcher.get(host.url(SLUG), purpose="test")
    assert response.ok and response.url == host.url(SLUG)  # the address as asked
    assert host.paths_seen() == ["/robots.txt", SLUG_URI]
    assert rows(ctx)[-1]["url"] == response.final_url == host.url(SLUG_URI)
    request = [r for r in warc_records(ctx) if r[0] == "request"][-1]
    assert request[1] == host.url(SLUG_URI)
    assert f"{request[2].protocol} {request[2].statusline}".split()[1] == SLUG_URI


def test_a_raw_utf8_location_is_followed_to_the_address_it_names(farm, make_ctx):
    raw = "/খবর/১".encode()
    host = farm.add({"/robots.txt": Reply(404), "/old": Reply(301, b"", {"Location": raw.decode("latin-1")}),
                     "/*": PAGE})
    ctx = make_ctx()
    response = ctx.fetcher.get(host.url("/old"), purpose="test")
    assert response.ok
    assert unquote(host.paths_seen()[-1]) == "/খবর/১"  # not the Latin-1 reading, encoded again
    assert response.final_url == host.url(to_uri("/খবর/১"))
    assert rows(ctx)[1]["location"] == "/খবর/১"


def test_the_response_record_keeps_the_location_octets_as_received(farm, make_ctx):
    raw = "/খবর".encode()
    host = farm.add({"/robots.txt": Reply(404), "/old": Reply(302, b"", {"Location": raw.decode("latin-1")}),
                     "/*": PAGE})
    ctx = make_ctx()
    response = ctx.fetcher.get(host.url("/old"), purpose="test")
    offset = ctx.store.one("SELECT warc_offset FROM requests WHERE id = ?", (response.chain[0],))[0]
    ctx.warc.close()
    with open(ctx.warc.path, "rb") as fh:
        fh.seek(offset)
        block = fh.read()
    import zlib

    record = zlib.decompressobj(31).decompress(block)  # the one gzip member at the offset
    assert b"\r\nLocation: " + raw + b"\r\n" in record  # the octets as the server sent them
    check = subprocess.run([str(Path(sys.executable).parent / "warcio"), "check", str(ctx.warc.path)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize("address", [
    "http://o.test/\udcff",  # a lone surrogate: no UTF-8 form at all
    "http://" + "ক" * 70 + ".test/a",  # a label IDNA cannot write (over 63 octets)
])
def test_an_address_with_no_uri_form_is_a_ledger_row_not_an_exception(make_ctx, address):
    ctx = make_ctx()
    response = ctx.fetcher.get(address, purpose="test")
    assert response.result == "invalid_url"
    assert rows(ctx)[-1]["result"] == "invalid_url" and rows(ctx)[-1]["sent"] == 0


def test_a_raw_bangla_entry_first_in_the_queue_does_not_stop_the_outlet(farm, make_ctx, store):
    now = replica.FEED_SNAPSHOT_TIME
    host = hostile.add_host(farm)
    # The Bangla entry is the newest, so it is captured first; the others must follow it.
    host.routes.update(hostile.outlet_routes(host, now, [SLUG, "/news/1", "/news/2"]))
    registry = parse_registry(replica.registry_toml({"bangla": host}))
    ctx = make_ctx(now=now)
    sync_registry(store, registry, ctx.clock)
    run_collection(ctx, active_outlets(ctx))
    assert not ctx.warnings
    states = {r["url"].rsplit("/", 1)[-1]: r["state"] for r in store.query("SELECT url, state FROM capture_queue")}
    assert states == {SLUG.rsplit("/", 1)[-1]: "captured", "1": "captured", "2": "captured"}
    captures = [r["url"] for r in rows(ctx) if r["purpose"] == "capture"]
    assert captures[0] == host.url(SLUG_URI) and len(captures) == 3


def test_a_capture_that_fails_on_our_side_is_settled_and_the_outlet_goes_on(farm, make_ctx, store, monkeypatch):
    from collector.collect import capture

    now = replica.FEED_SNAPSHOT_TIME
    host = hostile.add_host(farm)
    host.routes.update(hostile.outlet_routes(host, now, ["/news/bad", "/news/1"]))
    real = capture.extract

    def extract(body, content_type, url):
        if url.endswith("/news/bad"):
            raise RuntimeError("an extraction bug")
        return real(body, content_type, url)

    monkeypatch.setattr(capture, "extract", extract)
    ctx = make_ctx(now=now)
    sync_registry(store, parse_registry(replica.registry_toml({"o": host})), ctx.clock)
    run_collection(ctx, active_outlets(ctx))
    states = {r["url"].rsplit("/", 1)[-1]: (r["state"], r["last_request_id"]) for r in
              store.query("SELECT url, state, last_request_id FROM capture_queue")}
    assert states["1"][0] == "captured"
    assert states["bad"][0] == "failed" and states["bad"][1] is not None  # its request is in the ledger
    assert any("an extraction bug" in w for w in ctx.warnings)


# -- the address guard: judged once, connected to as judged -----------------------------------

def _answers(table):
    """Return a getaddrinfo stand-in answering from table (name -> addresses), in-process only."""
    def resolve(host, port, *args, **kwargs):
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port or 0))
                for a in table[host]]
    return resolve


@pytest.mark.parametrize("address, embedded", [
    ("64:ff9b::a00:1", "10.0.0.1"),  # NAT64 well-known prefix (RFC 6052) around a private address
    ("64:ff9b::a9fe:a9fe", "169.254.169.254"),  # ... around the cloud metadata address
    ("2002:c0a8:101::1", "192.168.1.1"),  # 6to4 (RFC 3056)
    ("::ffff:10.0.0.1", "10.0.0.1"),  # IPv4-mapped
    ("::a00:1", "10.0.0.1"),  # IPv4-compatible (RFC 4291, deprecated)
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "192.0.2.45"),  # Teredo (RFC 4380) client
    ("64:ff9b:1::808:808", None),  # the local-use NAT64 prefix (RFC 8215): never public
])
def test_an_ipv6_address_embedding_a_private_one_is_refused(address, embedded):
    from collector.net.guard import AddressGuard

    guard = AddressGuard(resolve=_answers({"o.test": [address]}))
    addresses, refused = guard.admit("o.test")
    assert addresses is None and refused[0] == "blocked_address"
    assert (embedded or address) in refused[1]


@pytest.mark.parametrize("address", ["64:ff9b::808:808", "2002:808:808::1", "2606:4700::6810:84e5", "8.8.8.8"])
def test_public_addresses_and_their_embeddings_are_admitted(address):
    from collector.net.guard import AddressGuard

    guard = AddressGuard(resolve=_answers({"o.test": [address]}))
    assert guard.admit("o.test") == ([address], None)


def test_a_name_that_does_not_resolve_is_refused_and_never_sent(make_ctx):
    ctx = make_ctx()
    ctx.fetcher.guard = type(ctx.fetcher.guard)(allow_loopback=True, resolve=_answers({}))
    response = ctx.fetcher.get("http://nowhere.test/a", purpose="test", robots=False)
    assert response.result == "connection_error"
    row = rows(ctx)[-1]
    assert row["sent"] == 0 and "cannot resolve nowhere.test" in row["detail"]


def test_a_name_that_rebinds_after_the_check_is_connected_to_as_checked(farm, make_ctx, monkeypatch):
    # DNS rebinding: the name answers the checked address first, a private one afterwards
    # (a zero TTL). urllib3 looks the name up again when it connects; the connection must
    # go to the address the guard judged. Nothing leaves the machine: the private answer,
    # if it were used, is refused by the suite's connect guard (tests/conftest.py).
    host = farm.add({"/robots.txt": Reply(404), "/p": PAGE})
    answers = iter([[host.address]])
    real = socket.getaddrinfo

    def rebinding(name, port, *args, **kwargs):
        if name == "rebind.test":
            table = {name: next(answers, ["10.0.0.1"])}
            return _answers(table)(name, port)
        return real(name, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    ctx = make_ctx()
    response = ctx.fetcher.get(f"http://rebind.test:{host.port}/p", purpose="test")
    assert response.ok and response.remote_ip == host.address
    assert host.paths_seen() == ["/robots.txt", "/p"]
    assert {s.headers["Host"] for s in host.seen} == {f"rebind.test:{host.port}"}
