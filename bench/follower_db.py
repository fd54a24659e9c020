"""The database that follows every stream (the pages, archive and vantages jobs'), pruned, over two simulated years.

    .venv/bin/python bench/follower_db.py                # 730 days, 1 outlet simulated, figures for 40 and 100
    .venv/bin/python bench/follower_db.py --days 40      # a quick look

No network. The record is bench/working_db.py's simulation (bench/storage_growth.py: the real Store,
schema and `export_new`; real addresses, titles, text lengths and vocabulary; revisits on
settings.RECHECK_SCHEDULE_HOURS) with the archive job's answers each hour, every capture of the hour
submitted and confirmed, exported to a record folder once a simulated day. Its answers are written in
the same stream here (as one database doing both jobs writes them); in the workflows they are the
archive stream's, a stream's database beside the others, pruned alike.

On days 30, 100, 200, 365, 500 and 730 (and the last) a database that follows the record
(`export follow`, collector/record/follow.py) is brought in sync with it and pruned as
follow_database.sh does every 4 hours (collector/collect/follow_prune.py, with the pages job's
--for-figures, which keeps the most: the running aggregates a release still reads, the periods
closed by then published first as pages.yml does, each release checked equal, line for line, to the
one the full database makes; with --archive, the archive job's, without them). --prune-every hours later a copy of it follows the record again,
which is the largest it gets between prunings, and is pruned: the follow and pruning a job then does,
timed. The sizes are of the merged database and its streams' own databases beside it together.
Sizes and times scale with the outlets as bench/working_db.py's do; the rows every job writes
whatever the outlets (PER_JOB) with the jobs the database follows instead (4 collect jobs and 1
archive job an hour against the simulation's 2 runs).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import storage_growth as growth  # noqa: E402  (the hourly simulation)
import working_db  # noqa: E402  (its revisits, each finding the page; the per-job tables)
from collector.collect.follow_prune import prune_followed  # noqa: E402
from collector.publish.history import History  # noqa: E402
from collector.publish.release import release  # noqa: E402
from collector.record import export, shadows  # noqa: E402
from collector.record.follow import follow, parts_folder  # noqa: E402
from collector.record.store import Store  # noqa: E402

MIB, GIB = 2**20, 2**30
JOBS_SCALE = 5 / 2  # 4 collect jobs and 1 archive job an hour, against the simulation's 2 runs


def measure(db: Path) -> tuple[int, int]:
    """Return (bytes, bytes of the per-job tables) of a following database and its streams' own together."""
    files = [db, *sorted(parts_folder(db).glob("*.db"))]
    return (sum(p.stat().st_size for f in files for p in (f, Path(f"{f}-wal")) if p.exists()),
            sum(working_db.per_job_bytes(f) for f in files))


def copy_follower(db: Path, to: Path) -> None:
    for path in (to, Path(f"{to}-wal"), Path(f"{to}-shm")):
        path.unlink(missing_ok=True)
    shutil.rmtree(parts_folder(to), ignore_errors=True)
    shutil.copyfile(db, to)
    shutil.copytree(parts_folder(db), parts_folder(to))


def publish(follower: Path, published: Path, now, full: Path) -> str:
    """The pages job's release, from the database that follows every stream (pages.yml).

    Returns how it compares with the release the full database (never
    pruned: the simulation's own) makes from the same published history,
    which must be the same lines; raises AssertionError when they differ.
    """
    lines, seconds = [], []
    for db, write in ((full, False), (follower, True)):
        store = Store(db)
        t = time.monotonic()
        try:
            made = release(store, now, History.open(published, published), write=write)
        finally:
            store.close()
        seconds.append(time.monotonic() - t)
        lines.append(json.dumps([made.published, made.decisions], sort_keys=True, ensure_ascii=False))
    assert lines[0] == lines[1], "the follower's figures differ from the full database's"
    return (f"{len(made.periods)} new period(s), the same as the full database's; its release {seconds[1]:.1f} s, "
            f"the full database's {seconds[0]:.1f} s")


