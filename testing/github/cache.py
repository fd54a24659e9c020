"""The Actions cache: the service the cache action speaks, and the REST API over the same entries.

Why not act's own cache server (nektos/act pkg/artifactcache/handler.go): it serves the same v1
protocol, but has neither the REST API (list and delete caches) nor GitHub's budget and eviction,
and it does not refuse a key that exists; this one has all three, and records every eviction.

The service, at ACTIONS_CACHE_URL = https://HOST/_caches/OWNER/NAME/ (the v1 protocol of
actions/toolkit packages/cache/src/internal/cacheHttpClient.ts, as act serves it):

* GET  _apis/artifactcache/cache?keys=K1,K2&version=V: for each key in order, an exact match, else the
  newest entry whose key starts with it, among complete entries of the same version (keys compared
  without case, as act does): 200 {result, archiveLocation, cacheKey, cacheVersion, creationTime};
  204 when none. A hit counts as use (last_accessed_at), which is what eviction goes by.
* POST _apis/artifactcache/caches {key, version, cacheSize}: 201 {cacheId}; 409 when that key and
  version exist ("another job may be creating this cache", the toolkit's ReserveCacheError); 400
  when the size is over the whole budget (the toolkit's "exceeds" message).
* PATCH _apis/artifactcache/caches/{id} with `Content-Range: bytes A-B/*`: the chunk at A.
* POST _apis/artifactcache/caches/{id} {size}: commit; 400 when the bytes written differ.
* The archiveLocation is a signed address on this host that needs no token (the toolkit fetches it
  without one, as it would an Azure blob's SAS address).

Every request to the service carries `Authorization: Bearer TOKEN`, a token the server issued that
may use `actions` on the repository (`LoopbackGitHub.runtime_token`).

Budget and eviction (docs.github.com/en/actions/reference/workflows-and-actions/dependency-caching,
"Usage limits and eviction policy"): "Up to 10 GB of cache per repository"; beyond it "GitHub will
evict caches ... until the total size is less than the cache storage limit", least recently used
first ("caches based on last access date"). The budget is a constructor parameter so a test can
make it small. Every eviction is kept in `evictions`.

REST (docs.github.com/en/rest/actions/cache): GET /repos/{o}/{r}/actions/caches with `key` (a key
or prefix), `ref`, `sort` (created_at, last_accessed_at, size_in_bytes; default last_accessed_at),
`direction` (default desc), `per_page`, `page`; DELETE /repos/{o}/{r}/actions/caches?key=K[&ref=R]
(200 with the deleted entries, 404 when none); DELETE /repos/{o}/{r}/actions/caches/{id} (204);
GET /repos/{o}/{r}/actions/cache/usage.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

from testing.github.access import Refused
from testing.github.http import Request, Response, answer, route
from testing.github.hub import Hub
from testing.github.state import now_iso

BUDGET = 10 * 1024 ** 3  # bytes a repository may keep (GitHub's documented 10 GB)


@dataclass
class Entry:
    id: int
    repository: str  # lower-case full name
    key: str
    version: str
    ref: str
    size: int = 0
    complete: bool = False
    created_at: float = field(default_factory=time.time)
    last_accessed_at: float = field(default_factory=time.time)
    path: Path | None = None

    def json(self) -> dict:
        return {"id": self.id, "ref": self.ref, "key": self.key, "version": self.version,
                "last_accessed_at": now_iso(self.last_accessed_at), "created_at": now_iso(self.created_at),
                "size_in_bytes": self.size}


class Caches:
    """Every repository's cache entries, with the budget that evicts them."""

    def __init__(self, hub: Hub, budget: int = BUDGET, clock=time.time):
        self.hub, self.budget, self.clock = hub, budget, clock
        self.entries: dict[int, Entry] = {}
        self.evictions: list[dict] = []  # {repository, key, version, id, size, last_accessed_at, evicted_at}
        self.restores: list[dict] = []  # {repository, keys, version, hit}: what each job asked and got
        self.signing = secrets.token_bytes(16)

    def of(self, repository: str) -> list[Entry]:
        return [e for e in self.entries.values() if e.repository == repository.lower()]

    def find(self, repository: str, keys: list[str], version: str) -> Entry | None:
        """Return the entry restored for keys: exact key first, then the newest with the key as prefix."""
        ready = [e for e in self.of(repository) if e.complete and e.version == version]
        for key in keys:
            key = key.lower()
            for matches in (lambda e: e.key.lower() == key, lambda e: e.key.lower().startswith(key)):
                found = sorted((e for e in ready if matches(e)), key=lambda e: (e.created_at, e.id))
                if found:
                    return found[-1]
        return None

    def evict(self, repository: str) -> None:
        """Drop least-recently-used complete entries until the repository is within its budget."""
        while sum(e.size for e in self.of(repository) if e.complete) > self.budget:
            victim = min((e for e in self.of(repository) if e.complete), key=lambda e: (e.last_accessed_at, e.id))
            del self.entries[victim.id]
            if victim.path is not None:
                victim.path.unlink(missing_ok=True)
            self.evictions.append({**victim.json(), "repository": victim.repository, "evicted_at": self.clock()})

    def signature(self, entry: Entry) -> str:
        return hmac.new(self.signing, f"{entry.id}:{entry.key}".encode(), hashlib.sha256).hexdigest()


