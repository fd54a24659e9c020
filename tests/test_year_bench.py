"""bench/year.py's small year: every job on a fresh runner, and the record judged against what was served."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_a_small_year_writes_no_false_event_misses_no_change_and_loses_no_article(tmp_path):
    out = tmp_path / "year.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "year.py"), "--hours", "26", "--outlets", "3", "--per-day", "24",
         "--pages-every", "2", "--eventful", "3", "--json", str(out)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    year = json.loads(out.read_text())
    assert {k: v["jobs"] for k, v in year["jobs"].items()} == {"collect": 26, "archive": 26, "pages": 13}
    assert year["failed_jobs"] == []
    assert (year["false_events"], year["missed_changes"], year["articles_lost"]) == (0, 0, 0), done.stdout
    assert year["events"].get("changed", 0) > 0 and year["events"].get("gone", 0) > 0 and year["changes_seen"] > 0
    # The 6-hour outage cost nothing: its articles were captured on later tries.
    assert year["outage_articles"] > 0 and year["outage_lost"] == 0
    assert year["captured_after_retry"] > 0 and year["check_retries"] > 0
    # Across the extractor upgrade, fresh runners read older pages from their release assets.
    assert year["comparisons"].get("release_asset", 0) > 0 and year["warc_downloads"] > 0
    assert year["comparisons_open"] == 0
    for kind, figures in year["jobs"].items():
        assert figures["projected_max"] < figures["timeout_seconds"], (kind, figures)


def _gh(store, *args, token="sim-token"):
    env = {"GH_API": store.base, "GH_TOKEN": token, "PATH": "/usr/bin:/bin"}
    return subprocess.run(["bash", str(ROOT / "testing" / "fake_gh.sh"), *args], capture_output=True, text=True,
                          env=env, timeout=30)


def test_the_years_gh_answers_the_private_repository_check_as_gh_api_does(tmp_path):
    from testing.farm import Farm
    from testing.release_store import FakeReleaseStore

    with Farm() as farm:
        private, public = FakeReleaseStore(farm, token="sim-token"), FakeReleaseStore(farm, repo="open")
        assert _gh(private, "api", "repos/takedownwatch/record", "--jq", ".visibility").stdout == "private\n"
        assert _gh(private, "api", "repos/takedownwatch/record", "--jq", ".private").stdout == "true\n"
        assert json.loads(_gh(private, "api", "repos/takedownwatch/record").stdout)["full_name"] == "takedownwatch/record"
        refused = _gh(private, "api", "repos/takedownwatch/record", "--jq", ".visibility", token="other")
        assert (refused.returncode, refused.stderr) == (1, "gh: Not Found (HTTP 404)\n")
        assert _gh(public, "api", "repos/takedownwatch/open", "--jq", ".visibility").stdout == "public\n"
        # The script every writing job runs first passes against the private store, refuses the public one.
        script = ROOT / ".github" / "scripts" / "require_private.sh"
        for store, name, code in ((private, "takedownwatch/record", 0), (public, "takedownwatch/open", 1)):
            gh = tmp_path / "bin" / "gh"
            gh.parent.mkdir(exist_ok=True)
            gh.write_text(f'#!/bin/sh\nexec bash "{ROOT / "testing" / "fake_gh.sh"}" "$@"\n')
            gh.chmod(0o755)
            env = {"GH_API": store.base, "GH_TOKEN": "sim-token", "PATH": f"{gh.parent}:/usr/bin:/bin"}
            done = subprocess.run(["bash", str(script), name], capture_output=True, text=True, env=env, timeout=30)
            assert done.returncode == code, done.stdout + done.stderr
