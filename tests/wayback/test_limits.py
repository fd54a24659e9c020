"""The archive job against the service's refusals: whose problem each one is, and what follows.

Each refusal has the shape the real service gives it (testing/fake_spn.py says
where each shape was documented or seen).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from click.testing import CliRunner

from collector import settings
from collector.cli.archive import archive
from collector.clock import parse_instant
from collector.record.store import Store
from collector.wayback.history import attempts_by_snapshot, confirmed_snapshot_ids
from tests.wayback.runs import START, VirtualClock, rows, run_archive, seed, url_of
from tests.wayback.test_answers import ACCOUNT_LIMITS


# -- item 8: a page that demands a login -------------------------------------------------------

def test_a_page_demanding_a_login_is_permanent_and_the_run_goes_on(store, tmp_path, fake):
    walled, first, second = seed(store, fake, ["err-unauthorized", "ok", "ok"])
    job = run_archive(store, tmp_path, fake, VirtualClock())
    assert job.stopped is None and not job.credentials_refused
    assert confirmed_snapshot_ids(store) == {first, second}
    final = rows(store, walled)[-1]
    assert (final["status"], final["status_ext"]) == ("error", "error:unauthorized")
    run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(hours=2)))
    assert fake.submitted(url_of(store, walled)) == 1  # never again


def test_the_command_succeeds_when_a_page_demands_a_login(tmp_path, fake, monkeypatch):
    monkeypatch.setenv("IA_ACCESS_KEY", "access")
    monkeypatch.setenv("IA_SECRET_KEY", "secret")
    db = tmp_path / "cli.db"
    store = Store(db)
    seed(store, fake, ["now-unauthorized", "ok"])
    store.close()
    result = CliRunner().invoke(archive, ["--db", str(db), "--warc-dir", str(tmp_path / "w"), "--base-url",
                                          fake.base, "--min-interval", "0.05", "--poll-seconds", "0.05",
                                          "--per-minute", "600", "--max-wait", "10"])
    assert result.exit_code == 0, result.output
    assert "the Internet Archive refused" not in result.output and len(fake.submissions) == 2


# -- item 9: daily limits ------------------------------------------------------------------------

def test_an_address_captured_often_today_is_tried_tomorrow_without_spending_an_attempt(store, tmp_path, fake):
    fake.url_daily_limit = 0  # the service has captured this address as often as it will, every day
    (sid,) = seed(store, fake, ["ok"])
    url = url_of(store, sid)
    days = settings.SPN_MAX_ATTEMPTS + 2
    for day in range(days):
        for hour in (0, 2):  # a second run the same day leaves the address alone
            run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(days=day, hours=hour)))
        assert fake.submitted(url) == day + 1
        fake.new_day()
    assert attempts_by_snapshot(store).get(sid, 0) == 0
    assert {r["status_ext"] for r in rows(store, sid)} == {"error:too-many-daily-captures"}
    fake.url_daily_limit = 5
    run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(days=days)))
    assert sid in confirmed_snapshot_ids(store)


def test_a_job_ended_by_the_addresss_daily_cap_costs_no_attempt(store, tmp_path, fake):
    (sid,) = seed(store, fake, ["err-too-many-daily-captures"])
    run_archive(store, tmp_path, fake, VirtualClock())
    assert rows(store, sid)[-1]["status_ext"] == "error:too-many-daily-captures"
    assert attempts_by_snapshot(store).get(sid, 0) == 0
    run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(hours=3)))
    assert fake.submitted(url_of(store, sid)) == 1  # not again today
    run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(days=1)))
    assert fake.submitted(url_of(store, sid)) == 2


@pytest.mark.parametrize("message", ACCOUNT_LIMITS)
def test_the_accounts_daily_limit_stops_submitting_for_the_day_and_jobs_are_still_polled(
        store, tmp_path, fake, message):
    fake.daily_captures_limit, fake.daily_message = 1, message
    fake.states_daily_limit = False  # as the DOC's example of /save/status/user: the refusal alone says it
    waiting, refused, accepted = seed(store, fake, ["ok", "ok", "slow"])  # newest first
    job = run_archive(store, tmp_path, fake, VirtualClock())
    assert job.stopped is None and "daily limit" in job.closed
    # The job accepted before the limit is polled to its end; nothing is submitted after it.
    assert confirmed_snapshot_ids(store) == {accepted}
    assert [s.url for s in fake.submissions] == [url_of(store, accepted), url_of(store, refused)]
    assert attempts_by_snapshot(store) == {accepted: 1}
    run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(hours=2)))
    assert len(fake.submissions) == 2  # the same day: still over
    for day, expected in ((1, {accepted, refused}), (2, {accepted, refused, waiting})):
        fake.new_day()  # one capture a day for this account
        run_archive(store, tmp_path, fake, VirtualClock(START + timedelta(days=day)))
        assert confirmed_snapshot_ids(store) == expected


# -- item 10: Retry-After as an HTTP date ----------------------------------------------------------------

def test_a_retry_after_date_on_a_submission_is_honoured(store, tmp_path, fake):
    (sid,) = seed(store, fake, ["429date-1"])
    run_archive(store, tmp_path, fake, VirtualClock())
    posts = store.query("SELECT started_at FROM requests WHERE method = 'POST' ORDER BY id")
    gap = (parse_instant(posts[1]["started_at"]) - parse_instant(posts[0]["started_at"])).total_seconds()
    assert gap >= 89 > settings.SPN_BACKOFF_SECONDS  # the date said 90 s; our own back-off is 20 s
    assert sid in confirmed_snapshot_ids(store)


# -- item 12: the service's words beside ours --------------------------------------------------------------

@pytest.mark.parametrize("marker, summary, said", [
    ("429-1", "HTTP 429", "Too Many Requests We are limiting the number of URLs"),
    ("502-1", "HTTP 502", "502 Bad Gateway"),
    ("http401", "HTTP 401: the service refused our keys", "You need to be logged in to use Save Page Now."),
])
def test_the_answers_table_keeps_the_services_message_beside_the_summary(store, tmp_path, fake, marker,
                                                                         summary, said):
    (sid,) = seed(store, fake, [marker])
    run_archive(store, tmp_path, fake, VirtualClock())
    first = rows(store, sid)[0]
    assert summary in first["message"] and first["service_message"].startswith(said)


def test_an_anonymous_submission_is_refused_and_the_record_says_no_keys_were_set(store, tmp_path, fake):
    seed(store, fake, ["ok", "ok"])
    job = run_archive(store, tmp_path, fake, VirtualClock(), keys=None)
    assert job.credentials_refused and len(fake.submissions) == 1
    row = store.one("SELECT message, service_message FROM archive_submissions")
    assert "none were set" in row["message"]
    assert row["service_message"] == "You need to be logged in to use Save Page Now."
