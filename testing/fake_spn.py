"""A loopback Save Page Now 2 for tests, built on tests/farm.py.

It speaks the protocol of shared/research/internet-archive.md: `POST /save`
with `url=` answers `{"url", "job_id"}` or a message without a job;
`GET /save/status/<job_id>` answers pending, success or error. A job the
service does not know (a made-up id, or one older than about an hour) is
answered `{"job_id": ..., "resources": [], "status": "pending"}`, as the real
service does (agude/wayback-machine-archiver#28, 2025-09-02); markers
`gone404` and `gonemsg` give the other two shapes a forgotten job could take.

Behaviour is chosen per submitted address by the first segment of its path,
so one test can mix cases: https://outlet.example/<marker>/<anything>.

    ok          pending for `polls` answers, then success
    slow        pending for 6 answers, then success
    moved       success for the address after a redirect (original_url differs)
    notime      success without a timestamp
    err-<ext>   pending once, then status error with status_ext error:<ext>
    now-<ext>   the submission itself answered with status error error:<ext>
    429-<n>     the first n submissions answered HTTP 429 without Retry-After
    429ra-<n>   the same with Retry-After: 90 (longer than our first back-off)
    busy-<n>    the first n submissions answered with a message and no job_id
    502-<n>     the first n submissions answered HTTP 502
    daily       every submission answered with the daily-limit message
    forget      the job is forgotten at once: 'pending' with no resources, forever
    gone404     status answered HTTP 404
    gonemsg     status answered {"status": "error", "message": "... not found"}
    cached      submission answered 200 HTML with Content-Location and X-Page-Cache: HIT
    unauth      submission answered status error error:unauthorized
    http401     submission answered HTTP 401
"""

from __future__ import annotations

import hashlib
import itertools
import json
import socket
import threading
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from testing.farm import Farm, Handler, Reply

SESSION_LIMIT = "You have already reached the limit of active sessions. Please try again later."
DAILY_LIMIT = "You cannot make more than 4,000 captures per day. Please try again tomorrow."


@dataclass
class FakeJob:
    """One capture job as the fake service keeps it."""

    job_id: str
    url: str
    marker: str
    polls: int = 0


@dataclass
class Submission:
    """One POST /save as the fake service received it."""

    url: str
    authorization: str | None
    job_id: str | None


@dataclass
class FakeSPN:
    """A Save Page Now on a loopback host; `expect_auth` refuses any other Authorization."""

    farm: Farm
    polls: int = 2
    expect_auth: str | None = None
    jobs: dict[str, FakeJob] = field(default_factory=dict)
    submissions: list[Submission] = field(default_factory=list)
    status_asked: list[str] = field(default_factory=list)

    def __post_init__(self):
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._refusals: Counter = Counter()
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

    # -- POST /save ---------------------------------------------------------

    def _save(self, handler: Handler) -> Reply:
        seen = handler.server.host.seen[-1]
        url = parse_qs(seen.body.decode())["url"][0]
        auth = seen.headers.get("Authorization")
        with self._lock:
            reply, job_id = self._answer_save(url, auth)
            self.submissions.append(Submission(url, auth, job_id))
        return reply

    def _answer_save(self, url: str, auth: str | None) -> tuple[Reply, str | None]:
        marker = marker_of(url)
        if (self.expect_auth is not None and auth != self.expect_auth) or marker == "http401":
            return _json({"message": "Invalid credentials"}, 401), None
        refusal = self._refusal(url, marker)
        if refusal is not None:
            return refusal, None
        if marker.startswith("now-"):
            return _json({"status": "error", "status_ext": f"error:{marker[4:]}",
                          "message": f"refused: {marker[4:]}"}), None
        if marker == "unauth":
            return _json({"status": "error", "status_ext": "error:unauthorized",
                          "message": "You need to be logged in to use Save Page Now."}), None
        if marker == "cached":
            return Reply(200, b"<html>cached copy</html>", {"Content-Location": f"/web/20250101000000/{url}",
                                                              "X-Page-Cache": "HIT"}), None
        job_id = "spn2-" + hashlib.sha1(f"{url}#{next(self._ids)}".encode()).hexdigest()
        if marker != "forget":
            self.jobs[job_id] = FakeJob(job_id, url, marker)
        return _json({"url": url, "job_id": job_id}), job_id

    def _refusal(self, url: str, marker: str) -> Reply | None:
        """Return the limit answer for markers that refuse the first n submissions."""
        if marker == "daily":
            return _json({"message": DAILY_LIMIT})
        kind, _, count = marker.partition("-")
        if kind not in ("429", "429ra", "busy", "502") or self._refusals[url] >= int(count):
            return None
        self._refusals[url] += 1
        if kind == "busy":
            return _json({"message": SESSION_LIMIT})
        if kind == "502":
            return Reply(502, b"<html>Bad Gateway</html>")
        headers = {"Retry-After": "90"} if kind == "429ra" else {}
        return Reply(429, b"<html><h1>429 Too Many Requests</h1></html>", headers)

    # -- GET /save/status/<job_id> -------------------------------------------

    def _status(self, handler: Handler) -> Reply:
        job_id = urlsplit(handler.path).path.rsplit("/", 1)[-1]
        with self._lock:
            self.status_asked.append(job_id)
            job = self.jobs.get(job_id)
            if job is None:
                return _json({"job_id": job_id, "resources": [], "status": "pending"})
            job.polls += 1
            return self._answer_status(job)

    def _answer_status(self, job: FakeJob) -> Reply:
        marker = job.marker
        if marker == "gone404":
            return Reply(404, b"<html>Not Found</html>")
        if marker == "gonemsg":
            return _json({"status": "error", "message": f"Job {job.job_id} not found"})
        needed = 6 if marker == "slow" else 1 if marker.startswith("err-") else self.polls
        if job.polls <= needed:
            return _json({"status": "pending", "job_id": job.job_id, "resources": [job.url]})
        if marker.startswith("err-"):
            return _json({"status": "error", "job_id": job.job_id, "status_ext": f"error:{marker[4:]}",
                          "exception": "CaptureError", "message": f"capture failed: {marker[4:]}"})
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
