"""A production-like year: every scheduled job on a fresh runner, against loopback newsrooms, judged against the truth.

    .venv/bin/python bench/year.py                                   # 365 days, 4 outlets x 100 articles a day
    .venv/bin/python bench/year.py --days 2 --outlets 3 --per-day 24 # make test-actions runs a small year (tests/actions/test_year_simulation.py)

The jobs are the workflows' (.github/workflows), on their cron schedules as
the files say (collect every 15 minutes at 7, 22, 37 and 52, archive hourly at 47 today)
and pages after each collection, each a few minutes late as scheduled jobs start. Each runs on a fresh runner
(bench/runner.py): the record's checkout, the database the Actions cache
restores, and what the job downloads itself; WARC files go to a loopback
release store (testing/release_store.py) and come back from it when a check
across the extractor upgrade needs an older page. The newsrooms
(testing/newsroom.py) publish, edit (one word, headline, byline), move (301),
take down (404, for good or for a while), fail once (503); one outlet is down
6 hours (3 hours every address, then 3 hours its articles only); halfway
through, the extraction software is upgraded (testing/upgrade.py: a new
fingerprint, and headlines read without the site's name on some outlets).

Printed: per job (wall time and its parts, peak disk, database, rows added),
the slowest job and what it would take at the real 2 s interval, and for the
year: events by kind, false events, real changes missed, articles lost (to the
outage), repository and release sizes, and the archive's figures
(bench/yeararchive.py): the queue of captures waiting for a confirmed copy at
the start of every archive run, and the share of captures with a confirmed
copy within 1 hour and within 24 hours. `--json` writes them all.

Outlets are independent hosts served concurrently, so a job's network time
depends on the busiest outlet, not on their number; its CPU time grows with
the number of outlets. `--target-outlets` projects the CPU parts linearly.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import forkserver
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from runner import SPN_KEYS, TIMEOUT_MINUTES, Runner
from yeararchive import archive_figures
from yeararchive import report as report_archive
from yearjudge import judge

from collector import settings
from testing import replica
from testing.fake_spn import FakeSPN
from testing.farm import Farm
from testing.newsroom import Newsroom, Odds
from testing.release_store import FakeReleaseStore
from testing.trust import make_trust
from testing.upgrade import upgrade

START = datetime(2026, 9, 1, tzinfo=timezone.utc)
WORKFLOWS = Path(__file__).resolve().parent.parent / ".github" / "workflows"
REAL_INTERVAL = settings.MIN_INTERVAL_SECONDS + settings.PACING_SAFETY_SECONDS


def parse_cron(line: str) -> tuple[list[int], int]:
    """Return (the minutes of the hour, every how many hours) of a 'M H * * *' schedule.

    '17 * * * *' is ([17], 1); '7,22,37,52 * * * *' is ([7, 22, 37, 52], 1), a run at each listed
    minute; '*/15 * * * *' is ([0, 15, 30, 45], 1); '5 */2 * * *' is ([5], 2).
    """
    minute, hour, *rest = line.split()
    if rest != ["*", "*", "*"] or not (hour == "*" or re.fullmatch(r"\*/\d+", hour)):
        raise ValueError(f"not an hourly schedule this simulation knows: {line!r}")
    if minute.startswith("*/"):
        minutes = list(range(0, 60, int(minute[2:])))
    else:
        minutes = sorted({int(m) for m in minute.split(",")})
    if not minutes or any(not 0 <= m < 60 for m in minutes):
        raise ValueError(f"minutes out of range: {line!r}")
    return minutes, 1 if hour == "*" else int(hour.removeprefix("*/"))


def cron(workflow: str) -> tuple[list[int], int]:
    """Return parse_cron of a workflow's (first) schedule."""
    text = (WORKFLOWS / workflow).read_text(encoding="utf-8")
    return parse_cron(re.search(r'cron:\s*"([^"]+)"', text).group(1))


