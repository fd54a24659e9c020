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
        [sys.executable, str(ROOT / "bench" / "year.py"), "--hours", "30", "--outlets", "3", "--per-day", "24",
         "--eventful", "3", "--json", str(out)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    year = json.loads(out.read_text())
    assert {k: v["jobs"] for k, v in year["jobs"].items()} == {"collect": 30, "archive": 30, "pages": 30}
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
