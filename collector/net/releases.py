"""Reads byte ranges of the record's WARC files back from their GitHub release assets.

WARC files leave the runner as assets of one release a day (warc-YYYY-MM-DD,
.github/scripts/publish_warc.sh), and a job starts on a fresh runner with an
empty WARC folder. When a revisit needs the HTML of an older snapshot, only its
response record is wanted: the snapshot names the file, offset and length, and
the asset is asked for those bytes alone (`Range`), through the one polite
fetcher, so every download is a request in the ledger.

The GitHub REST API: `GET {repo}/releases/tags/{tag}` lists a release's assets;
`GET {repo}/releases/assets/{id}` with `Accept: application/octet-stream`
answers 200 with the bytes or 302 to a signed address on another host
(docs.github.com/en/rest/releases/assets). The fetcher drops credentials on a
redirect to another host, as that host requires; the signed address is used
again for the file's next records while it holds, so reading many records of
one file costs one API request. A workflow's GITHUB_TOKEN may
make 1,000 API requests an hour (docs.github.com/en/rest/using-the-rest-api/
rate-limits-for-the-rest-api): one a download, plus one a release per run.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from urllib.parse import quote

from collector.net.fetcher import Fetcher

API_JSON = "application/vnd.github+json"
BYTES = "application/octet-stream"
PURPOSE = "evidence"  # the ledger's purpose for every request made here
# GitHub's signed asset addresses hold for 300 s (X-Amz-Expires=300, gm3dmo/the-power#393):
# one is reused for the next records of the same file for a little less than that.
SIGNED_FOR_SECONDS = 240.0


@dataclass
class Download:
    """What asking for a byte range came to: the bytes, or why not, and the requests made."""

    data: bytes | None
    requests: list[int] = field(default_factory=list)
    problem: str | None = None


def token_from_env() -> str | None:
    """Return the token for the release API (GH_TOKEN, else GITHUB_TOKEN), or None."""
    return os.environ.get("GH_TOKEN") or os.environ.get("GITHUB_TOKEN") or None


class ReleaseStore:
    """Byte ranges of release assets of one repository (`api_base`: https://api.github.com/repos/OWNER/REPO)."""

    def __init__(self, fetcher: Fetcher, api_base: str, token: str | None = None):
        self.fetcher = fetcher
        self.base = api_base.rstrip("/")
        self.token = token
        self._assets: dict[str, dict[str, str]] = {}  # tag -> asset name -> its API address, for this run
        self._signed: dict[str, tuple[str, float]] = {}  # API address -> (signed address, when it was given)

    def _headers(self, accept: str) -> dict[str, str]:
        headers = {"Accept": accept, "X-GitHub-Api-Version": "2022-11-28"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        return headers

    def read(self, tag: str, name: str, offset: int, length: int) -> Download:
        """Return the `length` bytes at `offset` of asset `name` of release `tag`."""
        done = Download(None)
        assets = self._release(tag, done)
        if assets is None:
            return done
        if name not in assets:
            done.problem = f"release {tag} has no asset {name}"
            return done
        wanted = {"Range": f"bytes={offset}-{offset + length - 1}"}
        response = None
        signed, given = self._signed.get(assets[name], (None, 0.0))
        if signed and self.fetcher.clock.monotonic() - given < SIGNED_FOR_SECONDS:
            # The signed address is its own credential: no API request, no token.
            response = self.fetcher.get(signed, purpose=PURPOSE, robots=False, headers={"Accept": BYTES, **wanted})
            done.requests += response.chain
            if not response.ok:
                self._signed.pop(assets[name], None)
                response = None
        if response is None:
            asked = self.fetcher.clock.monotonic()
            response = self.fetcher.get(assets[name], purpose=PURPOSE, robots=False,
                                        headers={**self._headers(BYTES), **wanted})
            done.requests += response.chain
            if response.ok and response.final_url != assets[name]:
                self._signed[assets[name]] = (response.final_url, asked)
        if not response.ok:
            done.problem = f"asset {name} of {tag}: {response.result} ({response.status})"
            return done
        body = response.body
        if response.status == 200:  # the whole file: a server that ignores Range
            body = body[offset:offset + length]
        elif not re.match(rf"bytes {offset}-", response.headers.get("content-range", "")):
            done.problem = f"asset {name} of {tag}: answered {response.headers.get('content-range')!r}"
            return done
        if len(body) != length:
            done.problem = f"asset {name} of {tag}: {len(body)} bytes where {length} were asked"
            return done
        done.data = body
        return done

    def _release(self, tag: str, done: Download) -> dict[str, str] | None:
        """Return the assets of release `tag` (asked once a run), or None with done.problem set."""
        if tag in self._assets:
            return self._assets[tag]
        response = self.fetcher.get(f"{self.base}/releases/tags/{quote(tag, safe='')}", purpose=PURPOSE,
                                    robots=False, headers=self._headers(API_JSON))
        done.requests += response.chain
        if not response.ok:
            done.problem = f"release {tag}: {response.result} ({response.status})"
            return None
        try:
            listed = json.loads(response.body).get("assets") or []
            assets = {a["name"]: a["url"] for a in listed}
        except (ValueError, AttributeError, KeyError, TypeError) as exc:
            done.problem = f"release {tag}: unreadable answer ({exc})"
            return None
        self._assets[tag] = assets
        return assets
