"""Save Page Now 2: the two requests the archive job sends, and how their answers are read.

Protocol facts and their sources are in shared/research/internet-archive.md.
Only a `success` status with a timestamp proves a copy. A 200 on submission,
a Content-Location header or a cached page proves nothing and is read as an
answer without a job.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

from collector.net.fetcher import Fetcher, Response

# What an answer means for the submitted address.
PERMANENT = "permanent"  # the address cannot be archived: never submitted again
TEMPORARY = "temporary"  # may work later: submitted again in a later run, up to SPN_MAX_ATTEMPTS
BACKOFF = "backoff"  # the service (or the target) is overloaded: wait longer, then try again
STOP = "stop"  # about our account or network, not the address: the run ends
PENDING = "pending"  # the job is still running: poll again
CONFIRMED = "confirmed"  # a success with a timestamp: the copy exists

# The one table of `status_ext` values (without the "error:" prefix), from the
# SPN2 API draft. A value missing here is TEMPORARY: SPN_MAX_ATTEMPTS bounds it.
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
    "no-access": PERMANENT,  # the target answered 401/403 to the Archive
    "not-found": PERMANENT,  # the target answered 404 to the Archive
    "not-implemented": PERMANENT,
    "too-many-redirects": PERMANENT,  # more hops than the Archive follows
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
    "too-many-daily-captures": TEMPORARY,  # this address was captured often today
    # Overload: slow down (the target's 429, our session limit, no free browser).
    "too-many-requests": BACKOFF,
    "user-session-limit": BACKOFF,
    "no-browsers-available": BACKOFF,
    # Our credentials, our address or our account's daily bandwidth.
    "unauthorized": STOP,
    "blocked-client-ip": STOP,
    "max-daily-bandwidth": STOP,
    "max-daily-bandwidth-from-ip": STOP,
}
# Refusals about us or the service's load: they do not count as attempts for the address.
NOT_THE_ADDRESS = tuple(f"error:{ext}" for ext, effect in STATUS_EXT.items() if effect in (BACKOFF, STOP))
PERMANENT_EXTS = tuple(f"error:{ext}" for ext, effect in STATUS_EXT.items() if effect == PERMANENT)
AUTH_REFUSED = (401, 403)
# spn.sh reads this message as the account's daily cap: nothing more can be submitted today.
DAILY_LIMIT = re.compile(r"cannot make more than [\d,]+ captures per day", re.IGNORECASE)
TIMESTAMP = re.compile(r"\d{14}")
MESSAGE_CHARS = 500


class Keys:
    """An archive.org S3-style key pair; its repr never shows the secret."""

    def __init__(self, access: str, secret: str):
        self.access = access
        self._secret = secret

    def header(self) -> dict[str, str]:
        """Return the Authorization header (the fetcher redacts it from WARC records)."""
        return {"Authorization": f"LOW {self.access}:{self._secret}"}

    def __repr__(self) -> str:
        return f"Keys(access={self.access!r}, secret=<hidden>)"


def keys_from_env(environ=os.environ) -> Keys | None:
    """Return the keys from IA_ACCESS_KEY and IA_SECRET_KEY, or None unless both are set."""
    access, secret = environ.get("IA_ACCESS_KEY", ""), environ.get("IA_SECRET_KEY", "")
    return Keys(access.strip(), secret.strip()) if access.strip() and secret.strip() else None


@dataclass
class Answer:
    """One answer read into the record's terms, with what it means for the address."""

    status: str  # pending, success, error, unknown, rate_limited, failed_request
    effect: str  # PENDING, CONFIRMED, PERMANENT, TEMPORARY, BACKOFF, STOP
    job_id: str | None = None
    status_ext: str | None = None
    message: str | None = None
    timestamp: str | None = None
    original_url: str | None = None
    retry_after: float | None = None

    @property
    def credentials_refused(self) -> bool:
        """Return True when the service refused our keys (or their absence)."""
        # HTTP 401/403 are read as a failed request with effect STOP (see _json_answer).
        http_refusal = self.status == "failed_request" and self.effect == STOP
        return self.status_ext == "error:unauthorized" or http_refusal

    @property
    def archive_url(self) -> str | None:
        """Return the address of the copy, only for a confirmed success."""
        if self.effect != CONFIRMED:
            return None
        return f"https://web.archive.org/web/{self.timestamp}/{self.original_url}"