def tally_bytes(db: Path) -> tuple[int, int]:
    """Return (bytes of the merged database alone, bytes of its running aggregates' tables)."""
    conn = sqlite3.connect(db)
    try:
        used = conn.execute("SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name LIKE 'fold_tally_%'"
                            ).fetchone()[0]
    finally:
        conn.close()
    return sum(p.stat().st_size for p in (db, Path(f"{db}-wal")) if p.exists()), used


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    working_db.simulation_arguments(parser)
    parser.add_argument("--prune-every", type=int, default=4, choices=range(1, 24), metavar="HOURS",
                        help="hours between prunings, as follow_database.sh's PRUNE_EVERY_HOURS (default 4)")
    parser.add_argument("--archive", action="store_true",
                        help="the archive job's follower instead: no release, no figures' rows kept (archive.yml)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="follower-db-"))
    work.mkdir(parents=True, exist_ok=True)
    record, published = work / "record", work / "published"
    db, follower, later = work / "stream.db", work / "follower.db", work / "later.db"
    for path in (record, published, parts_folder(follower), parts_folder(later)):
        shutil.rmtree(path, ignore_errors=True)
    for path in work.glob("*.db*"):
        path.unlink()
    started = time.monotonic()
    store, sim = working_db.simulation(args, work, db)
    print(f"simulating {args.days} days x 24 hourly collect and archive jobs, {args.simulate} outlet(s), "
          f"{args.per_day} new articles a day each; a database following the record, pruned on the days "
          f"reported; work folder {work}", flush=True)
    export.export_new(store, record, now=growth.START)
    checkpoints = sorted({d for d in working_db.CHECKPOINTS if d <= args.days} | {args.days})
    rows = []
    for day in range(args.days + 1):  # the day after the last, for its measure alone
        measured = day in checkpoints  # measured on the day after a checkpoint's last hour
        for hour in range(24):
            h = day * 24 + hour
            if measured and hour == 0:  # the record as it stands: followed and pruned
                now = growth.START + timedelta(hours=h)
                export.export_new(store, record, now=now)
                follow(follower, record)
                if not args.archive:
                    compared = publish(follower, published, now, db)
                caught_up = prune_followed(follower, record, args.prune_every, now=now,
                                           history=History.open(published), figures=not args.archive)
                assert caught_up.skipped is None, caught_up.skipped
                pruned = measure(follower)
                done_periods = History.open(published).periods()
                store_f = Store(follower)
                try:
                    kept_from = shadows.figures_from(store_f.conn)
                finally:
                    store_f.close()
                merged, tallied = tally_bytes(follower)
                print(f"  day {day:>3}: {len(done_periods)} periods published (the last {done_periods[-1:]}"
                      f"{'' if args.archive else '; ' + compared}); a release could compute figures from "
                      f"{kept_from}; merged database {merged / MIB:,.1f} MiB simulated, its aggregates "
                      f"{tallied / MIB:,.2f} MiB", flush=True)
            if measured and hour == args.prune_every:  # a job --prune-every hours on
                now = growth.START + timedelta(hours=h)
                export.export_new(store, record, now=now)
                copy_follower(follower, later)
                t = time.monotonic()
                follow(later, record)
                grown = measure(later)
                job = prune_followed(later, record, args.prune_every, now=now, history=History.open(published),
                                     figures=not args.archive)
                seconds = time.monotonic() - t
                assert job.skipped is None, job.skipped
                rows.append((day, pruned, grown, seconds))
                print(f"  day {day:>3}: following database {pruned[0] / MIB:,.1f} MiB simulated, "
                      f"{grown[0] / MIB:,.1f} MiB {args.prune_every} hours later; that job's follow + prune "
                      f"{seconds:.1f} s ({time.monotonic() - started:,.0f} s)", flush=True)
                if day == args.days:
                    break
            sim.hour(h)
            sim.archive_hour(h)
        if day < args.days:
            export.export_new(store, record, now=growth.START + timedelta(hours=day * 24 + 23, minutes=30))
    store.close()
    k = args.simulate

    print()
    for outlets in args.outlets:
        scale = outlets / k
        print(f"At {outlets} outlets x {args.per_day} articles a day (scaled x{scale:g} from {k} simulated):")
        print(f"   day  following database (pruned)  {args.prune_every} hours later  that job's follow + prune")
        for day, pruned, grown, seconds in rows:
            at, later_size = (working_db.scaled_size(m, scale, JOBS_SCALE) / GIB for m in (pruned, grown))
            print(f"  {day:>4}  {at:6.2f} GiB                 {later_size:6.2f} GiB        {seconds * scale:6.1f} s")
        print()
    print(f"sizes: the merged database and its streams' own databases together; the per-job tables "
          f"({', '.join(working_db.PER_JOB)}) scaled x{JOBS_SCALE:g}, every other row with the outlets")
    print(f"time {time.monotonic() - started:,.0f} s")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
