"""A loopback Save Page Now 2 for tests and the demo, built on testing/farm.py.

Its behaviour comes from the service's documentation and from what real
clients and measurements show, not from our own client (the short names are
those of shared/research/spn2-service.md, which gives the full references):

* DOC: "Save Page Now 2 Public API Docs Draft", Vangelis Banos, revision of
  2025-10-22 (Google Doc 1Nsv52MvSjbLb2PCpHlat0gkzw0EvtSgpKHu4mk0MnrA, read
  as bac0id/spn2-docs-gd2md converted/spn2-api-docs.md @ 3ecf2367). `POST
  /save` with `url=` answers `{"url", "job_id"}`; `GET /save/status/<job>`
  answers pending, success (`timestamp`, `original_url`) or error (`status_ext`,
  `message`, `exception`). The error messages below are the DOC's "Error codes"
  descriptions, e.g. error:unauthorized "The server requires authentication
  (HTTP status=401)": the *target* demanded a login.
* Refused keys: HTTP 401 `{"message": "You need to be logged in to use Save
  Page Now."}`, measured for `POST /save` without keys on 2026-08-27
  (MKRWW/wortlaut #108); the same body in indiekit's Internet Archive
  syndicator test mocks and the Archive's own browser extension
  (internetarchive/wayback-machine-webextension webextension/scripts/bulk-save.js).
  savepagenow (palewire, savepagenow/api.py) reads an HTTP 401 as "Your
  archive.org access key and/or secret is not valid". Anonymous submissions
  are refused unless the fake is made with `anonymous=True` (the service
  before 2026, whose anonymous limits the DOC still lists).
* Daily limits: per address `{"status": "error", "status_ext":
  "error:too-many-daily-captures", "message": "This URL has been already captured
  5 times today..."}` as HTTP 200 on the submission (WORTLAUT; 5 a day measured,
  the DOC says 10); per account a message without a job, in the wordings the live
  service used: "You cannot make more than (300,) captures per day." (spn.sh
  PR #35, 2024) and "You have reached your daily not-logged-in captures limit
  of (200,) webpages, ..." (spn.sh PR #43, 2025). overcast07's spn.sh stops
  submitting on both.
* Rate limit: HTTP 429 with an HTML page and usually no Retry-After (waybackpy
  issues #131 and #142; edgi-govdata-archiving/wayback's comment of
  2023-11-27); `429date-<n>` sends Retry-After as an HTTP date (RFC 9110
  section 10.2.3) with the Date header it is measured from.
* Account status: `GET /save/status/user?_t=<random>` (DOC "User status":
  `{"available":12,"processing":3}`); the live service adds the day's
  captures and their limit, `{"processing":0,"available":3,"daily_captures":0,
  "daily_captures_limit":30000}` (WORTLAUT, 2026; spn.sh #39 saw a limit of
  10,000). Without keys it answers the 401 of a refused submission (a project
  note of Oct 2026). `daily_captures` counts every accepted capture of the
  account today, including those made elsewhere (`captured_elsewhere`).
  `sessions` is the account's concurrent captures (DOC change log 2021-05-23: 5
  authenticated); a submission beyond them is refused with the session-limit
  message (spn.sh #19; the Ruby and Go clients match "reached the limit of
  active sessions").
* Captures a minute: "Max captures per minute for authenticated users = 12 ...
  If you try to start more, SPN2 returns an error" (DOC "Limitations"). The
  error's shape is not documented; the one seen from the service for a client
  that starts too many is the 429 page above (waybackpy #131). With
  `per_minute` set, a submission that would be more than that many within 60 s
  (on the fake's `clock`, which a test may make virtual) gets that 429;
  `started` keeps the time of every submission on that clock.
* A status is kept about an hour; after that, and for made-up ids, the
  endpoint answers `{"job_id": ..., "resources": [], "status": "pending"}`
  (agude/wayback-machine-archiver #28, 2025-09-02). The status endpoint does
  not insist on keys (spn.sh polls it without them).

Behaviour is chosen per submitted address by the first segment of its path,
so one test can mix cases: https://outlet.example/<marker>/<anything>.

    ok             pending for `polls` answers, then success
    slow           pending for 6 answers, then success
    moved          success for the address after a redirect (original_url differs)
    notime         success without a timestamp
    err-<ext>      pending once, then status error with status_ext error:<ext>
    now-<ext>      the submission itself answered with status error error:<ext>
    429-<n>        the first n submissions answered HTTP 429 without Retry-After
    429ra-<n>      the same with Retry-After: 90 (longer than our first back-off)
    429date-<n>    the same with Retry-After as an HTTP date 90 s after its Date
    busy-<n>       the first n submissions answered with a message and no job_id
    502-<n>        the first n submissions answered HTTP 502
    daily          every submission answered with the account's daily-limit message
    forget         the job is forgotten at once: 'pending' with no resources, forever
    gone404        status answered HTTP 404
    gonemsg        status answered {"status": "error", "message": "... not found"}
    cached         submission answered 200 HTML with Content-Location and X-Page-Cache: HIT
    http401        submission answered HTTP 401, as for refused keys
    stall          submission never answered: the connection is closed after `stall_seconds`
"""

