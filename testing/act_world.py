"""The world the workflows run in under act (testing/act.py): a loopback GitHub, outlets, authorities.

- The loopback GitHub (testing/github, docs/ghserver.md): the code repository OWNER/NAME, private,
  holding this checkout's files as one commit on `main` with data/outlets.toml naming the loopback
  outlets and data/trust/ naming the loopback time-stamping authorities and the test record key's
  public half; this period's record repository OWNER/NAME-record-YYYY; a GitHub App installed on OWNER
  (contents and administration write), whose id and private key are the repository variable
  TAKEDOWNWATCH_APP_ID and the secret TAKEDOWNWATCH_APP_KEY.
- The outlets: loopback hosts of testing/farm.py serving replica homepages, feeds (testing/replica.py,
  dates moved to now and cut to a few items) and article pages.
- The time-stamping authorities: testing/trust.py's two FakeTsa; Save Page Now: testing/fake_spn.py.

Each job gets a `github.token` with its own `permissions:` (the workflow file's), and a runtime token
(ACTIONS_RUNTIME_TOKEN, act's JWT shape with its `scp` claim, so that act's artifact server reads it)
that the loopback GitHub's cache service accepts for this repository alone.

gh: Debian's /usr/bin/gh, as the runner's PATH finds it. A job gets what a runner sets and no more:
GITHUB_SERVER_URL, GITHUB_API_URL, GITHUB_REPOSITORY, never GH_HOST, GH_REPO or GH_ENTERPRISE_TOKEN.
The scripts point gh at the GitHub the job runs on themselves (.github/scripts/gh_host.sh: for a host
other than github.com gh 2.23 reads GH_ENTERPRISE_TOKEN, docs/ghserver.md), as they must on a GitHub
Enterprise Server; a script that forgot would ask github.com, which no loopback job can reach.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from testing import act, replica
from testing.fake_spn import FakeSPN
from testing.farm import Farm, Reply
from testing.github import LoopbackGitHub
from testing.trust import make_trust

APP_ID = 424242
CLIENT_ID = "Iv1.actstandin0001"
FEED_ITEMS = 3  # articles per outlet feed: enough for two shards, few enough for a quick run


def short_feed(body: bytes, items: int) -> bytes:
    """Return an RSS feed keeping its first `items` items."""
    parts = re.split(rb"(?=<item[ >])", body)
    head, rest = parts[0], parts[1:]
    if not rest:
        return body
    tail = rest[-1][rest[-1].index(b"</item>") + len(b"</item>"):]
    kept = [p[:p.index(b"</item>") + len(b"</item>")] for p in rest[:items]]
    return head + b"".join(kept) + tail


def job_permissions(workflow: str, job: str | None) -> dict[str, str]:
    """Return the permissions of `job` in the workflow file, or the union of its jobs' when None."""
    jobs = yaml.safe_load((act.WORKFLOWS / workflow).read_text(encoding="utf-8"))["jobs"]
    chosen = [jobs[job]] if job else list(jobs.values())
    levels = {"read": 1, "write": 2}
    found: dict[str, str] = {}
    for one in chosen:
        for name, level in (one.get("permissions") or {}).items():
            if levels.get(level, 0) > levels.get(found.get(name, ""), 0):
                found[name] = level
    return found


def runtime_token(run_id: int) -> str:
    """Return a token of act's shape (nektos/act pkg/common/auth.go): a JWT whose scp names the run."""
    part = lambda v: base64.urlsafe_b64encode(json.dumps(v).encode()).rstrip(b"=").decode()  # noqa: E731
    return ".".join([part({"alg": "HS256", "typ": "JWT"}),
                     part({"scp": f"Actions.Results:{run_id}:{run_id}", "ac": "[]"}), "unsigned"])


