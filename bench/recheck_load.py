"""What the revisit schedule asks of each run and of the busiest host, at steady state. No network.

The model (each assumption is an option, printed with the figures):

* OUTLETS outlets each publish PER_DAY articles a day, spread over the Dhaka
  day by PROFILE (fewer at night), placed deterministically, not sampled;
* runs are hourly; an article is captured by the first run after it is
  published, and every check is done by the first run after it falls due
  (a check falls due a few seconds after a whole hour, because the capture
  or check it is counted from took that long into its run);
* each article is checked at settings.RECHECK_SCHEDULE_HOURS; a share of
  articles (ABSENCE_SHARE) opens one absence during its life, at a slot taken
  in turn, which adds the follow-ups settings.GONE_FOLLOWUP_HOURS;
* a check costs REQUESTS_PER_CHECK requests (redirect hops, retries); each
  run also reads robots.txt once and SOURCES listings per outlet;
* every request to one host waits settings.MIN_INTERVAL_SECONDS.

It prints checks per hourly run over all outlets, the busiest host's requests
and time per run, whether one hourly run keeps up, how long a 24 h outage
takes to clear under settings.RECHECKS_PER_RUN, and the same for an outlet
publishing all day at the busiest hour seen in the corpus feeds (the rest
as before): the worst case for the busiest host.

    python bench/recheck_load.py                 # 40 outlets x 100 a day
    python bench/recheck_load.py --per-day 250   # exit 1 when such a run cannot keep up
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from collector import settings  # noqa: E402
from collector.clock import parse_instant  # noqa: E402
from collector.parse.listings import ListingParseError, parse_listing  # noqa: E402

FEEDS = ROOT / "tests" / "data" / "feeds"
# Relative publishing rate by Dhaka hour: an assumption (a third of the daytime
# rate from midnight to 7), not a measurement; the corpus feeds cover hours, not days.
PROFILE = tuple([1.0] * 7 + [3.0] * 17)
FLAT = tuple([1.0] * 24)
HOUR = 3600.0
STEADY_DAYS = 30  # runs measured: the last month of the simulation, a year after its start


def publication_hours(per_day: float, days: int, profile=PROFILE) -> list[float]:
    """Return publication instants (hours from the start, UTC+6 day) spread by the profile."""
    total = sum(profile)
    cumulative = [sum(profile[: h + 1]) / total for h in range(24)]
    per_day_int = max(1, round(per_day))
    in_day = []
    for n in range(per_day_int):
        quantile = (n + 0.5) / per_day_int
        hour = next(h for h, c in enumerate(cumulative) if c >= quantile)
        below = cumulative[hour - 1] if hour else 0.0
        in_day.append(hour + (quantile - below) / (cumulative[hour] - below))
    return [day * 24 + t for day in range(days) for t in in_day]


def done_by(due: float) -> int:
    """Return the hourly run (index) that performs a check falling due at `due` hours."""
    return math.ceil(due)


def load_per_run(per_day: float, days: int, absence_share: float, profile=PROFILE) -> tuple[Counter, Counter]:
    """Return (checks, captures) per hourly run for one outlet."""
    checks, captures = Counter(), Counter()
    schedule = settings.RECHECK_SCHEDULE_HOURS
    every = round(1 / absence_share) if absence_share > 0 else 0
    seconds = 1 / HOUR  # a capture or check ends a little after its run starts
    for n, published in enumerate(publication_hours(per_day, days, profile)):
        captured = done_by(published)
        captures[captured] += 1
        runs = [done_by(captured + seconds + h) for h in schedule]
        checks.update(runs)
        if every and n % every == 0:
            opener = runs[(n // every) % len(schedule)]
            checks.update(done_by(opener + seconds + f) for f in settings.GONE_FOLLOWUP_HOURS)
    return checks, captures


def steady(counter: Counter, days: int) -> list[int]:
    """Return the per-run counts of the last STEADY_DAYS days of a simulation of `days` days."""
    end = days * 24
    return [counter[run] for run in range(end - STEADY_DAYS * 24, end)]


def percentile(values: list[int], share: float) -> int:
    """Return the value below which `share` of the values fall (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def corpus_busiest_hour() -> tuple[int, str]:
    """Return the most entries any corpus feed lists within one hour, and the feed's name."""
    best = (0, "none")
    for path in sorted(FEEDS.glob("*.xml")):
        try:
            entries = parse_listing(path.read_bytes(), "https://example.invalid/").entries
        except ListingParseError:
            continue
        times = sorted(parse_instant(e.published_utc) for e in entries if e.published_utc)
        for start in times:
            count = sum(1 for t in times if start <= t < start + timedelta(hours=1))
            best = max(best, (count, path.name.split("__")[0]))
    return best


def host_seconds(checks: int, captures: int, args) -> tuple[float, float]:
    """Return (requests, seconds) one host needs in a run at the politeness interval."""
    requests = 1 + args.sources + captures + checks * args.requests_per_check
    return requests, requests * settings.MIN_INTERVAL_SECONDS


def report(args, rates: list[tuple[float, tuple]], label: str) -> bool:
    """Print the figures for outlets publishing (articles a day, hourly profile); return True when a run keeps up."""
    days = math.ceil(max(settings.RECHECK_SCHEDULE_HOURS) / 24) + STEADY_DAYS + 10
    per_rate = {rate: [steady(c, days) for c in load_per_run(rate[0], days, args.absence_share, rate[1])]
                for rate in set(rates)}
    everyone = [sum(per_rate[rate][0][run] for rate in rates) for run in range(STEADY_DAYS * 24)]
    host_checks, host_captures = per_rate[max(rates)]
    worst = max(range(len(host_checks)), key=lambda i: host_seconds(host_checks[i], host_captures[i], args)[1])
    requests, seconds = host_seconds(host_checks[worst], host_captures[worst], args)
    fits_hour, fits_budget = seconds < HOUR, max(everyone) <= settings.RECHECKS_PER_RUN
    mean_all = sum(everyone) / len(everyone)
    print(f"\n{label}")
    print(f"  checks per hourly run, all outlets: mean {mean_all:,.0f}  p95 {percentile(everyone, .95):,}"
          f"  max {max(everyone):,}   (budget RECHECKS_PER_RUN {settings.RECHECKS_PER_RUN:,})")
    print(f"  busiest host, busiest run: {host_checks[worst]} checks + {host_captures[worst]} captures"
          f" + robots + {args.sources} listings = {requests:,.0f} requests"
          f" -> {seconds:,.0f} s at {settings.MIN_INTERVAL_SECONDS:g} s ({seconds / HOUR:.0%} of the hour)")
    spare = settings.RECHECKS_PER_RUN - mean_all
    backlog = mean_all * 24
    clears = f"{math.ceil(backlog / spare)} runs" if spare > 0 else "never (budget below the steady load)"
    print(f"  after a 24 h outage: {backlog:,.0f} checks overdue, cleared in {clears} at the budget")
    print(f"  busiest host done within the hour: {'yes' if fits_hour else 'NO'}; every check due within the "
          f"budget: {'yes' if fits_budget else 'NO (the rest wait for the next run)'}")
    print(f"  one hourly run keeps up: {'yes' if fits_hour and fits_budget else 'NO'}")
    return fits_hour and fits_budget


def main(argv: list[str] | None = None) -> int:
    """Print the load figures; return 1 when a run of the main scenario cannot keep up."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--outlets", type=int, default=40)
    parser.add_argument("--per-day", type=float, default=100.0, help="articles a day per outlet")
    parser.add_argument("--absence-share", type=float, default=0.05,
                        help="share of articles that open one absence (follow-ups); assumed")
    parser.add_argument("--requests-per-check", type=float, default=1.2,
                        help="redirect hops and retries per check; assumed")
    parser.add_argument("--sources", type=int, default=3, help="listings read per outlet per run")
    args = parser.parse_args(argv)
    hours = ", ".join(f"{h:g}" for h in settings.RECHECK_SCHEDULE_HOURS)
    print(f"Revisit load at steady state, hourly runs. Schedule {hours} h after first capture; follow-ups "
          f"{', '.join(f'{h:g}' for h in settings.GONE_FOLLOWUP_HOURS)} h after the first absent of "
          f"{args.absence_share:.0%} of articles; {args.requests_per_check:g} requests per check.")
    usual = (args.per_day, PROFILE)
    ok = report(args, [usual] * args.outlets, f"{args.outlets} outlets x {args.per_day:g} articles a day")
    busiest, feed = corpus_busiest_hour()
    if busiest:
        print(f"\nThe corpus feeds list up to {busiest} articles within one hour ({feed}).")
        report(args, [(busiest * 24, FLAT)] + [usual] * (args.outlets - 1),
               f"One outlet at that rate all day ({busiest * 24} a day), {args.outlets - 1} at {args.per_day:g}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
