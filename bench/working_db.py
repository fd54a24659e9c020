"""The bounded working database over two simulated years: its size, and a job's resume and pruning.

    .venv/bin/python bench/working_db.py                # 730 days, 1 outlet simulated, figures for 40 and 100
    .venv/bin/python bench/working_db.py --days 40      # a quick look

No network. Each simulated hour writes the rows of one collect stream's job with
bench/storage_growth.py's simulation (the real Store, schema and `export_new`; real addresses,
titles, text lengths and vocabulary; revisits on settings.RECHECK_SCHEDULE_HOURS, each finding the
page, so no article waits on a retry or a follow-up the simulation does not make) and exports them
to a record folder, once a simulated day. No archive answer is in it: the archive job writes a
stream of its own from the database that follows every stream (archive.yml), as in production.
On days 30, 100, 200, 365, 500 and 730 (and the last) the working database is pruned
(collector.collect.prune.prune with archive_queue=False, as .github/scripts/sync_database.sh
runs it in every collect job).
Pruning keeps rows by rules that only move forward in time (an article leaves its revisit window
for good, the recent ledger and the unpublished months only advance), so pruning on those days
alone leaves the rows pruning every hour would; between them the simulated database grows whole.

--prune-every hours after each (4, sync_database.sh's PRUNE_EVERY_HOURS), it reports the
database grown since (the largest it gets between prunings) and that next pruning, timed. On those days it reports a job's restore and pruning: the database as a job of the day's last
hour restores it (pruned and saved by the job before),
brought in sync with the record (`export rebuild --resume`: that hour's two export files) and
pruned, timed, and the size of the working database the job then works on and saves. The
cache's download is not in the figure (it depends on the runner's link).
Sizes and times are scaled linearly from the simulated outlets to the outlets reported: every
outlet's rows are independent; what each job writes whatever the outlets (PER_JOB: its run, its
finish, its WARC file's row) is scaled with the jobs instead (4 collect jobs an hour). The time a
pruning costs whatever the outlets (timed
on a database of no observation) is added once, the rest scaled.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import storage_growth as growth  # noqa: E402  (the hourly simulation)
from collector.collect.prune import prune  # noqa: E402
from collector.publish.history import History  # noqa: E402
from collector.record import export  # noqa: E402
from collector.record.rebuild import resume  # noqa: E402
from collector.record.store import Store  # noqa: E402

MIB, GIB = 2**20, 2**30
CHECKPOINTS = (30, 100, 200, 365, 500, 730)
TARGET = 2 * 10**9  # issue 16: under 2 GB on every day of the first two years
# Rows each job writes whatever the outlets (its run, its finish and the finish's shadow, its WARC file): not
# scaled with the outlets but with the jobs. A stream's working database gets 4 collect jobs an hour (every
# 15 minutes); the simulation writes 1 run an hour, so these count four times.
PER_JOB = ("runs", "run_finishes", "export_shadow_run_finishes", "warc_files")
JOBS_SCALE = 4 / 1


class EveryRevisitPresent(growth.Simulation):
    """The hourly simulation, each revisit finding the page (a failed one would wait on a retry never made)."""

    def _check(self, rows, run, when, article_id, slot, warc):
        art = self.article[article_id]
        rid = self.request(rows, run, when, art[0], "recheck", art[1], size=len(self.rng.choice(self.corpus.pages)),
                           warc=warc, kind="page")
        snapshot = self._snapshot(rows, run, when, article_id, rid, "recheck", warc)
        due = datetime.fromisoformat(art[8]) + timedelta(hours=int(slot[:-1]))
        rows["checks"].append((self.next_id("checks"), article_id, slot, None, growth._iso(due), growth._iso(when),
                               run, art[1], "ok", rid, json.dumps([rid]), snapshot, "present", 0, None))


def reopen(sim: growth.Simulation, db: Path) -> Store:
    store = Store(db)
    store.conn.execute("PRAGMA synchronous = OFF")
    sim.store, sim.conn = store, store.conn
    return store


def largest_tables(db: Path, count: int = 6) -> list[tuple[str, int]]:
    store = Store(db)
    try:
        return [(r[0], r[1]) for r in store.query(
            "SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC LIMIT ?", (count,))]
    finally:
        store.close()


def _per_job(name: str) -> bool:
    """Return True for a per-job table or one of its automatic indexes (by dbstat's name)."""
    return any(name == t or name.startswith(f"sqlite_autoindex_{t}_") for t in PER_JOB)


def per_job_bytes(db: Path) -> int:
    """Return the bytes of the per-job tables (PER_JOB) and their indexes."""
    store = Store(db)
    try:
        names = ", ".join(f"'{t}'" for t in PER_JOB)
        return store.one(f"SELECT COALESCE(SUM(pgsize), 0) FROM dbstat WHERE name IN (SELECT name FROM sqlite_master "
                         f"WHERE tbl_name IN ({names}))")[0]
    finally:
        store.close()


def simulation_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of the simulated record (bench/follower_db.py's too)."""
    parser.add_argument("--days", type=int, default=730)
    parser.add_argument("--outlets", type=int, nargs="+", default=[40, 100], help="outlets the figures are for")
    parser.add_argument("--simulate", type=int, default=1, help="outlets actually simulated")
    parser.add_argument("--per-day", type=int, default=100, help="new articles per outlet per day")
    parser.add_argument("--sources", type=int, default=3, help="sources read per outlet per run")
    parser.add_argument("--entries", type=int, default=100, help="entries per listing")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--seed", type=int, default=7)


def scaled_size(measured: tuple[int, int], scale: float, jobs_scale: float) -> float:
    """Return bytes scaled to the outlets reported: the per-job tables' with the jobs, every other row's by scale."""
    total, jobs = measured
    return (total - jobs) * scale + jobs * jobs_scale


def simulation(args, work: Path, db: Path) -> tuple[Store, "EveryRevisitPresent"]:
    """Return the database at db and the hourly simulation writing it, as the options say."""
    rng = random.Random(args.seed)
    corpus = growth.Corpus(rng)
    per_kind = growth.warc_bytes_per_exchange(corpus, work / "warc-sample")
    store = Store(db)
    return store, EveryRevisitPresent(store, corpus, args.simulate, args.per_day, args.sources, args.entries, True,
                                      rng, per_kind)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    simulation_arguments(parser)
    parser.add_argument("--prune-on", type=int, nargs="*", default=[],
                        help="days to publish and prune on besides 30, 100, 200, 365, 500 and 730 (and the last)")
    parser.add_argument("--prune-every", type=int, default=4, choices=range(1, 25), metavar="HOURS",
                        help="hours between prunings, as sync_database.sh's PRUNE_EVERY_HOURS (default 4): the "
                             "database is also measured that long after each reported day's pruning")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="working-db-"))
    work.mkdir(parents=True, exist_ok=True)
    record, published, db, saved = work / "record", work / "published", work / "working.db", work / "saved.db"
    for path in (record, published):
        shutil.rmtree(path, ignore_errors=True)
    for path in work.glob("*.db*"):
        path.unlink()
    started = time.monotonic()
    store, sim = simulation(args, work, db)
    print(f"simulating {args.days} days x 24 hourly collect jobs, {args.simulate} outlet(s), "
          f"{args.per_day} new articles a day each, {args.sources} sources x {args.entries} entries, revisits on; "
          f"pruned on the days reported; work folder {work}", flush=True)
    # What a job's resume and pruning cost whatever the outlets (opening, the schema, the queries' set-up):
    # timed on the database of no observation yet, and not scaled.
    export.export_new(store, record, now=growth.START)
    store.close()
    fixed = prune(db, record, growth.START, History.open(published), archive_queue=False).seconds
    store = reopen(sim, db)
    rows, prune_max, peaks = [], 0.0, {}
    checkpoints = sorted({d for d in (*CHECKPOINTS, *args.prune_on) if d <= args.days} | {args.days})
    for day in range(args.days):
        measured = day + 1 in checkpoints
        for hour in range(24):
            h = day * 24 + hour
            if day in checkpoints and hour == args.prune_every - 1:
                # --prune-every hours after a checkpoint's pruning: the largest the database gets between prunings,
                # and what the next pruning costs (sync_database.sh prunes every PRUNE_EVERY_HOURS).
                export.export_new(store, record, now=growth.START + timedelta(hours=h))
                store.checkpoint()
                store.close()
                daily = work / "daily.db"
                shutil.copyfile(db, daily)
                grown = (daily.stat().st_size, per_job_bytes(daily))
                peaks[day] = (grown, prune(daily, record, growth.START + timedelta(hours=h),
                                           History.open(published), archive_queue=False).seconds)
                daily.unlink()
                store = reopen(sim, db)
            if measured and hour == 23:
                # The job before: it prunes (sync_database.sh) ...
                now = growth.START + timedelta(hours=h)
                export.export_new(store, record, now=now)
                store.close()
                done = prune(db, record, now, History.open(published), archive_queue=False)
                prune_max = max(prune_max, done.seconds)
                store = reopen(sim, db)
                store.checkpoint()
                shutil.copyfile(db, saved)  # ... and saves the cache the hour's job restores
            sim.hour(h)
            if measured and hour == 23:  # that job's own export
                export.export_new(store, record, now=growth.START + timedelta(hours=h, minutes=10))
        export.export_new(store, record, now=growth.START + timedelta(hours=day * 24 + 23, minutes=30))
        if not measured:
            continue
        t = time.monotonic()
        files, _ = resume(record, saved)
        job = prune(saved, record, growth.START + timedelta(days=day + 1), History.open(published),
                    archive_queue=False)
        seconds = time.monotonic() - t
        rows.append((day + 1, (job.bytes_after, per_job_bytes(saved)), files, seconds, job.seconds,
                     largest_tables(saved)))
        saved.unlink()
        print(f"  day {day + 1:>3}: working database {job.bytes_after / MIB:,.1f} MiB simulated "
              f"({done.bytes_before / MIB:,.1f} MiB before the day's first pruning); a job's resume + prune "
              f"{seconds:.1f} s ({time.monotonic() - started:,.0f} s)", flush=True)
    store.close()
    k = args.simulate

    def scaled(seconds: float, scale: float) -> float:
        return fixed + max(0.0, seconds - fixed) * scale

    def size(measured: tuple[int, int], scale: float) -> float:
        return scaled_size(measured, scale, JOBS_SCALE)

    print()
    for outlets in args.outlets:
        scale = outlets / k
        print(f"At {outlets} outlets x {args.per_day} articles a day (scaled x{scale:g} from {k} simulated):")
        print(f"   day  working database  {args.prune_every} hours later (the next pruning)  a job's resume + prune "
              "(of which pruning)")
        for day, measured, files, seconds, prune_seconds, _tables in rows:
            fits = "under" if size(measured, scale) < TARGET else "OVER"
            grown, daily = peaks.get(day, (None, None))
            later = (f"{size(grown, scale) / GIB:6.2f} GiB ({'under' if size(grown, scale) < TARGET else 'OVER'} 2 GB; "
                     f"{scaled(daily, scale):5.1f} s)") if grown else " " * 30
            print(f"  {day:>4}  {size(measured, scale) / GIB:6.2f} GiB ({fits} 2 GB)  {later}  {scaled(seconds, scale):6.1f} s "
                  f"({scaled(prune_seconds, scale):.1f} s; {files} export files resumed)")
        print(f"  slowest first pruning of a day (the simulated database grown whole since the last): "
              f"{scaled(prune_max, scale):.1f} s")
        print()
    day, _size, _files, _s, _l, tables = rows[-1]
    print(f"the working database on day {day}, largest tables and indexes at {args.outlets[0]} outlets: "
          + ", ".join(f"{name} {part * (JOBS_SCALE if _per_job(name) else args.outlets[0] / k) / GIB:.2f} GiB"
                      for name, part in tables))
    print(f"sizes: the per-job tables ({', '.join(PER_JOB)}, and their indexes) scaled x{JOBS_SCALE:g} (4 collect "
          "jobs an hour against the simulation's 1 run), every other row with the outlets")
    print(f"times: what a resume and prune cost whatever the outlets ({fixed:.2f} s, pruning a database of no "
          "observation) is added once, the rest scaled")
    print(f"time {time.monotonic() - started:,.0f} s")
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
