"""`python -m collector browse --repo OWNER/NAME` against the loopback GitHub (testing/github, docs/ghserver.md).

The reader's credentials are gh's: a hosts.yml in a GH_CONFIG_DIR of the
test's own (what `gh auth login` writes; gh 2.23 will not log in to a host
with a port, so the file is written as it would be). The record repositories
are private, the WARC file is an asset of the code repository's release, and
Datasette is the app object, in-process (tests/browse/conftest.py).
"""

from __future__ import annotations

import base64
import json
import shutil
import ssl
import subprocess
import urllib.request
from datetime import datetime, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from collector.cli.browse import datasette_env
from collector.cli.main import cli
from collector.net.github import server_from_env
from collector.record import rollover
from collector.record.export import export_new
from collector.record.store import Store
from testing.github import LoopbackGitHub
from tests.browse import record
from tests.browse.conftest import Browser

CODE = "newsroom/takedownwatch"
FIRST, SECOND = f"{CODE}-record-2026-07", f"{CODE}-record-2027-01"
JAGO = "https://www.jagonews24.com/country/news/1146758"


class World:
    """The loopback GitHub with the project's repositories, a writer of the record, and the reader's gh."""

    def __init__(self, github: LoopbackGitHub, tmp: Path):
        self.github, self.tmp = github, tmp
        self.token = github.user_token("reader", owns=["newsroom"])
        for name in (CODE, FIRST):
            github.create_repository(name, "private", auto_init=True)
        self.found = record.build(tmp / "writer.db", tmp / "warc")
        self.store = Store(tmp / "writer.db")
        self.gh_config = tmp / "gh-config"
        self.gh_config.mkdir()
        (self.gh_config / "hosts.yml").write_text(
            f"{github.host}:\n    oauth_token: {self.token}\n    user: reader\n    git_protocol: https\n")

    def env(self, **more) -> dict[str, str]:
        """The reader's environment: where GitHub is, its CA, gh's config; no token in a variable."""
        return {**self.github.env(), "GH_TOKEN": "", "GH_ENTERPRISE_TOKEN": "", "GITHUB_TOKEN": "",
                "GH_CONFIG_DIR": str(self.gh_config), **more}

    def git(self, *args, cwd: Path | None = None) -> str:
        basic = base64.b64encode(f"x:{self.token}".encode()).decode()
        done = subprocess.run(["git", "-c", f"http.{self.github.base}/.extraheader=AUTHORIZATION: basic {basic}",
                               "-c", "user.name=w", "-c", "user.email=w@example.invalid", *args], cwd=cwd,
                              env=self.github.process_env(), capture_output=True, text=True, check=True)
        return done.stdout

    def write(self, repository: str, when: datetime, continues: str | None = None) -> None:
        """A writing job: clone the repository, export the new rows (rolling over first), commit and push."""
        work = self.tmp / f"job-{when:%Y%m%d%H%M}"
        self.git("clone", "--quiet", f"{self.github.base}/{repository}.git", str(work))
        if continues:
            before = self.tmp / f"job-before-{when:%Y%m%d%H%M}"
            self.git("clone", "--quiet", f"{self.github.base}/{continues}.git", str(before))
            rollover.seed(before, work, continues, when)
        assert export_new(self.store, work, now=when).path is not None
        self.git("add", "-A", cwd=work)
        self.git("commit", "--quiet", "-m", f"record: {when:%Y-%m-%d}", cwd=work)
        self.git("push", "--quiet", "origin", "HEAD", cwd=work)

    def new_run(self, when: datetime) -> None:
        self.store.insert("runs", {"command": "run", "started_at": when.isoformat(), "vantage": "test",
                                   "software_version": "0.1.0", "settings": "{}"})

    def publish_warc(self) -> None:
        """The day's release of the code repository, with the WARC file as its asset (publish_warc.sh's)."""
        context = ssl.create_default_context(cafile=str(self.github.ca_bundle))
        headers = {"Authorization": f"Bearer {self.token}", "Accept": "application/vnd.github+json"}
        made = urllib.request.Request(f"{self.github.api_url}/repos/{CODE}/releases", method="POST",
                                      data=json.dumps({"tag_name": record.RELEASE_TAG}).encode(), headers=headers)
        release = json.load(urllib.request.urlopen(made, context=context))
        upload = release["upload_url"].split("{")[0] + f"?name={Path(self.found['warc_file']).name}"
        urllib.request.urlopen(urllib.request.Request(
            upload, method="POST", data=self.found["warc_bytes"],
            headers={**headers, "Content-Type": "application/octet-stream"}), context=context)


