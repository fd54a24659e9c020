"""Save Page Now 2's answers read into the record's terms: what each one means for the address.

Facts and sources are in shared/research/spn2-service.md; the short names below
are its own. Only a `success` status with a timestamp proves a copy. A 200 on
submission, a Content-Location header or a cached page proves nothing and is
read as an answer without a job.

Whose problem an answer is decides what follows:

* the page's (PERMANENT): the target refused the Archive (404, 403, and 401:
  `error:unauthorized` is "The server requires authentication (HTTP
  status=401)", DOC "Error codes", the page demanding a login; agude's
  wayback-machine-archiver calls it "The page requires a login", Bellingcat's
  auto-archiver skips the URL on it). Refused keys look different: HTTP 401
  with "You need to be logged in to use Save Page Now." (WORTLAUT, indiekit,
  the Archive's own browser extension), and are about us (STOP).
* the page's, for today (NOT_TODAY): `error:too-many-daily-captures`, "This URL
  has been captured 10 times today" (DOC; 5 measured, WORTLAUT). Tomorrow it
  may be captured again, and the answer says nothing against the address.
* the account's, for today (DAY_OVER): "You cannot make more than 4,000
  captures per day", printed by the live service with a tuple too, "(300,)"
  (spn.sh PR #35, 2024), or "You have reached your daily not-logged-in
  captures limit of (200,) webpages" (spn.sh PR #43, 2025), and the daily
  bandwidth limits. spn.sh stops submitting on these; jobs already accepted
  still finish and are still polled.
* the service's load (BACKOFF), passing trouble (TEMPORARY), our credentials,
  address or network (STOP).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone

from collector.net.fetcher import Response
from collector.net.retryafter import retry_after_seconds
from collector.parse.htmltext import parse_tree

# What an answer means for the submitted address.
PERMANENT = "permanent"  # the address cannot be archived: never submitted again
TEMPORARY = "temporary"  # may work later: submitted again in a later run, up to SPN_MAX_ATTEMPTS
NOT_TODAY = "not_today"  # the service captured this address as often as it will today: again tomorrow
BACKOFF = "backoff"  # the service (or the target) is overloaded: wait longer, then try again
DAY_OVER = "day_over"  # the account's daily limit: no more submissions today, accepted jobs still polled
STOP = "stop"  # about our credentials, address or network, not the page: the run ends
PENDING = "pending"  # the job is still running: poll again
CONFIRMED = "confirmed"  # a success with a timestamp: the copy exists

# The one table of `status_ext` values (without the "error:" prefix), from the
# DOC's "Error codes". A value missing here is TEMPORARY: SPN_MAX_ATTEMPTS bounds it.
STATUS_EXT = {
    # The target refuses, or the address cannot be captured: asking again changes nothing.
    "bad-request": PERMANENT,  # the target answered 400
    "blocked": PERMANENT,  # the target blocks the Archive
    "blocked-url": PERMANENT,  # the Archive excludes this address
    "filesize-limit": PERMANENT,  # larger than the Archive captures
    "ftp-access-denied": PERMANENT,
    "http-version-not-supported": PERMANENT,
    "invalid-url-syntax": PERMANENT,
    "method-not-allowed": PERMANENT,
    "network-authentication-required": PERMANENT,
    "no-access": PERMANENT,  # the target answered 403 to the Archive
    "not-found": PERMANENT,  # the target answered 404 to the Archive
    "not-implemented": PERMANENT,
    "too-many-redirects": PERMANENT,  # more hops than the Archive follows
    "unauthorized": PERMANENT,  # the target answered 401: the page demands a login
    # Passing trouble at the target or inside the Archive.
    "bad-gateway": TEMPORARY,
    "bandwidth-limit-exceeded": TEMPORARY,  # the target's own bandwidth cap
    "browsing-timeout": TEMPORARY,
    "capture-location-error": TEMPORARY,
    "cannot-fetch": TEMPORARY,
    "celery": TEMPORARY,
    "gateway-timeout": TEMPORARY,
    "internal-server-error": TEMPORARY,
    "invalid-host-resolution": TEMPORARY,  # DNS failed at the Archive; the page resolved for us
    "invalid-server-response": TEMPORARY,
    "job-failed": TEMPORARY,
    "max-daily-bandwidth-host": TEMPORARY,  # the target host's daily share is spent
    "protocol-error": TEMPORARY,
    "proxy-error": TEMPORARY,
    "read-timeout": TEMPORARY,
    "service-unavailable": TEMPORARY,
    "soft-time-limit-exceeded": TEMPORARY,
    # This address, today.
    "too-many-daily-captures": NOT_TODAY,
    # Overload: slow down (the target's 429, our session limit, no free browser).
    "too-many-requests": BACKOFF,
    "user-session-limit": BACKOFF,
    "no-browsers-available": BACKOFF,
    # The account's (or, anonymous, the address's) daily bandwidth.
    "max-daily-bandwidth": DAY_OVER,
    "max-daily-bandwidth-from-ip": DAY_OVER,
    # Our network address.
    "blocked-client-ip": STOP,
}
# Answers that say nothing against the address: they never count as one of its attempts.
NOT_AN_ATTEMPT = (BACKOFF, STOP, DAY_OVER, NOT_TODAY)
NOT_THE_ADDRESS = tuple(f"error:{ext}" for ext, effect in STATUS_EXT.items() if effect in NOT_AN_ATTEMPT)
PERMANENT_EXTS = tuple(f"error:{ext}" for ext, effect in STATUS_EXT.items() if effect == PERMANENT)
NOT_TODAY_EXTS = tuple(f"error:{ext}" for ext, effect in STATUS_EXT.items() if effect == NOT_TODAY)
DAY_OVER_EXTS = tuple(f"error:{ext}" for ext, effect in STATUS_EXT.items() if effect == DAY_OVER)
AUTH_REFUSED = (401, 403)

# The account's daily limit in every wording seen: a number with thousands
# separators, or a Python tuple such as "(300,)"; spn.sh matches the first
# two phrases and stops its session on them.
DAILY_LIMIT = re.compile(r"cannot make more than \(?[\d,]+\)? captures per day"
                         r"|reached your daily [\w -]*?captures limit", re.IGNORECASE)
# The per-address cap as a bare message (waybackpy #142 saw it as HTML on the old path).
ADDRESS_DAILY_LIMIT = re.compile(r"captured \(?[\d,]+\)? times today", re.IGNORECASE)
# The service's answer to a request without (valid) keys (spn2 gem's BAD_AUTH_MSG).
LOGIN_REQUIRED = re.compile(r"You need to be logged in", re.IGNORECASE)
TIMESTAMP = re.compile(r"\d{14}")
MESSAGE_CHARS = 500


@dataclass
class Answer:
    """One answer read into the record's terms, with what it means for the address."""

    status: str  # pending, success, error, unknown, rate_limited, failed_request
    effect: str  # PENDING, CONFIRMED, PERMANENT, TEMPORARY, NOT_TODAY, BACKOFF, DAY_OVER, STOP
    job_id: str | None = None
    status_ext: str | None = None
    message: str | None = None  # the service's JSON message, or our summary of an answer that is not one
    timestamp: str | None = None
    original_url: str | None = None
    retry_after: float | None = None
    service_message: str | None = None  # for an answer that is not a JSON answer: the service's own words

    @property
    def credentials_refused(self) -> bool:
        """Return True when the service refused our keys (or their absence), not the page."""
        return self.status == "failed_request" and self.effect == STOP

    @property
    def archive_url(self) -> str | None:
        """Return the address of the copy, only for a confirmed success."""
        if self.effect != CONFIRMED:
            return None
        return f"https://web.archive.org/web/{self.timestamp}/{self.original_url}"


