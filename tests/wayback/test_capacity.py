"""The archive job's capacity against the service's limits (issue 32, item 1).

The fake (testing/fake_spn.py) enforces the documented 12 captures a minute
with the 429 page the service answers, states the account's sessions and day
in /save/status/user, and stamps every submission on the test's virtual clock,
so what is measured is what the service would see.
"""

from __future__ import annotations

import sys
from pathlib import Path

from collector import settings
from collector.clock import parse_instant
from tests.wayback.runs import VirtualClock, run_archive, seed

BENCH = Path(__file__).resolve().parents[2] / "bench"
LOAD_40 = 40 * 100 / 24  # captures an hour at 40 outlets x 100 articles a day (bench/year.py: about 167)
LOAD_100 = 100 * 100 / 24
SETUP_SECONDS = 180.0  # the archive job's set-up before its run starts, out of the workflow's deadline


def test_a_run_at_the_real_pace_stays_under_the_documented_rate_and_submits_more_than_the_load(
        store, tmp_path, fake):
    clock = VirtualClock()
    fake.per_minute, fake.clock, fake.capture_seconds = (settings.SPN_CAPTURES_PER_MINUTE_DOCUMENTED_KEYS,
                                                         clock.monotonic, 30.0)
    seed(store, fake, ["ok"] * 600)
    sys.path.insert(0, str(BENCH))
    from runner import DEADLINE_MINUTES

    bound = min(settings.SPN_RUN_SECONDS, DEADLINE_MINUTES["archive"] * 60 - SETUP_SECONDS)
    job = run_archive(store, tmp_path, fake, clock, interval=settings.MIN_INTERVAL_SECONDS,
                      per_minute=settings.SPN_CAPTURES_PER_MINUTE_KEYS, max_wait=bound,
                      poll_seconds=settings.SPN_POLL_SECONDS)
    # The service's limit is never met; our own pace holds to within the loopback's jitter (the job
    # paces from when it sends, the fake stamps when it receives: a millisecond late on one request
    # and early on the next can put an 11th start at 59.999 s).
    assert fake.most_in_a_minute() < settings.SPN_CAPTURES_PER_MINUTE_DOCUMENTED_KEYS
    starts = sorted(fake.started)
    assert min(b - a for a, b in zip(starts, starts[1:])) >= 60.0 / settings.SPN_CAPTURES_PER_MINUTE_KEYS - 0.5
    assert settings.SPN_CAPTURES_PER_MINUTE_KEYS < settings.SPN_CAPTURES_PER_MINUTE_DOCUMENTED_KEYS
    assert all(s.job_id for s in fake.submissions)  # no 429, no refusal of any kind
    # One run an hour (archive.yml) confirms at least the load at 100 outlets, twice the load at 40.
    confirmed = store.one("SELECT COUNT(DISTINCT snapshot_id) AS n FROM archive_submissions "
                          "WHERE status = 'success'")["n"]
    assert confirmed >= max(LOAD_100, 2 * LOAD_40), confirmed
    assert job.ctx.counts["archive_left_pending"] == 0


def test_a_429_from_the_services_rate_limit_is_waited_out(store, tmp_path, fake):
    clock = VirtualClock()
    fake.per_minute, fake.clock = settings.SPN_CAPTURES_PER_MINUTE_DOCUMENTED_KEYS, clock.monotonic
    seed(store, fake, ["ok"] * 40)
    # Faster than the service allows (only a loopback service may be asked that): it answers 429.
    run_archive(store, tmp_path, fake, clock, per_minute=30.0, max_wait=900.0)
    posts = store.query("SELECT a.status, r.started_at FROM archive_submissions a JOIN requests r "
                        "ON r.id = a.request_id WHERE a.kind = 'submit' ORDER BY a.id")
    refused = [n for n, row in enumerate(posts) if row["status"] == "rate_limited"]
    assert refused, "the fake never answered 429"
    for n in refused:
        if n + 1 < len(posts):
            gap = parse_instant(posts[n + 1]["started_at"]) - parse_instant(posts[n]["started_at"])
            assert gap.total_seconds() >= settings.SPN_BACKOFF_SECONDS
    assert len({s.url for s in fake.submissions if s.job_id}) == 40  # every page submitted in the end


def test_the_accounts_limit_and_days_captures_are_read_from_the_service(store, tmp_path, fake):
    fake.daily_captures_limit, fake.captured_elsewhere = 100, 60  # someone used the account today
    seed(store, fake, ["ok"] * 80)
    job = run_archive(store, tmp_path, fake, VirtualClock(), daily_cap=1000)
    allowed = int(100 * settings.SPN_DAILY_CAP_SHARE) - 60
    assert len(fake.submissions) == allowed
    # The job stopped below the limit it was told, never meeting the service's refusal.
    assert all(s.job_id for s in fake.submissions)
    assert f"daily cap of {int(100 * settings.SPN_DAILY_CAP_SHARE)}" in job.closed
    assert job.ctx.counts["archive_account_daily_limit"] == 100


def test_a_service_that_states_no_day_leaves_the_fallback_cap(store, tmp_path, fake):
    fake.states_daily_limit = False  # as the DOC's example: {"available":12,"processing":3}
    seed(store, fake, ["ok"] * 5)
    job = run_archive(store, tmp_path, fake, VirtualClock(), daily_cap=3)
    assert len(fake.submissions) == 3 and "daily cap of 3" in job.closed


def test_a_12_hour_backlog_drains_within_a_day_at_the_40_outlet_load(tmp_path):
    """The archive job, on archive.yml's schedule, after a 12-hour outage at the load of 40 outlets.

    A tenth of the load at a tenth of the rate keeps the ratio of capacity to
    load, the schedule and the run's bound (bench/archive_queue.py runs the
    full load: its figures are in the report of docs/spnwacz.md).
    """
    sys.path.insert(0, str(BENCH))
    from archive_queue import simulate

    figures = simulate(tmp_path, hours=48, outlets=4, per_day=100, outage=(6.0, 18.0),
                       per_minute=settings.SPN_CAPTURES_PER_MINUTE_KEYS / 10)
    assert figures["backlog_peak"] >= 12 * LOAD_40 / 10 * 0.9
    assert figures["backlog_drained_after_hours"] is not None
    assert figures["backlog_drained_after_hours"] <= 24
    assert figures["outage_copy_within_24h"] == 1.0
