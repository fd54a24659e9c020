"""Where a snapshot replays: the day's WACZ, its address, and the time to ask for, its WARC record's WARC-Date.

ReplayWeb.page (webrecorder/wabac.js, ArchiveDB.lookupUrl) serves, for an
address and a time, the first capture at or after that time, else the last
before it; its times are the CDXJ index's 14 digits, the record's WARC-Date
to the second (py-wacz indexes with warcio's iso_date_to_timestamp). A
snapshot's captured_at is set after the exchange ended, up to a second or
more after its record's WARC-Date: a time built from it can fall past the
record's second and open the next capture of the same address. So a replay
is always asked for at the record's own WARC-Date.

A link opens ReplayWeb.page (`REPLAY_APP_URL`) with the package as its
source and the capture in its fragment (`#view=replay&url=...&ts=...`, as
replayweb.page's embedding documentation gives `url` and `ts`); the package
must be where the browser can fetch it. Without such a place, the WACZ's
name, the address and the 14 digits say where to look in the package
opened by hand (its page list shows each page's time).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import urlencode

from collector import settings
from collector.errors import TakedownWatchError


# WARC/1.1 5.4: a UTC instant, W3C-ISO8601, to the second or a fraction of it.
WARC_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?Z")


class ReplayError(TakedownWatchError):
    """A record gives no time or address to replay it at."""


def timestamp(warc_date: str) -> str:
    """Return the 14-digit replay time (YYYYMMDDhhmmss) of a WARC-Date, to the second as the CDXJ index has it.

    The fraction is dropped, not rounded, as warcio's iso_date_to_timestamp
    (which py-wacz indexes with) drops it.
    """
    found = WARC_DATE.fullmatch(warc_date or "")
    if not found:
        raise ReplayError(f"not a WARC-Date (UTC, to the second or finer): {warc_date!r}")
    return "".join(found.groups())


def wacz_day(warc_file: str) -> str:
    """Return the UTC day (YYYY-MM-DD) whose WACZ holds a WARC file (its folder: YYYY/MM/DD/run-...)."""
    parts = PurePosixPath(warc_file).parts
    if len(parts) < 4 or not all(p.isdigit() for p in parts[:3]):
        raise ReplayError(f"{warc_file} is not in a YYYY/MM/DD folder")
    return "-".join(parts[:3])


@dataclass(frozen=True)
class Replay:
    """One capture in the day's WACZ: the package, the address and the record's WARC-Date."""

    wacz: str  # DAY.wacz
    url: str  # the record's WARC-Target-URI
    warc_date: str

    @property
    def ts(self) -> str:
        return timestamp(self.warc_date)

    def fragment(self) -> str:
        """Return ReplayWeb.page's fragment that opens this capture (view, url, ts)."""
        return urlencode({"view": "replay", "url": self.url, "ts": self.ts})

    def link(self, wacz_url: str, app: str | None = None) -> str:
        """Return a ReplayWeb.page address that opens this capture in the package at `wacz_url`."""
        return f"{app or settings.REPLAY_APP_URL}?{urlencode({'source': wacz_url})}#{self.fragment()}"

    def as_row(self) -> dict:
        return {"wacz": self.wacz, "url": self.url, "warc_date": self.warc_date, "ts": self.ts,
                "fragment": self.fragment()}


def replay_of(warc_file: str, warc_date: str | None, url: str | None) -> Replay:
    """Return where the response record of a WARC file, with its WARC-Date and target, replays."""
    if not warc_date or not url:
        raise ReplayError(f"a record of {warc_file} has no WARC-Date or WARC-Target-URI")
    timestamp(warc_date)  # a WARC-Date that is none is refused here, not when shown
    return Replay(f"{wacz_day(warc_file)}.wacz", url, warc_date)
