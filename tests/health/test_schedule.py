"""The schedule checks on starts as GitHub's scheduler gives them: a little early or late, twice, or not at all."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from collector import settings
from collector.clock import iso
from collector.health.checks import Inputs
from collector.health.jobs import gaps, share
from collector.record.store import Store

NOW = datetime(2026, 9, 2, 12, 0, tzinfo=timezone.utc)


def _inputs(tmp_path: Path, starts: dict[str, list[datetime]]) -> Inputs:
    store = Store(tmp_path / "work.db")
    for command, times in starts.items():
        for at in times:
            run = store.insert("runs", {"command": command, "started_at": iso(at), "vantage": "v",
                                        "software_version": "0", "settings": {}})
            store.insert("run_finishes", {"run_id": run, "finished_at": iso(at + timedelta(minutes=5)),
                                          "counts": "{}", "warnings": "[]"})
    store.close()
    conn = sqlite3.connect(tmp_path / "work.db")
    conn.row_factory = sqlite3.Row
    return Inputs(conn, NOW, tmp_path / "work.db", schedule=dict(settings.HEALTH_SCHEDULE_MINUTES))


def _every(minutes: int, hours: float, jitter: timedelta = timedelta(0)) -> list[datetime]:
    count = int(hours * 60 / minutes)
    return [NOW - timedelta(minutes=minutes * n) + (jitter if n % 2 else -jitter) for n in range(count, 0, -1)]


def _by_subject(findings) -> dict:
    return {f.subject: (f.state, f.value) for f in findings}


@pytest.mark.parametrize("jitter", [timedelta(0), timedelta(seconds=1), timedelta(minutes=3)])
def test_every_scheduled_start_a_little_early_or_late_is_counted(tmp_path, jitter):
    state, value = _by_subject(share(_inputs(tmp_path, {"run": _every(15, 30, jitter)})))["default/run"]
    assert state == "ok" and value >= 0.98  # (the window's edge may cut one start off)


def test_a_slot_taken_twice_counts_once(tmp_path):
    starts = _every(30, 30)  # every other slot of a 15-minute schedule, each run twice a minute apart
    starts += [s + timedelta(minutes=1) for s in starts]
    state, value = _by_subject(share(_inputs(tmp_path, {"run": starts})))["default/run"]
    assert (state, value) == ("fail", 0.5)


def test_an_hourly_job_on_time_has_no_gap(tmp_path):
    found = _by_subject(gaps(_inputs(tmp_path, {"archive": _every(60, 30, timedelta(minutes=2)),
                                                "run": _every(15, 30)})))
    assert found["default/archive"][0] == "ok" and found["default/run"] == ("ok", 0.0)


def test_a_stream_stopped_for_days_still_fails(tmp_path):
    starts = [NOW - timedelta(days=3, minutes=15 * n) for n in range(4)]
    found = _by_subject(gaps(_inputs(tmp_path, {"run": starts})))
    assert found["default/run"][0] == "fail"
