"""The archive job against the clock: the status window, the run's bound, the workflow's schedule (item 11).

The service keeps a job's status about an hour (agude/wayback-machine-archiver
#28); a job not polled to its end within it is lost, and its page is captured
a second time by a later run.
"""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import yaml

from collector import settings
from collector.clock import Clock, parse_instant
from collector.wayback.history import TERMINAL
from tests.wayback.runs import START, VirtualClock, run_archive, seed

ARCHIVE_WORKFLOW = Path(__file__).resolve().parents[2] / ".github" / "workflows" / "archive.yml"


def test_a_run_stops_submitting_in_time_to_poll_its_last_jobs_to_their_end(store, tmp_path, fake):
    seed(store, fake, ["ok"] * 120)  # more than a run can submit
    job = run_archive(store, tmp_path, fake, VirtualClock(), max_wait=900.0, per_minute=6.0)
    assert job.ctx.counts["archive_left_pending"] == 0 and not job.jobs
    accepted = store.query("SELECT job_id, recorded_at FROM archive_submissions WHERE kind = 'submit' "
                           "AND status = 'pending'")
    assert len(accepted) > 40
    ended = {r["job_id"] for r in store.query(
        f"SELECT job_id FROM archive_submissions WHERE kind = 'status' AND status IN {TERMINAL}")}
    assert {r["job_id"] for r in accepted} <= ended
    last = max(parse_instant(r["recorded_at"]) for r in accepted)
    assert (last - START).total_seconds() <= 900.0 - settings.SPN_JOB_SECONDS + 60


def test_a_rerun_polls_the_jobs_left_pending_before_it_submits(store, tmp_path, fake):
    *later, slow = seed(store, fake, ["ok", "ok", "slow"])  # newest first
    first = run_archive(store, tmp_path, fake, VirtualClock(), max_wait=40.0, limit=1)
    assert [j.snapshot_id for j in first.jobs] == [slow]
    second = run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(minutes=5)))
    requests = store.query("SELECT method, url FROM requests WHERE run_id = ? AND url NOT LIKE '%/save/status/user%' "
                           "ORDER BY id", (second.ctx.run_id,))
    assert requests[0]["method"] == "GET" and requests[0]["url"].endswith(first.jobs[0].job_id)
    assert [r["method"] for r in requests].index("POST") > 0


def test_max_wait_is_a_hard_bound_on_the_run(store, tmp_path, fake):
    fake.stall_seconds = 3.0  # the service takes the submission and never answers
    seed(store, fake, ["ok", "stall"])  # newest first
    started = time.monotonic()
    # The context's own read timeout is 2 s: without the bound the run would last at least that.
    job = run_archive(store, tmp_path, fake, Clock(START), max_wait=0.8)
    elapsed = time.monotonic() - started
    assert elapsed < 0.8 + 0.4, elapsed
    assert store.one("SELECT result FROM requests WHERE method = 'POST'")["result"] == "timeout"
    assert job.stopped is None


def _run_minutes(cron: str) -> list[int]:
    """Return the minutes of a day (0-1439) at which a 'M H * * *' schedule starts a run."""
    minute, hour, *_rest = cron.split()

    def values(field: str, size: int) -> list[int]:
        if field == "*":
            return list(range(size))
        if field.startswith("*/"):
            return list(range(0, size, int(field[2:])))
        return sorted(int(v) for v in field.split(","))

    return sorted(h * 60 + m for h in values(hour, 24) for m in values(minute, 60))


def test_the_archive_schedule_fits_the_status_window():
    workflow = yaml.safe_load(ARCHIVE_WORKFLOW.read_text(encoding="utf-8"))
    on = workflow.get("on", workflow.get(True))
    starts = _run_minutes(on["schedule"][0]["cron"])
    gaps = [(b - a) * 60 for a, b in zip(starts, starts[1:] + [starts[0] + 1440])]
    # A job submitted at the last moment a run submits, and still pending at its end,
    # is polled by the next run while the service still keeps its status.
    last_submission = settings.SPN_RUN_SECONDS - settings.SPN_JOB_SECONDS
    assert max(gaps) - last_submission <= settings.SPN_POLL_WITHIN_SECONDS
    # And a run, with its setup and export, fits inside the job's timeout and before the next run.
    minutes = workflow["jobs"]["archive"]["timeout-minutes"]
    assert settings.SPN_RUN_SECONDS + 600 <= minutes * 60 <= min(gaps)
