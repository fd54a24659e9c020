"""The record over years: one record repository per calendar year, at the hourly load, day after day.

    .venv/bin/python bench/record_years.py                      # 2027 and 2028, figures for 40 and 100 outlets
    .venv/bin/python bench/record_years.py --months 6           # a repository per half year
    .venv/bin/python bench/record_years.py --start 2026-12-30 --days 4   # a quick look across one boundary

No network. Each simulated hour writes the rows of one collect job and one archive job with
bench/storage_growth.py's simulation (the real Store, schema and `export_new`; real addresses, titles,
text lengths and vocabulary; revisits on settings.RECHECK_SCHEDULE_HOURS, so year two carries the
2160 h and 8760 h slots that year one only begins). The record is committed daily to the repository
of its UTC year (or shorter period, --months); at 1 January the new year's repository is started
from the last file of the old one
(collector.record.rollover.seed, as `export rollover` does in the workflows), and the old one is
packed (`git gc`) and measured. Rows, files and their sizes grow linearly with the number of outlets
(each outlet's rows are independent), less what every job costs whatever the outlets (its run's rows,
each file's header): a second record of no outlet at all measures that part, and the simulated outlets
(2 by default) are scaled above it to the outlets reported.

Reported per year: the repository's packed size, its export files and the largest, the working
database (largest on any day, as the cache would hold it), WARC release assets per day, a full
rebuild from every repository so far, and a job's resume from its year's repository of the
cache saved a day earlier.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import storage_growth as growth  # noqa: E402  (the hourly simulation)
from collector.record import export, folder, rebuild as rebuilding, rollover  # noqa: E402
from collector.record.store import Store  # noqa: E402

MIB, GIB = 2**20, 2**30
GITHUB_RECOMMENDED = 5 * 10**9  # "less than 5 GB is strongly recommended" (GitHub's repository limits)


@dataclass
class Year:
    """What one period's record repository came to (a calendar year's, or --months)."""

    year: str  # the period's label: 2027, or 2027-07
    repo: Path
    days: int = 0
    db_peak: int = 0  # bytes of the working database, largest at any day's end
    db_end: int = 0
    warc: int = 0  # bytes of WARC files recorded in the year
    packed: int = 0
    files: int = 0
    largest: tuple[int, str] = (0, "")
    rebuild_seconds: float = 0.0
    rebuild_files: int = 0
    resume_seconds: float = 0.0
    rows: dict = field(default_factory=dict)
    composition: list = field(default_factory=list)  # (table or index, bytes), largest first


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def new_repository(work: Path, year: str) -> Path:
    repo = work / f"record-{year}"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    git(repo, "config", "user.email", "bench@example.invalid")
    git(repo, "config", "user.name", "bench")
    git(repo, "config", "gc.auto", "0")
    return repo


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A", ".")
    if subprocess.run(["git", "diff", "--quiet", "--cached"], cwd=repo).returncode:
        git(repo, "commit", "-q", "-m", message)


def packed(repo: Path) -> int:
    """Return the repository's size after `git gc`: its pack and loose objects, as GitHub counts a push."""
    git(repo, "gc", "-q")
    info = dict(line.split(": ") for line in git(repo, "count-objects", "-v").splitlines())
    return (int(info["size-pack"]) + int(info["size"])) * 1024


def composition(store: Store) -> list[tuple[str, int]]:
    """Return the bytes of every table and index of the database, largest first (SQLite's dbstat)."""
    return [(r[0], r[1]) for r in store.query("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC")]


def close_year(year: Year, years: list[Year], db_path: Path, saved: Path, work: Path) -> None:
    """Measure a year's repository, a full rebuild from every repository so far, and a job's resume."""
    year.packed = packed(year.repo)
    files = folder.batches(year.repo)
    year.files = len(files)
    year.largest = max((p.stat().st_size, folder.record_name(p)) for p in files)
    target = work / "rebuilt.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{target}{suffix}").unlink(missing_ok=True)
    t = time.monotonic()
    rebuilding.rebuild([y.repo for y in years], target)
    year.rebuild_seconds = time.monotonic() - t
    year.rebuild_files = len(folder.chain([y.repo for y in years]))
    if saved.exists():  # not when the year's last day was the first simulated
        t = time.monotonic()
        rebuilding.resume(year.repo, saved)  # the cache saved as the year's last day began
        year.resume_seconds = time.monotonic() - t
        saved.unlink()
    target.unlink()


