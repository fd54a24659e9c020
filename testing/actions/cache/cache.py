"""The cache stand-ins' step (testing/actions/cache/restore|save/action.yml): the Actions cache service.

Written from actions/cache@5a3ec84eff668545956fd18022155c47e93e2684 (v4.2.3): restore/action.yml and
save/action.yml (inputs path, key, restore-keys, fail-on-cache-miss, lookup-only; outputs cache-hit,
cache-primary-key, cache-matched-key), README.md, src/restoreImpl.ts and src/saveImpl.ts (read, not
copied: on a miss `cache-hit` is left unset, a match of a restore key is `cache-hit` false, a save that
fails warns "Cache save failed." and the step still succeeds; the reason is a warning, except a key that
exists, which the bundled @actions/cache 4.0.3, dist/save-only/index.js saveCacheV1, tells with
core.info as a ReserveCacheError: "Failed to save: Unable to reserve cache with key K, another job may
be creating this cache. More details: <the service's message>"). The service is the one the runner
names in $ACTIONS_CACHE_URL, spoken in the v1 protocol its client (@actions/cache, used by that commit)
speaks, every request with
`Authorization: Bearer $ACTIONS_RUNTIME_TOKEN`:
  GET  _apis/artifactcache/cache?keys=K1,K2,...&version=V  200 {cacheKey, archiveLocation} or 204;
       the service matches the keys in order, each exactly and then as a prefix, newest first;
  POST _apis/artifactcache/caches {key, version, cacheSize}   {cacheId}; 409 when the key exists;
  PATCH _apis/artifactcache/caches/ID (Content-Range: bytes S-E/*), POST .../caches/ID {size}.
The version is SHA-256 of the paths, the compression ("gzip": the archive is a gzip tar made in
$GITHUB_WORKSPACE) and "1.0", joined by "|", as the client computes it, so only a save of the same
paths is restored.

  python3 cache.py restore|save   (inputs from INPUT_* variables)
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request

CHUNK = 32 * 1024 * 1024  # bytes per PATCH: the client's default upload chunk size


def call(method: str, url: str, body: bytes | None = None, headers: dict | None = None):
    """Return (status, body) of one request to the cache service."""
    request = urllib.request.Request(url, data=body, method=method, headers={
        "Authorization": "Bearer " + os.environ.get("ACTIONS_RUNTIME_TOKEN", ""),
        "Accept": "application/json;api-version=6.0-preview.1", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def inputs() -> tuple[list[str], str, str]:
    paths = [p.strip() for p in os.environ["INPUT_PATH"].splitlines() if p.strip()]
    version = hashlib.sha256("|".join([*paths, "gzip", "1.0"]).encode()).hexdigest()
    base = os.environ["ACTIONS_CACHE_URL"].rstrip("/") + "/_apis/artifactcache/"
    return paths, version, base


def output(**values: str) -> None:
    with open(os.environ["GITHUB_OUTPUT"], "a") as out:
        out.writelines(f"{k.replace('_', '-')}={v}\n" for k, v in values.items())


def restore() -> int:
    paths, version, base = inputs()
    key = os.environ["INPUT_KEY"]
    restore_keys = [k.strip() for k in os.environ.get("INPUT_RESTORE_KEYS", "").splitlines() if k.strip()]
    output(cache_primary_key=key)
    query = urllib.parse.urlencode({"keys": ",".join([key, *restore_keys]), "version": version})
    status, body = call("GET", base + "cache?" + query)
    if status == 204:
        if os.environ.get("INPUT_FAIL_ON_CACHE_MISS") == "true":
            print(f"::error::Failed to restore cache entry. Exiting as fail-on-cache-miss is set. Input key: {key}")
            return 1
        print("Cache not found for input keys: " + ", ".join([key, *restore_keys]))
        return 0
    if status != 200:
        print(f"::warning::Failed to restore: cache service answered {status}: {body[:200]!r}")
        return 0
    found = json.loads(body)
    matched = found["cacheKey"]
    output(cache_matched_key=matched, cache_hit=str(matched.lower() == key.lower()).lower())
    if os.environ.get("INPUT_LOOKUP_ONLY") == "true":
        print(f"Cache found and can be restored from key: {matched}")
        return 0
    with tempfile.NamedTemporaryFile(suffix=".tgz") as archive:
        with urllib.request.urlopen(found["archiveLocation"], timeout=600) as answer:
            while chunk := answer.read(CHUNK):
                archive.write(chunk)
        archive.flush()
        subprocess.run(["tar", "-xzf", archive.name, "-P", "-C", os.environ["GITHUB_WORKSPACE"]], check=True)
    print(f"Cache restored from key: {matched}")
    return 0


def save() -> int:
    """Save the paths under the key; a save that fails warns "Cache save failed." and the step passes."""
    if not upload():
        print("::warning::Cache save failed.")
    return 0


def upload() -> bool:
    """Return whether the archive of the paths was saved under the key, saying why not as the client does."""
    paths, version, base = inputs()
    key = os.environ["INPUT_KEY"]
    with tempfile.NamedTemporaryFile(suffix=".tgz") as archive:
        made = subprocess.run(["tar", "-czf", archive.name, "-P", "-C", os.environ["GITHUB_WORKSPACE"], *paths])
        if made.returncode != 0:
            print("::warning::Path Validation Error: Path(s) specified in the action for caching do(es) not "
                  "exist, hence no cache is being saved.")
            return False
        size = os.path.getsize(archive.name)
        status, body = call("POST", base + "caches", json.dumps(
            {"key": key, "version": version, "cacheSize": size}).encode(), {"Content-Type": "application/json"})
        if status == 400:  # over the size the service takes: an Error, a warning
            print(f"::warning::Failed to save: {message(body)}")
            return False
        if status != 200 and status != 201:  # the key exists (409): a ReserveCacheError, told with core.info
            print(f"Failed to save: Unable to reserve cache with key {key}, another job may be creating this "
                  f"cache. More details: {message(body)}")
            return False
        cache_id = json.loads(body)["cacheId"]
        with open(archive.name, "rb") as data:
            start = 0
            while chunk := data.read(CHUNK):
                status, body = call("PATCH", f"{base}caches/{cache_id}", chunk, {
                    "Content-Type": "application/octet-stream",
                    "Content-Range": f"bytes {start}-{start + len(chunk) - 1}/*"})
                if status >= 300:
                    print(f"::warning::Failed to save: upload answered {status}: {body[:200]!r}")
                    return False
                start += len(chunk)
        status, body = call("POST", f"{base}caches/{cache_id}", json.dumps({"size": size}).encode(),
                            {"Content-Type": "application/json"})
        if status >= 300:
            print(f"::warning::Failed to save: commit answered {status}: {body[:200]!r}")
            return False
    print(f"Cache saved with key: {key}")
    return True


def message(body: bytes) -> str:
    """Return the service's error message (its JSON `message`), else the body's start."""
    try:
        return str(json.loads(body)["message"])
    except (ValueError, KeyError, TypeError):
        return body[:200].decode(errors="replace")


if __name__ == "__main__":
    sys.exit(restore() if sys.argv[1] == "restore" else save())