from __future__ import annotations

import email.utils
import hashlib
import itertools
import json
import socket
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable
from urllib.parse import parse_qs, urlsplit

from testing.farm import Farm, Handler, Reply

LOGIN_REQUIRED = "You need to be logged in to use Save Page Now."
SESSION_LIMIT = "You have already reached the limit of active sessions. Please try again later."
DAILY_LIMIT = "You cannot make more than (300,) captures per day."
ADDRESS_DAILY_LIMIT = "This URL has been already captured {n} times today. Please try again tomorrow."
RATE_LIMIT_PAGE = (
    b"<html><head><title>429 Too Many Requests</title></head><body><h1>Too Many Requests</h1>"
    b"<p>We are limiting the number of URLs you can submit to be Archived to the Wayback Machine, "
    b"using the Save Page Now features, to no more than 15 per minute.</p></body></html>")
# The DOC's "Error codes" descriptions, used as the fake's messages.
ERROR_MESSAGES = {
    "unauthorized": "The server requires authentication (HTTP status=401).",
    "no-access": "Target URL could not be accessed (status=403).",
    "not-found": "Target URL not found (status=404).",
    "blocked-url": "We use a URL block list based on Mozilla web tracker lists to avoid unwanted captures.",
    "too-many-daily-captures": "This URL has been captured 10 times today. We cannot make any more captures.",
    "job-failed": "Capture failed due to system error.",
}


@dataclass
class FakeJob:
    """One capture job as the fake service keeps it."""

    job_id: str
    url: str
    marker: str
    polls: int = 0
    done: bool = False  # its final status has been answered
    started: float = 0.0  # on the fake's clock


@dataclass
class Submission:
    """One POST /save as the fake service received it."""

    url: str
    authorization: str | None
    job_id: str | None