def submit(fetcher: Fetcher, base_url: str, address: str, keys: Keys | None) -> tuple[Response, Answer]:
    """Return the response to one submission and what it says."""
    # Never retried inside the fetcher: a lost answer may hide an accepted job,
    # and a blind second POST would start a second capture.
    response = fetcher.request("POST", f"{base_url.rstrip('/')}/save", purpose="archive", robots=False,
                               data={"url": address}, headers=_headers(keys), attempts=1)
    return response, read_submit(response)


def status(fetcher: Fetcher, base_url: str, job_id: str, keys: Keys | None,
           expired: bool) -> tuple[Response, Answer]:
    """Return the response to one job status poll and what it says."""
    response = fetcher.get(f"{base_url.rstrip('/')}/save/status/{job_id}", purpose="archive",
                           robots=False, headers=_headers(keys))
    return response, read_status(response, job_id, expired)


def _headers(keys: Keys | None) -> dict[str, str]:
    return {"Accept": "application/json", **(keys.header() if keys else {})}


def read_submit(response: Response) -> Answer:
    """Return what a submission's answer says: a job, a refusal, or trouble."""
    data, trouble = _json_answer(response)
    if trouble is not None:
        return trouble
    if data.get("job_id"):
        return Answer("pending", PENDING, job_id=str(data["job_id"]), message=_text(data.get("message")))
    if data.get("status") == "error" or data.get("status_ext"):
        return _error(data)
    message = _text(data.get("message"))
    if message:
        # A message without a job: a session or rate limit, or "capture will start in ...".
        effect = STOP if DAILY_LIMIT.search(message) else BACKOFF
        return Answer("rate_limited", effect, message=message, retry_after=_retry_after(response))
    return Answer("failed_request", TEMPORARY, message="answer has neither job_id nor message")


def read_status(response: Response, job_id: str, expired: bool) -> Answer:
    """Return what a status answer says; `expired` when the job is older than the status is kept."""
    if response.status == 404:
        return Answer("unknown", TEMPORARY, job_id=job_id,
                      message="HTTP 404: the service no longer knows this job")
    data, trouble = _json_answer(response)
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
    effect = STATUS_EXT.get((ext or "").removeprefix("error:"), TEMPORARY)
    message = _text(data.get("message")) or _text(data.get("exception"))
    return Answer("error", effect, job_id=_text(data.get("job_id")), status_ext=ext, message=message)


def _json_answer(response: Response) -> tuple[dict, Answer | None]:
    """Return (the JSON object, None), or ({}, the Answer for an answer that is not one)."""
    if response.status == 429 or response.result == "rate_limited":
        return {}, Answer("rate_limited", BACKOFF, message=_body_message(response) or "HTTP 429",
                          retry_after=_retry_after(response))
    if response.status in AUTH_REFUSED:
        return {}, Answer("failed_request", STOP, message=f"HTTP {response.status}: credentials refused")
    if not response.ok:
        detail = response.detail or _body_message(response) or ""
        return {}, Answer("failed_request", TEMPORARY,
                          message=_text(f"{response.result} (HTTP {response.status}) {detail}".strip()))
    data = _decode(response.body)
    if data is None:
        return {}, Answer("failed_request", TEMPORARY,
                          message=f"answer is not JSON ({response.content_type or 'no content type'})")
    return data, None


def _decode(body: bytes) -> dict | None:
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _body_message(response: Response) -> str | None:
    data = _decode(response.body) or {}
    return _text(data.get("message"))


def _retry_after(response: Response) -> float | None:
    # The Wayback Machine often sends none (wayback client, 2023); seconds when it does.
    value = response.headers.get("retry-after", "").strip()
    return float(value) if value.isdigit() else None


def _text(value) -> str | None:
    if value is None or value == "":
        return None
    return str(value)[:MESSAGE_CHARS]
