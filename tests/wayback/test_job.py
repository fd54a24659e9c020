"""The archive job against a loopback Save Page Now: every state of a submission, across runs."""

from __future__ import annotations

import gzip
from datetime import timedelta

import pytest
from click.testing import CliRunner

from collector import settings
from collector.cli import archive as archive_module
from collector.cli.archive import archive
from collector.clock import parse_instant
from collector.record.store import Store
from collector.wayback import job as job_module
from collector.wayback import spn
from collector.wayback.history import attempts_by_snapshot, confirmed_snapshot_ids
from tests.wayback.runs import START, VirtualClock, rows, run_archive, seed, url_of
from testing.fake_spn import FakeSPN

# -- success -----------------------------------------------------------------

def test_success_is_confirmed_with_the_archive_address(store, tmp_path, fake):
    ok, moved = seed(store, fake, ["ok", "moved"])
    run_archive(store, tmp_path, fake, VirtualClock())
    assert confirmed_snapshot_ids(store) == {ok, moved}
    submit, *pending, success = rows(store, ok)
    assert (submit["kind"], submit["status"]) == ("submit", "pending") and submit["job_id"].startswith("spn2-")
    assert [r["status"] for r in pending] == ["pending"] * fake.polls
    assert success["kind"] == "status" and success["job_id"] == submit["job_id"]
    assert success["archive_url"] == f"https://web.archive.org/web/{success['timestamp']}/{url_of(store, ok)}"
    # The copy is of the address the service ended at, which may differ from the one submitted.
    last = rows(store, moved)[-1]
    assert last["original_url"] == url_of(store, moved) + "?from=redirect"
    assert last["archive_url"].endswith("/" + last["original_url"])
    # A second run finds nothing to do.
    before = len(fake.submissions)
    run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(hours=1)))
    assert len(fake.submissions) == before


@pytest.mark.parametrize("marker", ["cached", "notime"])
def test_answers_that_look_like_success_do_not_confirm(store, tmp_path, fake, marker):
    (sid,) = seed(store, fake, [marker])
    run_archive(store, tmp_path, fake, VirtualClock())
    assert confirmed_snapshot_ids(store) == set()
    assert all(r["archive_url"] is None and r["timestamp"] is None for r in rows(store, sid))


# -- errors --------------------------------------------------------------------

@pytest.mark.parametrize("marker", ["err-blocked-url", "err-not-found", "err-filesize-limit", "now-blocked-url",
                                    "now-invalid-url-syntax"])
def test_permanent_error_is_never_resubmitted(store, tmp_path, fake, marker):
    (sid,) = seed(store, fake, [marker])
    run_archive(store, tmp_path, fake, VirtualClock())
    final = rows(store, sid)[-1]
    assert final["status"] == "error" and final["status_ext"] == "error:" + marker[4:]
    run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(hours=2)))
    assert fake.submitted(url_of(store, sid)) == 1
    assert sid not in confirmed_snapshot_ids(store)


def test_temporary_error_is_resubmitted_in_later_runs_up_to_the_cap(store, tmp_path, fake):
    (sid,) = seed(store, fake, ["err-job-failed"])
    url = url_of(store, sid)
    for n in range(settings.SPN_MAX_ATTEMPTS + 2):
        run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(hours=2 * n)))
        # Never twice in one run, once in each later run until the cap.
        assert fake.submitted(url) == min(n + 1, settings.SPN_MAX_ATTEMPTS)
    assert attempts_by_snapshot(store)[sid] == settings.SPN_MAX_ATTEMPTS


def test_failed_submission_is_not_repeated_blindly(store, tmp_path, fake):
    (sid,) = seed(store, fake, ["502-1"])
    run_archive(store, tmp_path, fake, VirtualClock())
    # A 502 may hide an accepted job: no retry in the run, a new submission in the next.
    assert fake.submitted(url_of(store, sid)) == 1
    assert rows(store, sid)[-1]["status"] == "failed_request"
    run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(hours=1)))
    assert fake.submitted(url_of(store, sid)) == 2 and sid in confirmed_snapshot_ids(store)


# -- limits and refusals -------------------------------------------------------

