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
    sys.path.insert(0, str(ROOT / "bench"))
    from year import cron

    runs = {kind: 26 // every * len(minutes) for kind, (minutes, every) in
            (("collect", cron("collect.yml")), ("archive", cron("archive.yml")))}  # as the workflows schedule them
    assert {k: v["jobs"] for k, v in year["jobs"].items()} == {**runs, "pages": -(-runs["collect"] // 2)}
    assert year["failed_jobs"] == []
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


def test_the_judge_counts_a_capture_answered_404_while_the_page_was_away_apart_and_a_false_404_as_lost():
    """An article taken down before its first capture and back later is, by the method, answered (a 404 is never
    tried again): not lost. A 404 the outlet did not serve, or no capture at all, is a loss."""
    import sqlite3
    from datetime import datetime, timedelta, timezone

    sys.path.insert(0, str(ROOT / "bench"))
    from yearjudge import lost_articles

    from collector.clock import iso
    from testing.farm import Farm
    from testing.newsroom import Newsroom, Odds

    start = datetime(2026, 9, 1, tzinfo=timezone.utc)
    collections = [start + timedelta(hours=h, minutes=20) for h in range(24)]
    with Farm() as farm:
        room = Newsroom(farm, 1, 6, start, 1, odds=Odds(**{k: 0.0 for k in vars(Odds())}))
        away, false_404, never = [s for s in room.outlets[0].stories if s.published < start + timedelta(hours=18)][:3]
        away.away = (away.published + timedelta(minutes=1), away.published + timedelta(hours=3))
        conn = sqlite3.connect(":memory:")
        conn.executescript("CREATE TABLE articles (id INTEGER PRIMARY KEY, url TEXT);"
                           "CREATE TABLE snapshots (id INTEGER PRIMARY KEY, article_id INT, purpose TEXT);"
                           "CREATE TABLE capture_attempts (article_id INT, attempted_at TEXT, result TEXT);")
        for number, story in enumerate(room.outlets[0].stories, 1):
            conn.execute("INSERT INTO articles VALUES (?, ?)", (number, story.outlet.base + story.path))
            if story is away or story is false_404:  # its capture, at the first collection after it appeared
                when = next(t for t in collections if t > story.published + timedelta(minutes=2))
                conn.execute("INSERT INTO capture_attempts VALUES (?, ?, 'not_found')", (number, iso(when)))
            elif story is not never:
                conn.execute("INSERT INTO snapshots (article_id, purpose) VALUES (?, 'capture')", (number,))
        verdict = lost_articles(conn, room, collections, None)
    numbers = lambda lines: sorted(int(line.split("/")[1].split()[0]) for line in lines)  # noqa: E731
    assert verdict["absent_at_capture"] == 1 and numbers(verdict["absent"]) == [away.number]
    assert verdict["articles_lost"] == 2 and numbers(verdict["lost"]) == sorted([false_404.number, never.number])


def test_the_years_schedule_reads_an_hourly_cron_and_a_list_of_minutes():
    import random

    sys.path.insert(0, str(ROOT / "bench"))
    from year import START, cron, parse_cron, schedule

    assert parse_cron("17 * * * *") == ([17], 1)
    assert parse_cron("7,22,37,52 * * * *") == ([7, 22, 37, 52], 1)
    assert parse_cron("*/20 * * * *") == ([0, 20, 40], 1) and parse_cron("5 */2 * * *") == ([5], 2)
    for line in ("61 * * * *", "17 3 * * *", "17 * * * 1"):
        try:
            parse_cron(line)
        except ValueError:
            continue
        raise AssertionError(line)
    assert cron("collect.yml")[1] == 1 and cron("archive.yml")[1] == 1  # the workflows' own, as they are
    jobs = schedule(3, random.Random(1), pages_every=2,
                    crons={"collect": ([7, 22, 37, 52], 1), "archive": ([47], 1)})
    collects = [when for when, kind in jobs if kind == "collect"]
    assert len(collects) == 12 and sum(kind == "archive" for _, kind in jobs) == 3
    assert sum(kind == "pages" for _, kind in jobs) == 6
    # Each listed minute is a collection of its own, a few minutes late as scheduled jobs start.
    assert sorted({(w - START).seconds // 60 // 15 for w in collects}) == list(range(12))
    assert all(60 <= ((w - START).total_seconds() - 60 * (15 * i + 7)) <= 300 for i, w in enumerate(collects))
