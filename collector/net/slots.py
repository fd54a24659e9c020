"""Time slots that keep the site-wide rate when several vantages request the same sites.

The method promises at most one request every two seconds to any site, not
per vantage. V collector processes in different places share nothing but
the time of day, so each takes its own slots: time is cut into cycles of V
slots of `interval + margin` seconds, and vantage k (1..V) may begin a request
to a host only in the first `margin / 2` seconds of slot k. Two requests
from different vantages are then at least `interval + margin / 2` apart by
their own clocks, so they stay `interval` apart at the site as long as the
vantages' clocks and their network delays to the site differ by less than
`margin / 2` together. One vantage's own requests to a host are a cycle apart.
NTP keeps a GitHub-hosted runner within a few milliseconds of UTC; a
self-hosted runner must run an NTP client too (docs/operating.md, "A runner inside Bangladesh").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from collector import settings
from collector.errors import BadArgument


@dataclass(frozen=True)
class VantageSlots:
    """Vantage `index` of `count`, for requests at least `interval` apart at every site."""

    index: int
    count: int
    interval: float
    margin: float

    @property
    def slot(self) -> float:
        """Return the length of one vantage's slot in seconds."""
        return self.interval + self.margin

    @property
    def cycle(self) -> float:
        """Return the seconds between two slots of one vantage: its own interval per host."""
        return self.count * self.slot

    @property
    def window(self) -> float:
        """Return the seconds at the start of a slot in which a request may begin."""
        return self.margin / 2

    def next_start(self, epoch: float) -> float:
        """Return the first POSIX time at or after `epoch` at which this vantage may begin a request."""
        if self.count == 1:
            return epoch
        offset = (self.index - 1) * self.slot
        cycles = math.floor((epoch - offset) / self.cycle)
        start = cycles * self.cycle + offset
        if epoch < start + self.window:
            return max(epoch, start)
        return start + self.cycle


def vantage_slots(text: str, interval: float) -> VantageSlots:
    """Return the slots of '--vantage-slot K/V' at the given interval (the margin scales with it)."""
    parts = (text or "").replace(" ", "").split("/")
    if len(parts) != 2 or not all(p.isdigit() for p in parts) or not 1 <= int(parts[0]) <= int(parts[1]):
        raise BadArgument(f"{text!r} is not K/V with 1 <= K <= V (for example 2/2)", option="--vantage-slot")
    return VantageSlots(int(parts[0]), int(parts[1]), interval, interval * settings.VANTAGE_SLOT_MARGIN_SHARE)
