"""health.yml's alerting step (.github/scripts/health_issues.py) against the loopback GitHub (docs/ghserver.md).

One issue per failing check and subject, labelled, in the private repository; a comment when it gets
worse; closed when it clears, reopened when it fails again; never a duplicate, however often it runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from collector.health.checks import FAIL, OK, WARN, Finding
from collector.health.report import as_json
from testing.github import LoopbackGitHub

SCRIPT = Path(__file__).resolve().parents[2] / ".github" / "scripts" / "health_issues.py"
REPO = "takedownwatch/takedownwatch"


def robots(state: str, value: int, outlet: str = "beta") -> Finding:
    return Finding("outlet-robots", outlet, state, value, (2, 3), f"{value} run(s) in a row whose robots.txt "
                   "could not be read")


def gap(state: str, value: float) -> Finding:
    return Finding("schedule-gap", "default/run", state, value, (1.0, 3.0), f"{value} h past the schedule")


def share(state: str, value: float) -> Finding:
    return Finding("schedule-share", "default/run", state, value, (0.75, 0.5), f"{value} of the starts", True)


@pytest.fixture
def github(tmp_path):
    with LoopbackGitHub(tmp_path / "github") as server:
        server.create_repository(REPO, "private", auto_init=True)
        yield server


def alert(github, tmp_path, findings: list[Finding], env: dict | None = None) -> subprocess.CompletedProcess:
    """Return the script's run on this report, as health.yml runs it (the job's token: issues write)."""
    report = tmp_path / "health.json"
    report.write_text(json.dumps(as_json(findings, "2026-09-01T12:00:00Z")))
    token = github.workflow_token(REPO, {"issues": "write", "contents": "read"})
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GH_"))}
    env = env if env is not None else {**base, **github.env(token, REPO), "GH_TOKEN": token,
                                       "GITHUB_REPOSITORY": REPO, "GITHUB_RUN_ID": "42"}
    return subprocess.run([sys.executable, str(SCRIPT), str(report)], env=env, capture_output=True, text=True,
                          timeout=60)


def issues(github) -> list[dict]:
    return github.snapshot()["repositories"][REPO]["issues"]


def test_one_issue_per_failing_check_and_subject_updated_closed_reopened_never_duplicated(github, tmp_path):
    first = [robots(FAIL, 3), robots(OK, 0, "alpha"), gap(FAIL, 3.0), share(WARN, 0.6)]
    done = alert(github, tmp_path, first)
    assert done.returncode == 0, done.stderr
    opened = issues(github)
    assert [(i["title"], i["state"]) for i in opened] == [
        ("health: outlet-robots failing for beta", "open"), ("health: schedule-gap failing for default/run", "open")]
    assert opened[0]["labels"] == ["health", "health:outlet-robots"]
    assert f"{github.base}/{REPO}/blob/HEAD/docs/health.md#outlet-robots" in opened[0]["body"]
    assert "beta" not in done.stdout and "default/run" not in done.stdout  # the job's log names no subject

    assert alert(github, tmp_path, first).stdout == ""  # the same report again: nothing to do
    assert issues(github) == opened

    worse = [robots(FAIL, 5), gap(FAIL, 3.0), share(FAIL, 0.4)]
    assert alert(github, tmp_path, worse).returncode == 0
    now = issues(github)
    assert len(now) == 3 and now[2]["title"] == "health: schedule-share failing for default/run"
    assert now[0]["comments"] == [f"Worse: 5 run(s) in a row whose robots.txt could not be read\n\n"
                                  f"{github.base}/{REPO}/actions/runs/42"]
    assert now[1]["comments"] == []  # the gap is no worse
    assert alert(github, tmp_path, [robots(FAIL, 4), gap(FAIL, 3.0), share(FAIL, 0.45)]).stdout == ""  # better

    cleared = [robots(OK, 0), gap(FAIL, 3.0), share(OK, 0.8)]
    done = alert(github, tmp_path, cleared)
    assert done.stdout.splitlines() == ["closed #1 (outlet-robots)", "closed #3 (schedule-share)"]
    assert [i["state"] for i in issues(github)] == ["closed", "open", "closed"]
    assert alert(github, tmp_path, cleared).stdout == ""

    # A report of other checks alone (`health --check ...`) closes nothing it did not judge.
    assert alert(github, tmp_path, [Finding("storage-database", "work.db", OK, 0.1, (0.8, 0.95), "")]).stdout == ""

    again = alert(github, tmp_path, [robots(FAIL, 3), gap(OK, 0.0)])
    assert again.stdout.splitlines() == ["reopened #1 (outlet-robots)", "closed #2 (schedule-gap)"]
    assert [i["state"] for i in issues(github)] == ["open", "closed", "closed"]
    assert len(issues(github)) == 3


def test_it_talks_to_the_api_it_is_given_never_to_github_com(github, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GH_"))}
    env.update(GH_TOKEN="t", GITHUB_REPOSITORY=REPO, GITHUB_SERVER_URL=github.base)
    done = alert(github, tmp_path, [robots(FAIL, 3)], env=env)
    assert done.returncode != 0 and "GITHUB_API_URL" in done.stderr
    assert "github.com" not in SCRIPT.read_text(encoding="utf-8").replace("docs.github.com", "")
