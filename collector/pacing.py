"""Per-host pacing: at least one interval between the starts of two requests."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from .clock import Clock


@dataclass
class _HostSlot:
    lock: threading.Lock = field(default_factory=threading.Lock)
    last_start: float | None = None


class HostPacer:
    """Hands out request start times so no host sees two starts closer than the interval.

    A thread that wants to talk to a host holds that host's lock while it waits,
    so requests to one host are strictly ordered, while different hosts wait
    independently (hosts are served concurrently).
    """

    def __init__(self, interval: float, clock: Clock, safety: float = 0.0):
        self.interval = interval
        self.safety = safety
        self.clock = clock
        self._slots: dict[str, _HostSlot] = {}
        self._guard = threading.Lock()

    def _slot(self, host: str) -> _HostSlot:
        with self._guard:
            return self._slots.setdefault(host, _HostSlot())

    def acquire(self, host: str) -> "_Turn":
        """Return a context manager that waits for the host's turn and marks its start."""
        return _Turn(self, self._slot(host))

    def gap_until_ready(self, host: str) -> float:
        """Return how many seconds remain before the host may be asked again."""
        slot = self._slot(host)
        if slot.last_start is None:
            return 0.0
        return max(0.0, slot.last_start + self.interval + self.safety - self.clock.monotonic())


class _Turn:
    def __init__(self, pacer: HostPacer, slot: _HostSlot):
        self.pacer = pacer
        self.slot = slot

    def __enter__(self) -> "_Turn":
        self.slot.lock.acquire()
        pacer = self.pacer
        if self.slot.last_start is not None:
            ready = self.slot.last_start + pacer.interval + pacer.safety
            pacer.clock.sleep(ready - pacer.clock.monotonic())
        # The start is stamped when the wait ends: the gap is measured between
        # the starts of two requests, whatever each one then took.
        self.slot.last_start = pacer.clock.monotonic()
        return self

    def sent(self, at: float | None) -> None:
        """Move the host's start mark to when the request was actually written."""
        if at is not None and self.slot.last_start is not None and at > self.slot.last_start:
            self.slot.last_start = at

    def __exit__(self, *exc) -> None:
        self.slot.lock.release()