class World:
    """Everything a scenario's runs share; `run` runs one workflow and returns act's Run."""

    def __init__(self, root: Path, owner: str = "takedownwatch", name: str = "takedownwatch",
                 outlets: int = 2, now: datetime | None = None):
        self.root, self.owner = root, owner
        self.repository = f"{owner}/{name}"
        self.now = now or datetime.now(timezone.utc)
        self.farm = Farm()
        self.hosts = {}
        for index in range(outlets):
            host = self.farm.add()
            outlet = f"replica{index + 1}"
            host.routes.update({
                "/robots.txt": Reply(404),
                "/": Reply(200, replica.homepage("/feed/")),
                "/feed/": Reply(200, short_feed(replica.shifted_feed("bd24live", host.base, self.now), FEED_ITEMS),
                                content_type="application/rss+xml"),
                "/*": replica.article_route(replica.article_page(), host.base)})
            self.hosts[outlet] = host
        self.trust = make_trust(root / "trust", self.farm)
        self.spn = FakeSPN(self.farm, polls=1)
        # SSL_CERT_FILE and REQUESTS_CA_BUNDLE replace the system's store: the bundle keeps it too, for
        # the workflows' `pip install` through this machine's package index.
        system = [p for p in (Path("/etc/ssl/certs/ca-certificates.crt"),) if p.exists()]
        self.github = LoopbackGitHub(root / "github", extra_cas=system).start()
        self.code = root / "code"
        self.periods = self.record_names()
        self.github.create_repository(self.repository, "private")
        self.github.create_repository(self.periods["current"], "private", auto_init=True)
        self.maintainer = self.github.user_token("maintainer", owns=[owner])
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.app_key = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                         serialization.NoEncryption()).decode()
        public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                               serialization.PublicFormat.SubjectPublicKeyInfo)
        self.github.register_app(APP_ID, public, CLIENT_ID)
        self.github.install(APP_ID, owner, {"contents": "write", "administration": "write"})
        self.variables = {"TAKEDOWNWATCH_APP_ID": CLIENT_ID, "TAKEDOWNWATCH_FIRST_PERIOD": self.periods["label"]}
        self.secrets = {"TAKEDOWNWATCH_APP_KEY": self.app_key}
        self.signing = {"RECORD_SIGNING_KEY": self.trust.key.read_text()}
        self.run_id = 1000
        self._push_code()

    def record_names(self, now: str | None = None) -> dict[str, str]:
        """Return the record repositories' names, as `export repositories` prints them (at `now`)."""
        done = subprocess.run([sys.executable, "-m", "collector", "export", "repositories", "--prefix",
                               self.repository, *(["--now", now] if now else [])], check=True,
                              capture_output=True, text=True, cwd=act.ROOT)
        return dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)

    def _git(self, *args: str, cwd: Path | None = None) -> str:
        basic = base64.b64encode(f"x-access-token:{self.maintainer}".encode()).decode()
        env = {**self.github.process_env(), "GIT_CONFIG_COUNT": "1",
               "GIT_CONFIG_KEY_0": f"http.{self.github.base}/.extraheader",
               "GIT_CONFIG_VALUE_0": f"AUTHORIZATION: basic {basic}"}
        return subprocess.run(["git", *args], cwd=cwd or self.code, env=env, check=True,
                              capture_output=True, text=True).stdout

    def _push_code(self) -> None:
        """Push this checkout's files, with the loopback registry and trust, as the code repository's main."""
        files = subprocess.run(["git", "ls-files", "-z"], cwd=act.ROOT, check=True, capture_output=True).stdout
        for name in files.decode().split("\0"):
            source = act.ROOT / name
            if name and source.is_file():
                (self.code / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, self.code / name)
        (self.code / "data" / "outlets.toml").write_text(replica.registry_toml(self.hosts), encoding="utf-8")
        trust = self.code / "data" / "trust"
        shutil.rmtree(trust)
        trust.mkdir()
        for item in self.trust.folder.iterdir():
            if item.is_file():
                shutil.copy2(item, trust / item.name)
        self._git("init", "-q", "-b", "main")
        self._git("add", "-A")
        self._git("-c", "user.name=maintainer", "-c", "user.email=maintainer@example.invalid",
                  "commit", "-q", "-m", "the code, with the loopback outlets and authorities")
        self._git("remote", "add", "origin", f"{self.github.base}/{self.repository}.git")
        self._git("push", "-q", "origin", "HEAD:main")

    def set_visibility(self, visibility: str) -> None:
        self.github.world.repository(self.repository).visibility = visibility

    def run(self, workflow: str, *, job: str | None = None, variables: dict[str, str] | None = None,
            secrets: dict[str, str] | None = None, visibility: str | None = None,
            extra_environ: dict[str, str] | None = None, timeout: float = 1800) -> act.Run:
        """Run one workflow (all its jobs, or `job` and what it needs) as the next run id."""
        self.run_id += 1
        token = self.github.workflow_token(self.repository, job_permissions(workflow, job))
        runtime = runtime_token(self.run_id)
        self.github.workflow_token(self.repository, {"actions": "write"}, value=runtime)
        env = self.github.env(repository=self.repository)
        # What a runner sets, and no more: gh's settings are the run's own HOME's, and gh's own variables
        # (GH_HOST, GH_REPO, the token's) are the scripts' to set (gh_host.sh).
        for name in ("GH_CONFIG_DIR", "GH_HOST", "GH_REPO", "GH_TOKEN", "GH_ENTERPRISE_TOKEN"):
            env.pop(name, None)
        # The overrides only this scenario sets (tests/test_workflows.py: no workflow names them): the
        # outlets, authorities, archive and GitHub are all on loopback, which a real job may never reach.
        env.update({"TAKEDOWNWATCH_LOOPBACK_WORLD": "1", "TAKEDOWNWATCH_SPN_BASE_URL": self.spn.base})
        environ = {"ACTIONS_RUNTIME_TOKEN": runtime, "PATH": os.environ.get("PATH", ""),
                   **(extra_environ or {})}
        if visibility is None:
            visibility = self.github.world.repository(self.repository).visibility
        return act.run(self.code, workflow, work=self.root / "act", github_env=env, repository=self.repository,
                       run_id=self.run_id, token=token, visibility=visibility,
                       variables={**self.variables, **(variables or {})},
                       secrets={**self.secrets, **(secrets or {})}, job=job, timeout=timeout,
                       extra_environ=environ)

    def state(self) -> dict:
        return self.github.snapshot()

    def close(self) -> None:
        self.github.close()
        self.trust.close()
        self.farm.close()


