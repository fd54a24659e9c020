"""bench/record_years.py's two years when the run cannot finish: year two from its first days, carried to 366.

    python bench/record_years_partial.py OUTLETS_DIR YEAR_ONE_DB_END CLOSE_LOG OUT.json
    python bench/record_years.py --report FIGURES.json   # FIGURES: OUT.json as "years", beside a
                                                         # complete --simulate 0 run's as "baseline"

How the storage figures (docs/figures.md) of 2028 were obtained, on a machine too loaded for the whole
run (`record_years.py --simulate 1 --keep DIR`) to finish: while it ran, YEAR_ONE_DB_END (the
working database's bytes after 31 December 2027) and CLOSE_LOG (when the run's year-end close
made rebuilt.db, opened the saved cache's -wal and removed it: its rebuild and resume, as it
timed them) were taken from DIR/outlets by watching it. This waits for the run's next daily
commit, clones both repositories, then (with STOP_PID) stops the run.

Year one (2027, complete): its repository cloned, packed (git gc) and measured, its WARC files
from the database; rebuild and resume from CLOSE_LOG. Year two (2028), d days simulated so far: the same measures, then carried
linearly to its 366 days (every day of 2028 carries the same load: 100 new articles an outlet and
a revisit at each of settings.RECHECK_SCHEDULE_HOURS' slots, the 8760 h one included): repository, files and
WARC x 366/d; the database: year one's end + its growth over the d days x 366/d; the rebuild of both years,
timed over year one and d-1 days of year two, x the export bytes of both full years / the bytes rebuilt;
the resume of the d-th day's files into that rebuilt database, timed, as is.
"""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import record_years as ry  # noqa: E402
from collector.record import folder, rebuild as rebuilding  # noqa: E402

work, s1, close_log, out = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4])
scratch = out.parent / "record-years-partial"
shutil.rmtree(scratch, ignore_errors=True)
scratch.mkdir()


def timed(fn, *a):
    w, c = time.monotonic(), time.process_time()
    fn(*a)
    return time.monotonic() - w, time.process_time() - c


def days_of(repo):
    subjects = ry.git(repo, "log", "--format=%s").splitlines()
    return sorted(s.split()[1] for s in subjects if s.startswith("record 20"))


# Wait for the live year's next daily commit, then take the database's size and clone at once.
live = work / "record-2028"
head = ry.git(live, "rev-parse", "HEAD").strip()
while not os.environ.get("NOWAIT") and ry.git(live, "rev-parse", "HEAD").strip() == head:
    time.sleep(0.5)
time.sleep(1.5)  # the checkpoint after the commit
db_now = (work / "takedownwatch.db").stat().st_size
clones = {}
for year in ("2027", "2028"):
    clones[year] = scratch / f"record-{year}"
    subprocess.run(["git", "clone", "-q", "--no-local", str(work / f"record-{year}"), str(clones[year])], check=True)
days = {y: days_of(clones[y]) for y in clones}
if os.environ.get("STOP_PID"):  # the run measured: stopped here, its figures taken from this moment on
    os.kill(int(os.environ["STOP_PID"]), 15)
db = sqlite3.connect(f"file:{work / 'takedownwatch.db'}?mode=ro", uri=True)
periods = []
for year, full_days in (("2027", 365), ("2028", 366)):
    repo = clones[year]
    d = len(days[year])
    last = date.fromisoformat(days[year][-1])
    files = folder.batches(repo)
    warc, warc_largest = db.execute("SELECT SUM(bytes), MAX(bytes) FROM warc_files WHERE recorded_at >= ? AND recorded_at < ?",
                                    (f"{year}-01-01", (last + timedelta(days=1)).isoformat())).fetchone()
    scale = full_days / d
    periods.append({"year": year, "days": full_days, "simulated_days": d, "files": round(len(files) * scale),
                    "largest": max(p.stat().st_size for p in files), "largest_name": "",
                    "packed": ry.packed(repo) * scale, "warc": warc * scale, "warc_largest": warc_largest,
                    "db_end": s1 if year == "2027" else s1 + (db_now - s1) * scale, "rows": {}, "composition": []})
    periods[-1]["db_peak"] = periods[-1]["db_end"]  # never pruned: it only grows
    periods[-1]["bytes"] = sum(p.stat().st_size for p in files)
db.close()
print("days", {y: (len(v), v[-1]) for y, v in days.items()}, "db now", db_now, flush=True)

# Year one: its full rebuild and resume as the bench itself timed them in its close_year, from the times its
# files appeared and went (CLOSE_LOG: rebuilt.db made, the saved cache opened (its -wal), then removed).
target = scratch / "rebuilt.db"
t = dict(line.split() for line in close_log.read_text().splitlines())
periods[0].update(rebuild_seconds=float(t["resume_start"]) - float(t["rebuild_start"]),
                  resume_seconds=float(t["saved_gone"]) - float(t["resume_start"]))
print("year one", {k: periods[0][k] for k in ("rebuild_seconds", "resume_seconds")}, flush=True)

# Year two: rebuild both years up to the day before the last simulated, then resume the last day.
ry.git(clones["2028"], "checkout", "-q", "HEAD~1")
rebuilt_bytes = sum(p.stat().st_size for p in folder.chain([clones["2027"], clones["2028"]]))
wall, cpu = timed(rebuilding.rebuild, [clones["2027"], clones["2028"]], target)
full_bytes = periods[0]["bytes"] + periods[1]["bytes"] * 366 / len(days["2028"])
periods[1].update(rebuild_seconds=wall * full_bytes / rebuilt_bytes, rebuild_cpu_seconds=cpu * full_bytes / rebuilt_bytes,
                  rebuild_measured=[wall, cpu, rebuilt_bytes, full_bytes])
ry.git(clones["2028"], "checkout", "-q", "-")
wall, cpu = timed(rebuilding.resume, clones["2028"], target)
periods[1].update(resume_seconds=wall, resume_cpu_seconds=cpu)
print("year two", {k: periods[1][k] for k in ("rebuild_seconds", "rebuild_cpu_seconds", "resume_seconds", "resume_cpu_seconds", "rebuild_measured")}, flush=True)
out.write_text(json.dumps(periods, indent=1) + "\n")
shutil.rmtree(scratch)
