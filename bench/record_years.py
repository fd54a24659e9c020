"""The record over years: one record repository per calendar year, at the hourly load, day after day.

    .venv/bin/python bench/record_years.py                      # 2027 and 2028, figures for 40 and 100 outlets
    .venv/bin/python bench/record_years.py --months 6           # a repository per half year
    .venv/bin/python bench/record_years.py --start 2026-12-30 --days 4   # a quick look across one boundary
    .venv/bin/python bench/record_years.py --figures F.json     # keep the measured figures ...
    .venv/bin/python bench/record_years.py --report F.json      # ... and print the table again from them

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
database (largest on any day, as the cache would hold it; never pruned here: `export prune`
and bench/working_db.py bound it), WARC release assets per day and the largest (one run's
file), a full rebuild from every repository so far, and a job's resume from its year's
repository of the cache saved a day earlier; then each against GitHub's limits.
"""

from __future__ import annotations

import argparse
import json
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
# GitHub's documented limits; name, bytes, the figure held to it. docs.github.com/en/repositories/
# working-with-files/managing-large-files/about-large-files-on-github (a repository: "less than 5 GB is
# strongly recommended"; a file over 100 MiB is blocked), .../releasing-projects-on-github/about-releases
# ("each file included in a release must be under 2 GiB"), docs.github.com/en/actions/using-workflows/
# caching-dependencies-to-speed-up-workflows#usage-limits-and-eviction-policy (10 GB of caches a
# repository, oldest evicted beyond it; the cache is compressed, so the database file is the upper bound).
GITHUB_RECOMMENDED = 5 * 10**9  # "less than 5 GB is strongly recommended" (a repository, on disk)
LIMITS = (
    ("a repository: 5 GB recommended", GITHUB_RECOMMENDED, "packed"),
    ("a file in a repository: 100 MiB", 100 * MIB, "largest"),
    ("a release asset: 2 GiB", 2 * GIB, "warc_largest"),
    ("the Actions cache of a repository: 10 GB", 10 * 10**9, "db_peak"),
)


@dataclass
class Year:
    """What one period's record repository came to (a calendar year's, or --months)."""

    year: str  # the period's label: 2027, or 2027-07
    repo: Path
    days: int = 0
    db_peak: int = 0  # bytes of the working database, largest at any day's end
    db_end: int = 0
    warc: int = 0  # bytes of WARC files recorded in the year
    warc_largest: int = 0  # bytes of the largest WARC file (one run's, one release asset) of the year
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
    warc_seen = 0  # the last warc_files row counted
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
        warc_now, warc_largest = store.one("SELECT COALESCE(SUM(bytes), 0), COALESCE(MAX(bytes), 0) FROM warc_files "
                                           "WHERE id > ?", (warc_seen,))
        warc_seen = store.one("SELECT COALESCE(MAX(id), 0) FROM warc_files")[0]
        current.warc += warc_now
        current.warc_largest = max(current.warc_largest, warc_largest)
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


MEASURES = ("packed", "largest", "db_peak", "db_end", "warc", "warc_largest", "rebuild_seconds", "resume_seconds")


def figures(years: list[Year]) -> list[dict]:
    """Return what each period measured, as JSON can hold it (--figures writes it, --report reads it)."""
    return [{"year": y.year, "days": y.days, "files": y.files, "largest_name": y.largest[1], "rows": y.rows,
             "composition": y.composition, **{m: y.largest[0] if m == "largest" else getattr(y, m) for m in MEASURES}}
            for y in years]


def at(outlets: int, simulated: dict, baseline: dict | None, k: int) -> dict[str, float]:
    """Return a period's figures at `outlets` outlets: what a record of none costs, plus each outlet's share.

    Every outlet adds rows of its own, so a figure grows linearly with the
    outlets; but some of it is paid per job whatever the outlets (the run's
    rows, each export file's header): the baseline, a record of no outlet,
    measures that part, and only the rest is scaled.
    """
    fixed = {m: baseline[m] if baseline else 0.0 for m in MEASURES}
    return {m: fixed[m] + outlets * (simulated[m] - fixed[m]) / k for m in MEASURES}


