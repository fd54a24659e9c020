"""Save Page Now 2: the two requests the archive job sends (what their answers mean: answers.py).

Protocol facts and their sources are in shared/research/spn2-service.md.
Both requests are sent once, with no redirect followed (spn.sh's curl calls
follow none either), within the time the caller has left: a submission's lost
answer may hide an accepted job, and a status poll is asked again by the job
itself at its next turn.
"""

from __future__ import annotations

import os
import secrets

from collector.net.fetcher import Fetcher, Response
from collector.wayback.answers import Answer, UserStatus, read_status, read_submit, read_user

Timeouts = tuple[float, float, float]


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


def submit(fetcher: Fetcher, base_url: str, address: str, keys: Keys | None,
           timeouts: Timeouts | None = None) -> tuple[Response, Answer]:
    """Return the response to one submission and what it says."""
    # Never retried inside the fetcher: a lost answer may hide an accepted job,
    # and a blind second POST would start a second capture.
    response = fetcher.request("POST", f"{base_url.rstrip('/')}/save", purpose="archive", robots=False,
                               data={"url": address}, headers=_headers(keys), attempts=1, max_hops=0,
                               timeouts=timeouts)
    return response, read_submit(response, anonymous=keys is None, now=fetcher.clock.now())


def status(fetcher: Fetcher, base_url: str, job_id: str, keys: Keys | None, expired: bool,
           timeouts: Timeouts | None = None) -> tuple[Response, Answer]:
    """Return the response to one job status poll and what it says."""
    response = fetcher.get(f"{base_url.rstrip('/')}/save/status/{job_id}", purpose="archive",
                           robots=False, headers=_headers(keys), attempts=1, max_hops=0,
                           timeouts=timeouts)
    return response, read_status(response, job_id, expired, now=fetcher.clock.now())


def user_status(fetcher: Fetcher, base_url: str, keys: Keys,
                timeouts: Timeouts | None = None) -> tuple[Response, UserStatus | None]:
    """Return the response to the account's status request and what it says (DOC "User status").

    `_t` is a random value, as the DOC advises, so no cache between us and the
    service answers with an older status.
    """
    response = fetcher.get(f"{base_url.rstrip('/')}/save/status/user?_t={secrets.token_hex(8)}",
                           purpose="archive", robots=False, headers=_headers(keys), attempts=1, max_hops=0,
                           timeouts=timeouts)
    return response, read_user(response)


def _headers(keys: Keys | None) -> dict[str, str]:
    return {"Accept": "application/json", **(keys.header() if keys else {})}
