"""Per-host pacing: at least one interval between the starts of two requests.

A host whose robots.txt asks for a longer Crawl-delay is paced at that delay
instead (set_delay, from the fetcher once its robots.txt is read).

Each host has a slot: a lock, so requests to one host are strictly ordered,
and the time its last request was written, so the next one waits out the
interval plus a margin. The wait happens at the wire (transfer.send_once calls
`_Turn.wait()` just before connecting or writing), so the work of preparing a
request overlaps it.

Because every outlet thread shares one interpreter, requests due on the wire
are also given the right of way: turns of different hosts are released a
little apart, first contacts wait for a common start line, and bookkeeping
(parsing answers, WARC records, ledger rows) calls `give_way()` first, which
waits while another host's request is being sent or is about to be. Without
that, a thread whose turn has come finds the interpreter busy with other
threads' bookkeeping, and each late start pushes all of that host's later
turns back (bench/pacing.py measures how close a crawl comes to the bound).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable

from collector import settings
from collector.clock import Clock
from collector.net.slots import VantageSlots


@dataclass
class _HostSlot:
    safety: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    last_start: float | None = None
    delay: float = 0.0  # the host's robots.txt Crawl-delay: its interval when longer than the pacer's


class HostPacer:
    """Hands out request start times so no host sees two starts closer than the interval.

    A thread that wants to talk to a host holds that host's lock while it waits,
    so requests to one host are strictly ordered, while different hosts wait
    independently (hosts are served concurrently).
    """

    def __init__(self, interval: float, clock: Clock, safety: Callable[[str], float] = lambda host: 0.0,
                 slots: VantageSlots | None = None):
        self.interval = interval
        self.slots = slots  # this vantage's time slots when several vantages share the sites
        self.safety = safety  # host -> its margin above the interval, asked once per host
        self.clock = clock
        self.start_at: float | None = None
        self._slots: dict[str, _HostSlot] = {}
        self._guard = threading.Lock()
        # Right of way: turns sleeping until their time, and turns on the wire.
        self._due: dict[int, float] = {}
        self._on_wire = 0
        self._last_release = float("-inf")
        self.spacing = settings.RELEASE_SPACING_SECONDS

    def start_line(self, at: float) -> None:
        """Hold every host's first contact until monotonic time `at`.

        Outlet threads prepare their first request (checks, connection pool,
        headers) before the line, so the hosts are first contacted together
        instead of one after another as each thread gets the interpreter.
        """
        self.start_at = at

    def _slot(self, host: str) -> _HostSlot:
        with self._guard:
            slot = self._slots.get(host)
        if slot is None:
            margin = self.safety(host)  # may resolve the host: outside the lock
            with self._guard:
                slot = self._slots.setdefault(host, _HostSlot(margin))
        return slot

    def set_delay(self, host: str, seconds: float | None) -> None:
        """Pace the host at `seconds` between starts when that is longer than the interval (its Crawl-delay)."""
        self._slot(host).delay = seconds or 0.0

    def interval_for(self, host: str) -> float:
        """Return the seconds between the starts of two requests to the host: the interval or its Crawl-delay."""
        with self._guard:
            slot = self._slots.get(host)
        return max(self.interval, slot.delay if slot else 0.0)

    def delayed_hosts(self) -> dict[str, float]:
        """Return the hosts paced at their Crawl-delay, longer than the interval, with the seconds used."""
        with self._guard:
            return {host: slot.delay for host, slot in sorted(self._slots.items()) if slot.delay > self.interval}

    def last_start(self, host: str) -> float | None:
        """Return the monotonic time the last request to this host was started, if any was."""
        with self._guard:
            slot = self._slots.get(host)
        return slot.last_start if slot else None

    def acquire(self, host: str) -> "_Turn":
        """Return a context manager holding the host's turn; `wait()` on it before contact."""
        return _Turn(self, self._slot(host))

    def gap_until_ready(self, host: str) -> float:
        """Return how many seconds remain before the host may be asked again."""
        slot = self._slot(host)
        if slot.last_start is None:
            return 0.0
        return max(0.0, slot.last_start + max(self.interval, slot.delay) + slot.safety - self.clock.monotonic())

    def give_way(self, window: float = settings.GIVE_WAY_WINDOW_SECONDS,
                 limit: float = settings.GIVE_WAY_LIMIT_SECONDS) -> float:
        """Wait for a moment with no request on the wire or due within `window`; return the wait.

        Called before work that can wait a moment (bookkeeping), never while
        holding a lock a sender needs. The quiet moment is worked out from the
        due times, so a call sleeps once or twice rather than polling; it never
        waits longer than `limit` in all, so a stream of requests cannot hold
        bookkeeping back indefinitely.
        """
        begun = self.clock.monotonic()
        while True:
            with self._guard:
                due = sorted(self._due.values())
                busy = self._on_wire > 0
            now = self.clock.monotonic()
            quiet = _first_clear(now + (self.spacing if busy else 0.0), due, window, self.spacing)
            waited = self.clock.monotonic() - begun
            if quiet <= now or waited >= limit:
                return waited
            self.clock.sleep(min(quiet - now, limit - waited))

    def _going(self, key: int, ready: float | None) -> float | None:
        """Register a turn as due at `ready` (returned, spaced from the others), or as on the wire."""
        with self._guard:
            if ready is None:
                self._due.pop(key, None)
                self._on_wire += 1
                self._last_release = self.clock.monotonic()
                return None
            ready = _first_clear(max(ready, self._last_release + self.spacing),
                                 sorted(self._due.values()), self.spacing, self.spacing)
            self._due[key] = ready
            return ready

    def _in_slot(self, ready: float) -> float:
        """Return the first monotonic time from `ready` inside this vantage's slots (collector/net/slots.py)."""
        if self.slots is None:
            return ready
        offset = self.clock.epoch() - self.clock.monotonic()
        return self.slots.next_start(ready + offset) - offset

    def _written(self) -> None:
        with self._guard:
            self._on_wire -= 1


