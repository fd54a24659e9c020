"""The external trigger (.github/scripts/dispatch_collect.py) against the loopback GitHub's dispatch endpoint."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testing.github import LoopbackGitHub

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / ".github" / "scripts" / "dispatch_collect.py"
REPO = "takedownwatch/takedownwatch"


@pytest.fixture
def github(tmp_path):
    """Return the loopback GitHub, the repository holding this checkout's collect.yml on main."""
    with LoopbackGitHub(tmp_path / "github") as server:
        repo = server.create_repository(REPO, "private", auto_init=True)
        work = tmp_path / "clone"
        subprocess.run(["git", "clone", "-q", str(repo.git), str(work)], check=True)
        (work / ".github" / "workflows").mkdir(parents=True)
        shutil.copy(ROOT / ".github" / "workflows" / "collect.yml", work / ".github" / "workflows")
        git = ["git", "-C", str(work), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
        subprocess.run([*git, "add", "."], check=True)
        subprocess.run([*git, "commit", "-qm", "workflows"], check=True)
        subprocess.run([*git, "push", "-q", "origin", "HEAD:main"], check=True)
        yield server


def trigger(github, token: str | None, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GH_", "TAKEDOWNWATCH_"))}
    env.update({"SSL_CERT_FILE": github.env()["SSL_CERT_FILE"]})
    if token:
        env["TAKEDOWNWATCH_DISPATCH_TOKEN"] = token
    return subprocess.run([sys.executable, str(SCRIPT), "--api", github.api_url, "--repository", REPO, *args],
                          env=env, capture_output=True, text=True, timeout=60)


def dispatches(github) -> list[dict]:
    return github.snapshot()["repositories"][REPO]["dispatches"]


def test_a_token_with_actions_write_on_this_repository_starts_collect(github):
    narrow = github.workflow_token(REPO, {"actions": "write"})  # as a fine-grained token or an app token
    done = trigger(github, narrow)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"dispatched collect.yml on main of {REPO}\n"
    assert [(d["workflow"], d["ref"]) for d in dispatches(github)] == [("collect.yml", "main")]
    assert narrow not in done.stdout + done.stderr


@pytest.mark.parametrize("case", ["no actions permission", "another repository's token", "no such workflow"])
def test_a_refused_dispatch_fails_saying_why(github, case):
    github.create_repository("takedownwatch/other", "private", auto_init=True)
    token, args = {
        "no actions permission": (github.workflow_token(REPO, {"contents": "write"}), ()),
        "another repository's token": (github.workflow_token("takedownwatch/other", {"actions": "write"}), ()),
        "no such workflow": (github.workflow_token(REPO, {"actions": "write"}), ("--workflow", "gone.yml")),
    }[case]
    done = trigger(github, token, *args)
    assert done.returncode == 1 and "GitHub refused the dispatch" in done.stderr, done.stderr
    assert dispatches(github) == []


def test_without_a_token_or_an_address_it_asks_nothing(github):
    done = trigger(github, None)
    assert done.returncode == 2 and "a token" in done.stderr
    assert dispatches(github) == []