def routes(hub: Hub, caches: Caches) -> list:
    service = "/_caches/{owner}/{repo}/_apis/artifactcache"

    def repo_for(request: Request, level: str):
        token = hub.caller(request)
        if token is None:
            raise Refused(401, "Requires authentication")
        return hub.repo(request, "actions", level)

    def find(request: Request) -> Response:
        repo = repo_for(request, "read")
        keys = [k for k in (request.arg("keys") or "").split(",") if k]
        version = request.arg("version") or ""
        with hub.world.lock:
            entry = caches.find(repo.full_name, keys, version)
            caches.restores.append({"repository": repo.key, "keys": keys, "version": version,
                                    "hit": entry.key if entry else None})
            if entry is None:
                return Response(204)
            entry.last_accessed_at = caches.clock()
        location = (f"{hub.base}/_caches/{repo.full_name}/_apis/artifactcache/artifacts/{entry.id}"
                    f"?signature={caches.signature(entry)}")
        return answer({"result": "hit", "archiveLocation": location, "cacheKey": entry.key,
                       "cacheVersion": entry.version, "scope": entry.ref, "creationTime": now_iso(entry.created_at)})

    def reserve(request: Request) -> Response:
        repo = repo_for(request, "write")
        body = request.json()
        key, version, size = body.get("key") or "", body.get("version") or "", body.get("cacheSize") or 0
        if not key or not version:
            raise Refused(400, "Key and version are required")
        if size > caches.budget:
            raise Refused(400, f"Cache size of {size} bytes is over the {caches.budget} bytes limit")
        with hub.world.lock:
            if any(e.key.lower() == key.lower() and e.version == version for e in caches.of(repo.full_name)):
                raise Refused(409, f"Cache already exists. Key: {key}, Version: {version}")
            entry = Entry(next(hub.world.ids), repo.key, key, version, f"refs/heads/{repo.default_branch}",
                          created_at=caches.clock(), last_accessed_at=caches.clock())
            entry.path = hub.world.files("caches", repo.key.replace("/", "__")) / str(entry.id)
            entry.path.write_bytes(b"")
            caches.entries[entry.id] = entry
        return answer({"cacheId": entry.id}, 201)

    def pending(request: Request) -> Entry:
        entry = caches.entries.get(int(request.params["id"]))
        if entry is None or entry.repository != f"{request.params['owner']}/{request.params['repo']}".lower():
            raise Refused(400, f"Cache {request.params['id']}: not reserved")
        if entry.complete:
            raise Refused(400, f"Cache {entry.id} {entry.key!r}: already complete")
        return entry

    def upload(request: Request) -> Response:
        repo_for(request, "write")
        entry = pending(request)
        span = request.headers.get("content-range", "")
        try:
            start = int(span.split(" ", 1)[1].split("-", 1)[0])
        except (IndexError, ValueError):
            raise Refused(400, "Content-Range is missing or malformed") from None
        with open(entry.path, "r+b") as file:
            file.seek(start)
            file.write(request.body)
        return Response(204)

    def commit(request: Request) -> Response:
        repo = repo_for(request, "write")
        entry, size = pending(request), request.json().get("size")
        written = entry.path.stat().st_size
        if size is not None and size != written:
            raise Refused(400, f"Cache size mismatch: {size} committed, {written} uploaded")
        with hub.world.lock:
            entry.complete, entry.size = True, written
            entry.created_at = entry.last_accessed_at = caches.clock()
            caches.evict(repo.full_name)
        return Response(204)

    def archive(request: Request) -> Response:
        entry = caches.entries.get(int(request.params["id"]))
        if entry is None or not hmac.compare_digest(caches.signature(entry), request.arg("signature") or ""):
            return Response(404, b"<Error><Code>BlobNotFound</Code></Error>", {"Content-Type": "application/xml"})
        return Response(200, entry.path.read_bytes(), {"Content-Type": "application/octet-stream"})

    return [
        route("GET", service + "/cache", find),
        route("POST", service + "/caches", reserve),
        route("PATCH", service + "/caches/{id}", upload),
        route("POST", service + "/caches/{id}", commit),
        route("GET", service + "/artifacts/{id}", archive),
        *rest_routes(hub, caches),
    ]