def schedule(hours: int, rng: random.Random, pages_every: int = 1,
             crons: dict[str, tuple[list[int], int]] | None = None) -> list[tuple[datetime, str]]:
    """Return every job of the simulated span in start order: (when it starts, kind), as the workflows say.

    collect and archive on their cron schedules (`crons`, by default the
    workflows'), pages when a collection has finished (workflow_run), after
    every `pages_every`th; each starts a few minutes late, as scheduled jobs do.
    """
    crons = crons or {"collect": cron("collect.yml"), "archive": cron("archive.yml")}
    (collect_minutes, collect_every), (archive_minutes, archive_every) = crons["collect"], crons["archive"]
    jobs, collections = [], 0
    for hour in range(hours):
        top = START + timedelta(hours=hour)
        if hour % collect_every == 0:
            for minute in collect_minutes:
                collect = top + timedelta(minutes=minute, seconds=rng.uniform(60, 300))
                jobs.append((collect, "collect"))
                if collections % pages_every == 0:
                    jobs.append((collect + timedelta(minutes=rng.uniform(4, 8)), "pages"))
                collections += 1
        if hour % archive_every == 0:
            for minute in archive_minutes:
                jobs.append((top + timedelta(minutes=minute, seconds=rng.uniform(60, 300)), "archive"))
    return sorted(jobs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--hours", type=int, help="simulate this many hours instead of --days")
    parser.add_argument("--outlets", type=int, default=4, help="outlets simulated")
    parser.add_argument("--per-day", type=int, default=100, help="new articles per outlet per day")
    parser.add_argument("--target-outlets", type=int, default=40, help="outlets the projected figures are for")
    parser.add_argument("--target-per-day", type=int, default=100, help="articles a day per outlet the projected "
                        "figures are for (a host's requests grow with them)")
    parser.add_argument("--report-every", type=int, default=30, help="days between interim verdicts (and --json)")
    parser.add_argument("--interval", type=float, default=0.01, help="seconds between requests to one loopback host")
    parser.add_argument("--upgrade-at", type=float, default=0.5, help="share of the span after which the "
                        "extraction software is upgraded")
    parser.add_argument("--outage-at", type=float, default=0.3, help="share of the span at which outlet 0 goes down")
    parser.add_argument("--pages-every", type=int, default=1, help="run the pages job after every Nth "
                        "collection only (it writes nothing another job reads: this samples its cost)")
    parser.add_argument("--eventful", type=float, default=1.0, help="make every scripted change of an article "
                        "this many times as likely (a short simulation still sees each kind)")
    parser.add_argument("--no-prune", action="store_true", help="the jobs delete no superseded cache entry "
                        "(as before .github/scripts/prune_cache.py)")
    parser.add_argument("--cache-from-day", type=float, default=0.0, help="the period's day the modelled Actions "
                        "cache's entry sizes start at (bench/actions_cache.py)")
    parser.add_argument("--json", type=Path, help="write every figure to this file")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()
    hours = args.hours or args.days * 24
    sys.setswitchinterval(settings.THREAD_SWITCH_SECONDS)  # as python -m collector does
    os.environ.update(SPN_KEYS, GH_TOKEN="sim-token")
    work = args.keep or Path(tempfile.mkdtemp(prefix="year-"))
    if work.exists() and any(work.iterdir()):
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    python, server = forkserver.client(work / "forkserver")  # before any thread starts
    # The fork server waits on its calls' FIFO and never sees this process go: stopped whatever happens,
    # or it keeps this process's output open after a failure (a caller waiting on it waits forever).
    try:
        rng = random.Random(args.seed)
        began = time.monotonic()
        with Farm() as farm:
            room = Newsroom(farm, args.outlets, args.per_day, START, -(-hours // 24), seed=args.seed,
                            odds=Odds().times(args.eventful), change_hours=min(72.0, hours / 6))
            outage_start = (START + timedelta(hours=round(hours * args.outage_at), minutes=30))
            outage = (outage_start, outage_start + timedelta(hours=6))
            room.outlets[0].outages = [(outage[0], outage[0] + timedelta(hours=3), False),
                                       (outage[0] + timedelta(hours=3), outage[1], True)]
            spn = FakeSPN(farm, polls=1, expect_auth=f"LOW {SPN_KEYS['IA_ACCESS_KEY']}:{SPN_KEYS['IA_SECRET_KEY']}")
            releases = FakeReleaseStore(farm, token="sim-token", folder=work / "releases")
            hosts = {o.id: o.host for o in room.outlets}
            trust, secrets = signing(work / "trust", farm)
            runner = Runner(work, replica.registry_toml(hosts, {"sim": list(hosts)}), spn.base, releases.base,
                            args.interval, python, prune=not args.no_prune, cache_from_day=args.cache_from_day,
                            trust=trust.folder, secrets=secrets)
            upgrade_at = START + timedelta(hours=hours * args.upgrade_at)
            print(f"simulating {hours / 24:g} days: {args.outlets} outlets x {args.per_day} articles a day, "
                  f"{len(room.stories())} articles; outage of {room.outlets[0].id} {outage[0]:%Y-%m-%d %H:%M} + 6 h; "
                  f"extractor upgrade {upgrade_at:%Y-%m-%d %H:%M}; work folder {work}", flush=True)
            jobs, undo = [], None
            for when, kind in schedule(hours, rng, args.pages_every):
                if undo is None and when >= upgrade_at:
                    undo = upgrade()
                room.set_clock(when)
                jobs.append(runner.run_job(kind, when))
                for host in farm.hosts:  # what the hosts saw is not needed after the job (a year of it would be)
                    host.seen.clear()
                if jobs[-1].failed:
                    print(f"  FAILED {kind} job at {when:%Y-%m-%d %H:%M}: {jobs[-1].failed[:1500]}", flush=True)
                if kind == "collect" and when.hour == 23:
                    day = (when - START).days + 1
                    if day % args.report_every == 0 and day < hours // 24:
                        interim(runner, room, jobs, outage, args, day)
                    if day % max(1, hours // 24 // 36) == 0 or day == hours // 24:
                        print(f"  day {day:>3} ({time.monotonic() - began:5.0f} s): database "
                              f"{runner.cache.stat().st_size / 2**20:.0f} MiB, last collection {jobs[-1].wall:.1f} s, "
                              f"this process {_rss() / 2**20:.0f} MiB", flush=True)
            full = runner.full_database()
            verdict = judge(full, room, [j.scheduled for j in jobs if j.kind == "collect"], outage)
            copies = archive_figures(runner.merged_database(), [j.scheduled for j in jobs if j.kind == "archive"], jobs[-1].scheduled)
            repository = runner.repository_bytes()
            assets = sum(a.size for r in releases.releases.values() for a in r.assets.values())
            if undo:
                undo()
            trust.close()
    finally:
        os.kill(server, signal.SIGTERM)
    figures = summarise(jobs, args, verdict, repository, assets, time.monotonic() - began)
    figures["archive"] = copies
    cache = runner.actions_cache
    figures["actions_cache"] = {"prune": cache.pruning, "peak_bytes": cache.peak, "budget_bytes": cache.budget,
                                "restores": cache.restores, "misses": len(cache.misses), "evicted": cache.evicted}
    print(f"Actions cache (bench/actions_cache.py, {'with' if cache.pruning else 'without'} pruning, entries sized at "
          f"40 outlets from day {args.cache_from_day:g}): peak {cache.peak / 1e9:.2f} GB of {cache.budget / 1e9:.0f} GB; "
          f"{len(cache.misses)} of {cache.restores} restores missed the entry last saved", flush=True)
    report(figures)
    report_archive(copies)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str), encoding="utf-8")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


def signing(folder: Path, farm: Farm):
    """Return (the trust folder, the signing secrets): the record's key, a WACZ key, two loopback authorities.

    The secrets are the workflows' (RECORD_SIGNING_KEY, WACZ_SIGNING_KEY), so every export file is
    signed and timestamped and every day's WACZ signed, as with the repository set up (docs/operating.md).
    """
    trust = make_trust(folder, farm)
    wacz = ec.generate_private_key(ec.SECP384R1())
    (folder / "wacz-signers.pem").write_bytes(wacz.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    pem = wacz.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()
    return trust, {"RECORD_SIGNING_KEY": trust.key.read_text(), "WACZ_SIGNING_KEY": pem}


def interim(runner, room, jobs, outage, args, day: int) -> None:
    """Print the verdict so far (and write --json), so a long run can be read before it ends."""
    verdict = judge(runner.full_database(), room, [j.scheduled for j in jobs if j.kind == "collect"], outage)
    print(f"  verdict after {day} days: events {verdict['events']}, false {verdict['false_events']}, missed "
          f"{verdict['missed_changes']} of {verdict['changes_seen']}, lost {verdict['articles_lost']} (outage "
          f"{verdict['outage_lost']} of {verdict['outage_articles']}), open comparisons "
          f"{verdict['comparisons_open']}", flush=True)
    if args.json:
        figures = summarise(jobs, args, verdict, 0, 0, 0)
        args.json.write_text(json.dumps(figures, indent=2, default=str), encoding="utf-8")


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def summarise(jobs, args, verdict: dict, repository: int, assets: int, seconds: float) -> dict:
    """Return the figures of the year: per kind of job, the slowest job, and the verdict."""
    scale = args.target_outlets / args.outlets
    load = args.target_per_day / args.per_day  # a host's requests grow with its articles
    kinds = {}
    for kind in ("collect", "archive", "pages"):
        mine = [j for j in jobs if j.kind == kind]
        walls = sorted(j.wall for j in mine)
        kinds[kind] = {"jobs": len(mine), "wall_median": statistics.median(walls), "wall_max": walls[-1],
                       "rows_added_median": statistics.median(j.rows_added for j in mine),
                       "rows_added_max": max(j.rows_added for j in mine),
                       "peak_disk_max": max(j.peak_disk for j in mine), "db_bytes_last": mine[-1].db_bytes,
                       "step_seconds": {label: round(sum(j.steps.get(label, 0.0) for j in mine), 2)
                                        for label in dict.fromkeys(k for j in mine for k in j.steps)}}
    for kind in kinds:
        worst = max((j for j in jobs if j.kind == kind), key=lambda j: projected(j, args.interval, scale, load))
        kinds[kind]["projected_max"] = round(projected(worst, args.interval, scale, load))
        kinds[kind]["timeout_seconds"] = TIMEOUT_MINUTES[kind] * 60
    slowest = max((j for j in jobs if j.kind == "collect"), key=lambda j: projected(j, args.interval, scale, load))
    failed = [{"kind": j.kind, "scheduled": j.scheduled.isoformat(), "why": j.failed[:500]} for j in jobs if j.failed]
    # The steps each kind of job ran (bench/runner.py takes them from the workflow files): every distinct sequence.
    ran = {kind: [list(map(list, seq)) for seq in dict.fromkeys(tuple(j.ran) for j in jobs if j.kind == kind
                                                                and not j.failed)] for kind in kinds}
    return {"failed_jobs": failed, "steps_run": ran,
            "simulated": {"days": round((jobs[-1].scheduled - START).total_seconds() / 86400, 2),
                          "outlets": args.outlets, "per_day": args.per_day, "pages_every": args.pages_every,
                          "target_outlets": args.target_outlets, "target_per_day": args.target_per_day,
                          "seconds": round(seconds)},
            "jobs": kinds, "slowest": {
                "kind": slowest.kind, "scheduled": slowest.scheduled.isoformat(),
                "steps": {k: round(v, 2) for k, v in slowest.steps.items()}, "wall": round(slowest.wall, 2),
                "requests": slowest.requests, "busiest_host_requests": slowest.busiest_host_requests,
                "projected_seconds": round(projected(slowest, args.interval, scale, load)),
                "timeout_seconds": TIMEOUT_MINUTES[slowest.kind] * 60},
            "archive_capacity": archive_capacity(jobs, scale, load),
            "repository_bytes": repository, "release_asset_bytes": assets, **verdict}


def projected(job, interval: float, scale: float, load: float = 1.0) -> float:
    """Return at most a job's seconds at the real pace, `scale` times the outlets and `load` times their articles.

    Collect: the busiest host's requests take REAL_INTERVAL each (hosts are
    served concurrently); everything else is work that grows with the outlets,
    counted as if none of it overlapped the waiting. Archive: Save Page Now's
    rate with keys, for `scale` times the submissions, until the run's own
    bound (settings.SPN_RUN_SECONDS). Pages: work that grows with the outlets.
    """
    network = job.busiest_host_requests * interval
    work = (job.wall - network) * scale * load
    if job.kind == "collect":
        return work + job.busiest_host_requests * load * REAL_INTERVAL
    if job.kind == "archive":
        # Submissions 60 / rate seconds apart, then up to SPN_JOB_SECONDS polling the last ones to their
        # end (polls go between submissions, at the host's pace); never past the run's own bound.
        paced = job.submissions * scale * load * 60 / settings.SPN_CAPTURES_PER_MINUTE_KEYS
        network = max(paced + settings.SPN_JOB_SECONDS, job.busiest_host_requests * scale * load * REAL_INTERVAL)
        return work + min(settings.SPN_RUN_SECONDS, network)
    return job.wall * scale * load


def archive_capacity(jobs, scale: float, load: float) -> dict:
    """Return what the archive job must submit at the target load against what its settings let it.

    A run submits until SPN_JOB_SECONDS before its bound, at SPN_CAPTURES_PER_MINUTE_KEYS; a day
    at most SPN_DAILY_CAP_KEYS. More captures than that and the queue of pages waiting for a copy
    grows every run (the newest are taken first, so the oldest wait ever longer), whatever the job's time says.
    """
    mine = [j for j in jobs if j.kind == "archive"]
    reserve = min(settings.SPN_JOB_SECONDS, settings.SPN_RUN_SECONDS / 2)
    per_run = (settings.SPN_RUN_SECONDS - reserve) * settings.SPN_CAPTURES_PER_MINUTE_KEYS / 60
    hours = max(1e-9, (mine[-1].scheduled - mine[0].scheduled).total_seconds() / 3600 + 1) if mine else 1
    submitted = sum(j.submissions for j in mine)
    return {"run_capacity": int(per_run), "daily_cap": settings.SPN_DAILY_CAP_KEYS,
            "submissions_per_run_at_target": round(submitted / max(1, len(mine)) * scale * load),
            "submissions_per_run_max_at_target": round(max((j.submissions for j in mine), default=0) * scale * load),
            "submissions_per_day_at_target": round(submitted / hours * 24 * scale * load)}


def report(f: dict) -> None:
    s = f["simulated"]
    mib = 2 ** 20
    print(f"\n{s['days']} days, {s['outlets']} outlets x {s['per_day']} articles a day, in {s['seconds']} s")
    for kind, k in f["jobs"].items():
        print(f"  {kind:<8} {k['jobs']:>5} jobs: wall median {k['wall_median']:.1f} s, max {k['wall_max']:.1f} s; "
              f"rows added median {k['rows_added_median']:.0f}, max {k['rows_added_max']}; peak disk "
              f"{k['peak_disk_max'] / mib:.0f} MiB; database at the end {k['db_bytes_last'] / mib:.0f} MiB; "
              f"at most {k['projected_max']} s at the real pace and {s['target_outlets']} x "
              f"{s['target_per_day']} (timeout {k['timeout_seconds']} s)")
    a = f["archive_capacity"]
    print(f"  archive at {s['target_outlets']} x {s['target_per_day']}: {a['submissions_per_run_at_target']} "
          f"submissions a run on average (at most {a['submissions_per_run_max_at_target']}), "
          f"{a['submissions_per_day_at_target']} a day; a run can submit {a['run_capacity']}, a day "
          f"{a['daily_cap']}" + ("" if a["submissions_per_run_at_target"] <= a["run_capacity"] and
                                 a["submissions_per_day_at_target"] <= a["daily_cap"]
                                 else ": MORE THAN THE SETTINGS ALLOW, the queue waiting for a copy grows"))
    print(f"jobs failed: {len(f['failed_jobs'])}")
    w = f["slowest"]
    print(f"slowest collection: {w['kind']} at {w['scheduled']}: {w['wall']} s here ("
          + ", ".join(f"{k} {v} s" for k, v in w["steps"].items()) + f"); {w['requests']} requests, "
          f"{w['busiest_host_requests']} to its busiest host; at most {w['projected_seconds']} s at 2 s a request "
          f"and {s['target_outlets']} outlets x {s['target_per_day']} a day, against a timeout of "
          f"{w['timeout_seconds']} s")
    print(f"events by kind: {f['events']}; false events: {f['false_events']}; real changes seen between "
          f"snapshots: {f['changes_seen']}, missed: {f['missed_changes']}; comparisons still open: "
          f"{f['comparisons_open']}")
    for line in f["false"] + f["missed"]:
        print(f"  {line}")
    print(f"articles listed {f['articles_listed']}, lost {f['articles_lost']}; during the 6-hour outage and the "
          f"48 hours before: {f['outage_articles']} articles of that outlet, lost {f['outage_lost']}")
    for line in f["lost"]:
        print(f"  lost: {line}")
    print(f"not lost but never captured: {f['absent_at_capture']} articles answered 404 at their capture (taken "
          f"down before it, as the outlet served them then; the method does not try a 404 again)")
    for line in f["absent"]:
        print(f"  absent at capture: {line}")
    print(f"retries: captures {f['capture_retries']} ({f['captured_after_retry']} captured on a later try), "
          f"checks {f['check_retries']}; comparisons across the upgrade {f['comparisons']}, WARC records "
          f"downloaded {f['warc_downloads']}")
    print(f"repository after git gc {f['repository_bytes'] / mib:.1f} MiB; release assets "
          f"{f['release_asset_bytes'] / mib:.1f} MiB")


if __name__ == "__main__":
    main()
