"""The capture delay of one simulated day collected every 15 minutes, against the same day collected hourly.

    .venv/bin/python bench/capture_delay.py                       # 6 outlets in 2 groups, 100 articles a day each
    .venv/bin/python bench/capture_delay.py --outlets 9 --groups 3 --per-day 200 --json delays.json

Each schedule gets its own database and the same loopback newsrooms
(testing/newsroom.py on testing/farm.py, as bench/year.py builds them): the
same articles published at the same instants, failing (503 for a few hours)
and moving the same way. Every run is `python -m collector run --now ...
--deadline ...` in a process of its own, as the collect job runs it (no
workflow, no export): at the odd minutes 7, 22, 37 and 52 of every hour, or
at minute 17 of every hour, each started one to five minutes late (seeded) as
scheduled jobs are, with its deadline inside its slot: 35 minutes after it
started, as collect.yml sets it, or SLOT_RESERVE_MINUTES before the next
slot's scheduled minute, whichever comes first. A run given a deadline
starts no fetch that might end after it (the worst case of a fetch and
DEADLINE_WORK_SECONDS, about six minutes), so a 15-minute slot started late
leaves its run little or no time to fetch: the runs that stopped at their
deadline and those that listed nothing are counted. One run before the day
(at 23:30, the same for both schedules) lists the day before's backlog.

Printed, per group of the registry (what the site publishes medians for) and
for all outlets, for each schedule, over the articles the newsrooms published
during the day (both schedules run on for an hour after it, so that each has
had its chance to list them): how many, of them listed (queued), of them
captured, and the capture delay's median, 90th percentile and maximum in
minutes, as the record's capture_delays view gives it (from the first listing that named the article to its first capture: the
statistic the site publishes); and the same for the newsroom's truth, from
the article's publication to its first capture (what a listing every 15
minutes shortens; no listing can show an article before its next run).

The hosts are loopback and paced at --interval (0.01 s), so a run's fetches
take seconds: a deadline binds only where it leaves less than the reserve
above from the run's start, and the delays are the schedule's and the
retries' (503s tried again by later runs), not the 2-second pacing's
(bench/year.py projects that).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import urlsplit

from collector.clock import iso_seconds
from collector.record.store import Store
from testing import replica
from testing.farm import Farm
from testing.newsroom import Newsroom, Odds

DAY = datetime(2026, 9, 2, tzinfo=timezone.utc)  # the measured day; the newsrooms publish from the day before
SCHEDULES = {"15-minute": (7, 22, 37, 52), "hourly": (17,)}
JOB_DEADLINE_MINUTES = 35  # collect.yml: the run's deadline, counted from the job's start
SLOT_RESERVE_MINUTES = 5  # before the next slot: the job's export, publication, push and database save
LATE_SECONDS = (60, 300)  # how late a scheduled job starts, as bench/year.py has it
WARM_UP = DAY - timedelta(minutes=30)  # both schedules' first run: it lists the backlog of the day before


def slots(minutes: tuple[int, ...], start: datetime, end: datetime) -> list[datetime]:
    """Return every scheduled instant at the given minutes of each hour in [start, end)."""
    out, hour = [], start.replace(minute=0, second=0, microsecond=0)
    while hour < end:
        out += [hour + timedelta(minutes=m) for m in minutes if start <= hour + timedelta(minutes=m) < end]
        hour += timedelta(hours=1)
    return out


def runs(minutes: tuple[int, ...], rng: random.Random, reserve: float, hours: float):
    """Return (scheduled, started, deadline) of the warm-up run (WARM_UP) and of every run until an hour past the span.

    The hour after lets every article published in the span be listed and captured.
    """
    end = DAY + timedelta(hours=hours + 1)
    scheduled = [WARM_UP] + slots(minutes, DAY, end + timedelta(hours=1))
    out = []
    for now, following in zip(scheduled, scheduled[1:]):
        if now >= end:
            break
        started = now + timedelta(seconds=rng.uniform(*LATE_SECONDS))
        deadline = min(started + timedelta(minutes=JOB_DEADLINE_MINUTES), following - timedelta(minutes=reserve))
        out.append((now, started, deadline))
    return out


def quantile(values: list[float], share: float) -> float:
    """Return the nearest-rank quantile of sorted values (the median for share 0.5 is statistics')."""
    if share == 0.5:
        return statistics.median(values)
    return values[max(0, math.ceil(share * len(values)) - 1)]


def summary(values: list[float]) -> dict:
    values = sorted(values)
    if not values:
        return {"n": 0, "median": None, "p90": None, "max": None}
    return {"n": len(values), "median": round(quantile(values, 0.5), 2), "p90": round(quantile(values, 0.9), 2),
            "max": round(values[-1], 2)}


def collect(work: Path, room: Newsroom, registry: str, plan, interval: float) -> list[float]:
    """Run the collector at every planned instant into work/record.db; return each run's wall seconds."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "outlets.toml").write_text(registry, encoding="utf-8")
    walls = []
    for _scheduled, started, deadline in plan:
        room.set_clock(started)
        began = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "collector", "run", "--db", str(work / "record.db"),
             "--warc-dir", str(work / "warc"), "--outlets", str(work / "outlets.toml"), "--vantage", "bench",
             "--now", iso_seconds(started), "--deadline", iso_seconds(deadline), "--min-interval", str(interval)],
            capture_output=True, text=True)
        walls.append(time.monotonic() - began)
        if done.returncode != 0:
            raise SystemExit(f"run at {iso_seconds(started)} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return walls


def delays(db: Path, room: Newsroom, hours: float) -> dict:
    """Return, per group and for all outlets, the articles published in the span, of them captured, and both delays."""
    end = DAY + timedelta(hours=hours)
    published = {story.path: story.published for story in room.stories() if DAY <= story.published < end}
    store = Store(db)
    try:
        rows = store.query("""
            SELECT COALESCE(o.group_id, 'ungrouped'), a.url, d.captured_at, d.delay_minutes
              FROM capture_delays d JOIN articles a ON a.id = d.article_id JOIN outlets o ON o.id = a.outlet_id""")
    finally:
        store.conn.close()
    by_group: dict[str, dict[str, list]] = {}
    for group, url, captured, delay in rows:
        when = published.get(urlsplit(url).path)
        if when is None:
            continue
        for key in (group, "all-outlets"):
            entry = by_group.setdefault(key, {"listed": [], "listing": [], "publication": []})
            entry["listed"].append(url)
            if delay is not None:
                entry["listing"].append(delay)
            if captured is not None:
                caught = datetime.fromisoformat(captured.replace("Z", "+00:00"))
                entry["publication"].append((caught - when).total_seconds() / 60)
    outlets = {group: members(db, group) for group in by_group}
    out = {group: {"published": sum(1 for p in published if p.split("/")[2] in outlets[group]),
                   "listed": len(v["listed"]), "captured": len(v["publication"]),
                   "listing_to_capture": summary(v["listing"]), "publication_to_capture": summary(v["publication"])}
           for group, v in sorted(by_group.items(), key=lambda kv: (kv[0] == "all-outlets", kv[0]))}
    return out


def members(db: Path, group: str) -> set[str]:
    """Return the outlet ids of a group of the registry (every outlet for all-outlets)."""
    store = Store(db)
    try:
        rows = store.query("SELECT id FROM outlets" + ("" if group == "all-outlets" else " WHERE group_id = ?"),
                           () if group == "all-outlets" else (group,))
        return {r[0] for r in rows}
    finally:
        store.conn.close()


def run_counts(db: Path) -> dict:
    """Return how many runs stopped starting fetches at their deadline, and how many listed nothing."""
    store = Store(db)
    try:
        counts = [json.loads(row[0]) for row in store.query("SELECT counts FROM run_finishes ORDER BY run_id")]
        silent = store.one("SELECT COUNT(*) FROM runs r WHERE NOT EXISTS "
                           "(SELECT 1 FROM listings l WHERE l.run_id = r.id)")[0]
    finally:
        store.conn.close()
    return {"stopped_at_deadline": sum(1 for c in counts if c.get("stopped_at_deadline")),
            "listed_nothing": silent}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--outlets", type=int, default=6, help="outlets simulated")
    parser.add_argument("--groups", type=int, default=2, help="registry groups the outlets are dealt into")
    parser.add_argument("--per-day", type=int, default=100, help="new articles per outlet per day")
    parser.add_argument("--interval", type=float, default=0.01, help="seconds between requests to one loopback host")
    parser.add_argument("--eventful", type=float, default=1.0, help="make every scripted change (503s, moves, "
                        "edits) this many times as likely")
    parser.add_argument("--hours", type=float, default=24.0, help="measure only this many hours of the day "
                        "(a quick look; the figures are the whole day's by default)")
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--reserve-minutes", type=float, default=SLOT_RESERVE_MINUTES, help="a run's deadline is "
                        "at latest this many minutes before the next slot's scheduled minute")
    parser.add_argument("--seed", type=int, default=20)
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="delay-"))
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    began = time.monotonic()
    figures = {"simulated": {"day": DAY.date().isoformat(), "outlets": args.outlets, "groups": args.groups,
                             "per_day": args.per_day, "interval": args.interval, "seed": args.seed}}
    with Farm() as farm:
        room = Newsroom(farm, args.outlets, args.per_day, DAY - timedelta(days=1), 2, seed=args.seed,
                        odds=Odds().times(args.eventful), change_hours=12.0)
        hosts = {o.id: o.host for o in room.outlets}
        groups = {f"group-{g + 1}": [o.id for i, o in enumerate(room.outlets) if i % args.groups == g]
                  for g in range(args.groups)}
        registry = replica.registry_toml(hosts, groups)
        for name, minutes in SCHEDULES.items():
            plan = runs(minutes, random.Random(args.seed), args.reserve_minutes, args.hours)
            print(f"{name}: {len(plan)} runs (one before the day, one hour's after it), "
                  f"at minutes {', '.join(str(m) for m in minutes)}", flush=True)
            walls = collect(work / name, room, registry, plan, args.interval)
            figures[name] = {"runs": len(plan), "run_wall_median": round(statistics.median(walls), 2),
                             "run_wall_max": round(max(walls), 2), **run_counts(work / name / "record.db"),
                             "groups": delays(work / name / "record.db", room, args.hours)}
    figures["simulated"]["seconds"] = round(time.monotonic() - began)
    report(figures)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2), encoding="utf-8")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


def _cell(s: dict) -> str:
    if not s["n"]:
        return "none"
    return f"median {s['median']:.2f}, p90 {s['p90']:.2f}, max {s['max']:.2f}"


def report(f: dict) -> None:
    s = f["simulated"]
    print(f"\nthe capture delay of {s['day']}: {s['outlets']} outlets in {s['groups']} groups, {s['per_day']} "
          f"articles a day each, requests every {s['interval']} s to a loopback host; {s['seconds']} s in all")
    for name in SCHEDULES:
        r = f[name]
        print(f"{name} runs: {r['runs']}, each {r['run_wall_median']:.1f} s (median), at most {r['run_wall_max']:.1f} s; "
              f"{r['stopped_at_deadline']} stopped at their deadline, {r['listed_nothing']} listed nothing")
        for group, g in r["groups"].items():
            print(f"  {group:<12} published {g['published']:>4}, listed {g['listed']:>4}, captured {g['captured']:>4}; "
                  f"minutes from first listing "
                  f"to capture: {_cell(g['listing_to_capture'])}; from publication: "
                  f"{_cell(g['publication_to_capture'])}")


if __name__ == "__main__":
    main()
