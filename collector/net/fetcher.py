"""The one polite fetcher: the only code in the project that talks HTTP.

Every request, sent or refused, becomes one row of the request ledger. Every
exchange that got a response is written to the run's WARC file. Redirects are
followed here, one paced and robots-checked request per hop; retries are paced
too. An expected failure of a site is a result, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping
from urllib.parse import urljoin, urlsplit

from collector import settings
from collector.clock import Clock
from collector.errors import TakedownWatchError
from collector.net.ledger import Ledger
from collector.net.guard import AddressGuard
from collector.net.pacing import HostPacer
from collector.net.robotscache import HostRobots, RobotsBook
from collector.net.slots import VantageSlots
from collector.net.warc import WarcPointer
from collector.net.wire import Exchange, new_pool, send_once

RETRYABLE = ("server_error", "timeout", "connection_error")
REDIRECT_STATUSES = (301, 302, 303, 307, 308)


class ConfigError(TakedownWatchError):
    """The collector was asked to run in a way its rules forbid."""


@dataclass
class Response:
    """What one fetch (with its redirects and retries) came to."""

    url: str
    final_url: str
    result: str
    status: int | None = None
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    request_id: int | None = None
    chain: list[int] = field(default_factory=list)
    remote_ip: str | None = None
    warc: WarcPointer | None = None
    detail: str | None = None

    @property
    def ok(self) -> bool:
        """Return True for a successful (2xx) final response."""
        return self.result == "ok"

    @property
    def content_type(self) -> str | None:
        """Return the Content-Type header of the final response, if any."""
        return self.headers.get("content-type")


class Fetcher:
    """Sends requests under every rule of the method and records each one."""

    def __init__(
        self,
        ledger: Ledger,
        *,
        clock: Clock | None = None,
        interval: float = settings.MIN_INTERVAL_SECONDS,
        allow_loopback: bool = False,
        backoff: tuple[float, ...] = settings.BACKOFF_SECONDS,
        connect_timeout: float = settings.CONNECT_TIMEOUT_SECONDS,
        read_timeout: float = settings.READ_TIMEOUT_SECONDS,
        total_timeout: float = settings.TOTAL_TIMEOUT_SECONDS,
        max_bytes: int = settings.MAX_RESPONSE_BYTES,
        max_retry_after: float = settings.MAX_RETRY_AFTER_SECONDS,
        slots: VantageSlots | None = None,
        source_address: str | None = None,
    ):
        if interval < settings.MIN_INTERVAL_SECONDS and not allow_loopback:
            raise ConfigError(
                f"an interval of {interval} s is below the {settings.MIN_INTERVAL_SECONDS} s floor; "
                "it is allowed only for loopback test hosts")
        self.ledger = ledger
        self.clock = clock or Clock()
        self.interval = interval
        self.backoff = backoff
        self.timeouts = (connect_timeout, read_timeout, total_timeout)
        self.max_bytes = max_bytes
        self.max_retry_after = max_retry_after
        self.pacer = HostPacer(interval, self.clock, self._margin, slots)
        self.guard = AddressGuard(allow_loopback=allow_loopback)
        self.robots = RobotsBook(self)
        # One pool manager for all threads: urllib3's pools are thread-safe,
        # and keep-alive connections are reused per host.
        self._pool = new_pool(source_address)

    # -- public -------------------------------------------------------------

    def robots_for(self, url: str, outlet_id: str | None = None) -> HostRobots:
        """Return what the robots.txt of url's host says (fetched, paced and recorded the first time)."""
        return self.robots.for_url(url, outlet_id)

    def start_line(self, at: float) -> None:
        """Hold every host's first request until monotonic time `at` (a run's threads start together)."""
        self.pacer.start_line(at)

    def get(self, url: str, *, purpose: str, outlet_id: str | None = None,
            robots: bool = True, max_hops: int = settings.MAX_REDIRECT_HOPS,
            headers: Mapping[str, str] | None = None, attempts: int | None = None,
            timeouts: tuple[float, float, float] | None = None) -> Response:
        """Return the outcome of a GET, following redirects hop by hop."""
        return self.request("GET", url, purpose=purpose, outlet_id=outlet_id, robots=robots,
                            max_hops=max_hops, headers=headers, attempts=attempts, timeouts=timeouts)

    def request(self, method: str, url: str, *, purpose: str, outlet_id: str | None = None,
                robots: bool = True, data: Mapping[str, str] | None = None,
                headers: Mapping[str, str] | None = None,
                max_hops: int = settings.MAX_REDIRECT_HOPS,
                attempts: int | None = None,
                timeouts: tuple[float, float, float] | None = None) -> Response:
        """Return the outcome of one request and its redirects, each hop paced and recorded.

        `attempts` lowers the number of tries for this call (1: never retried),
        for requests that must not be repeated blindly, such as a submission
        that may have been accepted although its answer was lost. `timeouts`
        (connect, read, total seconds) lowers the fetcher's own limits for this
        call, for a caller with a hard deadline of its own (the archive job's
        --max-wait); a limit is never raised above the fetcher's.
        """
        seen: list[str] = []
        previous: int | None = None
        chain: list[int] = []
        current = url
        for _hop in range(max_hops + 1):
            refusal = self._refusal(current, seen, robots, purpose, outlet_id)
            if refusal is not None:
                result, detail = refusal
                row = self.ledger.refused(method, current, purpose, outlet_id, previous, result, detail)
                return Response(url, current, result, request_id=row, chain=chain + [row], detail=detail)
            seen.append(current)
            response = self._attempts(method, current, purpose, outlet_id, previous, data, headers,
                                      attempts, self._limits(timeouts))
            chain.extend(response.chain)
            response.chain, response.url = chain, url
            location = response.headers.get("location")
            if response.result != "redirect" or not location:
                self.pacer.give_way()  # the caller's work on the answer can wait too
                return response
            previous = response.request_id
            current = urljoin(current, location.strip())
            if method == "POST" and response.status in (301, 302, 303):
                method, data = "GET", None
        row = self.ledger.refused(method, current, purpose, outlet_id, previous,
                                  "too_many_redirects", f"more than {max_hops} redirects")
        return Response(url, current, "too_many_redirects", request_id=row, chain=chain + [row])

    # -- one address --------------------------------------------------------

    def _refusal(self, url: str, seen: list[str], robots: bool, purpose: str,
                 outlet_id: str | None) -> tuple[str, str] | None:
        try:
            parts = urlsplit(url)
            parts.port  # raises on a malformed port or bracketed host
        except ValueError as exc:
            return "invalid_url", f"malformed address: {exc}"
        if parts.scheme not in settings.ALLOWED_SCHEMES or not parts.hostname:
            return "invalid_url", f"scheme {parts.scheme or 'none'} is not fetched"
        if len(url) > settings.MAX_URL_LENGTH:
            return "invalid_url", f"address longer than {settings.MAX_URL_LENGTH} characters"
        if url in seen:
            return "redirect_loop", "address already requested in this redirect chain"
        blocked = self.guard.check(parts.hostname)
        if blocked:
            return "blocked_address", blocked
        if self.interval < settings.MIN_INTERVAL_SECONDS and not self.guard.is_loopback(parts.hostname):
            raise ConfigError(f"refusing {url}: the reduced interval applies only to loopback hosts")
        if robots:
            verdict, detail = self.robots.verdict(url, outlet_id)
            if verdict != "allowed":
                return verdict, detail
        return None

    def _attempts(self, method: str, url: str, purpose: str, outlet_id: str | None,
                  previous: int | None, data, headers, attempts: int | None = None,
                  timeouts: tuple[float, float, float] | None = None) -> Response:
        chain: list[int] = []
        limit = min(attempts or settings.MAX_ATTEMPTS, settings.MAX_ATTEMPTS)
        for attempt in range(1, limit + 1):
            exchange = self._paced_send(method, url, data, headers, timeouts or self.timeouts)
            self.pacer.give_way()  # the ledger row can wait for a request due on the wire
            row = self.ledger.record(exchange, purpose=purpose, outlet_id=outlet_id,
                                     attempt=attempt, redirected_from=previous)
            chain.append(row)
            wait = self._retry_wait(exchange, attempt, limit)
            if wait is None:
                break
            self.clock.sleep(wait)
        return Response(url, url, exchange.result, exchange.status, exchange.headers,
                        exchange.content, row, chain, exchange.remote_ip, exchange.warc,
                        exchange.detail)

    def _retry_wait(self, exchange: Exchange, attempt: int,
                    limit: int = settings.MAX_ATTEMPTS) -> float | None:
        """Return seconds to wait before another attempt, or None to stop."""
        if attempt >= limit:
            return None
        if exchange.result in RETRYABLE:
            return self.backoff[min(attempt - 1, len(self.backoff) - 1)]
        if exchange.result == "rate_limited":
            after = exchange.retry_after
            if after is not None and after <= self.max_retry_after:
                return after
        return None

    def _margin(self, netloc: str) -> float:
        """Return the host's margin above the interval: network jitter, or none on loopback."""
        loopback = self.guard.is_loopback(urlsplit("//" + netloc).hostname or "")
        return settings.LOOPBACK_PACING_SAFETY_SECONDS if loopback else settings.PACING_SAFETY_SECONDS

    def _limits(self, timeouts: tuple[float, float, float] | None) -> tuple[float, float, float]:
        """Return the fetcher's (connect, read, total) limits, each lowered to the caller's."""
        if timeouts is None:
            return self.timeouts
        return tuple(min(own, max(asked, 0.001)) for own, asked in zip(self.timeouts, timeouts))

    def _paced_send(self, method: str, url: str, data, headers,
                    timeouts: tuple[float, float, float] | None = None) -> Exchange:
        host = urlsplit(url).netloc.lower()
        with self.pacer.acquire(host) as turn:
            # The host's turn is awaited at the wire (send_once's `turn`): the
            # checks and header building before the first byte overlap the wait.
            return send_once(self._pool, method, url, data=data, headers=headers,
                             timeouts=timeouts or self.timeouts, max_bytes=self.max_bytes,
                             clock=self.clock, warc=self.ledger.warc, turn=turn)