def test_rate_limits_back_off_exponentially_and_are_not_attempts(store, tmp_path, fake):
    busy, with_after, limited = seed(store, fake, ["busy-1", "429ra-1", "429-2"])  # newest first
    run_archive(store, tmp_path, fake, VirtualClock())
    assert confirmed_snapshot_ids(store) == {limited, with_after, busy}
    assert [r["status"] for r in rows(store, limited) if r["kind"] == "submit"] == [
        "rate_limited", "rate_limited", "pending"]
    assert attempts_by_snapshot(store) == {limited: 1, with_after: 1, busy: 1}
    posts = store.query("SELECT started_at FROM requests WHERE method = 'POST' ORDER BY id")
    gaps = [(parse_instant(b["started_at"]) - parse_instant(a["started_at"])).total_seconds()
            for a, b in zip(posts, posts[1:])]
    base = settings.SPN_BACKOFF_SECONDS
    assert gaps[0] >= base and gaps[1] >= 2 * base  # 20 s, then 40 s
    # Retry-After (90 s) beats the back-off when longer; a message without job_id backs off too.
    assert gaps[3] >= 90 and gaps[5] >= base
    message = [r for r in rows(store, busy) if r["status"] == "rate_limited"][0]["message"]
    assert "limit of active sessions" in message


def test_endless_rate_limits_end_the_run(store, tmp_path, fake):
    (sid,) = seed(store, fake, ["429-99"])
    job = run_archive(store, tmp_path, fake, VirtualClock(), max_wait=7200.0)
    assert fake.submitted(url_of(store, sid)) == settings.SPN_MAX_BACKOFFS + 1
    assert job.stopped and not job.credentials_refused


def test_daily_cap_counts_the_days_submissions(store, tmp_path, fake):
    seed(store, fake, ["ok"] * 5)
    run_archive(store, tmp_path, fake, VirtualClock(), daily_cap=3)
    assert len(fake.submissions) == 3
    run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(hours=1)), daily_cap=3)
    assert len(fake.submissions) == 3
    fake.new_day()  # the service's day turns too: it states today's captures (none yet)
    run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(days=1)), daily_cap=3)
    assert len(fake.submissions) == 5


def test_refused_keys_stop_the_run_and_cost_no_attempt(store, tmp_path, fake):
    *rest, first = seed(store, fake, ["ok", "ok", "http401"])  # newest first
    job = run_archive(store, tmp_path, fake, VirtualClock())
    assert len(fake.submissions) == 1 and job.stopped and job.credentials_refused
    assert attempts_by_snapshot(store) == {}
    assert confirmed_snapshot_ids(store) == set()


def test_rate_pacing_keys_and_anonymous(store, tmp_path, hosts):
    fake = FakeSPN(hosts, anonymous=True)  # the service as it was before it refused anonymous submissions
    seed(store, fake, ["ok"] * 4)
    rate, _cap = archive_module.service_limits("https://web.archive.org", None, None)
    run_archive(store, tmp_path, fake, VirtualClock(), keys=None, per_minute=rate)
    posts = store.query("SELECT started_at FROM requests WHERE method = 'POST' ORDER BY id")
    times = [parse_instant(r["started_at"]) for r in posts]
    gaps = [(b - a).total_seconds() for a, b in zip(times, times[1:])]
    assert len(gaps) == 3 and min(gaps) >= 60 / settings.SPN_CAPTURES_PER_MINUTE_ANON


@pytest.mark.parametrize("base, keys, per_minute, expected", [
    ("https://web.archive.org", spn.Keys("a", "s"), None, (settings.SPN_CAPTURES_PER_MINUTE_KEYS,
                                                           settings.SPN_DAILY_CAP_KEYS)),
    ("https://web.archive.org", None, None, (settings.SPN_CAPTURES_PER_MINUTE_ANON, settings.SPN_DAILY_CAP_ANON)),
    ("https://web.archive.org", None, 1.0, (1.0, settings.SPN_DAILY_CAP_ANON)),
    ("https://web.archive.org", None, 100.0, "refused"),
    ("http://127.0.0.1:9", None, 100.0, (100.0, settings.SPN_DAILY_CAP_ANON)),
])
def test_service_limits(base, keys, per_minute, expected):
    import click

    if expected == "refused":
        with pytest.raises(click.UsageError):
            archive_module.service_limits(base, keys, per_minute)
    else:
        assert archive_module.service_limits(base, keys, per_minute) == expected


# -- jobs that vanish, jobs that outlive a run ---------------------------------