def rest_routes(hub: Hub, caches: Caches) -> list:
    base = "/api/v3/repos/{owner}/{repo}/actions"
    orders = {"created_at": lambda e: e.created_at, "last_accessed_at": lambda e: e.last_accessed_at,
              "size_in_bytes": lambda e: e.size}

    def listing(request: Request) -> Response:
        repo = hub.repo(request, "actions", "read")
        key, ref = request.arg("key"), request.arg("ref")
        found = [e for e in caches.of(repo.full_name) if e.complete and (not key or e.key.startswith(key))
                 and (not ref or e.ref == ref)]
        order = orders.get(request.arg("sort") or "last_accessed_at")
        if order is None:
            raise Refused(422, "Validation Failed")
        found.sort(key=lambda e: (order(e), e.id), reverse=(request.arg("direction") or "desc") == "desc")
        per_page, page = min(int(request.arg("per_page") or 30), 100), int(request.arg("page") or 1)
        shown = found[(page - 1) * per_page: page * per_page]
        return answer({"total_count": len(found), "actions_caches": [e.json() for e in shown]})

    def delete_by_key(request: Request) -> Response:
        repo = hub.repo(request, "actions", "write")
        key, ref = request.arg("key"), request.arg("ref")
        if not key:
            raise Refused(422, "Validation Failed")
        with hub.world.lock:
            gone = [e for e in caches.of(repo.full_name) if e.complete and e.key == key and (not ref or e.ref == ref)]
            if not gone:
                raise Refused(404, "Not Found")
            for entry in gone:
                del caches.entries[entry.id]
        return answer({"total_count": len(gone), "actions_caches": [e.json() for e in gone]})

    def delete_by_id(request: Request) -> Response:
        repo = hub.repo(request, "actions", "write")
        with hub.world.lock:
            entry = caches.entries.get(int(request.params["id"]))
            if entry is None or entry.repository != repo.key or not entry.complete:
                raise Refused(404, "Not Found")
            del caches.entries[entry.id]
        return Response(204)

    def usage(request: Request) -> Response:
        repo = hub.repo(request, "actions", "read")
        ready = [e for e in caches.of(repo.full_name) if e.complete]
        return answer({"full_name": repo.full_name, "active_caches_size_in_bytes": sum(e.size for e in ready),
                       "active_caches_count": len(ready)})

    return [
        route("GET", base + "/caches", listing),
        route("DELETE", base + "/caches", delete_by_key),
        route("DELETE", base + "/caches/{id}", delete_by_id),
        route("GET", base + "/cache/usage", usage),
    ]
