"""The Actions cache's REST endpoints of one repository, for testing/release_store.py's loopback GitHub.

From GitHub's REST documentation (docs.github.com/en/rest/actions/cache, API version 2022-11-28):

* `GET /repos/{owner}/{repo}/actions/caches` lists the entries, `{"total_count": N, "actions_caches":
  [{"id", "ref", "key", "version", "last_accessed_at", "created_at", "size_in_bytes"}, ...]}`, with the
  query parameters `key` ("An explicit key or prefix for identifying the cache"), `ref`, `sort`
  (created_at, last_accessed_at, size_in_bytes; default last_accessed_at), `direction` (asc, desc;
  default desc), `per_page` (default 30, max 100) and `page` (default 1).
* `DELETE /repos/{owner}/{repo}/actions/caches/{cache_id}` deletes one entry: 204 No Content.
* `DELETE /repos/{owner}/{repo}/actions/caches?key=KEY` deletes every entry whose key is KEY (a complete
  key, not a prefix), answering 200 with the deleted entries in the list's form.
* `GET /repos/{owner}/{repo}/actions/cache/usage` answers `{"full_name", "active_caches_size_in_bytes",
  "active_caches_count"}`.
* Deleting needs a token with the `actions: write` permission ("Fine-grained access tokens ...: The
  token must have the following permission set: actions:write"); GitHub answers a token without it
  403 `{"message": "Resource not accessible by integration"}` (its answer to an installation token
  missing a permission). A store made with `actions_token` accepts DELETE from that token alone.
* The time stamps are ISO 8601 in UTC with milliseconds, `2019-01-24T22:45:36.000Z`, as documented.

`save`, `restore` and `evict` stand in for what the cache service does to the same entries (the
runner's actions/cache save and restore), for tests: restore touches `last_accessed_at`.
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from urllib.parse import parse_qs

from testing.farm import Reply


@dataclass
class CacheEntry:
    id: int
    key: str
    size: int
    created: datetime
    accessed: datetime
    ref: str = "refs/heads/main"

    def json(self) -> dict:
        return {"id": self.id, "ref": self.ref, "key": self.key, "version": "0" * 64,
                "last_accessed_at": _stamp(self.accessed), "created_at": _stamp(self.created),
                "size_in_bytes": self.size}


class CacheEntries:
    """One repository's Actions cache entries and the REST API over them."""

    def __init__(self, full_name: str, actions_token: str | None = None):
        self.full_name, self.actions_token = full_name, actions_token
        self.entries: dict[int, CacheEntry] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def save(self, key: str, size: int, when: datetime | None = None) -> CacheEntry:
        when = when or datetime.now(timezone.utc)
        with self._lock:
            entry = CacheEntry(next(self._ids), key, size, when, when)
            self.entries[entry.id] = entry
            return entry

    def keys(self) -> set[str]:
        return {e.key for e in self.entries.values()}

    def answer(self, method: str, path: str, query: str, authorization: str) -> Reply:
        """Return the answer to `method path?query` below /repos/{owner}/{repo} (path begins /actions/)."""
        asked = {name: values[0] for name, values in parse_qs(query).items()}
        with self._lock:
            if path == "/actions/cache/usage" and method == "GET":
                return _json({"full_name": self.full_name, "active_caches_count": len(self.entries),
                              "active_caches_size_in_bytes": sum(e.size for e in self.entries.values())})
            if path == "/actions/caches" and method == "GET":
                return self._list(asked)
            if path.startswith("/actions/caches") and method == "DELETE":
                if self.actions_token is not None and authorization not in (f"Bearer {self.actions_token}",
                                                                             f"token {self.actions_token}"):
                    return _json({"message": "Resource not accessible by integration"}, 403)
                return self._delete(path, asked)
        return _json({"message": "Not Found"}, 404)

    def _list(self, asked: dict) -> Reply:
        found = [e for e in self.entries.values() if e.key.startswith(asked.get("key", ""))
                 and e.ref == asked.get("ref", e.ref)]
        field = {"created_at": "created", "last_accessed_at": "accessed", "size_in_bytes": "size"}[
            asked.get("sort", "last_accessed_at")]
        found.sort(key=lambda e: (getattr(e, field), e.id), reverse=asked.get("direction", "desc") == "desc")
        per_page = min(int(asked.get("per_page", 30)), 100)
        page = int(asked.get("page", 1))
        shown = found[(page - 1) * per_page:page * per_page]
        return _json({"total_count": len(found), "actions_caches": [e.json() for e in shown]})

    def _delete(self, path: str, asked: dict) -> Reply:
        if path == "/actions/caches":
            gone = [e for e in self.entries.values() if e.key == asked.get("key")]
            if not gone:
                return _json({"message": "Not Found"}, 404)
            for entry in gone:
                del self.entries[entry.id]
            return _json({"total_count": len(gone), "actions_caches": [e.json() for e in gone]})
        tail = path[len("/actions/caches/"):]
        if not tail.isdigit() or int(tail) not in self.entries:
            return _json({"message": "Not Found"}, 404)
        del self.entries[int(tail)]
        return Reply(204, b"", content_type=None)


def _stamp(when: datetime) -> str:
    return when.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"


def _json(data: dict, status: int = 200) -> Reply:
    return Reply(status, json.dumps(data).encode(), content_type="application/json")