def main(argv: list[str] | None = None) -> int:
    """Run workflows by hand in a fresh world: python -m testing.act_world collect.yml archive.yml pages.yml"""
    import argparse
    import tempfile
    import time

    parser = argparse.ArgumentParser(prog="python -m testing.act_world", description=(
        "Run the project's workflow files under nektos/act, one after another, against a fresh loopback "
        "GitHub, outlets, time-stamping authorities and Save Page Now (docs/actions.md)."))
    parser.add_argument("workflows", nargs="+", help="workflow files of .github/workflows, in order")
    parser.add_argument("--dir", help="folder for the world's state and act's logs (default: a new temporary one, kept)")
    parser.add_argument("--var", action="append", default=[], metavar="NAME=VALUE", help="a repository variable")
    parser.add_argument("--unsigned", action="store_true", help="run without the signing secrets")
    options = parser.parse_args(argv)
    for name in options.workflows:
        if not (act.WORKFLOWS / name).exists():
            parser.error(f"no workflow {name} in {act.WORKFLOWS}")
    root = Path(options.dir or tempfile.mkdtemp(prefix="act-world-"))
    root.mkdir(parents=True, exist_ok=True)
    print(f"world in {root} (act's logs: {root / 'act'})", flush=True)
    world = World(root)
    failed = 0
    try:
        variables = dict(v.split("=", 1) for v in options.var)
        secrets = {"IA_ACCESS_KEY": "by-hand", "IA_SECRET_KEY": "by-hand",
                   **({} if options.unsigned else world.signing)}
        for name in options.workflows:
            started = time.monotonic()
            print(f"running {name} ...", flush=True)
            done = world.run(name, variables=variables, secrets=secrets)
            print(f"{name}: exit {done.returncode} in {time.monotonic() - started:.0f} s", flush=True)
            for job in done.jobs:
                bad = [step for _, step, outcome in job.steps if outcome not in ("success", "skipped")]
                print(f"  {job.name}: {job.result or 'not run'}" + (f" (failed: {', '.join(bad)})" if bad else ""))
            failed |= done.returncode != 0
    finally:
        world.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
