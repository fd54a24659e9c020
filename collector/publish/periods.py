"""The periods figures are published for: closed ISO weeks and the months they make up.

Only closed periods are published, and each once: a week (Monday 00:00 to
Monday 00:00 UTC) becomes publishable settings.PUBLISH_AFTER_HOURS after it
ends, and a month when its last week does. A month here is a *month of
weeks*: the ISO weeks whose Thursday falls in the calendar month (the rule
ISO 8601 uses to give a week to a year). So every week belongs to exactly one
month and a month's counts are exact sums of its weeks' counts, which keeps
the published history cut into independent blocks, one a month, for the
disclosure audit: nothing published about one month constrains another.

Every figure is a function of the record and of fixed instants (the week's
bounds and its publication cut-off), never of the moment a build runs, so the
same record gives the same figures whenever they are computed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from collector import settings

_J2000 = datetime(2000, 1, 1, 12, tzinfo=timezone.utc)  # Julian day 2451545.0
WEEK = timedelta(days=7)


@dataclass(frozen=True)
class Period:
    """One published period: its id, kind ('week' or 'month'), bounds, month and weeks."""

    id: str
    kind: str
    start: datetime
    end: datetime
    month: str  # the month (block) it belongs to; a month's own id
    weeks: tuple[str, ...]  # the ids of the weeks it is made of (a week: itself)

    @property
    def cutoff(self) -> datetime:
        """Return the instant after which nothing recorded changes this period's figures."""
        return self.end + timedelta(hours=settings.PUBLISH_AFTER_HOURS)


def week_start(moment: datetime) -> datetime:
    """Return Monday 00:00 UTC of the ISO week holding moment."""
    day = moment.astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    return day - timedelta(days=day.weekday())


def week_id(start: datetime) -> str:
    """Return the ISO week label of a week start, e.g. '2026-W48'."""
    year, week, _ = start.isocalendar()
    return f"{year}-W{week:02d}"


def month_of(start: datetime) -> str:
    """Return the month of weeks ('2026-11') a week starting at start belongs to: its Thursday's."""
    thursday = start + timedelta(days=3)
    return f"{thursday.year}-{thursday.month:02d}"


def weeks_of_month(month: str) -> list[datetime]:
    """Return the starts of the ISO weeks whose Thursday falls in the month, in order."""
    year, number = (int(part) for part in month.split("-"))
    first = datetime(year, number, 1, tzinfo=timezone.utc)
    # The first Thursday of the month, then back to its Monday.
    start = week_start(first + timedelta(days=(3 - first.weekday()) % 7))
    weeks = []
    while month_of(start) == month:
        weeks.append(start)
        start += WEEK
    return weeks


def week(start: datetime) -> Period:
    """Return the week period starting at start."""
    wid = week_id(start)
    return Period(wid, "week", start, start + WEEK, month_of(start), (wid,))


def month(month_id: str, since: datetime | None = None) -> Period:
    """Return the month period of the given id; with since, only its weeks from since's week on."""
    starts = [s for s in weeks_of_month(month_id) if since is None or s >= week_start(since)]
    return Period(month_id, "month", starts[0], starts[-1] + WEEK, month_id,
                  tuple(week_id(s) for s in starts))


def closed_periods(first_event: datetime | None, now: datetime) -> list[Period]:
    """Return every period publishable by now, from the week of the first event, in publication order.

    A month follows its last week. The record's first month is made of its
    weeks from the first event's on.
    """
    if first_event is None:
        return []
    out: list[Period] = []
    start = week_start(first_event)
    while week(start).cutoff <= now:
        out.append(week(start))
        if month_of(start + WEEK) != month_of(start):
            out.append(month(month_of(start), first_event))
        start += WEEK
    return out


def julian_day(moment: datetime) -> float:
    """Return moment as a Julian day number computed exactly as SQLite's julianday() does.

    SQLite counts whole milliseconds and divides once; doing the same here makes
    an observation stamped exactly at a boundary fall on the same side in SQL
    as in Python.
    """
    milliseconds = (moment - _J2000) // timedelta(milliseconds=1)
    return (2451545 * 86400000 + milliseconds) / 86400000.0


def from_julian_day(value: float) -> datetime:
    """Return the aware UTC datetime of a Julian day number."""
    return _J2000 + timedelta(days=value - 2451545.0)


def bucket_sql(starts: list[datetime], column: str) -> str:
    """Return a SQL CASE giving the index of the [starts[i], starts[i] + 7 days) holding a Julian-day column.

    NULL outside every week. A binary search of nested CASEs, not a chain.
    """
    days = [julian_day(s) for s in starts]
    last = julian_day(starts[-1] + WEEK)
    inner = _bisect_sql(column, days, 0, len(days))
    return f"CASE WHEN {column} IS NULL OR {column} < {days[0]!r} OR {column} >= {last!r} THEN NULL ELSE {inner} END"


def _bisect_sql(column: str, starts: list[float], low: int, high: int) -> str:
    """Return nested CASEs finding the week in starts[low:high]."""
    if high - low == 1:
        return str(low)
    middle = (low + high) // 2
    return (f"(CASE WHEN {column} < {starts[middle]!r} THEN {_bisect_sql(column, starts, low, middle)} "
            f"ELSE {_bisect_sql(column, starts, middle, high)} END)")
