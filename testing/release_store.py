"""A loopback GitHub release store: the REST API's release and asset endpoints, and the asset host.

What it does, and where each behaviour comes from:

* `GET /repos/{owner}/{repo}/releases/tags/{tag}` answers the release with its
  `assets` (each `id`, `name`, `size`, `url`, `browser_download_url`), or 404
  (docs.github.com/en/rest/releases/releases, "Get a release by tag name").
* `POST /repos/{owner}/{repo}/releases` creates one (201), 422 when the tag has
  one already; assets are uploaded to the upload host,
  `POST /repos/{owner}/{repo}/releases/{id}/assets?name=NAME` (201; 422 when
  the name is taken: an asset is never replaced) (docs.github.com/en/rest/
  releases/assets, "Upload a release asset").
* `GET /repos/{owner}/{repo}/releases/assets/{id}` with
  `Accept: application/octet-stream` answers 302 to a short-lived signed
  address on another host ("The API will either redirect the client to the
  location, or stream it directly if possible. API clients should handle both
  a 200 or 302 response", ibid., "Get a release asset"); with any other Accept,
  the asset's JSON.
* The asset host serves the bytes with `Accept-Ranges: bytes` and answers a
  `Range: bytes=a-b` with 206 and `Content-Range` (objects.githubusercontent.com
  as seen in gm3dmo/the-power#393, 2025-05-16; RFC 9110 section 14). It refuses,
  400, a request that still carries an Authorization header: the signed
  address is its own credential, and S3-style stores reject two (github3.py
  #219: "the redirected request will fail unless the client strips the
  Authorization ... headers"; google/go-github a4d01b4 does the same).
* A repository made with a token answers 404 to requests without
  `Authorization: Bearer <token>` (or `token <token>`), as GitHub answers for a
  private repository.
* `GET /repos/{owner}/{repo}` answers the repository itself, with `full_name`,
  `private` and `visibility` (docs.github.com/en/rest/repos/repos, "Get a
  repository"): "private" for a store made with a token, "public" without, or
  whatever `visibility` is set to; the scripts that write the record ask it
  (.github/scripts/require_private.sh).

* `/repos/{owner}/{repo}/actions/caches` and `/actions/cache/usage`: the Actions cache's REST
  endpoints (testing/cache_api.py, from GitHub's REST documentation), over `caches`; a store made
  with `actions_token` lets only that token delete.

`down` makes every endpoint answer 503, for outages; every request is kept in
each host's `seen` list (testing/farm.py).
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from testing.cache_api import CacheEntries
from testing.farm import Farm, Handler, Reply

ASSET_TYPE = "application/octet-stream"


@dataclass
class Asset:
    id: int
    name: str
    stored: bytes | Path  # the bytes, or the file holding them (a store kept on disk)

    @property
    def data(self) -> bytes:
        return self.stored.read_bytes() if isinstance(self.stored, Path) else self.stored

    @property
    def size(self) -> int:
        return self.stored.stat().st_size if isinstance(self.stored, Path) else len(self.stored)


@dataclass
class Release:
    id: int
    tag: str
    assets: dict[str, Asset] = field(default_factory=dict)


class FakeReleaseStore:
    """GitHub releases of one repository, on three loopback hosts: the API, uploads, and asset bytes."""

    def __init__(self, farm: Farm, owner: str = "takedownwatch", repo: str = "record", token: str | None = None,
                 folder: Path | None = None, actions_token: str | None = None):
        self.owner, self.repo, self.token = owner, repo, token
        self.caches = CacheEntries(f"{owner}/{repo}", actions_token)
        self.folder = folder  # keep uploaded assets here rather than in memory (a year of them)
        self.releases: dict[str, Release] = {}
        self.down = False
        self.visibility = "private" if token else "public"
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        prefix = f"/repos/{owner}/{repo}"
        self.api = farm.add({prefix + "/*": self._api, prefix: self._repository})
        self.uploads = farm.add({prefix + "/releases/*": self._upload})
        self.objects = farm.add({"/asset/*": self._bytes})
        self._prefix = prefix

    @property
    def base(self) -> str:
        """Return the API address of the repository, as `--warc-store` takes it."""
        return self.api.url(self._prefix)

    # -- for tests ------------------------------------------------------------

    def add(self, tag: str, name: str, data: bytes) -> Asset:
        """Return an asset put straight into the release `tag` (made when missing)."""
        with self._lock:
            release = self._release(tag)
            asset = release.assets[name] = Asset(next(self._ids), name, self._keep(tag, name, data))
            return asset

    def _keep(self, tag: str, name: str, data: bytes) -> bytes | Path:
        if self.folder is None:
            return data
        path = self.folder / tag / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    def downloads(self) -> int:
        """Return how many asset downloads (byte requests) the asset host served."""
        return sum(1 for s in self.objects.seen if s.method == "GET")

    # -- the API --------------------------------------------------------------

    def _authorised(self, handler: Handler) -> bool:
        given = handler.headers.get("Authorization") or ""
        tokens = [t for t in (self.token, self.caches.actions_token) if t]
        return self.token is None or any(given in (f"Bearer {t}", f"token {t}") for t in tokens)

    def _repository(self, handler: Handler) -> Reply:
        if self.down:
            return _json({"message": "Service Unavailable"}, 503)
        if not self._authorised(handler):
            return _json({"message": "Not Found"}, 404)
        return _json({"full_name": f"{self.owner}/{self.repo}", "private": self.visibility != "public",
                      "visibility": self.visibility})

    def _api(self, handler: Handler) -> Reply:
        if self.down:
            return _json({"message": "Service Unavailable"}, 503)
        if not self._authorised(handler):
            return _json({"message": "Not Found"}, 404)
        path = urlsplit(handler.path).path[len(self._prefix):]
        if path.startswith("/actions/"):
            return self.caches.answer(handler.command, path, urlsplit(handler.path).query,
                                      handler.headers.get("Authorization") or "")
        with self._lock:
            if handler.command == "POST" and path == "/releases":
                return self._create(json.loads(handler.server.host.seen[-1].body or b"{}"))
            found = re.fullmatch(r"/releases/tags/(.+)", path)
            if found and handler.command == "GET":
                release = self.releases.get(found.group(1))
                return _json(self._release_json(release)) if release else _json({"message": "Not Found"}, 404)
            found = re.fullmatch(r"/releases/assets/(\d+)", path)
            if found and handler.command == "GET":
                return self._asset(int(found.group(1)), handler.headers.get("Accept") or "")
        return _json({"message": "Not Found"}, 404)

    def _create(self, body: dict) -> Reply:
        tag = body.get("tag_name") or ""
        if tag in self.releases:
            return _json({"message": "Validation Failed",
                          "errors": [{"resource": "Release", "code": "already_exists", "field": "tag_name"}]}, 422)
        return _json(self._release_json(self._release(tag)), 201)

    def _release(self, tag: str) -> Release:
        if tag not in self.releases:
            self.releases[tag] = Release(next(self._ids), tag)
        return self.releases[tag]

    def _release_json(self, release: Release) -> dict:
        return {"id": release.id, "tag_name": release.tag, "name": release.tag,
                "upload_url": self.uploads.url(f"{self._prefix}/releases/{release.id}/assets{{?name,label}}"),
                "assets": [self._asset_json(a) for a in release.assets.values()]}

    def _asset_json(self, asset: Asset) -> dict:
        return {"id": asset.id, "name": asset.name, "size": asset.size, "state": "uploaded",
                "content_type": ASSET_TYPE, "url": self.api.url(f"{self._prefix}/releases/assets/{asset.id}"),
                "browser_download_url": self.objects.url(f"/download/{asset.name}")}

    def _asset(self, asset_id: int, accept: str) -> Reply:
        asset = next((a for r in self.releases.values() for a in r.assets.values() if a.id == asset_id), None)
        if asset is None:
            return _json({"message": "Not Found"}, 404)
        if ASSET_TYPE not in accept:
            return _json(self._asset_json(asset))
        signature = hashlib.sha256(f"{asset.id}:{asset.name}".encode()).hexdigest()[:32]
        location = self.objects.url(f"/asset/{asset.id}?X-Amz-Expires=300&X-Amz-Signature={signature}")
        return Reply(302, b"", {"Location": location}, content_type=None)

    # -- uploads and bytes ----------------------------------------------------------

    def _upload(self, handler: Handler) -> Reply:
        if self.down:
            return _json({"message": "Service Unavailable"}, 503)
        if not self._authorised(handler):
            return _json({"message": "Not Found"}, 404)
        found = re.fullmatch(rf"{re.escape(self._prefix)}/releases/(\d+)/assets", urlsplit(handler.path).path)
        name = (parse_qs(urlsplit(handler.path).query).get("name") or [""])[0]
        with self._lock:
            release = next((r for r in self.releases.values() if found and r.id == int(found.group(1))), None)
            if release is None or not name:
                return _json({"message": "Not Found"}, 404)
            if name in release.assets:
                return _json({"message": "Validation Failed",
                              "errors": [{"resource": "ReleaseAsset", "code": "already_exists", "field": "name"}]},
                             422)
            body = handler.server.host.seen[-1].body
            asset = release.assets[name] = Asset(next(self._ids), name, self._keep(release.tag, name, body))
            return _json(self._asset_json(asset), 201)

    def _bytes(self, handler: Handler) -> Reply:
        if self.down:
            return Reply(503, b"Service Unavailable", content_type="text/plain")
        if handler.headers.get("Authorization"):
            return Reply(400, b"<Error><Code>InvalidArgument</Code><Message>Only one auth mechanism "
                              b"allowed</Message></Error>", content_type="application/xml")
        asset_id = int(urlsplit(handler.path).path.rsplit("/", 1)[-1])
        with self._lock:
            asset = next((a for r in self.releases.values() for a in r.assets.values() if a.id == asset_id), None)
        if asset is None:
            return Reply(404, b"not found", content_type="text/plain")
        wanted = re.fullmatch(r"bytes=(\d+)-(\d*)", handler.headers.get("Range") or "")
        headers = {"Accept-Ranges": "bytes"}
        data = asset.data
        if not wanted:
            return Reply(200, data, headers, content_type=ASSET_TYPE)
        first = int(wanted.group(1))
        last = min(int(wanted.group(2) or len(data) - 1), len(data) - 1)
        if first >= len(data):
            return Reply(416, b"", {"Content-Range": f"bytes */{len(data)}"}, content_type=None)
        headers["Content-Range"] = f"bytes {first}-{last}/{len(data)}"
        return Reply(206, data[first:last + 1], headers, content_type=ASSET_TYPE)


def _json(data: dict, status: int = 200) -> Reply:
    return Reply(status, json.dumps(data).encode(), content_type="application/json")