@dataclass
class FakeSPN:
    """A Save Page Now on a loopback host.

    `expect_auth` refuses any other Authorization; without it any `LOW a:b`
    header is accepted and a missing one refused, unless `anonymous`.
    `url_daily_limit` and `daily_captures_limit` are the per-address and
    per-account captures a day (`new_day()` starts the next day).
    """

    farm: Farm
    polls: int = 2
    expect_auth: str | None = None
    anonymous: bool = False
    url_daily_limit: int = 5
    daily_captures_limit: int | None = None
    daily_message: str = DAILY_LIMIT
    stall_seconds: float = 5.0
    sessions: int | None = None  # enforced only when set; stated as 12 (the DOC's example) otherwise
    per_minute: int | None = None
    states_daily_limit: bool = True  # False: /save/status/user answers as the DOC's example, no day's figures
    captured_elsewhere: int = 0  # the account's captures today made by someone else
    clock: Callable[[], float] = time.monotonic
    started: list[float] = field(default_factory=list)
    # With it set, an `ok` job is done this long after its submission (on `clock`)
    # however often it is polled, as a real capture is: 10 s to 2 min (DOC
    # "Limitations": 50 s a page, 2 min at most; its example took 6.2 s).
    capture_seconds: float | None = None
    jobs: dict[str, FakeJob] = field(default_factory=dict)
    submissions: list[Submission] = field(default_factory=list)
    status_asked: list[str] = field(default_factory=list)

    def __post_init__(self):
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._refusals: Counter = Counter()
        self._today: Counter = Counter()  # accepted captures today, by address
        self.host = self.farm.add({"/save": _no_delay(self._save), "/save/": _no_delay(self._save),
                                   "/save/status/*": _no_delay(self._status)})

    @property
    def base(self) -> str:
        return self.host.base

    def submitted(self, url: str) -> int:
        """Return how many submissions of this address were received."""
        return sum(1 for s in self.submissions if s.url == url)

    def accepted(self, url: str) -> int:
        """Return how many jobs were started for this address."""
        return sum(1 for s in self.submissions if s.url == url and s.job_id)

    def forget_all(self) -> None:
        """Drop every job, as the service does about an hour after submission."""
        with self._lock:
            self.jobs.clear()

    def new_day(self) -> None:
        """Start the service's next day: the daily counts begin again."""
        with self._lock:
            self._today.clear()
            self.captured_elsewhere = 0

    def most_in_a_minute(self) -> int:
        """Return the most submissions received within any 60 s (on the fake's clock)."""
        times = sorted(self.started)
        return max((sum(1 for t in times[i:] if t < start + 60.0) for i, start in enumerate(times)), default=0)

    def processing(self) -> int:
        """Return the jobs not yet answered to their end, or not yet over (the service's `processing`)."""
        if self.capture_seconds is not None:
            return sum(1 for job in self.jobs.values() if self.clock() < job.started + self.capture_seconds)
        return sum(1 for job in self.jobs.values() if not job.done)

    # -- POST /save ---------------------------------------------------------

    def _save(self, handler: Handler) -> Reply | None:
        seen = handler.server.host.seen[-1]
        url = parse_qs(seen.body.decode())["url"][0]
        auth = seen.headers.get("Authorization")
        if marker_of(url) == "stall":
            with self._lock:
                self.submissions.append(Submission(url, auth, None))
            time.sleep(self.stall_seconds)  # then close without a word, as farm.stall does
            handler.close_connection = True
            return None
        with self._lock:
            self.started.append(self.clock())
            reply, job_id = self._answer_save(url, auth)
            self.submissions.append(Submission(url, auth, job_id))
        return reply

    def _keys_refused(self, auth: str | None) -> bool:
        if self.expect_auth is not None:
            return auth != self.expect_auth
        if auth is None:
            return not self.anonymous
        scheme, _, pair = auth.partition(" ")
        return scheme != "LOW" or ":" not in pair

    def _answer_save(self, url: str, auth: str | None) -> tuple[Reply, str | None]:
        marker = marker_of(url)
        if self._keys_refused(auth) or marker == "http401":
            return _json({"message": LOGIN_REQUIRED}, 401), None
        refusal = self._refusal(url, marker) or self._over_rate()
        if refusal is not None:
            return refusal, None
        if marker.startswith("now-"):
            return _json({"status": "error", "status_ext": f"error:{marker[4:]}",
                          "message": ERROR_MESSAGES.get(marker[4:], f"refused: {marker[4:]}")}), None
        if marker == "cached":
            return Reply(200, b"<html>cached copy</html>", {"Content-Location": f"/web/20250101000000/{url}",
                                                              "X-Page-Cache": "HIT"}), None
        if (self.daily_captures_limit is not None
                and sum(self._today.values()) + self.captured_elsewhere >= self.daily_captures_limit):
            return _json({"message": self.daily_message}), None
        if self.sessions is not None and self.processing() >= self.sessions:
            return _json({"message": SESSION_LIMIT}), None
        if self._today[url] >= self.url_daily_limit:
            return _json({"status": "error", "status_ext": "error:too-many-daily-captures",
                          "message": ADDRESS_DAILY_LIMIT.format(n=self._today[url])}), None
        self._today[url] += 1
        job_id = "spn2-" + hashlib.sha1(f"{url}#{next(self._ids)}".encode()).hexdigest()
        if marker != "forget":
            self.jobs[job_id] = FakeJob(job_id, url, marker, started=self.started[-1])
        return _json({"url": url, "job_id": job_id}), job_id

    def _over_rate(self) -> Reply | None:
        """Return the 429 page for a submission beyond `per_minute` within the last 60 s."""
        if self.per_minute is None:
            return None
        now = self.started[-1]
        if sum(1 for t in self.started[:-1] if t > now - 60.0) >= self.per_minute:
            return Reply(429, RATE_LIMIT_PAGE)
        return None

    def _refusal(self, url: str, marker: str) -> Reply | None:
        """Return the limit answer for markers that refuse the first n submissions."""
        if marker == "daily":
            return _json({"message": self.daily_message})
        kind, _, count = marker.partition("-")
        if kind not in ("429", "429ra", "429date", "busy", "502") or self._refusals[url] >= int(count):
            return None
        self._refusals[url] += 1
        if kind == "busy":
            return _json({"message": SESSION_LIMIT})
        if kind == "502":
            return Reply(502, b"<html><body><h1>502 Bad Gateway</h1></body></html>")
        headers = {"Retry-After": "90"} if kind == "429ra" else {}
        if kind == "429date":
            now = time.time()
            headers = {"Date": email.utils.formatdate(now, usegmt=True),
                       "Retry-After": email.utils.formatdate(now + 90, usegmt=True)}
        return Reply(429, RATE_LIMIT_PAGE, headers)

    # -- GET /save/status/<job_id> -------------------------------------------

    def _status(self, handler: Handler) -> Reply:
        job_id = urlsplit(handler.path).path.rsplit("/", 1)[-1]
        if job_id == "user":
            return self._user(handler.server.host.seen[-1].headers.get("Authorization"))
        with self._lock:
            self.status_asked.append(job_id)
            job = self.jobs.get(job_id)
            if job is None:
                return _json({"job_id": job_id, "resources": [], "status": "pending"})
            job.polls += 1
            return self._answer_status(job)

    def _user(self, auth: str | None) -> Reply:
        """Return the account's status: sessions, and the day's captures against their limit."""
        with self._lock:
            if self._keys_refused(auth) or auth is None:
                return _json({"message": LOGIN_REQUIRED}, 401)
            processing = self.processing()
            sessions = 12 if self.sessions is None else self.sessions
            answer = {"processing": processing, "available": max(0, sessions - processing)}
            if self.states_daily_limit:
                answer["daily_captures"] = sum(self._today.values()) + self.captured_elsewhere
            if self.states_daily_limit and self.daily_captures_limit is not None:
                answer["daily_captures_limit"] = self.daily_captures_limit
            return _json(answer)

    def _answer_status(self, job: FakeJob) -> Reply:
        marker = job.marker
        if marker in ("gone404", "gonemsg"):
            job.done = True
        if marker == "gone404":
            return Reply(404, b"<html>Not Found</html>")
        if marker == "gonemsg":
            return _json({"status": "error", "message": f"Job {job.job_id} not found"})
        needed = 6 if marker == "slow" else 1 if marker.startswith("err-") else self.polls
        running = (self.clock() < job.started + self.capture_seconds if self.capture_seconds is not None
                   and marker == "ok" else job.polls <= needed)
        if running:
            return _json({"status": "pending", "job_id": job.job_id, "resources": [job.url]})
        job.done = True
        if marker.startswith("err-"):
            ext = marker[4:]
            return _json({"status": "error", "job_id": job.job_id, "status_ext": f"error:{ext}",
                          "exception": "CaptureError", "resources": [],
                          "message": ERROR_MESSAGES.get(ext, f"capture failed: {ext}")})
        return _json(self._success(job))

    def _success(self, job: FakeJob) -> dict:
        original = job.url + "?from=redirect" if job.marker == "moved" else job.url
        answer = {"status": "success", "job_id": job.job_id, "original_url": original,
                  "timestamp": f"20260101{int(job.job_id[5:11], 16) % 1000000:06d}",
                  "duration_sec": 6.1, "resources": [job.url], "outlinks": {}}
        if job.marker == "notime":
            del answer["timestamp"]
        return answer


def marker_of(url: str) -> str:
    """Return the behaviour marker of an address: the first segment of its path."""
    return urlsplit(url).path.strip("/").split("/")[0]


def _no_delay(route):
    """Return the route with Nagle's algorithm off for its connection."""

    def fast(handler: Handler) -> Reply:
        # The farm writes headers and body apart; with Nagle on, loopback's
        # delayed ACK holds the body back about 40 ms, and a test makes hundreds.
        handler.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return route(handler)

    return fast


def _json(data: dict, status: int = 200) -> Reply:
    return Reply(status, json.dumps(data).encode(), content_type="application/json")