@pytest.mark.parametrize("marker", ["gone404", "gonemsg"])
def test_vanished_job_is_unknown_and_resubmitted_later(store, tmp_path, fake, marker):
    (sid,) = seed(store, fake, [marker])
    run_archive(store, tmp_path, fake, VirtualClock())
    assert rows(store, sid)[-1]["status"] == "unknown"
    assert sid not in confirmed_snapshot_ids(store)
    run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(hours=2)))
    assert fake.submitted(url_of(store, sid)) == 2


def test_pending_past_the_status_window_is_unknown(store, tmp_path, fake):
    (sid,) = seed(store, fake, ["forget"])
    run_archive(store, tmp_path, fake, VirtualClock(), max_wait=4000.0, poll_seconds=120.0)
    final = rows(store, sid)[-1]
    assert final["status"] == "unknown" and "window" in final["message"]
    age = parse_instant(final["recorded_at"]) - parse_instant(rows(store, sid)[0]["recorded_at"])
    assert age.total_seconds() > settings.SPN_POLL_WITHIN_SECONDS
    assert all(r["status"] in ("pending", "unknown") for r in rows(store, sid))


def test_a_later_run_polls_pending_jobs_instead_of_resubmitting(store, tmp_path, fake):
    (sid,) = seed(store, fake, ["slow"])
    first = run_archive(store, tmp_path, fake, VirtualClock(), max_wait=40.0)
    assert first.jobs and sid not in confirmed_snapshot_ids(store)
    run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(minutes=5)))
    assert fake.submitted(url_of(store, sid)) == 1
    assert sid in confirmed_snapshot_ids(store)


def test_a_job_older_than_the_window_is_not_polled_but_resubmitted(store, tmp_path, fake):
    (sid,) = seed(store, fake, ["forget"])
    run_archive(store, tmp_path, fake, VirtualClock(), max_wait=40.0)
    asked = len(fake.status_asked)
    later = START + timedelta(seconds=settings.SPN_POLL_WITHIN_SECONDS + 600)
    run_archive(store, tmp_path, fake, VirtualClock(later), max_wait=1.0)
    assert len(fake.status_asked) == asked  # its status would say nothing
    assert fake.submitted(url_of(store, sid)) == 2


# -- interruption ------------------------------------------------------------------

class Killed(BaseException):
    """Stands for SIGKILL: nothing after it runs."""


def test_run_killed_after_a_submission_loses_nothing(store, tmp_path, fake, monkeypatch):
    sids = seed(store, fake, ["ok"] * 4)
    original = job_module._record
    submits = []

    def record_then_die(ctx, snapshot_id, kind, *args):
        row = original(ctx, snapshot_id, kind, *args)
        submits.append(kind)
        if submits.count("submit") == 2:
            raise Killed()
        return row

    monkeypatch.setattr(job_module, "_record", record_then_die)
    with pytest.raises(Killed):
        run_archive(store, tmp_path, fake, VirtualClock())
    monkeypatch.setattr(job_module, "_record", original)
    assert len(fake.submissions) == 2
    run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(minutes=2)))
    assert confirmed_snapshot_ids(store) == set(sids)
    assert [fake.submitted(url_of(store, sid)) for sid in sids] == [1, 1, 1, 1]
    run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(hours=3)))
    assert len(fake.submissions) == 4


# -- credentials -----------------------------------------------------------------

def test_keys_are_sent_but_never_stored(store, tmp_path, hosts, monkeypatch):
    access, secret = "AKIDtakedown42", "s3cr3t-Vp9q-do-not-store"
    monkeypatch.setenv("IA_ACCESS_KEY", access)
    monkeypatch.setenv("IA_SECRET_KEY", secret)
    fake = FakeSPN(hosts, expect_auth=f"LOW {access}:{secret}")
    sids = seed(store, fake, ["ok", "err-job-failed", "429-1"])
    keys = spn.keys_from_env()
    assert secret not in repr(keys)
    run_archive(store, tmp_path, fake, VirtualClock(), keys=keys)
    assert all(s.authorization == f"LOW {access}:{secret}" for s in fake.submissions)
    assert sids[0] in confirmed_snapshot_ids(store)
    store.close()
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("record.db*"))
    warcs = list((tmp_path / "warc").rglob("*.warc.gz"))
    assert warcs
    stored += b"".join(gzip.open(p).read() for p in warcs)
    assert b"POST /save" in stored  # the scan does read the requests
    assert secret.encode() not in stored and access.encode() not in stored


