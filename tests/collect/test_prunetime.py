"""A pruning inside a job with a deadline: left for a later job when it is not expected to end in time."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from click.testing import CliRunner

from collector import settings
from collector.cli.main import cli
from collector.clock import Clock, iso
from collector.collect.prune import prune
from collector.collect.prunetime import estimate
from collector.publish.history import History
from collector.record.store import Store
from tests.collect.test_prune import record  # noqa: F401  (the fixture)

ROOT = Path(__file__).resolve().parents[2]


def size(db: Path) -> int:
    return sum(p.stat().st_size for p in (db, Path(f"{db}-wal")) if p.exists())


def digest(db: Path) -> str:
    return hashlib.sha256(db.read_bytes()).hexdigest()


def test_the_estimate_is_the_last_prunings_time_scaled_to_the_database(record, tmp_path):
    _host, full, folder, _ids = record
    # Never pruned: the database's size at settings.PRUNE_BYTES_PER_SECOND.
    assert estimate(full) == settings.PRUNE_TIME_SAFETY * size(full) / settings.PRUNE_BYTES_PER_SECOND
    before = size(full)
    done = prune(full, folder, None, History.open(tmp_path / "published"))
    store = Store(full)
    pruned, seconds = store.one("SELECT source_bytes, seconds FROM prune_state")
    store.close()
    assert pruned == done.bytes_before >= before and 0 < seconds <= done.seconds
    assert estimate(full) == settings.PRUNE_TIME_SAFETY * seconds * max(1.0, size(full) / pruned)


def test_a_pruning_that_would_run_past_the_deadline_is_left_for_a_later_job(record, tmp_path):
    _host, full, folder, _ids = record
    args = ["export", "prune", "--db", str(full), "--out", str(folder), "--published", str(tmp_path / "published")]
    before = digest(full)
    now = Clock().now()
    late = CliRunner().invoke(cli, [*args, "--deadline", iso(now)])
    assert late.exit_code == 0 and "past the deadline" in late.output and digest(full) == before, late.output
    early = CliRunner().invoke(cli, [*args, "--deadline", iso(now + timedelta(hours=1))])
    assert early.exit_code == 0 and "pruned" in early.output, early.output


def test_sync_database_passes_the_jobs_deadline(record, tmp_path):
    _host, full, folder, _ids = record
    env = dict(os.environ, PYTHON=sys.executable, DEADLINE=iso(Clock().now()),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(["bash", str(ROOT / ".github" / "scripts" / "sync_database.sh"), str(folder), str(full)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "past the deadline" in done.stdout, done.stdout + done.stderr
