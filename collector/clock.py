"""Time, made injectable so tests and replays can say what time it is."""

from __future__ import annotations

import time
from datetime import datetime, timezone


def parse_instant(text: str) -> datetime:
    """Return an aware UTC datetime from an ISO-8601 string (naive means UTC)."""
    value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def parse_given_instant(text: str) -> datetime:
    """Return an aware UTC datetime from ISO-8601 text that names its offset (Z or +06:00).

    For instants a person or a workflow gives (--now, --deadline): text with no
    offset is refused, because reading it as UTC would silently move a replay
    by six hours when it was meant as Dhaka time.
    """
    value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError(f"{text!r} names no time zone: add Z (UTC) or an offset such as +06:00")
    return value.astimezone(timezone.utc)


def iso(value: datetime) -> str:
    """Return the canonical ISO-8601 UTC text the record uses (microseconds, Z)."""
    return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def iso_seconds(value: datetime) -> str:
    """Return ISO-8601 UTC text to the second (Z): parsed dates, export headers, WARC bookkeeping.

    Raises OverflowError for an instant its offset pushes past year 1 or 9999.
    """
    return value.astimezone(timezone.utc).replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


class Clock:
    """Gives wall time for the record and monotonic time for pacing.

    With `start` set (the `--now` option) the record's time begins there and
    advances with the real monotonic clock, so intervals stay true.
    """

    def __init__(self, start: datetime | None = None):
        self._origin_wall = start or datetime.now(timezone.utc)
        self._origin_mono = time.monotonic()
        self._fixed = start is not None

    def now(self) -> datetime:
        """Return the current instant as an aware UTC datetime."""
        if not self._fixed:
            return datetime.now(timezone.utc)
        from datetime import timedelta

        return self._origin_wall + timedelta(seconds=time.monotonic() - self._origin_mono)

    def now_iso(self) -> str:
        """Return the current instant as record text."""
        return iso(self.now())

    @staticmethod
    def epoch() -> float:
        """Return real POSIX seconds (never the --now start): the time other processes share."""
        return time.time()

    @staticmethod
    def monotonic() -> float:
        """Return seconds on a clock that never goes back (for pacing)."""
        return time.monotonic()

    @staticmethod
    def sleep(seconds: float) -> None:
        """Wait for the given number of seconds (no-op when not positive)."""
        if seconds > 0:
            time.sleep(seconds)
