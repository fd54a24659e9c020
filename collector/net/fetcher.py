"""The one polite fetcher: the only code in the project that talks HTTP.

Every request, sent or refused, becomes one row of the request ledger. Every
exchange that got a response is written to the run's WARC file. Redirects are
followed here, one paced and robots-checked request per hop; retries are paced
too. An expected failure of a site is a result, never an exception.
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Mapping, TypeVar
from urllib.parse import urljoin, urlsplit

from collector import settings
from collector.clock import Clock
from collector.errors import RecordWriteError, TakedownWatchError
from collector.net.ledger import Ledger
from collector.net.guard import AddressGuard
from collector.net.pacing import HostPacer
from collector.net.robotscache import HostRobots, RobotsBook
from collector.net.slots import VantageSlots
from collector.net.warc import WarcPointer
from collector.net.wire import Exchange, new_pool, send_once, wire_address
from collector.urls import ASCII_WHITESPACE

T = TypeVar("T")
_END = object()
RETRYABLE = ("server_error", "timeout", "connection_error")
# A host whose robots.txt Crawl-delay is over settings.CRAWL_DELAY_MAX_SECONDS: nothing is sent to it.
DELAY_REFUSED = "crawl_delay_over_limit"
REDIRECT_STATUSES = (301, 302, 303, 307, 308)
# Headers that carry credentials: never sent on past a redirect to another
# origin (urllib3's Retry.DEFAULT_REMOVE_HEADERS_ON_REDIRECT holds the same three).
CREDENTIAL_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization"})
_DEFAULT_PORTS = {"http": 80, "https": 443}


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
                robots: bool = True, data: Mapping[str, str] | bytes | None = None,
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
        --max-wait); a limit is never raised above the fetcher's. A retry's
        wait is slept here; fetch_each() gives it to the host's other work.
        """
        fetch = Fetch(self, method, url, purpose=purpose, outlet_id=outlet_id, robots=robots,
                      data=data, headers=headers, max_hops=max_hops, attempts=attempts,
                      timeouts=self._limits(timeouts))
        while (wait := fetch.step()) is not None:
            self.clock.sleep(wait)
        return fetch.response

    def fetch_each(self, jobs: Iterable[T], address: Callable[[T], str], *, purpose: str,
                   outlet_id: str | None = None) -> Iterator[tuple[T, Response]]:
        """Yield (job, its response) for GETs of every job's address, each as it ends.

        One host's work queue with not-before times: a fetch whose retry must
        wait (5 s, then 15 s, or a short Retry-After) goes back into the queue
        until then, and the next address goes first, so the host's turns are
        not idled by a back-off. Retries, attempts and pacing are as request()
        makes them; a retry that has fallen due goes before a new address.
        Jobs are drawn from `jobs` only when one is needed, so a caller can
        stop feeding them (a host that keeps failing) at any time.
        """
        waiting: list[tuple[float, int, T, Fetch]] = []
        order = itertools.count()
        pending = iter(jobs)
        while True:
            if waiting and waiting[0][0] <= self.clock.monotonic():
                _ready, _n, job, fetch = heapq.heappop(waiting)
            else:
                job = next(pending, _END)
                if job is _END:
                    if not waiting:
                        return
                    self.clock.sleep(waiting[0][0] - self.clock.monotonic())
                    continue
                fetch = Fetch(self, "GET", address(job), purpose=purpose, outlet_id=outlet_id)
            wait = fetch.step()
            while wait == 0.0:  # the next hop of a redirect: at once (the host's pacing still holds)
                wait = fetch.step()
            if wait is None:
                yield job, fetch.response
            else:
                heapq.heappush(waiting, (self.clock.monotonic() + wait, next(order), job, fetch))

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
        _addresses, refused = self.guard.admit(parts.hostname)
        if refused:
            return refused
        if self.interval < settings.MIN_INTERVAL_SECONDS and not self.guard.is_loopback(parts.hostname):
            raise ConfigError(f"refusing {url}: the reduced interval applies only to loopback hosts")
        if robots:
            verdict, detail = self.robots.verdict(url, outlet_id)
            if verdict != "allowed":
                return verdict, detail
            return self._crawl_delay(url, outlet_id)
        return None

    def _crawl_delay(self, url: str, outlet_id: str | None) -> tuple[str, str] | None:
        """Pace the host at its robots.txt Crawl-delay; over settings.CRAWL_DELAY_MAX_SECONDS, refuse (DELAY_REFUSED)."""
        rules = self.robots.for_url(url, outlet_id).rules
        delay = rules.crawl_delay if rules is not None else None
        if delay is None or delay <= self.interval:
            return None
        if delay > settings.CRAWL_DELAY_MAX_SECONDS:
            return DELAY_REFUSED, (f"robots.txt asks for a Crawl-delay of {delay:g} s, more than "
                                   f"{settings.CRAWL_DELAY_MAX_SECONDS:g} s: carried over, not sent")
        self.pacer.set_delay(urlsplit(url).netloc.lower(), delay)
        return None

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
                    timeouts: tuple[float, float, float] | None = None,
                    intent: int | None = None) -> Exchange:
        parts = urlsplit(url)
        host = parts.netloc.lower()
        # The addresses the guard judged (cached): the connection goes to them
        # and nowhere else, whatever a second lookup of the name would say.
        addresses, _refused = self.guard.admit(parts.hostname or "")
        with self.pacer.acquire(host) as turn:
            # The host's turn is awaited at the wire (send_once's `turn`): the
            # checks and header building before the first byte overlap the wait.
            return send_once(self._pool, method, url, data=data, headers=headers,
                             timeouts=timeouts or self.timeouts, max_bytes=self.max_bytes,
                             clock=self.clock, warc=self.ledger.warc_for(intent), turn=turn,
                             addresses=addresses)