def simulate(args, work: Path, outlets: int) -> list[Year]:
    """Return each period's figures after simulating the days asked with `outlets` outlets."""
    work.mkdir(parents=True)
    rng = random.Random(args.seed)
    corpus = growth.Corpus(rng)
    growth.START = datetime.combine(args.start, datetime.min.time(), timezone.utc).replace(minute=17)
    per_kind = growth.warc_bytes_per_exchange(corpus, work / "warc-sample")
    db_path, saved = work / "takedownwatch.db", work / "saved.db"
    store = Store(db_path)
    sim = growth.Simulation(store, corpus, outlets, args.per_day, args.sources, args.entries, True, rng, per_kind)

    def label(day: date) -> str:
        moment = datetime.combine(day, datetime.min.time(), timezone.utc)
        return rollover.period_label(rollover.period_of(moment, args.months), args.months)

    years = [Year(label(args.start), new_repository(work, label(args.start)))]
    warc_before = 0
    started = time.monotonic()
    for day in range(args.days):
        today = args.start + timedelta(days=day)
        if label(today) != years[-1].year:  # 1 January: the new year's repository continues the old one
            old = years[-1]
            close_year(old, years, db_path, saved, work)
            years.append(Year(label(today), new_repository(work, label(today))))
            rollover.seed(old.repo, years[-1].repo, f"bench/record-{old.year}", growth.START + timedelta(days=day))
        last_day = label(today + timedelta(days=1)) != label(today) or day + 1 == args.days
        if last_day and folder.last_batch(years[-1].repo) is not None:
            store.checkpoint()  # the cache a job of the year's last day starts from
            shutil.copyfile(db_path, saved)
        for hour in range(24):
            h = day * 24 + hour
            sim.hour(h)
            export.export_new(store, years[-1].repo, now=growth.START + timedelta(hours=h, minutes=10))
            sim.archive_hour(h)
            export.export_new(store, years[-1].repo, now=growth.START + timedelta(hours=h, minutes=30))
        commit(years[-1].repo, f"record {today}")
        store.checkpoint()
        current = years[-1]
        current.days += 1
        current.db_peak = max(current.db_peak, db_path.stat().st_size)
        current.db_end = db_path.stat().st_size
        warc_now = store.one("SELECT COALESCE(SUM(bytes), 0) FROM warc_files")[0]
        current.warc += warc_now - warc_before
        warc_before = warc_now
        if (day + 1) % 30 == 0 or day + 1 == args.days:
            print(f"  {outlets} outlet(s), {today}: {current.days} days of {current.year}, database "
                  f"{db_path.stat().st_size / MIB:,.0f} MiB ({time.monotonic() - started:,.0f} s)", flush=True)
    # A job of the next day resumes the cache of the last; the last year is measured as it stands.
    sim.hour(args.days * 24)
    export.export_new(store, years[-1].repo, now=growth.START + timedelta(hours=args.days * 24, minutes=10))
    commit(years[-1].repo, "record, the next day's first job")
    years[-1].rows = {t: store.one(f"SELECT COUNT(*) FROM {t}")[0] for t in
                      ("articles", "snapshots", "checks", "requests", "listing_entries")}
    years[-1].composition = composition(store)
    store.close()
    close_year(years[-1], years, db_path, saved, work)
    folder.verify([y.repo for y in years])  # one chain across every year
    return years


MEASURES = ("packed", "largest", "db_peak", "db_end", "warc", "rebuild_seconds", "resume_seconds")


def at(outlets: int, simulated: Year, baseline: Year | None, k: int) -> dict[str, float]:
    """Return a period's figures at `outlets` outlets: what a record of none costs, plus each outlet's share.

    Every outlet adds rows of its own, so a figure grows linearly with the
    outlets; but some of it is paid per job whatever the outlets (the run's
    rows, each export file's header): the baseline, a record of no outlet,
    measures that part, and only the rest is scaled.
    """
    def value(year: Year, measure: str) -> float:
        return year.largest[0] if measure == "largest" else getattr(year, measure)

    fixed = {m: value(baseline, m) if baseline else 0.0 for m in MEASURES}
    return {m: fixed[m] + outlets * (value(simulated, m) - fixed[m]) / k for m in MEASURES}


