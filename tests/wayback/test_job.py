"""The archive job against a loopback Save Page Now: every state of a submission, across runs."""

from __future__ import annotations

import gzip
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from collector.cli import archive as archive_module
from collector.wayback import job as job_module
from collector import settings
from collector.wayback import spn
from collector.cli.archive import archive
from collector.wayback.job import ArchiveRun, Limits, attempts_by_snapshot, confirmed_snapshot_ids
from collector.clock import Clock, iso, parse_instant
from collector.collect.context import RunContext
from collector.net.fetcher import Response
from collector.record.store import Store
from tests.conftest import TEST_INTERVAL
from testing.fake_spn import FakeSPN
from testing.farm import Farm

START = datetime(2026, 3, 1, 6, 0, tzinfo=timezone.utc)


class VirtualClock(Clock):
    """A clock whose sleeps pass at once: waits of minutes cost the test nothing."""

    def __init__(self, start: datetime = START):
        super().__init__(start)
        self.skipped = 0.0

    def now(self) -> datetime:
        return super().now() + timedelta(seconds=self.skipped)

    def monotonic(self) -> float:
        return time.monotonic() + self.skipped

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self.skipped += seconds

    skip = sleep


def seed(store: Store, fake: FakeSPN, markers: list[str]) -> list[int]:
    """Insert one captured snapshot per marker, oldest first; return their ids."""
    run = store.insert("runs", {"command": "run", "started_at": iso(START - timedelta(days=1)),
                                "vantage": "v", "software_version": "0", "settings": {}})
    ids = []
    for n, marker in enumerate(markers):
        url = f"https://outlet.example/{marker}/story-{n}"
        at = iso(START - timedelta(hours=10) + timedelta(minutes=n))
        request = store.insert("requests", {"run_id": run, "purpose": "capture", "method": "GET", "url": url,
                                            "attempt": 1, "sent": 1, "started_at": at, "finished_at": at,
                                            "result": "ok", "vantage": "v"})
        article = store.insert("articles", {"outlet_id": "o", "url_key": url, "url": url,
                                            "first_seen_at": at, "first_seen_run": run})
        ids.append(store.insert("snapshots", {
            "article_id": article, "request_id": request, "run_id": run, "purpose": "capture",
            "captured_at": at, "status_code": 200, "final_url": url, "text": "t", "html_sha256": "0" * 64,
            "warc_file": "f", "warc_offset": 0, "warc_length": 1, "extractor": "x", "extractor_info": "{}"}))
    return ids


def run_archive(store: Store, tmp_path: Path, fake: FakeSPN, clock: Clock, keys=None, **limits) -> ArchiveRun:
    """Run the archive job once against the fake and return it."""
    ctx = RunContext.open(store, "archive", clock=clock, vantage="test", warc_dir=tmp_path / "warc",
                          interval=TEST_INTERVAL, allow_loopback=True, backoff=(0.02, 0.04),
                          connect_timeout=2.0, read_timeout=2.0, total_timeout=3.0)
    options = {"per_minute": 6.0, "daily_cap": 1000, "poll_seconds": 15.0, "max_wait": 900.0, **limits}
    job = ArchiveRun(ctx, fake.base, keys, Limits(**options))
    try:
        job.run()
        ctx.finish()
    finally:
        ctx.warc.close()
    return job


def rows(store: Store, snapshot_id: int) -> list:
    return store.query("SELECT * FROM archive_submissions WHERE snapshot_id = ? ORDER BY id", (snapshot_id,))


def url_of(store: Store, snapshot_id: int) -> str:
    return store.one("SELECT final_url FROM snapshots WHERE id = ?", (snapshot_id,))["final_url"]


@pytest.fixture(scope="module")
def hosts():
    """Return a farm shared by this module's tests, its hosts closed together at the end."""
    farm = Farm()
    yield farm
    # Each host takes half a second to shut down (its serve_forever poll): close them at once.
    closers = [threading.Thread(target=host.close) for host in farm.hosts]
    for closer in closers:
        closer.start()
    for closer in closers:
        closer.join()


@pytest.fixture
def fake(hosts):
    return FakeSPN(hosts)


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
    limited, with_after, busy = seed(store, fake, ["429-2", "429ra-1", "busy-1"])
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
    assert job.stopped and not job.unauthorized


def test_daily_limit_message_stops_submitting(store, tmp_path, fake):
    sids = seed(store, fake, ["daily", "ok", "ok"])
    job = run_archive(store, tmp_path, fake, VirtualClock())
    assert len(fake.submissions) == 1 and job.stopped
    assert attempts_by_snapshot(store).get(sids[0], 0) == 0


def test_daily_cap_counts_the_days_submissions(store, tmp_path, fake):
    seed(store, fake, ["ok"] * 5)
    run_archive(store, tmp_path, fake, VirtualClock(), daily_cap=3)
    assert len(fake.submissions) == 3
    run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(hours=1)), daily_cap=3)
    assert len(fake.submissions) == 3
    run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(days=1)), daily_cap=3)
    assert len(fake.submissions) == 5