class Fetch:
    """One fetch in progress (its hop, attempt and chain of rows): each step() is one request or refusal.

    step() returns the seconds to wait before the next step (0 for the next
    hop of a redirect), or None when the fetch has ended and `response` holds
    its outcome. Whatever an address's octets do to the libraries below
    (issue 18: a raw Bangla path once made warcio raise and dropped the rest
    of an outlet's captures), it ends as a recorded result; only a record that
    cannot be written stops the run.
    """

    def __init__(self, fetcher: Fetcher, method: str, url: str, *, purpose: str,
                 outlet_id: str | None = None, robots: bool = True,
                 data: Mapping[str, str] | bytes | None = None, headers: Mapping[str, str] | None = None,
                 max_hops: int = settings.MAX_REDIRECT_HOPS, attempts: int | None = None,
                 timeouts: tuple[float, float, float] | None = None):
        self.fetcher, self.method, self.url, self.purpose = fetcher, method, url, purpose
        self.outlet_id, self.robots, self.data, self.headers = outlet_id, robots, data, headers
        self.max_hops, self.timeouts = max_hops, timeouts
        self.limit = min(attempts or settings.MAX_ATTEMPTS, settings.MAX_ATTEMPTS)
        self.current, self.problem = _address(url)
        self.seen: list[str] = []
        self.chain: list[int] = []
        self.previous: int | None = None
        self.hop = self.attempt = 0
        self.intent: int | None = None
        self.response: Response | None = None

    def step(self) -> float | None:
        """Send (or refuse) the next request; return the wait before the next step, None at the end."""
        if self.attempt == 0:
            if self.hop > self.max_hops:
                return self._end_unsent("too_many_redirects", f"more than {self.max_hops} redirects")
            refusal = self.problem or self.fetcher._refusal(self.current, self.seen, self.robots,
                                                            self.purpose, self.outlet_id)
            if refusal is not None:
                return self._end_unsent(*refusal)
            self.seen.append(self.current)
        self.attempt += 1
        self.intent = None
        try:
            exchange, row = self._send()
        except RecordWriteError:
            raise
        except Exception as exc:  # noqa: BLE001 - recorded, with its type, as our own failure
            return self._end_failed(f"{type(exc).__name__}: {exc}"[:300])
        self.chain.append(row)
        wait = self.fetcher._retry_wait(exchange, self.attempt, self.limit)
        if wait is not None:
            return wait
        return self._answered(exchange, row)

    def _send(self) -> tuple[Exchange, int]:
        fetcher = self.fetcher
        # In the ledger before it is sent: a kill from here on leaves an intent to close.
        intent = self.intent = fetcher.ledger.intend(self.method, self.current, purpose=self.purpose,
                                       outlet_id=self.outlet_id, attempt=self.attempt,
                                       redirected_from=self.previous)
        exchange = fetcher._paced_send(self.method, self.current, self.data, self.headers, self.timeouts,
                                       intent)
        fetcher.pacer.give_way()  # the ledger row can wait for a request due on the wire
        row = fetcher.ledger.record(exchange, purpose=self.purpose, outlet_id=self.outlet_id,
                                    attempt=self.attempt, redirected_from=self.previous, intent=intent)
        return exchange, row

    def _answered(self, exchange: Exchange, row: int) -> float | None:
        """Follow a redirect (return 0: the next hop), or end with the answer (None)."""
        location = exchange.headers.get("location")
        if exchange.result != "redirect" or not location:
            self.response = Response(self.url, self.current, exchange.result, exchange.status,
                                     exchange.headers, exchange.content, row, self.chain,
                                     exchange.remote_ip, exchange.warc, exchange.detail)
            self.fetcher.pacer.give_way()  # the caller's work on the answer can wait too
            return None
        self.previous = row
        following, self.problem = _address(urljoin(self.current, location.strip(ASCII_WHITESPACE)))
        if self.headers and strips_credentials(self.current, following):
            self.headers = {k: v for k, v in self.headers.items() if k.lower() not in CREDENTIAL_HEADERS}
        self.current = following
        if self.method == "POST" and exchange.status in (301, 302, 303):
            self.method, self.data = "GET", None
        self.hop, self.attempt = self.hop + 1, 0
        return 0.0

    def _end_failed(self, detail: str) -> None:
        """End with a failure of ours; a request already intended is completed by the row (it may have gone out)."""
        if self.intent is None:
            return self._end_unsent("client_error", detail)
        now = self.fetcher.clock.now()
        failed = Exchange(self.method, self.current, now, now, "client_error", detail=detail)
        row = self.fetcher.ledger.record(failed, purpose=self.purpose, outlet_id=self.outlet_id,
                                         attempt=self.attempt, redirected_from=self.previous,
                                         intent=self.intent)
        self.chain.append(row)
        self.response = Response(self.url, self.current, "client_error", request_id=row, chain=self.chain,
                                 detail=detail)
        return None

    def _end_unsent(self, result: str, detail: str | None) -> None:
        row = self.fetcher.ledger.refused(self.method, self.current, self.purpose, self.outlet_id,
                                          self.previous, result, detail)
        self.chain.append(row)
        self.response = Response(self.url, self.current, result, request_id=row, chain=self.chain,
                                 detail=detail)
        return None


def strips_credentials(old_url: str, new_url: str) -> bool:
    """Return True when a redirect from old_url to new_url leaves the origin its credentials belong to.

    The rule of requests' SessionRedirectMixin.should_strip_auth (requests
    2.34, sessions.py): another host name, or another scheme or port, except
    the upgrade from http on its default port to https on its own.
    """
    old, new = urlsplit(old_url), urlsplit(new_url)
    try:
        old_port, new_port = old.port, new.port
    except ValueError:
        return True
    if old.hostname != new.hostname:
        return True
    if (old.scheme == "http" and old_port in (80, None)
            and new.scheme == "https" and new_port in (443, None)):
        return False
    if old.scheme == new.scheme:
        default = _DEFAULT_PORTS.get(old.scheme)
        return (old_port or default) != (new_port or default)
    return True


def _address(text: str) -> tuple[str, tuple[str, str] | None]:
    """Return (the address as it is sent, None), or (the text, (result, why)) when it has no such form."""
    try:
        return wire_address(text), None
    except ValueError as exc:
        return text, ("invalid_url", f"not a usable address: {exc}"[:300])
