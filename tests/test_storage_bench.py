"""bench/storage_growth.py still runs against the real schema and export (its figures are not tested)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path


from collector.record import folder

ROOT = Path(__file__).resolve().parent.parent


def test_the_storage_benchmark_runs_and_commits_a_record_that_verifies(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "storage_growth.py"), "--days", "2", "--outlets", "2",
         "--simulate", "1", "--per-day", "12", "--entries", "20", "--keep", str(tmp_path)],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    for figure in ("repository after git gc", "projected after 365 days", "SQLite database",
                   "a job resuming the cache reads 2 file(s)", "a full rebuild (cache lost) read 96 files"):
        assert figure in done.stdout, done.stdout
    record = tmp_path / "repo" / "data" / "record"
    assert folder.verify(record) == 96  # 2 days x 24 hours x (collect + archive)
    assert all(p.name.endswith(".jsonl.bz2") for p in folder.batches(record))
    tracked = subprocess.run(["git", "ls-files"], cwd=tmp_path / "repo", capture_output=True, text=True,
                             check=True).stdout.split()
    assert len(tracked) == 96 and all(name.startswith("data/record/") for name in tracked)


def test_the_years_benchmark_rolls_the_record_over_into_a_repository_a_year(tmp_path):
    work = tmp_path / "years"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "record_years.py"), "--start", "2026-12-31", "--days", "2", "--simulate", "1",
         "--per-day", "12", "--entries", "20", "--outlets", "40", "--keep", str(work)],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = re.findall(r"^  (20\d\d)  +\d+  ", done.stdout, re.M)
    assert rows == ["2026", "2027"], done.stdout
    old, new = work / "outlets" / "record-2026", work / "outlets" / "record-2027"
    assert folder.verify([old, new]) == 48 + 48 + 1  # the next day's first job included
    assert folder.continues(new)["file"] == folder.record_name(folder.batches(old)[-1])
    assert not [p for p in folder.batches(new)[1:] if not folder.record_name(p).startswith("2027/")]


def test_the_working_database_benchmark_levels_a_simulated_record(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "working_db.py"), "--days", "2", "--per-day", "12", "--entries", "20",
         "--outlets", "40", "--keep", str(tmp_path)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^ +2 +\d+\.\d\d GiB \((under|OVER) 2 GB\) +\d+\.\d s", done.stdout, re.M), done.stdout
    # The record it levelled against chains: the empty start, a file a day, and on the day measured the
    # last hour's collect and archive jobs' own.
    assert folder.verify(tmp_path / "record") == 1 + 2 + 2