def table(measured: dict, outlets: int) -> list[dict]:
    """Return each period's row of the table at `outlets` outlets, in the units printed.

    `measured` is what --figures writes: the simulated outlets' periods, the
    baseline's (or None) and how many outlets were simulated. Sizes in GiB
    and MiB (2**30, 2**20 bytes), WARC per day over the period's simulated
    days, rebuild in minutes, resume in seconds.
    """
    baseline = measured["baseline"]
    rows = []
    for index, period in enumerate(measured["years"]):
        f = at(outlets, period, baseline[index] if baseline else None, measured["simulate"])
        rows.append({"period": period["year"], "days": period["days"], "files": period["files"],
                     "repository_gib": f["packed"] / GIB, "largest_mib": f["largest"] / MIB,
                     "db_peak_gib": f["db_peak"] / GIB, "db_end_gib": f["db_end"] / GIB,
                     "warc_day_gib": f["warc"] / max(period["days"], 1) / GIB, "warc_largest_mib": f["warc_largest"] / MIB,
                     "rebuild_min": f["rebuild_seconds"] / 60, "resume_s": f["resume_seconds"],
                     "limits": {name: f[measure] <= limit for name, limit, measure in LIMITS}})
    return rows


def report(measured: dict) -> None:
    print()
    k = measured["simulate"]
    for outlets in measured["outlets"]:
        print(f"At {outlets} outlets x {measured['per_day']} articles a day (from {k} simulated outlet(s)"
              + (" and a record of none, for what every job costs whatever the outlets):"
                 if measured["baseline"] else "):"))
        print("  period   days  repository (git gc)  files  largest file  working database, unpruned  "
              "WARC a day, largest file  full rebuild  resume")
        rows = table(measured, outlets)
        for r in rows:
            fits = "under" if r["limits"][LIMITS[0][0]] else "OVER"
            print(f"  {r['period']:<7}  {r['days']:>4}  {r['repository_gib']:6.2f} GiB ({fits} 5 GB)  {r['files']:>5}  "
                  f"{r['largest_mib']:6.2f} MiB    {r['db_peak_gib']:6.2f} GiB peak, {r['db_end_gib']:6.2f} GiB end  "
                  f"{r['warc_day_gib']:5.2f} GiB, {r['warc_largest_mib']:6.1f} MiB  "
                  f"{r['rebuild_min']:7.1f} min  {r['resume_s']:6.1f} s")
        for name, _limit, _measure in LIMITS:
            over = [r["period"] for r in rows if not r["limits"][name]]
            print(f"  GitHub's limit on {name}: " + (f"passed in {', '.join(over)}" if over else "holds every period"))
        print()
    print("repository: packed bytes after git gc of that period's record repository alone (5 GB: GitHub's "
          "recommended most); largest file: the largest export file in it (GitHub refuses files over 100 MiB); "
          "working database: the database file as a job saves it to the Actions cache (before the cache's own "
          "compression), never pruned here (`export prune` bounds it: bench/working_db.py), largest at any "
          "day's end and at the period's end; WARC: bytes of WARC files recorded a day (release assets), and "
          "the largest, one run's (2 GiB an asset); full rebuild: `export rebuild` from every repository up "
          "to that period's end, one process; resume: bringing a database saved a day earlier in sync with its "
          "period's repository (49 files; a job an hour later reads 2).")
    last = measured["years"][-1]
    print(f"rows at the end ({k} simulated outlet(s)): " + ", ".join(f"{t} {v:,}" for t, v in last["rows"].items()))
    fixed = dict(measured["baseline"][-1]["composition"]) if measured["baseline"] else {}
    n = measured["outlets"][0]
    sizes = sorted(((name, fixed.get(name, 0) + n * (size - fixed.get(name, 0)) / k)
                    for name, size in last["composition"]), key=lambda item: -item[1])
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
    parser.add_argument("--figures", type=Path, help="write the measured figures to this JSON file")
    parser.add_argument("--report", type=Path, help="print the table from figures written by --figures; simulate nothing")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.report:
        report(json.loads(args.report.read_text()))
        return
    work = args.keep or Path(tempfile.mkdtemp(prefix="record-years-"))
    if work.exists() and any(work.iterdir()):
        raise SystemExit(f"{work} is not empty")
    work.mkdir(parents=True, exist_ok=True)
    print(f"simulating {args.days} days from {args.start}, {args.simulate} outlet(s), {args.per_day} new articles "
          f"a day each, {args.sources} sources x {args.entries} entries, revisits on; work folder {work}", flush=True)
    started = time.monotonic()
    years = simulate(args, work / "outlets", args.simulate)
    baseline = simulate(args, work / "baseline", 0) if args.baseline else None
    measured = {"start": args.start.isoformat(), "days": args.days, "simulate": args.simulate, "outlets": args.outlets,
                "per_day": args.per_day, "sources": args.sources, "entries": args.entries, "months": args.months,
                "seconds": round(time.monotonic() - started), "years": figures(years),
                "baseline": figures(baseline) if baseline else None}
    if args.figures:
        args.figures.write_text(json.dumps(measured, indent=1) + "\n")
    report(measured)
    print(f"time {time.monotonic() - started:,.0f} s")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
