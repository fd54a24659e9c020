"""The storage benchmarks run against the real schema and export; record_years.py's table is what it measured."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path


from collector.record import folder
from collector.record.store import Store

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


def test_the_years_benchmark_rolls_the_record_over_and_its_table_is_what_it_measured(tmp_path):
    work, out = tmp_path / "years", tmp_path / "figures.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "record_years.py"), "--start", "2026-12-31", "--days", "2", "--simulate", "1",
         "--per-day", "12", "--entries", "20", "--outlets", "40", "--keep", str(work), "--figures", str(out)],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = re.findall(r"^  (20\d\d)  +\d+  ", done.stdout, re.M)
    assert rows == ["2026", "2027"], done.stdout
    old, new = work / "outlets" / "record-2026", work / "outlets" / "record-2027"
    assert folder.verify([old, new]) == 48 + 48 + 1  # the next day's first job included
    assert folder.continues(new)["file"] == folder.record_name(folder.batches(old)[-1])
    assert not [p for p in folder.batches(new)[1:] if not folder.record_name(p).startswith("2027/")]

    # What it wrote for each period is what the kept folders hold.
    measured = json.loads(out.read_text())
    db = sqlite3.connect(work / "outlets" / "takedownwatch.db")
    for period, repo, day in zip(measured["years"], (old, new), ("2026-12-31", "2027-01-01")):
        files = folder.batches(repo)
        assert (period["files"], period["largest"]) == (len(files), max(p.stat().st_size for p in files))
        objects = dict(line.split(": ") for line in subprocess.run(
            ["git", "count-objects", "-v"], cwd=repo, capture_output=True, text=True, check=True).stdout.splitlines())
        assert period["packed"] == (int(objects["size-pack"]) + int(objects["size"])) * 1024 > 0
        warc = db.execute("SELECT SUM(bytes), MAX(bytes) FROM warc_files WHERE recorded_at LIKE ?", (day + "%",)).fetchone()
        assert (period["days"], period["warc"], period["warc_largest"]) == (1, *warc) and warc[0] > 0
    db.close()
    assert all(p["rebuild_seconds"] > 0 for p in measured["years"]) and measured["years"][1]["resume_seconds"] > 0
    assert measured["baseline"][1]["packed"] > 0 and measured["baseline"][1]["warc"] == 0  # no outlet, no WARC

    # The table scales each figure above the record of no outlet, and prints what it computed.
    sys.path.insert(0, str(ROOT / "bench"))
    import record_years

    sim, none = measured["years"][1], measured["baseline"][1]
    row = record_years.table(measured, 40)[1]
    assert row["repository_gib"] * 2**30 == none["packed"] + 40 * (sim["packed"] - none["packed"])
    assert row["warc_day_gib"] * 2**30 == none["warc"] + 40 * (sim["warc"] - none["warc"])
    assert row["db_peak_gib"] * 2**30 == none["db_peak"] + 40 * (sim["db_peak"] - none["db_peak"])
    assert row["resume_s"] == none["resume_seconds"] + 40 * (sim["resume_seconds"] - none["resume_seconds"])
    printed = re.search(r"^  2027 +1 +([\d.]+) GiB .*? ([\d.]+) MiB +([\d.]+) GiB peak, +([\d.]+) GiB end +([\d.]+) GiB, +"
                        r"([\d.]+) MiB +([\d.]+) min +([\d.]+) s$", done.stdout, re.M)
    assert printed, done.stdout
    assert [float(v) for v in printed.groups()] == [
        round(row[k], n) for k, n in (("repository_gib", 2), ("largest_mib", 2), ("db_peak_gib", 2), ("db_end_gib", 2),
                                      ("warc_day_gib", 2), ("warc_largest_mib", 1), ("rebuild_min", 1), ("resume_s", 1))]
    # Each of GitHub's limits is judged on its figure: a repository over 5 GB, a file over 100 MiB.
    assert all(row["limits"].values())
    sim["packed"], sim["largest"] = 6 * 10**9 / 40, 101 * 2**20 / 40 + 1
    judged = record_years.table({**measured, "baseline": None, "simulate": 1}, 40)[1]["limits"]
    assert [judged[name] for name, _, _ in record_years.LIMITS] == [False, False, True, True]


def _two_days(bench: str, tmp_path):
    """Run a database bench over 2 small simulated days, keeping its work folder; return the finished process."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / f"{bench}.py"), "--days", "2", "--per-day", "12", "--entries", "20",
         "--outlets", "40", "--keep", str(tmp_path)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_the_working_database_benchmark_prunes_a_simulated_record(tmp_path):
    done = _two_days("working_db", tmp_path)
    assert re.search(r"^ +2 +\d+\.\d\d GiB \((under|OVER) 2 GB\) +\d+\.\d s", done.stdout, re.M), done.stdout
    # The record it pruned against chains: the empty start, a file a day, and on the day measured the
    # last hour's collect job's own (the archive job writes a stream of its own).
    assert folder.verify(tmp_path / "record") == 1 + 2 + 1


def test_the_following_database_benchmark_follows_and_prunes_a_simulated_record(tmp_path):
    done = _two_days("follower_db", tmp_path)
    assert re.search(r"^ +2 +\d+\.\d\d GiB +\d+\.\d\d GiB +\d+\.\d s$", done.stdout, re.M), done.stdout
    # It was pruned, with its stream's own database beside it, and left in sync with the record.
    from collector.record import shadows
    from collector.record.follow import parts_folder
    for db in (tmp_path / "follower.db", parts_folder(tmp_path / "follower.db") / "_default.db"):
        store = Store(db)
        try:
            assert shadows.pruned_at(store.conn) is not None
        finally:
            store.close()