@pytest.mark.parametrize("marker", ["unauth", "http401"])
def test_unauthorized_stops_the_run_and_costs_no_attempt(store, tmp_path, fake, marker):
    first, *rest = seed(store, fake, [marker, "ok", "ok"])
    job = run_archive(store, tmp_path, fake, VirtualClock())
    assert len(fake.submissions) == 1 and job.stopped and job.unauthorized
    assert attempts_by_snapshot(store) == {}
    assert confirmed_snapshot_ids(store) == set()


def test_rate_pacing_keys_and_anonymous(store, tmp_path, fake):
    seed(store, fake, ["ok"] * 4)
    rate, _cap = archive_module.service_limits("https://web.archive.org", None, None)
    run_archive(store, tmp_path, fake, VirtualClock(), per_minute=rate)
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

def test_command_runs_anonymously_and_says_so(tmp_path, fake, monkeypatch):
    monkeypatch.delenv("IA_ACCESS_KEY", raising=False)
    monkeypatch.delenv("IA_SECRET_KEY", raising=False)
    db = tmp_path / "cli.db"
    store = Store(db)
    (sid,) = seed(store, fake, ["ok"])
    store.close()
    result = CliRunner().invoke(archive, ["--db", str(db), "--warc-dir", str(tmp_path / "w"),
                                          "--base-url", fake.base, "--min-interval", "0.05",
                                          "--poll-seconds", "0.05", "--max-wait", "10"])
    assert result.exit_code == 0, result.output
    assert "anonymously" in result.stderr
    assert fake.submissions[0].authorization is None
    assert confirmed_snapshot_ids(Store(db)) == {sid}


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


# -- reading answers -----------------------------------------------------------------

def answer(status=200, body=b"", headers=None, result=None):
    return Response("u", "u", result or ("ok" if 200 <= status < 300 else "http_error"), status,
                    headers or {}, body)


@pytest.mark.parametrize("response, status, effect", [
    (answer(body=b'{"url": "u", "job_id": "spn2-1"}'), "pending", spn.PENDING),
    (answer(body=b"<html>", headers={"content-location": "/web/2026/u", "x-page-cache": "HIT"}),
     "failed_request", spn.TEMPORARY),
    (answer(body=b'{"message": "Your capture will begin in 30s"}'), "rate_limited", spn.BACKOFF),
    (answer(body=b'{"message": "You cannot make more than 4,000 captures per day."}'), "rate_limited", spn.STOP),
    (answer(429, headers={"retry-after": "30"}, result="rate_limited"), "rate_limited", spn.BACKOFF),
    (answer(401), "failed_request", spn.STOP),
    (answer(502, result="server_error"), "failed_request", spn.TEMPORARY),
    (answer(body=b'{"status": "error", "status_ext": "error:blocked-url"}'), "error", spn.PERMANENT),
    (answer(body=b'{"status": "error", "status_ext": "error:user-session-limit"}'), "error", spn.BACKOFF),
])
def test_read_submit(response, status, effect):
    got = spn.read_submit(response)
    assert (got.status, got.effect) == (status, effect) and got.archive_url is None


@pytest.mark.parametrize("response, expired, status, effect", [
    (answer(body=b'{"status": "success", "timestamp": "20260301060000", "original_url": "https://a/b"}'),
     False, "success", spn.CONFIRMED),
    (answer(body=b'{"status": "success", "timestamp": "2026", "original_url": "https://a/b"}'),
     False, "success", spn.TEMPORARY),
    (answer(body=b'{"status": "pending", "resources": []}'), False, "pending", spn.PENDING),
    (answer(body=b'{"status": "pending", "resources": []}'), True, "unknown", spn.TEMPORARY),
    (answer(404, result="not_found"), False, "unknown", spn.TEMPORARY),
    (answer(body=b'{"status": "error", "message": "Job not found"}'), False, "unknown", spn.TEMPORARY),
    # The target's 404 is the address's fate, not a vanished job.
    (answer(body=b'{"status": "error", "status_ext": "error:not-found", "message": "not found"}'),
     False, "error", spn.PERMANENT),
    (answer(body=b'{"status": "error", "status_ext": "error:never-seen-before"}'), False, "error", spn.TEMPORARY),
    (answer(body=b'{"status": "error", "status_ext": "error:unauthorized"}'), False, "error", spn.STOP),
    (answer(503, result="server_error"), False, "failed_request", spn.TEMPORARY),
])
def test_read_status(response, expired, status, effect):
    got = spn.read_status(response, "spn2-1", expired)
    assert (got.status, got.effect, got.job_id) == (status, effect, "spn2-1")
    if effect == spn.CONFIRMED:
        assert got.archive_url == "https://web.archive.org/web/20260301060000/https://a/b"
    else:
        assert got.archive_url is None
