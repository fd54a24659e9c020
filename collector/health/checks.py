"""The fixed set of checks, what one check found, and how a value is graded against its thresholds."""

from __future__ import annotations

import sqlite3
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable

OK, WARN, FAIL = "ok", "warn", "fail"
ORDER = {OK: 0, WARN: 1, FAIL: 2}


@dataclass(frozen=True)
class Finding:
    """What one check found about one subject (an outlet, a stream's job kind, an authority, or None)."""

    check: str
    subject: str | None
    state: str
    value: float | int | None
    threshold: tuple | None
    detail: str
    lower_is_worse: bool = False  # a share, where less is worse (an alert compares values this way)

    def as_json(self) -> dict:
        out = asdict(self)
        out["threshold"] = list(self.threshold) if self.threshold is not None else None
        return out


@dataclass
class Inputs:
    """What the checks read: the database, the clock, and the optional record folder, trust and cache figures."""

    conn: sqlite3.Connection
    now: datetime
    db_path: Path
    record_dir: Path | None = None
    trust_dir: Path | None = None
    cache_usage: dict | None = None  # GitHub's GET /repos/{owner}/{repo}/actions/cache/usage answer
    schedule: dict[str, int] = field(default_factory=dict)  # job kind -> minutes between scheduled starts
    database_bound: int | None = None


def grade(value: float | None, thresholds: tuple, *, lower_is_worse: bool = False) -> str:
    """Return ok, warn or fail: a value at or past a threshold takes its state (None is ok: nothing to judge)."""
    if value is None:
        return OK
    warn, fail = thresholds
    if lower_is_worse:
        return FAIL if value <= fail else WARN if value < warn else OK
    return FAIL if value >= fail else WARN if value >= warn else OK


def worst(findings: list[Finding]) -> str:
    """Return the worst state among findings (ok when there are none)."""
    return max((f.state for f in findings), key=ORDER.__getitem__, default=OK)


@dataclass(frozen=True)
class Check:
    """One check: its id (the runbook's anchor), what it judges, its scope, and the function that runs it."""

    id: str
    title: str
    scope: str  # outlet, job, capture, archive, evidence, storage
    run: Callable[[Inputs], list[Finding]]


def hours(later: datetime, earlier: datetime) -> float:
    """Return the hours from earlier to later."""
    return (later - earlier).total_seconds() / 3600.0
