"""Per stream and job kind: gaps between run starts against the schedule, deadlines, durations, rebuilds.

A database that follows every stream holds every stream's runs; a run's
stream is the one whose id range holds its id (collector/record/streams.py).
The job kinds judged are the scheduled ones (runs.command: `run` for
collect.yml, `archive` for archive.yml; settings.HEALTH_SCHEDULE_MINUTES).
"""

from __future__ import annotations

import json
import math
import sqlite3
from datetime import datetime, timedelta

from collector import settings
from collector.clock import iso, parse_instant
from collector.health.checks import FAIL, OK, Check, Finding, Inputs, grade, hours
from collector.record import renames, streams


def stream_names(inputs: Inputs) -> dict[int, str]:
    """Return the stream of each id range this database knows of: range index -> name ('default' for '')."""
    names = {""}
    followed = renames.name_in(inputs.conn, streams.FOLLOWED_TABLE)
    for sql in (f"SELECT DISTINCT stream FROM {followed}", "SELECT name FROM export_stream"):
        try:
            names |= {r[0] for r in inputs.conn.execute(sql)}
        except sqlite3.OperationalError:  # a database without the table
            continue
    names.discard(streams.MERGED)
    return {streams.base(n or None) // settings.STREAM_ID_RANGE: n or "default" for n in names}


def stream_runs(inputs: Inputs, since_hours: float | None = None) -> dict[tuple[str, str], list[dict]]:
    """Return each (stream, job kind)'s runs of the last hours (twice the window), oldest first, with their finish."""
    since_hours = since_hours or 2 * settings.HEALTH_SCHEDULE_WINDOW_HOURS
    kinds = sorted(inputs.schedule)
    names = stream_names(inputs)
    marks = ", ".join("?" for _ in kinds)
    rows = inputs.conn.execute(
        f"SELECT r.id, r.command, r.started_at, f.finished_at, f.counts FROM runs AS r "
        f"LEFT JOIN run_finishes AS f ON f.run_id = r.id WHERE r.command IN ({marks}) AND r.started_at >= ? "
        f"AND r.started_at <= ? ORDER BY r.started_at, r.id",
        (*kinds, iso(inputs.now - timedelta(hours=since_hours)), iso(inputs.now))).fetchall()
    out: dict[tuple[str, str], list[dict]] = {}
    for row in rows:
        index = (row["id"] - 1) // settings.STREAM_ID_RANGE
        key = (names.get(index, f"range-{index}"), row["command"])
        counts = json.loads(row["counts"]) if row["counts"] else {}
        out.setdefault(key, []).append({"id": row["id"], "started": parse_instant(row["started_at"]),
                                        "finished": parse_instant(row["finished_at"]) if row["finished_at"] else None,
                                        "counts": counts})
    return out


def with_stopped(inputs: Inputs, found: dict[tuple[str, str], list[dict]]) -> dict[tuple[str, str], list[dict]]:
    """Return the runs found, with the newest run of every stream and kind that has none among them (stopped)."""
    kinds = sorted(inputs.schedule)
    marks = ", ".join("?" for _ in kinds)
    names = stream_names(inputs)
    rows = inputs.conn.execute(
        f"SELECT (id - 1) / ? AS range, command, MAX(started_at) AS started FROM runs WHERE command IN ({marks}) "
        f"AND started_at <= ? GROUP BY range, command", (settings.STREAM_ID_RANGE, *kinds, iso(inputs.now))).fetchall()
    out = dict(found)
    for row in rows:
        key = (names.get(row["range"], f"range-{row['range']}"), row["command"])
        out.setdefault(key, [{"id": None, "started": parse_instant(row["started"]), "finished": None, "counts": {}}])
    return out


def _subject(key: tuple[str, str]) -> str:
    return f"{key[0]}/{key[1]}"


def gaps(inputs: Inputs) -> list[Finding]:
    """Return per stream and kind the hours its largest gap between run starts (the open one too) passed the
    schedule, over the last window: an hourly job's hour between starts is no gap, a 15-minute job's is."""
    since = inputs.now - timedelta(hours=settings.HEALTH_SCHEDULE_WINDOW_HOURS)
    out = []
    for key, runs in sorted(with_stopped(inputs, stream_runs(inputs)).items()):
        starts = [r["started"] for r in runs]
        recent = [s for s in starts if s >= since]
        before = [s for s in starts if s < since]
        edges = ([max(before[-1], since)] if before else []) + recent + [inputs.now]
        largest = max((hours(b, a) for a, b in zip(edges, edges[1:])), default=0.0)
        every = inputs.schedule[key[1]] / 60
        value = round(max(0.0, largest - every), 2)
        out.append(Finding("schedule-gap", _subject(key), grade(value, settings.HEALTH_GAP_HOURS), value,
                           settings.HEALTH_GAP_HOURS,
                           f"largest gap {largest:.2f} h between starts, {value} h past the schedule's "
                           f"{inputs.schedule[key[1]]} min (last start {iso(starts[-1])})"))
    return out


def distinct_starts(starts: list[datetime], every: timedelta) -> list[datetime]:
    """Return the starts that fill a scheduled slot each: one within a quarter interval of the last kept is
    the same slot twice (a dispatched run queued behind a scheduled one). Slots counted from the first
    start's exact time instead put a run a second early into the slot before, and a day read half empty."""
    kept: list[datetime] = []
    for start in sorted(starts):
        if not kept or start - kept[-1] >= every / 4:
            kept.append(start)
    return kept


def share(inputs: Inputs) -> list[Finding]:
    """Return per stream and kind the share of the last window's scheduled starts that happened."""
    since = inputs.now - timedelta(hours=settings.HEALTH_SCHEDULE_WINDOW_HOURS)
    out = []
    for key, runs in sorted(stream_runs(inputs).items()):
        every = timedelta(minutes=inputs.schedule[key[1]])
        begun = max(since, runs[0]["started"])  # a stream younger than a day is judged from its first run
        slots = max(1, math.floor((inputs.now - begun) / every))
        happened = min(len(distinct_starts([r["started"] for r in runs if r["started"] >= begun], every)), slots)
        value = round(happened / slots, 2)
        out.append(Finding("schedule-share", _subject(key),
                           grade(value, settings.HEALTH_SCHEDULE_SHARE, lower_is_worse=True), value,
                           settings.HEALTH_SCHEDULE_SHARE,
                           f"{happened} of {slots} scheduled starts happened since {iso(begun)}", True))
    return out


def deadline(inputs: Inputs) -> list[Finding]:
    """Return per stream and kind how many of its newest runs in a row stopped at their deadline."""
    out = []
    for key, runs in sorted(stream_runs(inputs).items()):
        streak = 0
        for run in reversed([r for r in runs if r["finished"]]):
            if not run["counts"].get("stopped_at_deadline"):
                break
            streak += 1
        out.append(Finding("run-deadline", _subject(key), grade(streak, settings.HEALTH_DEADLINE_RUNS), streak,
                           settings.HEALTH_DEADLINE_RUNS,
                           f"{streak} run(s) in a row stopped at the deadline with work carried over"))
    return out


def duration(inputs: Inputs) -> list[Finding]:
    """Return per stream and kind the longest run of the last 24 hours as a share of the job's timeout."""
    since = inputs.now - timedelta(hours=24)
    out = []
    for key, runs in sorted(stream_runs(inputs).items()):
        timeout = timedelta(minutes=settings.HEALTH_JOB_TIMEOUT_MINUTES.get(key[1], 360))
        recent = [r for r in runs if r["started"] >= since]
        killed = [r for r in recent if r["finished"] is None and inputs.now - r["started"] > timeout]
        longest = max((r["finished"] - r["started"] for r in recent if r["finished"]), default=timedelta(0))
        value = round(longest / timeout, 2)
        state = FAIL if killed else grade(value, settings.HEALTH_DURATION_SHARE)
        detail = (f"longest run {longest.total_seconds() / 60:.1f} min of the job's {timeout.total_seconds() / 60:g}"
                  + (f"; {len(killed)} run(s) never finished (killed at the timeout?), e.g. run {killed[0]['id']}"
                     if killed else ""))
        out.append(Finding("run-duration", _subject(key), state, value, settings.HEALTH_DURATION_SHARE, detail))
    return out


def rebuilds(inputs: Inputs) -> list[Finding]:
    """Return per stream the runs of the last 24 hours whose database was rebuilt, its cached copy unusable."""
    since = inputs.now - timedelta(hours=24)
    out = []
    for key, runs in sorted(stream_runs(inputs).items()):
        if key[1] != "run":
            continue
        count = sum(1 for r in runs if r["started"] >= since and r["counts"].get("restored_by_rebuild"))
        out.append(Finding("storage-rebuild", key[0], grade(count, settings.HEALTH_REBUILDS), count,
                           settings.HEALTH_REBUILDS,
                           f"{count} run(s) in 24 h began from a database rebuilt from the record "
                           "(no usable cached copy)"))
    return out or [Finding("storage-rebuild", None, OK, 0, settings.HEALTH_REBUILDS, "no collect run in 24 h")]


CHECKS = [
    Check("schedule-gap", "Largest gap between run starts, last 24 hours", "job", gaps),
    Check("schedule-share", "Share of scheduled starts that happened, last 24 hours", "job", share),
    Check("run-deadline", "Runs in a row that stopped at their deadline", "job", deadline),
    Check("run-duration", "Longest run against the job's timeout", "job", duration),
]
