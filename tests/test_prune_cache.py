"""The Actions cache's budget: every job that saves a database deletes what its save supersedes, and only that.

The script is run with Debian's real `gh` against a loopback GitHub (testing/release_store.py with the
caches endpoints of testing/cache_api.py, written from GitHub's REST documentation)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from testing.farm import Farm
from testing.release_store import FakeReleaseStore

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / ".github" / "scripts" / "prune_cache.py"
WORKFLOWS = ROOT / ".github" / "workflows"
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc)
GH = shutil.which("gh", path="/usr/bin")


def _script():
    spec = importlib.util.spec_from_file_location("prune_cache", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _entry(key: str, minutes_ago: int, accessed_ago: int | None = None) -> dict:
    stamp = lambda m: (NOW - timedelta(minutes=m)).strftime("%Y-%m-%dT%H:%M:%S.000Z")  # noqa: E731
    return {"id": hash(key) % 10**6, "key": key, "created_at": stamp(minutes_ago), "size_in_bytes": 1,
            "last_accessed_at": stamp(minutes_ago if accessed_ago is None else accessed_ago)}


def test_a_save_supersedes_its_own_prefixs_older_entries_and_nothing_another_job_may_need():
    superseded = _script().superseded
    entries = [_entry("record-db-900-1", 0), _entry("record-db-800-1", 15, 14), _entry("record-db-700-1", 180),
               _entry("record-db-950-1", -5),                       # saved after this one, by a later run
               _entry("record-db-600-2", 300, 10),                  # restored 10 minutes ago by someone
               _entry("record-db-extra-500-1", 400),                # another prefix that begins with this one
               _entry("record-db-400-1-x", 500)]                    # not a RUNID-ATTEMPT key
    gone = {e["key"] for e in superseded(entries, "record-db-", "record-db-900-1", "record-db-800-1", NOW)}
    assert gone == {"record-db-800-1", "record-db-700-1"}
    # The entry it restored itself goes even though it was touched minutes ago; without it, it stays.
    assert {e["key"] for e in superseded(entries, "record-db-", "record-db-900-1", "", NOW)} == {"record-db-700-1"}
    # A save that is not in the list (it failed, or the list lags) deletes nothing.
    assert superseded(entries, "record-db-", "record-db-901-1", "record-db-800-1", NOW) == []


def _run(store: Farm, tmp_path: Path, *args: str, token: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GH_TOKEN": token,
           "GITHUB_API_URL": store.api.url(""), "GITHUB_REPOSITORY": "takedownwatch/record"}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.skipif(GH is None, reason="Debian's gh is not installed")
def test_prune_deletes_through_the_real_gh_with_an_actions_write_token_alone(tmp_path):
    with Farm() as farm:
        store = FakeReleaseStore(farm, token="contents-token", actions_token="actions-token")
        now = datetime.now(timezone.utc)
        for key, hours in (("record-db-1-1", 5), ("record-db-2-1", 3), ("record-db-3-1", 0.5),
                           ("record-stream-x-3-1", 4), ("record-db-4-1", 0)):
            store.caches.save(key, 1000, now - timedelta(hours=hours))
        # A token without actions: write is refused (403) and the script says so; nothing is deleted.
        refused = _run(store, tmp_path, "prune", "record-db-", "record-db-4-1", "record-db-3-1", token="contents-token")
        assert refused.returncode == 1 and "403" in refused.stderr + refused.stdout, refused
        assert len(store.caches.keys()) == 5
        done = _run(store, tmp_path, "prune", "record-db-", "record-db-4-1", "record-db-3-1", token="actions-token")
        assert done.returncode == 0, done.stderr
        assert store.caches.keys() == {"record-db-4-1", "record-stream-x-3-1"}
        assert sorted(done.stdout.split()) == ["deleted", "deleted", "deleted", "record-db-1-1", "record-db-2-1",
                                               "record-db-3-1"]
        # gh went to the loopback API the environment named, with the token, and asked by key prefix.
        asked = [s for s in store.api.seen if "/actions/caches" in s.path and s.method == "GET"]
        assert asked[1].path.endswith("&key=record-db-") and asked[1].headers["Authorization"] == "token actions-token"
        usage = _run(store, tmp_path, "usage", "--json", token="contents-token")
        figures = json.loads(usage.stdout)
        assert (figures["used_bytes"], figures["entries"], figures["budget_bytes"]) == (2000, 2, 10 * 1000**3)
        assert figures["by_prefix"] == {"record-db-": 1000, "record-stream-x-": 1000}
        assert _run(store, tmp_path, "usage", token="contents-token").stdout == \
            "cache: 2000 bytes of 10000000000 (0%), 2 entries\n"


def _load(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["collect.yml", "archive.yml", "pages.yml", "vantages.yml", "rebuild-database.yml"])
def test_every_cache_save_is_followed_by_the_prune_of_its_prefix_with_actions_write_in_that_job(name):
    for job_name, job in _load(name)["jobs"].items():
        steps = job.get("steps", [])
        saves = [i for i, s in enumerate(steps) if s.get("uses", "").startswith("actions/cache/save@")]
        prunes = [i for i, s in enumerate(steps) if "prune_cache.py prune" in s.get("run", "")]
        assert prunes == [i + 1 for i in saves], (name, job_name)
        assert (job.get("permissions", {}).get("actions") == "write") == bool(saves), (name, job_name)
        for i in saves:
            save, prune = steps[i], steps[i + 1]
            assert prune["env"]["SAVED"] == save["with"]["key"]
            assert save["with"]["key"] == prune["env"]["PREFIX"] + "${{ github.run_id }}-${{ github.run_attempt }}"
            assert prune["env"]["GH_TOKEN"] == "${{ github.token }}" and prune.get("if") == save.get("if")
            assert prune["continue-on-error"] is True
            restored = prune["env"].get("RESTORED")
            if restored:  # the entry this job restored, of this very prefix
                restore = next(s for s in steps if s.get("id") == restored.split(".")[1])
                assert restore["with"]["restore-keys"] == prune["env"]["PREFIX"]
        # No other step of the job is handed the token for the cache's sake: the prune runs only gh api.
        assert all("prune_cache" not in s.get("run", "") for k, s in enumerate(steps) if k not in prunes)


def test_the_script_reaches_github_through_the_api_url_it_is_given():
    text = SCRIPT.read_text(encoding="utf-8")
    assert "GITHUB_API_URL" in text and "https://api.github.com" not in text
    assert os.access(SCRIPT, os.R_OK)