def report(years: list[Year], baseline: list[Year] | None, args) -> None:
    print()
    k = args.simulate
    for outlets in args.outlets:
        print(f"At {outlets} outlets x {args.per_day} articles a day (from {k} simulated outlet(s)"
              + (" and a record of none, for what every job costs whatever the outlets):" if baseline else "):"))
        print("  period   days  repository (git gc)  files  largest file  working database (peak, end)  "
              "WARC a day  full rebuild  resume")
        for index, y in enumerate(years):
            f = at(outlets, y, baseline[index] if baseline else None, k)
            fits = "under" if f["packed"] < GITHUB_RECOMMENDED else "OVER"
            print(f"  {y.year:<7}  {y.days:>4}  {f['packed'] / GIB:6.2f} GiB ({fits} 5 GB)  {y.files:>5}  "
                  f"{f['largest'] / MIB:6.2f} MiB    {f['db_peak'] / GIB:6.2f} GiB, "
                  f"{f['db_end'] / GIB:6.2f} GiB      {f['warc'] / max(y.days, 1) / GIB:5.2f} GiB  "
                  f"{f['rebuild_seconds'] / 60:7.1f} min  {f['resume_seconds']:5.1f} s")
        print()
    print("repository: packed bytes after git gc of that period's record repository alone (5 GB: GitHub's "
          "recommended most); largest file: the largest export file in it (GitHub refuses files over 100 MiB); "
          "working database: the database file as a job saves it to the Actions cache, largest at any day's end, "
          "and at the period's end; WARC: bytes of WARC files recorded a day (release assets); full rebuild: "
          "`export rebuild` from every repository up to that period's end, one process; resume: bringing a "
          "database saved a day earlier level with its period's repository (49 files; a job an hour later "
          "reads 2).")
    last = years[-1]
    print(f"rows at the end ({k} simulated outlet(s)): " + ", ".join(f"{t} {v:,}" for t, v in last.rows.items()))
    fixed = dict(baseline[-1].composition) if baseline else {}
    n = args.outlets[0]
    sizes = sorted(((name, fixed.get(name, 0) + n * (size - fixed.get(name, 0)) / k)
                    for name, size in last.composition), key=lambda item: -item[1])
    print(f"the working database at the end, by table and index, at {n} outlets: " + ", ".join(
        f"{name} {size / GIB:.2f} GiB" for name, size in sizes[:14]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--start", type=date.fromisoformat, default=date(2027, 1, 1), help="first day (UTC)")
    parser.add_argument("--days", type=int, default=731, help="days simulated (2027 and 2028: 731)")
    parser.add_argument("--months", type=int, default=12, help="months of record in one repository")
    parser.add_argument("--outlets", type=int, nargs="+", default=[40, 100], help="outlets the figures are for")
    parser.add_argument("--simulate", type=int, default=2, help="outlets actually simulated")
    parser.add_argument("--per-day", type=int, default=100, help="new articles per outlet per day")
    parser.add_argument("--sources", type=int, default=3, help="sources read per outlet per run")
    parser.add_argument("--entries", type=int, default=100, help="entries per listing")
    parser.add_argument("--no-baseline", dest="baseline", action="store_false",
                        help="scale the simulated outlets alone, without a record of none for the cost per job")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="record-years-"))
    if work.exists() and any(work.iterdir()):
        raise SystemExit(f"{work} is not empty")
    work.mkdir(parents=True, exist_ok=True)
    print(f"simulating {args.days} days from {args.start}, {args.simulate} outlet(s), {args.per_day} new articles "
          f"a day each, {args.sources} sources x {args.entries} entries, revisits on; work folder {work}", flush=True)
    started = time.monotonic()
    years = simulate(args, work / "outlets", args.simulate)
    baseline = simulate(args, work / "baseline", 0) if args.baseline else None
    report(years, baseline, args)
    print(f"time {time.monotonic() - started:,.0f} s")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