@pytest.fixture
def world(tmp_path):
    with LoopbackGitHub(tmp_path / "github") as github:
        made = World(github, tmp_path)
        yield made
        made.store.close()


def browse(world: World, *args: str, **env) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["browse", "--repo", CODE, "--dir", str(world.tmp / "reader"), "--no-serve",
                                      *args], env=world.env(**env))
    return result.exit_code, result.output


def runs(db: Path) -> int:
    store = Store(db)
    try:
        return store.conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    finally:
        store.close()


def test_it_clones_follows_incrementally_across_periods_and_reads_pages_through_the_api(world, monkeypatch):
    world.write(FIRST, datetime(2026, 8, 14, tzinfo=timezone.utc))
    world.publish_warc()
    code, out = browse(world, "--now", "2026-09-01T00:00:00Z")
    assert code == 0, out
    assert f"cloning {FIRST}" in out and "(default) 1" in out
    db = world.tmp / "reader" / "takedownwatch.db"
    assert runs(db) == 1

    # A new period: its first job rolls over and exports; the reader's next run finds it by the clock
    # and the period before by its CONTINUES.json, fetches (not clones) that one, reads only the new file.
    world.github.create_repository(SECOND, "private", auto_init=True)
    world.new_run(datetime(2027, 1, 1, 0, 7, tzinfo=timezone.utc))
    world.write(SECOND, datetime(2027, 1, 1, 0, 10, tzinfo=timezone.utc), continues=FIRST)
    code, out = browse(world, "--now", "2027-01-02T00:00:00Z")
    assert code == 0, out
    assert f"cloning {SECOND}" in out and f"fetching {FIRST}" in out and f"{FIRST}: no new commit" in out
    assert "(default) 1" in out and "merged anew" not in out  # the copied file is the one it was in sync with
    assert runs(db) == 2

    world.new_run(datetime(2027, 1, 1, 0, 22, tzinfo=timezone.utc))
    world.write(SECOND, datetime(2027, 1, 1, 0, 25, tzinfo=timezone.utc))
    code, out = browse(world, "--now", "2027-01-02T00:00:00Z")
    assert code == 0, out
    assert f"{SECOND}: 1 new commits" in out and "(default) 1" in out
    assert runs(db) == 3

    # The page as captured: no WARC file here, so it is read from the private release through the API.
    env = datasette_env(server_from_env(world.env()), world.token, CODE, None)
    for name, value in {**world.github.env(), **env}.items():
        monkeypatch.setenv(name, value)
    browser = Browser([db])
    try:
        page = browser.get("/takedownwatch/-/captured/3/page")
        assert page.status_code == 200 and page.content == record.pages()[JAGO][2]
        frame = browser.get("/takedownwatch/-/captured/3")
        assert f"release {record.RELEASE_TAG}" in frame.text and "have this SHA-256" in frame.text
        assert world.token not in browser.get("/-/metadata.json").text  # $env is never shown
        monkeypatch.setenv("TAKEDOWNWATCH_GITHUB_TOKEN", "")  # without the token the private asset is not found
        assert browser.get("/takedownwatch/-/captured/4/page").status_code == 404
    finally:
        browser.close()


def test_without_gh_a_login_or_access_it_says_what_to_do(world, tmp_path):
    only_git = tmp_path / "bin"
    only_git.mkdir()
    (only_git / "git").symlink_to(shutil.which("git"))
    code, out = browse(world, PATH=str(only_git))
    assert code == 1 and "gh (GitHub's command line" in out
    empty = tmp_path / "empty-gh"
    empty.mkdir()
    code, out = browse(world, GH_CONFIG_DIR=str(empty))
    assert code == 1 and f"gh is not logged in to {world.github.host}" in out and "GH_ENTERPRISE_TOKEN" in out
    code, out = browse(world, GH_ENTERPRISE_TOKEN="ghp_not_a_token")
    assert code == 1 and "401 Bad credentials" in out
    stranger = world.github.user_token("stranger")
    code, out = browse(world, GH_ENTERPRISE_TOKEN=stranger)  # gh prefers the variable to hosts.yml
    assert code == 1 and f"{CODE} is not on {world.github.host}, or your account may not read it" in out
    assert "Ask the people who run it for read access" in out
    assert not (tmp_path / "reader" / "takedownwatch.db").exists()
    code, out = browse(world, "--repo", "not a name")
    assert code == 2 and "OWNER/NAME" in out
