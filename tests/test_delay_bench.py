"""bench/capture_delay.py's schedules: the slots, each run late as scheduled jobs are, each deadline inside its slot."""

from __future__ import annotations

import importlib.util
import random
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_SPEC = importlib.util.spec_from_file_location("capture_delay", ROOT / "bench" / "capture_delay.py")
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)


def test_fifteen_minute_runs_at_the_odd_minutes_each_with_its_deadline_inside_its_slot():
    plan = bench.runs(bench.SCHEDULES["15-minute"], random.Random(1), 5, 24)
    assert plan[0][0] == bench.WARM_UP
    day = [p for p in plan if bench.DAY <= p[0] < bench.DAY + timedelta(days=1)]
    assert len(day) == 96 and len(plan) == 1 + 96 + 4  # the warm-up, the day, the hour after it
    assert {p[0].minute for p in day} == {7, 22, 37, 52}
    for (scheduled, started, deadline), following in zip(plan, plan[1:] + [None]):
        assert timedelta(minutes=1) <= started - scheduled <= timedelta(minutes=5)
        assert started < deadline <= started + timedelta(minutes=bench.JOB_DEADLINE_MINUTES)
        if following is not None:
            assert deadline <= following[0] - timedelta(minutes=5) < following[1]


def test_hourly_runs_at_minute_17_keep_the_jobs_35_minute_deadline():
    plan = bench.runs(bench.SCHEDULES["hourly"], random.Random(1), 5, 24)
    assert len(plan) == 1 + 24 + 1 and {p[0].minute for p in plan[1:]} == {17}
    assert all(deadline - started == timedelta(minutes=35) for _, started, deadline in plan[1:])


def test_the_figures_are_the_median_and_nearest_rank_percentiles():
    assert bench.summary([]) == {"n": 0, "median": None, "p90": None, "max": None}
    values = [float(v) for v in range(1, 21)]  # 1..20
    assert bench.summary(values[::-1]) == {"n": 20, "median": 10.5, "p90": 18.0, "max": 20.0}
