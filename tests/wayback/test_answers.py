"""Reading Save Page Now's answers: each shape the service is documented or seen to give, and its meaning.

The bodies are the service's own, as its documentation and real clients show
them (sources in collector/wayback/answers.py and testing/fake_spn.py).
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from collector.net.fetcher import Response
from collector.net.retryafter import retry_after_seconds
from collector.wayback import answers
from collector.wayback.answers import read_status, read_submit

NOW = datetime(2026, 3, 1, 6, 0, tzinfo=timezone.utc)
LOGIN = b'{"message": "You need to be logged in to use Save Page Now."}'
# waybackpy #131: the HTML page of the service's own rate limit (no Retry-After, waybackpy #142).
RATE_PAGE = (b"<html><head><title>429 Too Many Requests</title></head><body><h1>Too Many Requests</h1>"
             b"<p>We are limiting the number of URLs you can submit to be Archived to the Wayback Machine, "
             b"using the Save Page Now features, to no more than 15 per minute.</p></body></html>")


def answer(status=200, body=b"", headers=None, result=None):
    return Response("u", "u", result or ("ok" if 200 <= status < 300 else "http_error"), status,
                    headers or {}, body)


@pytest.mark.parametrize("response, status, effect", [
    (answer(body=b'{"url": "u", "job_id": "spn2-1"}'), "pending", answers.PENDING),
    (answer(body=b"<html>", headers={"content-location": "/web/2026/u", "x-page-cache": "HIT"}),
     "failed_request", answers.TEMPORARY),
    (answer(body=b'{"message": "Your capture will begin in 30s"}'), "rate_limited", answers.BACKOFF),
    (answer(429, headers={"retry-after": "30"}, result="rate_limited"), "rate_limited", answers.BACKOFF),
    (answer(401, LOGIN), "failed_request", answers.STOP),
    (answer(502, result="server_error"), "failed_request", answers.TEMPORARY),
    (answer(body=b'{"status": "error", "status_ext": "error:blocked-url"}'), "error", answers.PERMANENT),
    (answer(body=b'{"status": "error", "status_ext": "error:user-session-limit"}'), "error", answers.BACKOFF),
    # The target demanded a login: the page's fate, as no-access and not-found are (item 8).
    (answer(body=b'{"status": "error", "status_ext": "error:unauthorized", '
                 b'"message": "The server requires authentication (HTTP status=401)."}'), "error", answers.PERMANENT),
])
def test_read_submit(response, status, effect):
    got = read_submit(response)
    assert (got.status, got.effect) == (status, effect) and got.archive_url is None


@pytest.mark.parametrize("response, expired, status, effect", [
    (answer(body=b'{"status": "success", "timestamp": "20260301060000", "original_url": "https://a/b"}'),
     False, "success", answers.CONFIRMED),
    (answer(body=b'{"status": "success", "timestamp": "2026", "original_url": "https://a/b"}'),
     False, "success", answers.TEMPORARY),
    (answer(body=b'{"status": "pending", "resources": []}'), False, "pending", answers.PENDING),
    (answer(body=b'{"status": "pending", "resources": []}'), True, "unknown", answers.TEMPORARY),
    (answer(404, result="not_found"), False, "unknown", answers.TEMPORARY),
    (answer(body=b'{"status": "error", "message": "Job not found"}'), False, "unknown", answers.TEMPORARY),
    # The target's 404 is the address's fate, not a vanished job.
    (answer(body=b'{"status": "error", "status_ext": "error:not-found", "message": "not found"}'),
     False, "error", answers.PERMANENT),
    (answer(body=b'{"status": "error", "status_ext": "error:never-seen-before"}'), False, "error", answers.TEMPORARY),
    (answer(body=b'{"status": "error", "status_ext": "error:unauthorized"}'), False, "error", answers.PERMANENT),
    (answer(body=b'{"status": "error", "status_ext": "error:too-many-daily-captures"}'), False, "error",
     answers.NOT_TODAY),
    (answer(503, result="server_error"), False, "failed_request", answers.TEMPORARY),
    # The status endpoint's answer to a call without keys (a project note of October 2026).
    (answer(body=LOGIN), False, "failed_request", answers.STOP),
])
def test_read_status(response, expired, status, effect):
    got = read_status(response, "spn2-1", expired)
    assert (got.status, got.effect, got.job_id) == (status, effect, "spn2-1")
    if effect == answers.CONFIRMED:
        assert got.archive_url == "https://web.archive.org/web/20260301060000/https://a/b"
    else:
        assert got.archive_url is None


# -- item 8: whose 401 ---------------------------------------------------------------------------

def test_a_page_demanding_a_login_is_not_refused_credentials():
    page = read_status(answer(body=b'{"status": "error", "status_ext": "error:unauthorized", '
                                   b'"message": "The server requires authentication (HTTP status=401)."}'),
                       "spn2-1", False)
    keys = read_submit(answer(401, LOGIN))
    assert page.effect == answers.PERMANENT and not page.credentials_refused
    assert keys.effect == answers.STOP and keys.credentials_refused
    assert "error:unauthorized" in answers.PERMANENT_EXTS and "error:unauthorized" not in answers.NOT_THE_ADDRESS


# -- item 9: daily limits, every wording -------------------------------------------------------------

ACCOUNT_LIMITS = [
    "You cannot make more than 4,000 captures per day.",
    "You cannot make more than (300,) captures per day.",  # spn.sh PR #35 (2024)
    "You have reached your daily not-logged-in captures limit of (200,) webpages, log in to archive up to "
    '(40000,) webpages per day. Please email us at "info@archive.org" if you would like to discuss this more.',
]


@pytest.mark.parametrize("message", ACCOUNT_LIMITS)
def test_the_accounts_daily_limit_in_every_wording_ends_the_day(message):
    got = read_submit(answer(body=('{"message": %s}' % __import__("json").dumps(message)).encode()))
    assert (got.status, got.effect) == ("rate_limited", answers.DAY_OVER)
    assert got.message == message


def test_the_accounts_daily_limit_as_an_html_429_ends_the_day():
    page = b"<html><body><h2>Sorry</h2><p>You cannot make more than (300,) captures per day.</p></body></html>"
    got = read_submit(answer(429, page, result="rate_limited"))
    assert got.effect == answers.DAY_OVER and "(300,) captures per day" in got.service_message


@pytest.mark.parametrize("body", [
    b'{"status": "error", "status_ext": "error:too-many-daily-captures", '
    b'"message": "This URL has been already captured 5 times today, please try again tomorrow."}',
    b'{"message": "This URL has been already captured 10 times today."}',
])
def test_an_address_captured_often_today_waits_for_tomorrow(body):
    got = read_submit(answer(body=body))
    assert got.effect == answers.NOT_TODAY
    assert answers.NOT_TODAY in answers.NOT_AN_ATTEMPT


# -- item 10: Retry-After as an HTTP date ---------------------------------------------------------------

@pytest.mark.parametrize("headers, seconds", [
    ({"retry-after": "120"}, 120.0),
    ({"retry-after": " 7 "}, 7.0),
    ({"retry-after": "Sun, 01 Mar 2026 06:01:30 GMT"}, 90.0),  # IMF-fixdate, against our clock
    ({"retry-after": "Sunday, 01-Mar-26 06:01:30 GMT"}, 90.0),  # RFC 850, obsolete but accepted
    ({"retry-after": "Sun Mar  1 06:01:30 2026"}, 90.0),  # asctime
    # Against the response's own Date, whatever our clock says.
    ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT", "date": "Wed, 21 Oct 2015 07:27:00 GMT"}, 60.0),
    ({"retry-after": "Sun, 01 Mar 2026 05:00:00 GMT"}, 0.0),  # a date already past: no wait
    ({"retry-after": "soon"}, None),
    ({"retry-after": "\u09e9"}, None),  # a Bangla digit is not delay-seconds
    ({}, None),
])
def test_retry_after_seconds(headers, seconds):
    assert retry_after_seconds(headers, NOW) == seconds


def test_a_submission_honours_a_retry_after_date():
    got = read_submit(answer(429, RATE_PAGE, {"retry-after": "Sun, 01 Mar 2026 06:01:30 GMT",
                                              "date": "Sun, 01 Mar 2026 06:00:00 GMT"}, "rate_limited"), now=NOW)
    assert got.effect == answers.BACKOFF and got.retry_after == 90.0


def test_the_fetcher_and_the_archive_job_read_retry_after_with_one_function():
    import inspect

    from collector.net import wire
    from collector.wayback import answers as answers_module

    for module in (wire, answers_module):
        source = inspect.getsource(module)
        assert "retry_after_seconds(" in source and "parsedate" not in source


# -- item 12: the service's own words beside our summary ----------------------------------------------------

@pytest.mark.parametrize("response, anonymous, summary, said", [
    (answer(401, LOGIN), True, "none were set", "You need to be logged in to use Save Page Now."),
    (answer(401, LOGIN), False, "refused our keys", "You need to be logged in to use Save Page Now."),
    (answer(429, RATE_PAGE, result="rate_limited"), False, "HTTP 429",
     "Too Many Requests We are limiting the number of URLs you can submit"),
    (answer(502, b"<html><body><h1>502 Bad Gateway</h1></body></html>", result="server_error"), False,
     "HTTP 502", "502 Bad Gateway"),
    (answer(503, b"Service Unavailable", result="server_error"), False, "HTTP 503", "Service Unavailable"),
])
def test_a_non_2xx_answer_keeps_the_services_message_beside_our_summary(response, anonymous, summary, said):
    got = read_submit(response, anonymous=anonymous)
    assert summary in got.message
    assert got.service_message.startswith(said)