def _first_clear(start: float, busy: list[float], ahead: float, after: float) -> float:
    """Return the first time from `start` with no time of `busy` (sorted) within `ahead`
    after it, each busy time occupying `after` from itself.

    Used to release a turn clear of the others (ahead = after = the spacing) and
    to find a quiet moment for bookkeeping (ahead = its window).
    """
    at = start
    for when in busy:
        if when + after <= at:
            continue
        if when >= at + ahead:
            break
        at = when + after
    return at


class _Turn:
    """One request's turn at a host: the lock is held from entry to exit, the wait is `wait()`.

    The wait is separate from entry so that it can sit at the wire: everything a
    request needs before its first byte (address checks, building headers,
    finding a pooled connection) is done while the host's interval runs out, and
    `wait()` is called only immediately before connecting or writing.
    `written()` is called once the request has been written; the turn is
    closed on exit whatever happened.
    """

    def __init__(self, pacer: HostPacer, slot: _HostSlot):
        self.pacer = pacer
        self.slot = slot
        self.waited = False
        self.on_wire = False

    def __enter__(self) -> "_Turn":
        self.slot.lock.acquire()
        self.waited = self.on_wire = False
        return self

    def wait(self) -> None:
        """Sleep until the host may be contacted, then mark the start (once per turn)."""
        if self.waited:
            return
        pacer = self.pacer
        ready = None
        if self.slot.last_start is not None:
            ready = self.slot.last_start + max(pacer.interval, self.slot.delay) + self.slot.safety
        elif pacer.start_at is not None:
            ready = pacer.start_at
        if ready is None:
            ready = pacer.clock.monotonic()
        ready = pacer._going(id(self), pacer._in_slot(ready))
        pacer.clock.sleep(ready - pacer.clock.monotonic())
        while pacer.slots is not None and pacer._in_slot(pacer.clock.monotonic()) > pacer.clock.monotonic():
            pacer.clock.sleep(pacer._in_slot(pacer.clock.monotonic()) - pacer.clock.monotonic())  # woke late
        pacer._going(id(self), None)
        self.on_wire = True
        # The start is stamped when the wait ends: the gap is measured between
        # the starts of two requests, whatever each one then took.
        self.slot.last_start = pacer.clock.monotonic()
        self.waited = True

    def written_now(self) -> None:
        """Note that the request has been written just now (on the pacer's clock)."""
        self.written(self.pacer.clock.monotonic())

    def written(self, at: float | None = None) -> None:
        """Note that the request has been written (at monotonic time `at`).

        The start mark moves to `at`, so the next wait is measured from the
        end of the write; and the turn no longer has the right of way.
        """
        if at is not None and self.slot.last_start is not None and at > self.slot.last_start:
            self.slot.last_start = at
        if self.on_wire:
            self.on_wire = False
            self.pacer._written()

    def __exit__(self, *exc) -> None:
        try:
            if self.on_wire:
                # A connect or write that failed: whatever reached the host did
                # so before now, so the next wait is measured from now.
                self.written(self.pacer.clock.monotonic())
        finally:
            self.slot.lock.release()
