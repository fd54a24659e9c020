"""Loopback web hosts for tests, the demo and the benchmarks.

Each `Host` is a real HTTP server on its own loopback address (127.0.0.N),
so several hosts are several authorities, as outlets are. Every request a
host receives is logged with the server's own monotonic timestamp, which is
what pacing tests assert on. Routes answer with a static `Reply`, or with a
function that writes to the socket itself to misbehave on purpose.
"""

from __future__ import annotations

import http.server
import itertools
import socket
import struct
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

_next_address = itertools.count(0)


def next_address() -> str:
    """Return the next unused loopback address: 127.0.0.2, 127.0.0.3, ... 127.0.0.254, 127.0.1.2, ...

    Every host of a process gets its own address (a host is its own site), and
    the whole of 127.0.0.0/8 is loopback, so a benchmark of hundreds of hosts
    never runs out (the third octet wraps after 65,000 hosts).
    """
    n = next(_next_address)
    return f"127.0.{(n // 253) % 256}.{n % 253 + 2}"
# Linux's SO_TIMESTAMPNS (Python does not name it on every build).
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


@dataclass
class Reply:
    """A canned answer: status, headers and body."""

    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str | None = "text/html; charset=utf-8"


@dataclass
class Seen:
    """One request as the server saw it."""

    at: float  # wall-clock seconds when the request arrived (kernel timestamp)
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    client: str = ""  # the source address the request came from
    answered: float | None = None  # wall-clock seconds when the whole answer had been written


Route = Reply | Callable[["Handler"], None] | Callable[["Handler"], Reply]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def setup(self) -> None:
        super().setup()
        try:
            # Headers and body go out in separate writes; without NODELAY,
            # Nagle and delayed ACKs add about 40 ms to every loopback response.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.connection.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        except OSError:
            pass

    def _kernel_arrival(self) -> float | None:
        """Return when the kernel received the next request's first byte (wall clock)."""
        try:
            _data, ancillary, _flags, _addr = self.connection.recvmsg(
                1, socket.CMSG_SPACE(16), socket.MSG_PEEK)
        except OSError:
            return None
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(payload) >= 16:
                seconds, nanoseconds = struct.unpack("qq", payload[:16])
                return seconds + nanoseconds / 1e9
        return None

    def handle_one_request(self) -> None:
        # The arrival time is the kernel's receive timestamp of the request's
        # first byte: a server thread that is scheduled late (busy machine,
        # GIL) still reports when the request really came in.
        kernel = self._kernel_arrival()
        self.seen = None
        self.raw_requestline = self.rfile.readline(65537)
        self.arrived = kernel if kernel is not None else time.time()
        if not self.raw_requestline:
            self.close_connection = True
            return
        if len(self.raw_requestline) > 65536:
            self.send_error(414)
            return
        if not self.parse_request():
            return
        method = getattr(self, "do_" + self.command, None)
        if method is None:
            self.send_error(501)
            return
        method()
        self.wfile.flush()
        if self.seen is not None:
            self.seen.answered = time.time()

    def _serve(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = self.body = self.rfile.read(length) if length else b""
        host: Host = self.server.host
        self.seen = Seen(self.arrived, self.command, self.path, dict(self.headers), body, self.client_address[0])
        host.seen.append(self.seen)
        route = host.route_for(self.path)
        if route is None:
            self.send_reply(Reply(404, b"not found", content_type="text/plain"))
            return
        if isinstance(route, Reply):
            self.send_reply(route)
            return
        answer = route(self)
        if isinstance(answer, Reply):
            self.send_reply(answer)

    do_GET = do_POST = do_HEAD = do_DELETE = _serve

    def send_reply(self, reply: Reply) -> None:
        """Write a complete response with Content-Length."""
        self.send_response_only(reply.status)
        if not any(name.lower() == "server" for name in reply.headers):
            self.send_header("Server", self.version_string())
        if reply.content_type:
            self.send_header("Content-Type", reply.content_type)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply.body)


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def server_bind(self) -> None:
        # Set on the listening socket, receive timestamps are inherited by
        # each accepted connection, so even the first request on a new
        # connection (which may arrive before the handler thread runs) has one.
        try:
            self.socket.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        except OSError:
            pass
        super().server_bind()


