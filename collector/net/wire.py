"""One HTTP exchange on the wire: send, read within limits, classify, write WARC.

Bodies are read as a stream with a byte cap and a deadline, so a server that
sends 200 MB or trickles one byte a second is cut off; compressed bodies are
inflated here with the same cap, so a gzip bomb stops at the limit.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from typing import Mapping
from urllib.parse import urlsplit

import urllib3
import urllib3.connection
from urllib.parse import urlencode

from collector import settings
from collector.urls import to_uri
from collector.net.cloudflare import classify as classify_challenge
from collector.parse.inflate import GZIP_OR_ZLIB, RAW_DEFLATE, InflateError, TooLarge, inflate
from collector.net.retryafter import retry_after_seconds
from collector.clock import Clock
from collector.net.onwire import RecordingResponse, payload_digest, take_copy
from collector.net.warc import WarcLog, WarcPointer

CHUNK = 64 * 1024
SECRET_HEADERS = ("authorization", "cookie", "proxy-authorization")


@dataclass
class Exchange:
    """What happened to one request on the wire."""

    method: str
    url: str
    started: datetime
    finished: datetime
    result: str
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    raw_bytes: int | None = None
    content: bytes = b""
    remote_ip: str | None = None
    elapsed_ms: float | None = None
    detail: str | None = None
    retry_after: float | None = None
    warc: WarcPointer | None = None


def send_once(pool: urllib3.PoolManager, method: str, url: str, *, data, headers,
              timeouts: tuple[float, float, float], max_bytes: int, clock: Clock,
              warc: WarcLog | None, turn=None, addresses: list[str] | None = None) -> Exchange:
    """Return the Exchange of one request, with its response written to WARC.

    `addresses`, when given, are the only ones a new connection may go to
    (the address guard's, in order): the host name is not looked up again.

    `turn` (a pacing._Turn), when given, is waited for immediately before the
    first contact with the host (the connect of a new connection, or the first
    write on a kept-alive one) and told when the request has been written; the
    request's start time is taken when the wait ends. Writing WARC records
    first gives way to other hosts' requests that are due (pacing.give_way).
    """
    mark: list = []

    def at_wire() -> None:
        if not mark:
            if turn is not None:
                turn.wait()
            mark.extend((clock.now(), clock.monotonic()))

    def started_at() -> tuple[datetime, float]:
        return (mark[0], mark[1]) if mark else (clock.now(), clock.monotonic())

    request_headers = {
        "User-Agent": settings.USER_AGENT,
        "Accept-Encoding": "gzip, deflate",
        "Accept": "*/*",
        **(headers or {}),
    }
    if isinstance(data, bytes):  # a body already encoded (an RFC 3161 query): its type is in `headers`
        body = data
    else:
        body = urlencode(data).encode() if data else None
        if body is not None:
            request_headers["Content-Type"] = "application/x-www-form-urlencoded"
    _peer.gate, _peer.turn, _peer.addresses = at_wire, turn, addresses
    take_copy()  # none left from an earlier request of this thread
    try:
        resp = pool.urlopen(method, url, body=body, headers=request_headers, redirect=False,
                            retries=False, preload_content=False, decode_content=False,
                            timeout=urllib3.Timeout(connect=timeouts[0], read=timeouts[1]))
    except urllib3.exceptions.NewConnectionError as exc:
        # Caught first: urllib3 2.x makes it a subclass of ConnectTimeoutError
        # (urllib3/exceptions.py), but a refused or unreachable connection is
        # no timeout; requests' adapter makes the same exception (adapters.py).
        return _failed(method, url, *started_at(), clock, "connection_error", exc)
    except urllib3.exceptions.TimeoutError as exc:
        return _failed(method, url, *started_at(), clock, "timeout", exc)
    except (urllib3.exceptions.HTTPError, OSError, ValueError) as exc:
        return _failed(method, url, *started_at(), clock, "connection_error", exc)
    finally:
        _peer.gate = _peer.turn = _peer.addresses = None
    started, t0 = started_at()
    wire = take_copy()
    complete = False
    try:
        ip = _peer_ip(resp)
        raw, truncated, read_error = _read_body(resp, t0 + timeouts[2], max_bytes, clock)
        complete = truncated is None
    finally:
        # A fully read response hands its connection back for reuse (keep-alive,
        # fewer handshakes for the site); anything cut short is closed.
        if complete:
            resp.release_conn()
        else:
            resp.close()
    received = {k.lower(): v for k, v in resp.headers.itermerged()}
    if "location" in received:
        received["location"] = location_text(received["location"])
    exchange = Exchange(method, url, started, clock.now(), "ok", resp.status, received, len(raw),
                        remote_ip=ip, elapsed_ms=(clock.monotonic() - t0) * 1000)
    exchange.result, exchange.detail = _classify(resp, exchange.headers, raw, truncated, read_error)
    if exchange.result not in ("too_large", "timeout", "connection_error"):
        exchange.content, decode_problem = undo_content_encoding(raw, exchange.headers, max_bytes)
        if decode_problem:
            exchange.result, exchange.detail = decode_problem
    exchange.retry_after = retry_after_seconds(exchange.headers, exchange.finished)
    if warc is not None:
        if turn is not None:
            turn.pacer.give_way()
        exchange.warc = _write_warc(warc, method, url, request_headers, body, resp, raw, ip,
                                    started, truncated, wire)
    return exchange


def wire_address(address: str) -> str:
    """Return an address exactly as it is sent: its URI (RFC 3987 3.1), as urllib3 then normalises it.

    urllib3 percent-encodes what a URI cannot hold, upper-cases escapes and
    resolves dot segments before it writes the request line (urllib3.util.
    parse_url); doing it here, once, makes the ledger row, the WARC record's
    target and the request the server receives the same text. Raises
    ValueError for an address that has no such form. An address of another
    scheme is never sent (only refused), and comes back as it is.
    """
    if urlsplit(address).scheme.lower() not in settings.ALLOWED_SCHEMES:
        return address
    return urllib3.util.parse_url(to_uri(address)).url


def location_text(value: str) -> str:
    """Return a Location header's value as the server meant it: its octets read as UTF-8.

    http.client decodes every header as Latin-1, so a raw UTF-8 Location
    ("/খবর") arrives as mojibake; requests undoes that the same way
    (SessionRedirectMixin.get_redirect_target: "re-encode the location in
    latin1" and decode it as UTF-8). Octets that are not UTF-8 are kept,
    percent-encoded, rather than guessed at.
    """
    if value.isascii():
        return value
    try:
        octets = value.encode("latin-1")
    except UnicodeEncodeError:
        return value  # not from http.client's decoding: already text
    try:
        return octets.decode("utf-8")
    except UnicodeDecodeError:
        return "".join(chr(b) if b < 0x80 else f"%{b:02X}" for b in octets)


def _failed(method, url, started, t0, clock, result, exc) -> Exchange:
    return Exchange(method, url, started, clock.now(), result,
                    elapsed_ms=(clock.monotonic() - t0) * 1000, detail=_short(exc))


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text[:300]


_peer = threading.local()


class _PeerMixin:
    """Waits for the host's turn at the wire, and notes when and to whom each request was written.

    The pacing wait (send_once's `turn`) is passed immediately before the first
    contact with the host, the TCP connect of a new connection or the first
    byte written on a kept-alive one, so nothing the request does beforehand
    in Python delays it past its turn.
    """

    def connect(self):
        _pass_gate()
        super().connect()

    def _new_conn(self):
        """Return a socket connected to one of the addresses the guard checked, tried in order.

        urllib3 resolves `_dns_host` when it connects (HTTPConnection._new_conn,
        urllib3 2.8); swapping in each checked address keeps its timeouts, socket
        options and errors, while TLS still names and verifies the host itself.
        """
        pinned = getattr(_peer, "addresses", None)
        if not pinned:
            return super()._new_conn()
        name = self._dns_host
        try:
            for index, address in enumerate(pinned):
                self._dns_host = address
                try:
                    return super()._new_conn()
                except urllib3.exceptions.NewConnectionError:
                    if index == len(pinned) - 1:
                        raise
        finally:
            self._dns_host = name

    def send(self, data):
        _pass_gate()
        super().send(data)

    response_class = RecordingResponse  # its body reads are copied: the bytes as received (net/onwire.py)

    def getresponse(self, *args, **kwargs):
        turn = getattr(_peer, "turn", None)
        if turn is not None:
            turn.pacer.give_way()  # parsing the answer can wait for a request due on the wire
        return super().getresponse(*args, **kwargs)

    def request(self, *args, **kwargs):
        _peer.ip = None
        super().request(*args, **kwargs)
        turn = getattr(_peer, "turn", None)
        if turn is not None:
            # When the request has been written: the next wait is measured from
            # here, later than the server's arrival, so neither a slow connect
            # nor a late return from the write can shorten the gap it sees.
            turn.written_now()
        try:
            _peer.ip = self.sock.getpeername()[0]
        except (AttributeError, OSError, TypeError):
            _peer.ip = None


def _pass_gate() -> None:
    gate = getattr(_peer, "gate", None)
    if gate is not None:
        gate()


class _PeerHTTPConnection(_PeerMixin, urllib3.connection.HTTPConnection):
    pass


class _PeerHTTPSConnection(_PeerMixin, urllib3.connection.HTTPSConnection):
    pass


class _PeerHTTPPool(urllib3.HTTPConnectionPool):
    ConnectionCls = _PeerHTTPConnection


class _PeerHTTPSPool(urllib3.HTTPSConnectionPool):
    ConnectionCls = _PeerHTTPSConnection


def new_pool(source_address: str | None = None) -> urllib3.PoolManager:
    """Return a connection pool manager with no automatic behaviour and peer-address reporting.

    urllib3 is driven directly (requests sits on top of it): no redirects, no
    retries, no proxies or .netrc from the environment, and about half the
    CPU per request of going through a requests Session. With source_address,
    every connection leaves from that local address (a multi-homed runner, or a
    loopback test standing in for a second vantage).
    """
    bind = {"source_address": (source_address, 0)} if source_address else {}
    manager = urllib3.PoolManager(num_pools=512, maxsize=4, retries=False, **bind)
    manager.pool_classes_by_scheme = {"http": _PeerHTTPPool, "https": _PeerHTTPSPool}
    return manager


def _peer_ip(resp) -> str | None:
    return getattr(_peer, "ip", None)


def _read_body(resp, deadline: float, max_bytes: int, clock: Clock):
    """Return (bytes read, truncation reason or None, read error or None)."""
    parts: list[bytes] = []
    size = 0
    try:
        while True:
            if clock.monotonic() > deadline:
                return b"".join(parts), "time", None
            chunk = resp.read1(CHUNK, decode_content=False)
            if not chunk:
                return b"".join(parts), None, None
            parts.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                return b"".join(parts)[:max_bytes], "length", None
    except (urllib3.exceptions.ReadTimeoutError, TimeoutError) as exc:
        return b"".join(parts), "time", exc
    except (urllib3.exceptions.HTTPError, OSError) as exc:
        return b"".join(parts), "disconnect", exc


def _classify(resp, headers: Mapping[str, str], raw: bytes, truncated,
              read_error) -> tuple[str, str | None]:
    status = resp.status
    if truncated == "length":
        return "too_large", f"body larger than the {len(raw)} byte limit"
    if truncated == "time":
        return "timeout", "response not complete within the time limit" if read_error is None else _short(read_error)
    if truncated == "disconnect":
        return "connection_error", _short(read_error)
    kind, marker = classify_challenge(status, headers, raw)
    if kind:
        return kind, marker
    if 200 <= status < 300:
        return "ok", None
    if status in (301, 302, 303, 307, 308):
        return ("redirect", None) if headers.get("location") else ("http_error", "redirect without Location")
    if status == 304:
        return "not_modified", None
    return _status_result(status), None


def _status_result(status: int) -> str:
    if status == 404:
        return "not_found"
    if status == 410:
        return "gone"
    if status == 429:
        return "rate_limited"
    if status >= 500:
        return "server_error"
    return "http_error"


def undo_content_encoding(raw: bytes, headers: Mapping[str, str], max_bytes: int):
    """Return (content, problem): the body with Content-Encoding undone, within the cap."""
    coding = headers.get("content-encoding", "").strip().lower()
    if coding in ("", "identity"):
        return raw, None
    if coding not in ("gzip", "x-gzip", "deflate"):
        return raw, ("content_error", f"unsupported content-encoding {coding}")
    # gzip or zlib, whichever header the body has; raw deflate is the fallback
    # some servers send for "deflate".
    for wbits in (GZIP_OR_ZLIB, RAW_DEFLATE):
        try:
            return inflate(raw, max_bytes, wbits), None
        except TooLarge:
            return b"", ("too_large", f"decompressed body larger than {max_bytes} bytes")
        except InflateError as exc:
            problem = ("content_error", f"cannot decompress {coding}: {exc}")
    return b"", problem


def _write_warc(warc: WarcLog, method: str, url: str, request_headers: dict, body: bytes | None, resp,
                raw: bytes, ip, started, truncated, wire=None):
    """Write the exchange; a chunked body as it came off the socket, its payload digest over the entity.

    `raw` is the entity (transfer coding undone by http.client); for a chunked
    response the record holds the copy of the socket's bytes instead
    (net/onwire.py), so its `Transfer-Encoding: chunked` header is true.
    """
    digest = None
    if resp.chunked and wire is not None:
        digest = payload_digest(raw)
        raw = wire.bytes()
    parts = urlsplit(url)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    protocol = "HTTP/1.0" if resp.version == 10 else "HTTP/1.1"
    sent = [("Host", parts.netloc), *request_headers.items()]
    if body is not None:
        sent.append(("Content-Length", str(len(body))))
    # Credentials (the Internet Archive keys) never reach the WARC file.
    sent = [(k, "[redacted]" if k.lower() in SECRET_HEADERS else v) for k, v in sent]
    return warc.write_exchange(
        url=url, method=method, request_headers=sent, request_target=target, request_body=body,
        status_line=f"{resp.status} {resp.reason or ''}".strip(), protocol=protocol,
        response_headers=list(resp.headers.items()), body=raw, ip=ip, when=started,
        truncated=truncated, payload_digest=digest)
