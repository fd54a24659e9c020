"""bench/year.py's small year: every job on a fresh runner, its steps read from the workflow files, and the
record judged against what was served. Minutes long: run by `make test-actions` with the Actions scenario
(tests/conftest.py leaves tests/actions out of `make test`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_small_year_writes_no_false_event_misses_no_change_and_loses_no_article(tmp_path):
    out = tmp_path / "year.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "year.py"), "--hours", "26", "--outlets", "3", "--per-day", "24",
         "--pages-every", "4", "--eventful", "3", "--json", str(out)], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    year = json.loads(out.read_text())
    sys.path.insert(0, str(ROOT / "bench"))
    from year import cron

    runs = {kind: 26 // every * len(minutes) for kind, (minutes, every) in
            (("collect", cron("collect.yml")), ("archive", cron("archive.yml")))}  # as the workflows schedule them
    assert {k: v["jobs"] for k, v in year["jobs"].items()} == {**runs, "pages": -(-runs["collect"] // 4)}
    assert year["failed_jobs"] == []
    # Every job ran its workflow's steps that write the database, the record or the cache, in their order: the
    # runner reads them from the workflow files (bench/workflow.py), and skips none (but the rollover from the
    # period before, run only at a period's boundary, which 26 hours do not cross).
    from runner import KINDS
    from workflow import command_writes, writing_steps

    for kind, name in KINDS.items():
        expected = [[step, command] for _, step, command in writing_steps(name)
                    if command != "bash .github/scripts/record_repository.sh seed"]
        ran = [[[step, command] for step, command in sequence if any(map(command_writes, command.split(" ; ")))]
               for sequence in year["steps_run"][kind]]
        assert ran == [expected], (kind, ran, expected)
    # GitHub's cache, modelled: with the prune after every save, no job restored less than its last save.
    cache = year["actions_cache"]
    assert cache["prune"] and cache["misses"] == 0 and 0 < cache["peak_bytes"] <= cache["budget_bytes"]
    assert cache["restores"] == sum(v["jobs"] for v in year["jobs"].values())
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
    # The archive's figures (bench/yeararchive.py): the queue at every archive run, copies within 1 h and 24 h.
    archive = year["archive"]
    assert len(archive["queue"]) == runs["archive"] and archive["queue_max"] > 0 and archive["captures"] > 0
    assert archive["within"]["24h"]["captures"] > 0 and archive["within"]["24h"]["share"] == 1.0, archive["within"]
    assert archive["within"]["1h"]["share"] > 0.5