class Host:
    """One loopback web host with its routes and the log of what it received."""

    def __init__(self, routes: dict[str, Route] | None = None, address: str | None = None):
        self.routes: dict[str, Route] = dict(routes or {})
        self.seen: list[Seen] = []
        self.address = address or next_address()
        self._server = _Server((self.address, 0), Handler)
        self._server.host = self
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def netloc(self) -> str:
        return f"{self.address}:{self.port}"

    @property
    def base(self) -> str:
        return f"http://{self.netloc}"

    def url(self, path: str) -> str:
        return self.base + path

    def route_for(self, path: str) -> Route | None:
        if path in self.routes:
            return self.routes[path]
        # A route ending in '*' matches every path that starts with it.
        for pattern, route in self.routes.items():
            if pattern.endswith("*") and path.startswith(pattern[:-1]):
                return route
        return None

    def paths_seen(self) -> list[str]:
        return [s.path for s in self.seen]

    def gaps(self) -> list[float]:
        """Return the gaps, in seconds, between the starts of consecutive requests."""
        times = sorted(s.at for s in self.seen)
        return [b - a for a, b in zip(times, times[1:])]

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class Farm:
    """A set of hosts started together and closed together."""

    def __init__(self):
        self.hosts: list[Host] = []

    def add(self, routes: dict[str, Route] | None = None) -> Host:
        host = Host(routes)
        self.hosts.append(host)
        return host

    def close(self) -> None:
        """Close every host, together: each shutdown waits for its server's poll (up to 0.5 s),
        so 400 hosts closed one after another would take minutes."""
        closers = [threading.Thread(target=host.close) for host in self.hosts]
        for closer in closers:
            closer.start()
        for closer in closers:
            closer.join()

    def __enter__(self) -> "Farm":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- misbehaviours ----------------------------------------------------------

def sequence(replies: Iterable[Reply]) -> Callable[[Handler], Reply]:
    """Return a route that answers with each reply in turn, repeating the last."""
    items = list(replies)
    counter = itertools.count()

    def route(handler: Handler) -> Reply:
        return items[min(next(counter), len(items) - 1)]

    return route


def stall(seconds: float) -> Callable[[Handler], None]:
    """Return a route that waits before sending anything (a read timeout)."""

    def route(handler: Handler) -> None:
        time.sleep(seconds)
        handler.close_connection = True

    return route


def trickle(total: int, every: float = 1.0) -> Callable[[Handler], None]:
    """Return a route that sends headers, then one byte per `every` seconds."""

    def route(handler: Handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html")
        handler.send_header("Content-Length", str(total))
        handler.end_headers()
        try:
            for _ in range(total):
                handler.wfile.write(b"x")
                handler.wfile.flush()
                time.sleep(every)
        except OSError:
            pass
        handler.close_connection = True

    return route


def reset_mid_body(sent: bytes, claimed: int) -> Callable[[Handler], None]:
    """Return a route that promises `claimed` bytes, sends `sent`, then resets."""

    def route(handler: Handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html")
        handler.send_header("Content-Length", str(claimed))
        handler.end_headers()
        handler.wfile.write(sent)
        handler.wfile.flush()
        sock = handler.connection
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.close()
        handler.close_connection = True

    return route


def stream_bytes(total: int, chunk: bytes = b"a" * 65536, content_type: str = "text/html") -> Callable[[Handler], None]:
    """Return a route that streams `total` bytes quickly (a huge response)."""

    def route(handler: Handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(total))
        handler.end_headers()
        sent = 0
        try:
            while sent < total:
                piece = chunk[: total - sent]
                handler.wfile.write(piece)
                sent += len(piece)
        except OSError:
            pass
        handler.close_connection = True

    return route


def redirect(location: str, status: int = 302) -> Reply:
    """Return a redirect reply."""
    return Reply(status, b"", {"Location": location}, content_type=None)


@dataclass
class Chunked:
    """A route that answers with a chunked body (RFC 9112 7.1) and keeps the bytes of each body it wrote.

    `sizes` cut the body into chunks (the last size repeats); `extension` is
    written after every chunk size (";name=value"); `trailers` follow the last
    chunk. Each answer's body, as written to the socket after the header
    block, is appended to `written`.
    """

    body: bytes
    sizes: tuple[int, ...] = (4096,)
    extension: str = ""
    trailers: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/html; charset=utf-8"
    written: list[bytes] = field(default_factory=list)

    def framed(self) -> bytes:
        """Return the whole chunked message body."""
        out, at, index = [], 0, 0
        while at < len(self.body):
            size = self.sizes[min(index, len(self.sizes) - 1)]
            piece = self.body[at:at + size]
            out.append(f"{len(piece):x}{self.extension}\r\n".encode("ascii") + piece + b"\r\n")
            at, index = at + size, index + 1
        out.append(f"0{self.extension}\r\n".encode("ascii"))
        out.extend(f"{name}: {value}\r\n".encode("latin-1") for name, value in self.trailers.items())
        out.append(b"\r\n")
        return b"".join(out)

    def __call__(self, handler: Handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", self.content_type)
        for name, value in self.headers.items():
            handler.send_header(name, value)
        handler.send_header("Transfer-Encoding", "chunked")
        if self.trailers:
            handler.send_header("Trailer", ", ".join(self.trailers))
        handler.end_headers()
        data = self.framed()
        # Kept before it is written: the client may read the last byte and go on
        # before this thread runs again.
        self.written.append(data)
        handler.wfile.write(data)
