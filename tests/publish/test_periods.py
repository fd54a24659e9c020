"""Published periods: ISO weeks, months of weeks, and when each becomes publishable."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from collector import settings
from collector.publish.periods import (closed_periods, from_julian_day, julian_day, month, month_of,
                                       week, week_start, weeks_of_month)


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=timezone.utc)


@pytest.mark.parametrize("month_id, first, last, count", [
    ("2026-11", "2026-W45", "2026-W48", 4),  # 2 Nov is a Monday; 26 Nov the last Thursday
    ("2026-10", "2026-W40", "2026-W44", 5),  # Thursday 29 October keeps W44 in October
    ("2026-12", "2026-W49", "2026-W53", 5),  # 2026 has 53 ISO weeks; W53's Thursday is 31 December
    ("2027-01", "2027-W01", "2027-W04", 4),
])
def test_a_month_is_the_weeks_whose_thursday_falls_in_it(month_id, first, last, count):
    period = month(month_id)
    assert (period.weeks[0], period.weeks[-1], len(period.weeks)) == (first, last, count)
    assert all(month_of(start) == month_id for start in weeks_of_month(month_id))
    assert period.end - period.start == timedelta(days=7 * count)


def test_every_week_belongs_to_exactly_one_month():
    start, seen = week_start(utc(2026, 1, 1)), {}
    for _ in range(120):
        seen.setdefault(month_of(start), []).append(week(start).id)
        start += timedelta(days=7)
    flat = [w for weeks in seen.values() for w in weeks]
    assert len(flat) == len(set(flat)) == 120
    for month_id, weeks in list(seen.items())[1:-1]:
        assert list(month(month_id).weeks) == weeks


def test_a_week_is_published_a_day_after_it_ends_and_a_month_with_its_last_week():
    first = utc(2026, 11, 4, 10)  # a Wednesday of W45
    end_w48 = utc(2026, 11, 30)
    delay = timedelta(hours=settings.PUBLISH_AFTER_HOURS)
    before = [p.id for p in closed_periods(first, end_w48 + delay - timedelta(seconds=1))]
    after = [p.id for p in closed_periods(first, end_w48 + delay)]
    assert before == ["2026-W45", "2026-W46", "2026-W47"]
    assert after == ["2026-W45", "2026-W46", "2026-W47", "2026-W48", "2026-11"]
    assert closed_periods(None, end_w48) == []


def test_the_first_month_starts_with_the_first_event_week():
    periods = closed_periods(utc(2026, 11, 18), utc(2026, 12, 7))
    assert [p.id for p in periods] == ["2026-W47", "2026-W48", "2026-11"]
    assert periods[-1].weeks == ("2026-W47", "2026-W48")
    assert periods[-1].start == utc(2026, 11, 16)


def test_julian_days_round_trip_to_the_millisecond():
    moment = utc(2026, 11, 26, 12, 0, 0, 123000)
    assert abs(from_julian_day(julian_day(moment)) - moment) < timedelta(milliseconds=1)
