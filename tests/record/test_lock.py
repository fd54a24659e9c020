"""One writer per database: a second command waits or stops before any request, and a killed holder blocks nothing.

Every case runs the real command (`python -m collector ...`) in two processes
against a loopback outlet served from this process.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from collector.cli.options import BUSY_EXIT_CODE
from collector.record.lock import lock_path
from testing import replica
from testing.farm import Reply

ROOT = Path(__file__).resolve().parents[2]
NOW = replica.FEED_SNAPSHOT_TIME.isoformat()


def slow_robots(seconds: float):
    """Return a route that answers robots.txt 404 after `seconds`: a run that holds the lock a while."""

    def route(handler):
        time.sleep(seconds)
        return Reply(404, b"", content_type="text/plain")

    return route


@pytest.fixture
def outlet(farm, tmp_path):
    host = farm.add({"/": Reply(200, replica.homepage("/rss/rss.xml"))})
    host.routes["/rss/rss.xml"] = Reply(200, replica.moved_feed("bd24live", host.base),
                                        content_type="application/rss+xml")
    registry = tmp_path / "outlets.toml"
    registry.write_text(replica.registry_toml({"bd24live": host}), encoding="utf-8")
    return host, registry


def start(tmp_path: Path, registry: Path, *args: str) -> subprocess.Popen:
    """Start `python -m collector ARGS` on the test's database."""
    command = [sys.executable, "-m", "collector", *args, "--db", str(tmp_path / "r.db")]
    if args[0] in ("run", "archive"):
        command += ["--warc-dir", str(tmp_path / "warc"), "--outlets", str(registry), "--now", NOW]
    if args[0] == "run":
        command += ["--min-interval", "0.05"]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_until_held(process: subprocess.Popen, db: Path, timeout: float = 60) -> None:
    """Return once the lock file names `process` as its holder."""
    give_up = time.monotonic() + timeout
    while time.monotonic() < give_up:
        try:
            if json.loads(lock_path(db).read_text() or "{}").get("pid") == process.pid:
                return
        except (OSError, ValueError):
            pass
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    raise AssertionError("the first run never took the lock")


def runs_in(db: Path) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT id, command FROM runs ORDER BY id").fetchall()
    finally:
        conn.close()


@pytest.mark.parametrize("second", [("run",), ("archive", "--base-url", "http://127.0.0.1:9"),
                                    ("export", "new", "--out", "record")])
def test_a_second_writer_stops_before_any_request_with_a_clear_message(outlet, tmp_path, second):
    host, registry = outlet
    host.routes["/robots.txt"] = slow_robots(4)
    first = start(tmp_path, registry, "run")
    wait_until_held(first, tmp_path / "r.db")
    while not host.seen:  # the first run is waiting for its robots.txt
        time.sleep(0.05)
    seen = len(host.seen)
    args = list(second)
    if args[0] == "export":
        args[3] = str(tmp_path / "record")
    other = start(tmp_path, registry, *args, "--lock-wait", "0")
    out, err = other.communicate(timeout=60)
    assert other.returncode == BUSY_EXIT_CODE, out + err
    assert f"in use by `run` (process {first.pid}" in err and "Nothing was sent or written" in err
    assert len(host.seen) == seen  # the second sent nothing
    assert first.wait(timeout=60) == 0, first.communicate()
    assert [command for _id, command in runs_in(tmp_path / "r.db")] == ["run"]
    assert not (tmp_path / "record").exists()


def test_a_second_run_that_may_wait_runs_after_the_first(outlet, tmp_path):
    host, registry = outlet
    host.routes["/robots.txt"] = slow_robots(2)
    first = start(tmp_path, registry, "run")
    wait_until_held(first, tmp_path / "r.db")
    second = start(tmp_path, registry, "run", "--lock-wait", "60")
    assert second.wait(timeout=90) == 0, second.communicate()
    assert first.wait(timeout=60) == 0
    assert runs_in(tmp_path / "r.db") == [(1, "run"), (2, "run")]
    # The second run's first request came after the first run's slow robots.txt was answered.
    robots = sorted(s.at for s in host.seen if s.path == "/robots.txt")
    assert len(robots) == 2 and robots[1] - robots[0] >= 2


def test_a_lock_left_by_a_killed_run_does_not_block_the_next(outlet, tmp_path):
    host, registry = outlet
    host.routes["/robots.txt"] = slow_robots(30)
    killed = start(tmp_path, registry, "run")
    wait_until_held(killed, tmp_path / "r.db")
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait(timeout=30)
    assert json.loads(lock_path(tmp_path / "r.db").read_text())["pid"] == killed.pid  # the file is still there
    host.routes["/robots.txt"] = Reply(404, b"", content_type="text/plain")
    began = time.monotonic()
    next_run = start(tmp_path, registry, "run", "--lock-wait", "0")
    out, err = next_run.communicate(timeout=90)
    assert next_run.returncode == 0, out + err
    assert time.monotonic() - began < 60
    assert [command for _id, command in runs_in(tmp_path / "r.db")][-1] == "run"