# -- the command -------------------------------------------------------------------

def test_command_without_keys_says_none_were_set_and_the_service_refuses(tmp_path, fake, monkeypatch):
    monkeypatch.delenv("IA_ACCESS_KEY", raising=False)
    monkeypatch.delenv("IA_SECRET_KEY", raising=False)
    db = tmp_path / "cli.db"
    store = Store(db)
    seed(store, fake, ["ok", "ok"])
    store.close()
    result = CliRunner().invoke(archive, ["--db", str(db), "--warc-dir", str(tmp_path / "w"),
                                          "--base-url", fake.base, "--min-interval", "0.05",
                                          "--poll-seconds", "0.05", "--max-wait", "10"])
    # The service answers HTTP 401 'You need to be logged in' to an anonymous POST /save.
    assert result.exit_code == 1, result.output
    assert "refuses anonymous submissions" in result.stderr
    assert "no keys were set" in result.output and "refused the credentials" not in result.output
    assert [s.authorization for s in fake.submissions] == [None]
    answer = Store(db).one("SELECT message, service_message FROM archive_submissions")
    assert answer["service_message"] == "You need to be logged in to use Save Page Now."
    assert "none were set" in answer["message"]


def test_command_exits_non_zero_when_credentials_are_refused(tmp_path, hosts, monkeypatch):
    monkeypatch.setenv("IA_ACCESS_KEY", "wrong")
    monkeypatch.setenv("IA_SECRET_KEY", "wrong-too")
    fake = FakeSPN(hosts, expect_auth="LOW right:right")
    db = tmp_path / "cli.db"
    store = Store(db)
    seed(store, fake, ["ok"])
    store.close()
    result = CliRunner().invoke(archive, ["--db", str(db), "--warc-dir", str(tmp_path / "w"),
                                          "--base-url", fake.base, "--min-interval", "0.05", "--max-wait", "10"])
    assert result.exit_code == 1 and "refused the credentials" in result.output
    assert "anonymously" not in result.stderr


@pytest.mark.parametrize("args", [["--min-interval", "0.5"], ["--per-minute", "60"]])
def test_command_refuses_faster_than_allowed_against_the_real_service(tmp_path, args):
    result = CliRunner().invoke(archive, ["--db", str(tmp_path / "x.db"), *args])
    assert result.exit_code == 2
    assert not (tmp_path / "x.db").exists()


def test_command_help_ends_with_an_example():
    result = CliRunner().invoke(archive, ["--help"])
    assert "Example:" in result.output and "python -m collector archive" in result.output


def test_command_ends_by_its_deadline_when_that_comes_before_max_wait(tmp_path, fake, monkeypatch):
    """The workflow sets --deadline at the job's start: a run after a slow set-up still ends in time to export."""
    import time
    from datetime import datetime, timezone

    monkeypatch.setenv("IA_ACCESS_KEY", "access")
    monkeypatch.setenv("IA_SECRET_KEY", "secret")
    fake.stall_seconds = 3.0  # the service takes each submission and never answers
    db = tmp_path / "cli.db"
    store = Store(db)
    seed(store, fake, ["stall"] * 5)
    store.close()
    base = ["--db", str(db), "--warc-dir", str(tmp_path / "w"), "--base-url", fake.base, "--min-interval", "0.05",
            "--poll-seconds", "0.05", "--max-wait", "30"]
    now = datetime.now(timezone.utc)
    past = CliRunner().invoke(archive, [*base, "--now", now.isoformat(),
                                        "--deadline", (now - timedelta(seconds=1)).isoformat()])
    assert past.exit_code == 2 and "--deadline" in past.output and not fake.submissions
    started = time.monotonic()
    now = datetime.now(timezone.utc)
    result = CliRunner().invoke(archive, [*base, "--now", now.isoformat(),
                                          "--deadline", (now + timedelta(seconds=1.5)).isoformat()])
    elapsed = time.monotonic() - started
    assert result.exit_code == 0, result.output
    assert elapsed < 1.5 + 1.0, elapsed  # --max-wait alone would have let it run 30 s
    assert Store(db).one("SELECT result FROM requests WHERE method = 'POST'")["result"] == "timeout"