def read_submit(response: Response, *, anonymous: bool = False, now: datetime | None = None) -> Answer:
    """Return what a submission's answer says: a job, a refusal, or trouble."""
    data, trouble = _json_answer(response, anonymous, now)
    if trouble is not None:
        return trouble
    if data.get("job_id"):
        return Answer("pending", PENDING, job_id=str(data["job_id"]), message=_text(data.get("message")))
    if data.get("status") == "error" or data.get("status_ext"):
        return _error(data)
    message = _text(data.get("message"))
    if message:
        return _message_only(message, response, anonymous, now)
    return Answer("failed_request", TEMPORARY, message="answer has neither job_id nor message")


def _message_only(message: str, response: Response, anonymous: bool, now: datetime | None) -> Answer:
    """Return what a message without a job means: a limit, a refusal of our keys, or load."""
    if LOGIN_REQUIRED.search(message):
        return Answer("failed_request", STOP, message=_refusal_summary(response.status, anonymous),
                      service_message=message)
    if DAILY_LIMIT.search(message):
        return Answer("rate_limited", DAY_OVER, message=message)
    if ADDRESS_DAILY_LIMIT.search(message):
        return Answer("rate_limited", NOT_TODAY, message=message)
    # A session or rate limit, or "capture will start in ...".
    return Answer("rate_limited", BACKOFF, message=message, retry_after=_retry_after(response, now))


@dataclass(frozen=True)
class UserStatus:
    """What GET /save/status/user says of the account: its sessions and, live, its day's captures.

    The DOC's example is `{"available":12,"processing":3}`; the live service
    also states `daily_captures` and `daily_captures_limit` (WORTLAUT, 2026:
    `{"processing":0,"available":3,"daily_captures":0,"daily_captures_limit":30000}`;
    spn.sh #39 saw a limit of 10,000). A field the answer lacks is None.
    """

    available: int | None = None
    processing: int | None = None
    daily_captures: int | None = None
    daily_captures_limit: int | None = None


def read_user(response: Response) -> UserStatus | None:
    """Return the account's status from an answer to /save/status/user, or None when it says none."""
    data = _decode(response.body) if response.ok else None
    if data is None:
        return None
    fields = {}
    for name in ("available", "processing", "daily_captures", "daily_captures_limit"):
        value = data.get(name)
        # A count is a non-negative whole number; anything else is not read as one.
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            fields[name] = value
    return UserStatus(**fields) if fields else None


