"""The scripts reach the GitHub a job runs on from what a runner sets, with Debian's real gh.

A runner sets GITHUB_SERVER_URL, GITHUB_API_URL and GITHUB_REPOSITORY, and the workflows give the
token as GH_TOKEN; it never sets GH_HOST, GH_REPO or GH_ENTERPRISE_TOKEN (docs.github.com, "Variables
reference"). On a GitHub Enterprise Server gh must be told the host, and reads the token for it from
GH_ENTERPRISE_TOKEN ("gh help environment"): .github/scripts/gh_host.sh does both. The loopback GitHub
(testing/github) is such a host; a script that left gh to its github.com default would fail here, as
it would on a GitHub Enterprise Server and as a loopback test may never reach github.com.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from testing.github import LoopbackGitHub

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / ".github" / "scripts"
REPO = "takedownwatch/takedownwatch"

pytestmark = pytest.mark.skipif(shutil.which("gh") is None, reason="Debian's gh is needed (.ci/run installs it)")


def runner_env(github: LoopbackGitHub, token: str, tmp_path: Path, variable: str = "GH_TOKEN",
               **more: str) -> dict[str, str]:
    """Return this process's environment with gh's own variables taken out and a runner's put in."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GH_"))}
    given = github.env()
    for name in ("GITHUB_SERVER_URL", "GITHUB_API_URL", "SSL_CERT_FILE", "GIT_SSL_CAINFO"):
        env[name] = given[name]
    env.update({"GITHUB_REPOSITORY": REPO, variable: token, "HOME": str(tmp_path / "home"),
                "GH_PROMPT_DISABLED": "1", "GH_NO_UPDATE_NOTIFIER": "1", **more})
    return env


def run(script: str, *args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPTS / script), *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def github(tmp_path):
    with LoopbackGitHub(tmp_path / "github") as server:
        yield server


@pytest.mark.parametrize("variable", ["GH_TOKEN", "GITHUB_TOKEN"])  # the steps give gh either (gh help environment)
@pytest.mark.parametrize("visibility, allowed", [("private", True), ("public", False)])
def test_require_private_asks_the_github_the_runner_names(github, tmp_path, visibility, allowed, variable):
    github.create_repository(REPO, visibility, auto_init=True)
    token = github.workflow_token(REPO, {"contents": "read", "metadata": "read"})
    done = run("require_private.sh", REPO, env=runner_env(github, token, tmp_path, variable), cwd=tmp_path)
    assert (done.returncode == 0) is allowed, done.stdout + done.stderr
    if not allowed:
        assert "the GitHub API says it is public" in done.stdout, done.stdout


def test_publish_warc_uploads_to_this_repository_on_the_github_the_runner_names(github, tmp_path):
    repo = github.create_repository(REPO, "private", auto_init=True)
    token = github.workflow_token(REPO, {"contents": "write"})
    warc = tmp_path / "warc" / "2026" / "09" / "01" / "run-000001-001700-aaaa.warc.gz"
    warc.parent.mkdir(parents=True)
    warc.write_bytes(b"WARC/1.1\r\n")
    # An empty folder, no git remote to guess the repository from: GH_REPO comes from GITHUB_REPOSITORY.
    (tmp_path / "elsewhere").mkdir()
    done = run("publish_warc.sh", str(tmp_path / "warc"), env=runner_env(github, token, tmp_path),
               cwd=tmp_path / "elsewhere")
    assert done.returncode == 0, done.stdout + done.stderr
    releases = {r.tag: [a.name for a in r.assets] for r in repo.releases}
    assert releases == {"warc-2026-09-01": ["run-000001-001700-aaaa.warc.gz"]}


def test_a_github_com_runner_leaves_gh_its_defaults(tmp_path):
    """On github.com gh needs no GH_HOST, and reads GH_TOKEN itself: nothing is changed but GH_REPO."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "GH_"))}
    env.update({"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": REPO, "GH_TOKEN": "t"})
    shown = subprocess.run(["bash", "-c", f'source "{SCRIPTS / "gh_host.sh"}"; '
                            'echo "${GH_HOST-unset} ${GH_ENTERPRISE_TOKEN-unset} $GH_REPO"'],
                           env=env, capture_output=True, text=True, check=True).stdout
    assert shown == f"unset unset {REPO}\n"
    env["GITHUB_SERVER_URL"] = "https://ghes.example.org"
    shown = subprocess.run(["bash", "-c", f'source "{SCRIPTS / "gh_host.sh"}"; '
                            'echo "$GH_HOST $GH_ENTERPRISE_TOKEN $GH_REPO"'],
                           env=env, capture_output=True, text=True, check=True).stdout
    assert shown == f"ghes.example.org t ghes.example.org/{REPO}\n"


def _calls_gh(text: str) -> bool:
    return any(re.search(r"(^|[\s;|&($])gh\s", line.split("#", 1)[0]) for line in text.splitlines())


def test_every_script_and_step_that_calls_gh_points_it_at_the_runners_github_first():
    """A `gh` call in a script or a workflow step, with gh_host.sh sourced before it (python scripts give
    gh a full $GITHUB_API_URL address instead: prune_cache.py)."""
    missing = []
    for path in sorted(SCRIPTS.glob("*.sh")):
        text = path.read_text(encoding="utf-8")
        if path.name != "gh_host.sh" and _calls_gh(text):
            first = next(i for i, line in enumerate(text.splitlines()) if _calls_gh(line))
            if not any("gh_host.sh" in line and line.lstrip().startswith("source")
                       for line in text.splitlines()[:first]):
                missing.append(path.name)
    for path in sorted((ROOT / ".github" / "workflows").glob("*.yml")):
        for job in yaml.safe_load(path.read_text(encoding="utf-8"))["jobs"].values():
            for step in job.get("steps", []):
                script = step.get("run", "")
                if _calls_gh(script) and "gh_host.sh" not in script.split("gh ", 1)[0]:
                    missing.append(f"{path.name}: {step.get('name')}")
    assert not missing, missing
