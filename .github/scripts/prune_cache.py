"""Deletes the Actions cache entries a job's save supersedes; prints the repository's cache use.

    python3 .github/scripts/prune_cache.py prune PREFIX SAVED [RESTORED]
    python3 .github/scripts/prune_cache.py usage [--json]

Why: GitHub keeps at most 10 GB of Actions cache per repository and, beyond it, evicts the least
recently used entries ("Usage limits and eviction policy", docs.github.com/en/actions/reference/
workflows-and-actions/dependency-caching; @actions/cache README: "If you exceed this limit, GitHub
will save your cache but will begin evicting caches until the total size is less than 10 GB").
Every collect, archive and pages job saves its database under a new key (PREFIX + run id - attempt),
so without this the entries of one stream pile up and GitHub evicts the entry another stream's next
job needs: that job then rebuilds from the whole record.

`prune` runs right after a successful save (the step has no `if:`, so it runs only when every step
before succeeded), with GH_TOKEN a token that may write Actions (`actions: write`). It lists the
entries whose key starts with PREFIX (GET /repos/{owner}/{repo}/actions/caches?key=PREFIX
&sort=created_at&direction=desc&per_page=100: "key: An explicit key or prefix for identifying the
cache"; each entry's id, key, created_at, last_accessed_at, size_in_bytes; docs.github.com/en/rest/
actions/cache, "List GitHub Actions caches for a repository") and deletes by id (DELETE /repos/
{owner}/{repo}/actions/caches/{cache_id}, 204; ibid., "Delete a GitHub Actions cache for a
repository (using a cache ID)") every entry `superseded` names. The rule, and why it is safe:

* Only keys that are exactly PREFIX followed by `RUNID-ATTEMPT` (digits-digits): the list's key filter
  is a prefix match, and one stream's prefix may begin another's (record-stream-bd- and
  record-stream-bd-2-): those belong to other jobs and are never touched.
* Never the entry just saved (SAVED), and never one created after it: a later run of the same
  stream saved it, and its next job restores it.
* Nothing at all when SAVED is not in the list (the save did not happen, or the list lags): what
  supersedes must be there before anything is deleted.
* Of the older entries, the one this job restored itself (RESTORED, the restore step's
  `cache-matched-key`) goes at once: its restore finished before this job's steps ran. Any other
  older entry goes only when nobody touched it for GRACE_SECONDS: a restore of it may be under way
  in a job this one cannot see (a re-run, a job of another workflow restoring the same prefix).
  GitHub updates `last_accessed_at` when a restore finds the entry, and a restore that takes longer
  than the longest job that restores (45 minutes, the archive job's timeout) has been cancelled with
  its job: GRACE_SECONDS is an hour. Such an entry is deleted by a later job of the stream.

A failure (the API down, a token without `actions: write`) exits 1 and deletes nothing more; the
workflow step is `continue-on-error`, so the job's record and saved database stand, and the health
check's `usage` shows the cache filling.

`usage` prints the sum of `size_in_bytes` over every entry against the 10 GB budget, and the largest
prefixes (GET .../actions/caches, every page), as the health check reads it: one line
`cache: USED bytes of 10000000000 (P%), N entries`, or with --json the figures as one JSON object.

HTTP goes through `gh api` to $GITHUB_API_URL (never a written-in github.com), with the token from
GH_TOKEN. gh 2.23 sends GH_TOKEN only to github.com and GH_ENTERPRISE_TOKEN to any other host, so the
token is given as both: a GitHub Enterprise Server, or the loopback GitHub the tests start, gets it too.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from urllib.parse import quote

BUDGET_BYTES = 10 * 1000**3  # GitHub: "the total size of all caches in a repository is limited to 10 GB"
GRACE_SECONDS = 3600  # longer than the longest job that restores (archive, 45 min): see the docstring
PAGE = 100  # the REST API's largest per_page


def superseded(entries: list[dict], prefix: str, saved: str, restored: str, now: datetime) -> list[dict]:
    """Return the entries of `entries` (the REST list's `actions_caches`) that the save of `saved` supersedes."""
    own = re.compile(re.escape(prefix) + r"\d+-\d+")
    mine = [e for e in entries if own.fullmatch(e["key"])]
    anchor = next((e for e in mine if e["key"] == saved), None)
    if anchor is None:
        return []
    made = _when(anchor["created_at"])
    grace = now - timedelta(seconds=GRACE_SECONDS)
    return [e for e in mine if e["key"] != saved and _when(e["created_at"]) < made
            and (e["key"] == restored or _when(e["last_accessed_at"]) < grace)]


def _when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def _gh(*args: str) -> str:
    api = os.environ.get("GITHUB_API_URL", "").rstrip("/")
    repository = os.environ.get("GITHUB_REPOSITORY", "")
    if not api or not repository:
        raise SystemExit("prune_cache: GITHUB_API_URL and GITHUB_REPOSITORY must be set")
    token = os.environ.get("GH_TOKEN", "")
    env = dict(os.environ, GH_TOKEN=token, GH_ENTERPRISE_TOKEN=token, GH_PROMPT_DISABLED="1", NO_COLOR="1")
    *options, path = args
    done = subprocess.run(["gh", "api", *options, f"{api}/repos/{repository}/actions/{path}"],
                          capture_output=True, text=True, env=env, timeout=120)
    if done.returncode != 0:
        raise SystemExit(f"prune_cache: gh api {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def listed(prefix: str = "") -> list[dict]:
    """Return every cache entry of the repository whose key starts with `prefix`, newest first."""
    found, page = [], 1
    while True:
        query = f"sort=created_at&direction=desc&per_page={PAGE}&page={page}"
        if prefix:
            query += "&key=" + quote(prefix, safe="")
        answer = json.loads(_gh(f"caches?{query}"))
        found.extend(answer["actions_caches"])
        if len(answer["actions_caches"]) < PAGE or len(found) >= answer["total_count"]:
            return found
        page += 1


def prune(prefix: str, saved: str, restored: str = "") -> list[str]:
    """Delete the entries the save of `saved` supersedes; return their keys."""
    gone = superseded(listed(prefix), prefix, saved, restored, datetime.now(timezone.utc))
    for entry in gone:
        _gh("-X", "DELETE", f"caches/{entry['id']}")
    return [e["key"] for e in gone]


def usage() -> dict:
    """Return the repository's cache use: bytes, entries, the budget, and bytes by key prefix."""
    entries = listed()
    by_prefix: dict[str, int] = {}
    for entry in entries:
        head = re.sub(r"\d+-\d+$", "", entry["key"])
        by_prefix[head] = by_prefix.get(head, 0) + entry["size_in_bytes"]
    used = sum(e["size_in_bytes"] for e in entries)
    return {"used_bytes": used, "budget_bytes": BUDGET_BYTES, "entries": len(entries),
            "share": round(used / BUDGET_BYTES, 4), "by_prefix": by_prefix}


def main(argv: list[str]) -> int:
    if argv[:1] == ["prune"] and len(argv) in (3, 4):
        for key in prune(argv[1], argv[2], argv[3] if len(argv) == 4 else ""):
            print(f"deleted {key}")
        return 0
    if argv[:1] == ["usage"] and argv[1:] in ([], ["--json"]):
        figures = usage()
        if argv[1:]:
            print(json.dumps(figures, sort_keys=True))
        else:
            print(f"cache: {figures['used_bytes']} bytes of {BUDGET_BYTES} ({figures['share']:.0%}), "
                  f"{figures['entries']} entries")
        return 0
    print(__doc__.split("\n\n")[0], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