def read_status(response: Response, job_id: str, expired: bool, *, now: datetime | None = None) -> Answer:
    """Return what a status answer says; `expired` when the job is older than the status is kept."""
    if response.status == 404:
        return Answer("unknown", TEMPORARY, job_id=job_id,
                      message="HTTP 404: the service no longer knows this job",
                      service_message=service_text(response))
    data, trouble = _json_answer(response, False, now)
    if trouble is not None:
        trouble.job_id = job_id
        return trouble
    state = data.get("status")
    if state == "success":
        return _success(data, job_id)
    if state == "pending":
        if expired:
            # The service answers 'pending' for jobs it has forgotten, exactly as
            # for made-up ids (agude/wayback-machine-archiver#28): not evidence.
            return Answer("unknown", TEMPORARY, job_id=job_id,
                          message="still 'pending' after the job status window: job forgotten")
        return Answer("pending", PENDING, job_id=job_id)
    if state == "error":
        message = _text(data.get("message")) or ""
        if not data.get("status_ext") and "not found" in message.lower():
            return Answer("unknown", TEMPORARY, job_id=job_id, message=message)
        answer = _error(data)
        answer.job_id = answer.job_id or job_id
        return answer
    if state is None and _text(data.get("message")):
        answer = _message_only(_text(data.get("message")), response, False, now)
        answer.job_id = job_id
        return answer
    return Answer("failed_request", TEMPORARY, job_id=job_id, message=f"unexpected status {state!r}")


def _success(data: dict, job_id: str) -> Answer:
    timestamp, original = str(data.get("timestamp") or ""), _text(data.get("original_url"))
    if TIMESTAMP.fullmatch(timestamp) and original:
        return Answer("success", CONFIRMED, job_id=job_id, timestamp=timestamp, original_url=original,
                      message=_text(data.get("message")))
    # Without a well-formed timestamp and address there is no copy to point at.
    return Answer("success", TEMPORARY, job_id=job_id, original_url=original,
                  message=f"success without a usable timestamp ({timestamp or 'none'})")


def _error(data: dict) -> Answer:
    ext = _text(data.get("status_ext"))
    message = _text(data.get("message")) or _text(data.get("exception"))
    effect = STATUS_EXT.get((ext or "").removeprefix("error:"), TEMPORARY)
    if ext is None and message and DAILY_LIMIT.search(message):
        effect = DAY_OVER
    return Answer("error", effect, job_id=_text(data.get("job_id")), status_ext=ext, message=message)


def _json_answer(response: Response, anonymous: bool,
                 now: datetime | None) -> tuple[dict, Answer | None]:
    """Return (the JSON object, None), or ({}, the Answer for an answer that is not one)."""
    said = service_text(response)
    if response.status == 429 or response.result == "rate_limited":
        effect = DAY_OVER if said and DAILY_LIMIT.search(said) else BACKOFF
        return {}, Answer("rate_limited", effect, message="HTTP 429: the service limits our rate",
                          retry_after=_retry_after(response, now), service_message=said)
    if response.status in AUTH_REFUSED:
        return {}, Answer("failed_request", STOP, message=_refusal_summary(response.status, anonymous),
                          service_message=said)
    if not response.ok:
        detail = f" {response.detail}" if response.detail else ""
        status = f" (HTTP {response.status})" if response.status else ""
        return {}, Answer("failed_request", TEMPORARY, message=_text(f"{response.result}{status}{detail}"),
                          service_message=said)
    data = _decode(response.body)
    if data is None:
        return {}, Answer("failed_request", TEMPORARY,
                          message=f"answer is not JSON ({response.content_type or 'no content type'})",
                          service_message=said)
    return data, None


def _refusal_summary(status: int | None, anonymous: bool) -> str:
    code = f"HTTP {status}" if status else "the service"
    if anonymous:
        return f"{code}: the service refuses submissions without keys, and none were set"
    return f"{code}: the service refused our keys"


def service_text(response: Response) -> str | None:
    """Return the service's own words in an answer: its JSON message, or the text of its body."""
    data = _decode(response.body)
    if data is not None:
        return _text(data.get("message"))
    if not response.body.strip():
        return None
    text = response.body.decode("utf-8", "replace")
    if "<" in text:
        # Each text node apart: "<h1>Too Many Requests</h1><p>We are ..." keeps its space.
        text = " ".join(parse_tree(text).xpath("//body//text()[not(ancestor::script) and not(ancestor::style)]"))
    return _text(" ".join(text.split()))


def _decode(body: bytes) -> dict | None:
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _retry_after(response: Response, now: datetime | None) -> float | None:
    # The Wayback Machine often sends none (WB297, waybackpy #142): the caller backs off anyway.
    return retry_after_seconds(response.headers, now or datetime.now(timezone.utc))


def _text(value) -> str | None:
    if value is None or value == "":
        return None
    return str(value)[:MESSAGE_CHARS]
