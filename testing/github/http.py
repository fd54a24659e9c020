"""The HTTPS plumbing: a threaded server on loopback, requests read whole (chunked bodies too, as git
sends a large push), answers routed by method and path pattern.
"""

from __future__ import annotations

import http.server
import json
import re
import socket
import ssl
import sys
import threading
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import parse_qs, unquote, urlsplit

from testing.github.access import Refused

DOCS = "https://docs.github.com/rest"


@dataclass
class Request:
    method: str
    path: str  # without the query
    query: dict[str, list[str]]
    headers: dict[str, str]  # names in lower case
    body: bytes
    params: dict[str, str] = field(default_factory=dict)  # the route pattern's named groups

    def arg(self, name: str, default: str | None = None) -> str | None:
        return (self.query.get(name) or [default])[0]

    def json(self) -> dict:
        try:
            found = json.loads(self.body or b"{}")
        except ValueError:
            raise Refused(400, "Problems parsing JSON") from None
        if not isinstance(found, dict):
            raise Refused(400, "Problems parsing JSON")
        return found


@dataclass
class Response:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


def answer(data, status: int = 200, headers: dict | None = None) -> Response:
    """Return a JSON answer as GitHub's REST API writes it."""
    return Response(status, json.dumps(data).encode(),
                    {"Content-Type": "application/json; charset=utf-8", **(headers or {})})


def refusal(status: int, message: str) -> Response:
    """Return GitHub's error body: message, documentation_url, status (as a string)."""
    return answer({"message": message, "documentation_url": DOCS, "status": str(status)}, status)


Route = tuple[str, re.Pattern, Callable[[Request], Response]]


def route(method: str, pattern: str, function: Callable[[Request], Response]) -> Route:
    """Return a route: `{name}` in the pattern matches one path segment, `{name*}` the rest of the path."""
    regex = re.sub(r"\{(\w+)\*\}", r"(?P<\1>.+)", pattern)
    regex = re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", regex)
    return method, re.compile(regex + "$"), function


class Router:
    """Routes tried in order; a path that matches none is 404, a method that matches none 404 too (as GitHub)."""

    def __init__(self):
        self.routes: list[Route] = []
        self.seen: list[tuple[str, str, int]] = []  # (method, path, status) of every request

    def add(self, routes: list[Route]) -> None:
        self.routes.extend(routes)

    def __call__(self, request: Request) -> Response:
        for method, pattern, function in self.routes:
            found = pattern.match(request.path)
            if found and method in (request.method, "*"):
                request.params = {k: unquote(v) for k, v in found.groupdict().items()}
                try:
                    return function(request)
                except Refused as refused:
                    return refusal(refused.status, refused.message)
        return refusal(404, "Not Found")


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, *args) -> None:
        pass

    def _body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _serve(self) -> None:
        if (self.headers.get("Expect") or "").lower() == "100-continue":
            self.send_response_only(100)
            self.end_headers()
        split = urlsplit(self.path)
        request = Request(self.command, split.path, parse_qs(split.query, keep_blank_values=True),
                          {k.lower(): v for k, v in self.headers.items()}, self._body())
        try:
            response = self.server.app(request)
        except Exception as error:  # a bug of the server: say so to the client and the test
            self.server.errors.append(repr(error))
            response = refusal(500, f"loopback GitHub error: {error!r}")
        self.server.router.seen.append((request.method, self.path, response.status))
        self.send_response_only(response.status)
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(response.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(response.body)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = do_HEAD = _serve


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def get_request(self):
        sock, address = super().get_request()
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

    def finish_request(self, request, client_address) -> None:
        try:
            request.do_handshake()
        except (ssl.SSLError, OSError):  # a client that does not trust the CA hangs up here
            return
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address) -> None:
        """A client that hangs up before reading the whole answer (git and gh do, once they have what they
        need) is no error of the server's; anything else is printed as socketserver does."""
        if isinstance(sys.exc_info()[1], (ConnectionError, ssl.SSLEOFError, ssl.SSLZeroReturnError)):
            return
        super().handle_error(request, client_address)


class HttpsServer:
    """A TLS server on (address, port) answering every request with `router`."""

    def __init__(self, router: Router, address: str, port: int, chain: str, key: str):
        self._server = _Server((address, port), _Handler)
        self._server.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._server.context.load_cert_chain(chain, key)
        self._server.app = self._server.router = router
        self._server.errors = []
        self.address, self.port = address, self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def errors(self) -> list[str]:
        """Return the exceptions the routes raised (bugs of this server), as text."""
        return self._server.errors

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
