"""The time cells and reporting periods the coverage figures are counted over.

Every published period (the whole record, the last 7 and 30 days, each ISO
week) is a contiguous run of *cells*: the intervals between consecutive
boundaries, where the boundaries are every week start plus the two window
starts. Because each period is an exact union of cells, a figure for a period
is an exact sum of figures for its cells, which is what lets the disclosure
audit reason about differences between periods with linear algebra.

Weeks are ISO weeks in UTC, Monday 00:00 to Monday 00:00. Periods end at
`now`: nothing recorded after it is counted, so a replay with `--now` sees
the record as it was then.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

WINDOWS = {"7d": 7, "30d": 30}
_J2000 = datetime(2000, 1, 1, 12, tzinfo=timezone.utc)  # Julian day 2451545.0


@dataclass(frozen=True)
class Period:
    """One reporting period: an id, its kind, its bounds and the cells it covers."""

    id: str
    kind: str  # "all", "window" or "week"
    start: datetime
    end: datetime
    cells: tuple[int, ...]


@dataclass(frozen=True)
class Timeline:
    """The cells (start, end) in time order and the periods built from them."""

    cells: tuple[tuple[datetime, datetime], ...]
    periods: tuple[Period, ...]

    def period(self, period_id: str) -> Period:
        """Return the period with this id."""
        for period in self.periods:
            if period.id == period_id:
                return period
        raise KeyError(period_id)

    def periods_of_cell(self) -> list[list[str]]:
        """Return, for each cell index, the ids of the periods that contain it."""
        owners: list[list[str]] = [[] for _ in self.cells]
        for period in self.periods:
            for cell in period.cells:
                owners[cell].append(period.id)
        return owners


def week_start(moment: datetime) -> datetime:
    """Return Monday 00:00 UTC of the ISO week holding moment."""
    day = moment.astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    return day - timedelta(days=day.weekday())


def week_id(start: datetime) -> str:
    """Return the ISO week label of a week start, e.g. '2026-W48'."""
    year, week, _ = start.isocalendar()
    return f"{year}-W{week:02d}"


def julian_day(moment: datetime) -> float:
    """Return moment as a Julian day number computed exactly as SQLite's julianday() does.

    SQLite counts whole milliseconds and divides once; doing the same here makes
    an observation stamped exactly at a boundary (or at now) fall on the same
    side in SQL as in Python.
    """
    milliseconds = (moment - _J2000) // timedelta(milliseconds=1)
    return (2451545 * 86400000 + milliseconds) / 86400000.0


def from_julian_day(value: float) -> datetime:
    """Return the aware UTC datetime of a Julian day number."""
    return _J2000 + timedelta(days=value - 2451545.0)


def build_timeline(first_event: datetime | None, now: datetime) -> Timeline:
    """Return the cells and periods from the week of the first event up to now."""
    now = now.astimezone(timezone.utc)
    first = min(first_event or now, now)
    window_starts = [now - timedelta(days=days) for days in WINDOWS.values()]
    # Start early enough that both windows are whole unions of cells.
    origin = week_start(min([first, *window_starts]))
    boundaries = set(window_starts)
    cursor = origin
    while cursor < now:
        boundaries.add(cursor)
        cursor += timedelta(days=7)
    edges = sorted(b for b in boundaries if b < now)
    cells = tuple(zip(edges, edges[1:] + [now]))
    periods = [Period("all", "all", edges[0], now, tuple(range(len(cells))))]
    for name, days in WINDOWS.items():
        start = now - timedelta(days=days)
        periods.append(Period(name, "window", start, now, _cells_from(cells, start, now)))
    week = week_start(first)
    while week < now:
        end = min(week + timedelta(days=7), now)
        periods.append(Period(week_id(week), "week", week, end, _cells_from(cells, week, end)))
        week += timedelta(days=7)
    return Timeline(cells, tuple(periods))


def _cells_from(cells, start: datetime, end: datetime) -> tuple[int, ...]:
    """Return the indexes of the cells that lie inside [start, end]."""
    return tuple(i for i, (a, b) in enumerate(cells) if a >= start and b <= end and a < b)


def cell_case_sql(timeline: Timeline, column: str) -> str:
    """Return a SQL CASE giving the cell index of a Julian-day column (NULL outside)."""
    starts = [julian_day(a) for a, _ in timeline.cells]
    last = julian_day(timeline.cells[-1][1])
    inner = _bisect_sql(column, starts, 0, len(starts))
    return f"CASE WHEN {column} IS NULL OR {column} < {starts[0]!r} OR {column} > {last!r} THEN NULL ELSE {inner} END"


def _bisect_sql(column: str, starts: list[float], low: int, high: int) -> str:
    """Return nested CASEs finding the cell in starts[low:high]: a binary search, not a chain."""
    if high - low == 1:
        return str(low)
    middle = (low + high) // 2
    return (f"(CASE WHEN {column} < {starts[middle]!r} THEN {_bisect_sql(column, starts, low, middle)} "
            f"ELSE {_bisect_sql(column, starts, middle, high)} END)")


def period_cell(period_id: str) -> str:
    """Return the cell of a whole period ("P:<period id>"): where counts that do not add over time sit."""
    return f"P:{period_id}"
