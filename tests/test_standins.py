"""The action stand-ins of testing/actions/, run as the Actions runner runs them, against a loopback GitHub.

Each stand-in is started the way its action.yml's `runs:` says: a composite action's steps as
`bash --noprofile --norc -eo pipefail SCRIPT` with the step's `env:` evaluated from the inputs (and the
inputs' defaults), GITHUB_ACTION_PATH its folder, a GITHUB_OUTPUT file of its own; a node action as
`node main.js` with INPUT_<NAME> for every input (the runner's: upper case, spaces to `_`, hyphens
kept), then its `post:` with STATE_<name> from the GITHUB_STATE file main wrote. The job's variables are
the ones a runner sets (GITHUB_WORKSPACE, RUNNER_TEMP, GITHUB_REPOSITORY, GITHUB_SHA, GITHUB_SERVER_URL,
GITHUB_API_URL, ACTIONS_CACHE_URL, ACTIONS_RUNTIME_TOKEN), pointed at a LoopbackGitHub started here.
What each stand-in must do is what the pinned action documents (each action.yml's header cites it).
The scenario (tests/actions) runs the same stand-ins under act, minutes long; these take seconds.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import ssl
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from testing.github import LoopbackGitHub

ROOT = Path(__file__).resolve().parent.parent
ACTIONS = ROOT / "testing" / "actions"
OWNER = "acme"
CODE = f"{OWNER}/code"
OTHER = f"{OWNER}/other"
APP_ID = 31337

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="the stand-ins run git")
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="create-github-app-token runs on Node.js")
EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")


# -- the runner's part ------------------------------------------------------------------------------

def file_command(path: Path) -> dict[str, str]:
    """Return the NAME=VALUE and NAME<<DELIMITER lines of a GITHUB_OUTPUT / GITHUB_STATE file."""
    found, lines = {}, path.read_text().splitlines() if path.exists() else []
    while lines:
        line = lines.pop(0)
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value = []
            while (part := lines.pop(0)) != delimiter:
                value.append(part)
            found[name] = "\n".join(value)
        elif "=" in line:
            name, value = line.split("=", 1)
            found[name] = value
    return found


def evaluate(text: str, context: dict) -> str:
    """Return text with every `${{ a.b.c }}` replaced from context (a KeyError for anything else)."""
    def value(match: re.Match) -> str:
        found = context
        for part in match.group(1).split("."):
            found = found[part]
        return str(found)
    return EXPRESSION.sub(value, text)


class Job:
    """One job's runner: its workspace, temp folder and variables, running stand-ins as steps."""

    def __init__(self, github: LoopbackGitHub, root: Path, token: str, repository: str = CODE, sha: str = ""):
        self.github, self.root, self.token, self.repository = github, root, token, repository
        self.workspace, self.temp, self.home = root / "workspace", root / "temp", root / "home"
        for folder in (self.workspace, self.temp, self.home):
            folder.mkdir(parents=True, exist_ok=True)
        self.steps = 0
        self.variables = {
            **github.env(repository=repository),
            "PATH": os.environ["PATH"], "HOME": str(self.home), "GIT_CONFIG_NOSYSTEM": "1", "LANG": "C.UTF-8",
            "CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(self.workspace),
            "RUNNER_TEMP": str(self.temp), "GITHUB_REPOSITORY": repository,
            "GITHUB_REPOSITORY_OWNER": repository.split("/")[0], "GITHUB_SHA": sha, "GITHUB_REF": "refs/heads/main",
            "GITHUB_EVENT_NAME": "workflow_dispatch", "GITHUB_RUN_ID": "7", "GITHUB_RUN_ATTEMPT": "1",
            "ACTIONS_RUNTIME_TOKEN": github.runtime_token(repository)}
        for name in ("GH_CONFIG_DIR", "GH_REPO"):
            self.variables.pop(name, None)
        self.context = {"github": {"repository": repository, "token": token, "api_url": github.api_url,
                                   "server_url": github.base, "workspace": str(self.workspace)}}

    def _files(self) -> dict[str, Path]:
        self.steps += 1
        files = {name: self.temp / f"_{name.lower()}_{self.steps}" for name in
                 ("GITHUB_OUTPUT", "GITHUB_STATE", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY")}
        for path in files.values():
            path.touch()
        return files

    def _inputs(self, action: dict, given: dict[str, str]) -> dict[str, str]:
        unknown = set(given) - set(action.get("inputs") or {})
        assert not unknown, f"{action['name']} has no input {unknown}"
        return {name: given[name] if name in given else evaluate(str(spec.get("default", "")), self.context)
                for name, spec in (action.get("inputs") or {}).items()}

    def uses(self, name: str, **given: str) -> "Step":
        """Run the stand-in testing/actions/NAME with the inputs given (`with:`), as a step of this job."""
        folder = ACTIONS / name
        action = yaml.safe_load((folder / "action.yml").read_text())
        inputs = self._inputs(action, {k.replace("_", "-"): v for k, v in given.items()})
        runs = action["runs"]
        if runs["using"] == "composite":
            return self._composite(folder, action, inputs)
        assert runs["using"].startswith("node"), runs
        return self._node(folder, runs, inputs)

    def _composite(self, folder: Path, action: dict, inputs: dict[str, str]) -> "Step":
        outputs, printed, code = {}, [], 0
        context = {**self.context, "inputs": inputs, "steps": {}}
        for index, step in enumerate(action["runs"]["steps"]):
            assert step.get("shell") == "bash" and "run" in step, step
            files = self._files()
            script = self.temp / f"step-{self.steps}.sh"
            script.write_text(step["run"])
            env = {**self.variables, **{k: str(v) for k, v in files.items()}, "GITHUB_ACTION_PATH": str(folder),
                   **{k: evaluate(str(v), context) for k, v in (step.get("env") or {}).items()}}
            done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                                  cwd=self.workspace, env=env, capture_output=True, text=True, timeout=120)
            printed.append(done.stdout + done.stderr)
            context["steps"][step.get("id", f"step{index}")] = {"outputs": file_command(files["GITHUB_OUTPUT"])}
            if done.returncode != 0:
                code = done.returncode
                break
        for name, spec in (action.get("outputs") or {}).items():
            if code == 0 and "value" in spec:
                try:
                    outputs[name] = evaluate(spec["value"], context)
                except KeyError:
                    pass  # a step that never set it: the runner gives the empty string, left out here
        outputs = {k: v for k, v in outputs.items() if v != ""}
        return Step(code, outputs, "".join(printed))

    def _node(self, folder: Path, runs: dict, inputs: dict[str, str]) -> "Step":
        files = self._files()
        env = {**self.variables, **{k: str(v) for k, v in files.items()},
               **{"INPUT_" + name.replace(" ", "_").upper(): value for name, value in inputs.items()}}
        done = subprocess.run(["node", str(folder / runs["main"])], cwd=self.workspace, env=env,
                              capture_output=True, text=True, timeout=60)
        state = file_command(files["GITHUB_STATE"])

        def post() -> subprocess.CompletedProcess:
            post_env = {**env, **{f"STATE_{k}": v for k, v in state.items()}}
            return subprocess.run(["node", str(folder / runs["post"])], cwd=self.workspace, env=post_env,
                                  capture_output=True, text=True, timeout=60)
        return Step(done.returncode, file_command(files["GITHUB_OUTPUT"]), done.stdout + done.stderr, state, post)


class Step:
    def __init__(self, code: int, outputs: dict[str, str], log: str, state: dict | None = None, post=None):
        self.code, self.outputs, self.log, self.state, self.post = code, outputs, log, state or {}, post

    def __repr__(self) -> str:
        return f"Step(exit {self.code}, outputs {self.outputs})\n{self.log}"


# -- the world ----------------------------------------------------------------------------------------

def git(*args: str, cwd: Path, env: dict | None = None, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], cwd=cwd,
                          env=env, capture_output=True, text=True, check=check, timeout=60)


def basic_header(token: str) -> str:
    return "AUTHORIZATION: basic " + base64.b64encode(f"x-access-token:{token}".encode()).decode()


def git_env(github: LoopbackGitHub, home: Path, token: str | None = None) -> dict[str, str]:
    """Return git's environment for the loopback GitHub, sending `token` as checkout does (or nothing)."""
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **github.env(), "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
    env.pop("GH_CONFIG_DIR", None)
    if token:
        env.update(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0=f"http.{github.base}/.extraheader",
                   GIT_CONFIG_VALUE_0=basic_header(token))
    return env


class World:
    """The loopback GitHub with acme/code (two commits on main, a branch, a tag) and acme/other."""

    def __init__(self, github: LoopbackGitHub, root: Path):
        self.github, self.root = github, root
        github.create_repository(CODE, "private")
        github.create_repository(OTHER, "private", auto_init=True)
        self.maintainer = github.user_token("maintainer", owns=[OWNER])
        env = git_env(github, root / "maintainer", self.maintainer)
        work = root / "code-source"
        work.mkdir()
        git("init", "-q", "-b", "main", cwd=work)
        for name, text in {"README.md": "# code\n", "top.txt": "top\n", "src/a.py": "A = 1\n",
                           "docs/guide.md": "guide\n", ".github/scripts/x.sh": "echo x\n"}.items():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            (work / name).write_text(text)
        git("add", "-A", cwd=work)
        git("commit", "-qm", "first", cwd=work)
        self.first = git("rev-parse", "HEAD", cwd=work).stdout.strip()
        git("tag", "v1", cwd=work)
        (work / "second.txt").write_text("second\n")
        git("add", "-A", cwd=work)
        git("commit", "-qm", "second", cwd=work)
        self.main = git("rev-parse", "HEAD", cwd=work).stdout.strip()
        git("checkout", "-q", "-b", "feature", self.first, cwd=work)
        (work / "feature.txt").write_text("feature\n")
        git("add", "-A", cwd=work)
        git("commit", "-qm", "feature", cwd=work)
        self.feature = git("rev-parse", "HEAD", cwd=work).stdout.strip()
        git("remote", "add", "origin", f"{github.base}/{CODE}", cwd=work)
        git("push", "-q", "origin", "main", "feature", "v1", cwd=work, env=env)
        self.jobs = 0

    def job(self, token: str, repository: str = CODE) -> Job:
        self.jobs += 1
        return Job(self.github, self.root / f"job{self.jobs}", token, repository, self.main)

    def code_token(self) -> str:
        """Return a `github.token` of a job of acme/code with `contents: read`."""
        return self.github.workflow_token(CODE, {"contents": "read"})

    def api(self, method: str, path: str, token: str, body: dict | None = None) -> tuple[int, dict]:
        request = urllib.request.Request(f"{self.github.api_url}/{path}", method=method,
                                         data=json.dumps(body).encode() if body is not None else None,
                                         headers={"Authorization": f"Bearer {token}",
                                                  "Content-Type": "application/json"})
        context = ssl.create_default_context(cafile=str(self.github.ca_bundle))
        try:
            with urllib.request.urlopen(request, context=context, timeout=30) as answer:
                text = answer.read()
                return answer.status, json.loads(text) if text else {}
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"{}")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("standins")
    with LoopbackGitHub(root / "github") as github:
        yield World(github, root)


def extraheaders(tree: Path) -> str:
    """Return the `extraheader` settings of the tree's own git config (`git config --local --get-regexp`)."""
    return git("config", "--local", "--get-regexp", "extraheader", cwd=tree, check=False).stdout


def files(tree: Path) -> set[str]:
    return {p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file() and ".git" not in p.parts}


# -- actions/checkout ---------------------------------------------------------------------------------

def test_checkout_without_persisted_credentials_leaves_no_token_in_the_git_config(world):
    token = world.code_token()
    job = world.job(token)
    step = job.uses("checkout", persist_credentials="false")
    assert step.code == 0, step
    assert step.outputs["commit"] == world.main  # the workflow's own repository: $GITHUB_SHA
    assert files(job.workspace) == {"README.md", "top.txt", "src/a.py", "docs/guide.md", ".github/scripts/x.sh",
                                    "second.txt"}
    config = (job.workspace / ".git" / "config").read_text()
    assert token not in config and base64.b64encode(f"x-access-token:{token}".encode()).decode() not in config
    assert "extraheader" not in config.lower()
    assert extraheaders(job.workspace) == ""
    assert token not in step.log
    for place in (job.home, job.temp):  # nor in a global git config or the runner's files
        assert not any(token in f.read_text(errors="replace") for f in place.rglob("*") if f.is_file())


def test_checkout_with_persisted_credentials_keeps_the_token_as_an_extraheader(world):
    token = world.code_token()
    job = world.job(token)
    step = job.uses("checkout")  # persist-credentials defaults to true
    assert step.code == 0, step
    assert extraheaders(job.workspace).strip() == f"http.{world.github.base}/.extraheader {basic_header(token)}"
    # the persisted header is what later git commands of the job authenticate with
    fetched = git("fetch", "-q", "origin", "feature", cwd=job.workspace, env=git_env(world.github, job.home),
                  check=False)
    assert fetched.returncode == 0, fetched.stderr


def test_sparse_checkout_in_cone_mode_keeps_the_listed_folders_and_the_root_files(world):
    # README.md at the pinned commit, "Fetch only the root files and `.github` and `src` folder":
    # sparse-checkout: .github and src, cone mode (the default) -- the root files come with them.
    job = world.job(world.code_token())
    step = job.uses("checkout", persist_credentials="false", sparse_checkout=".github\nsrc\n")
    assert step.code == 0, step
    assert files(job.workspace) == {"README.md", "top.txt", "second.txt", "src/a.py", ".github/scripts/x.sh"}


def test_a_second_checkout_into_the_same_path_leaves_nothing_of_the_first(world):
    # clean: true (the default), README.md: "git clean -ffdx && git reset --hard HEAD" before fetching
    job = world.job(world.code_token())
    assert job.uses("checkout", persist_credentials="false").code == 0
    (job.workspace / "stale.txt").write_text("left by an earlier step\n")
    (job.workspace / "build").mkdir()
    (job.workspace / "build" / "out.bin").write_bytes(b"\0")
    (job.workspace / "README.md").write_text("changed\n")
    step = job.uses("checkout", persist_credentials="false")
    assert step.code == 0, step
    assert not (job.workspace / "stale.txt").exists() and not (job.workspace / "build").exists()
    assert (job.workspace / "README.md").read_text() == "# code\n"
    assert git("status", "--porcelain", cwd=job.workspace).stdout == ""


@pytest.mark.parametrize("ref", ["feature", "refs/heads/feature", "first-sha", "v1"])
def test_checkout_of_a_branch_a_commit_or_a_tag(world, ref):
    wanted = {"feature": world.feature, "refs/heads/feature": world.feature, "first-sha": world.first,
              "v1": world.first}[ref]
    ref = world.first if ref == "first-sha" else ref
    job = world.job(world.code_token())
    step = job.uses("checkout", persist_credentials="false", ref=ref)
    assert step.code == 0, step
    assert step.outputs["commit"] == wanted
    assert git("rev-parse", "HEAD", cwd=job.workspace).stdout.strip() == wanted
    assert ("feature.txt" in files(job.workspace)) == (wanted == world.feature)
    assert "second.txt" not in files(job.workspace)


def test_a_second_repository_into_a_sub_path_with_its_own_token(world):
    job = world.job(world.code_token())
    assert job.uses("checkout", persist_credentials="false").code == 0
    other_token = world.github.workflow_token(OTHER, {"contents": "read"})  # may read acme/other alone
    step = job.uses("checkout", repository=OTHER, token=other_token, path="vendor/other",
                    persist_credentials="false")
    assert step.code == 0, step
    nested = job.workspace / "vendor" / "other"
    assert files(nested) == {"README.md"} and (nested / "README.md").read_text() == "# other\n"
    assert git("remote", "get-url", "origin", cwd=nested).stdout.strip() == f"{world.github.base}/{OTHER}"
    assert step.outputs["commit"] == world.github.world.ref(world.github.world.repository(OTHER), "refs/heads/main")
    assert (job.workspace / "README.md").read_text() == "# code\n"  # the first checkout is left as it was
    assert extraheaders(nested) == ""


def test_a_token_without_access_to_the_repository_fails_and_leaves_no_token(world):
    token = world.code_token()  # acme/code's job token: acme/other is not among its repositories
    job = world.job(token)
    step = job.uses("checkout", repository=OTHER, path="other", persist_credentials="false")
    assert step.code != 0, step
    assert "Repository not found" in step.log
    tree = job.workspace / "other"
    # the token is removed whether or not the fetch succeeded (persist-credentials: false)
    assert not (tree / ".git").exists() or (extraheaders(tree) == ""
                                            and token not in (tree / ".git" / "config").read_text())
    assert not (tree / "README.md").exists()


# -- actions/cache restore and save -------------------------------------------------------------------

def cache_job(world, name: str) -> Job:
    """Return a job of a fresh repository acme/NAME (its own cache)."""
    world.github.create_repository(f"{OWNER}/{name}", "private")
    return world.job(world.github.workflow_token(f"{OWNER}/{name}", {"contents": "read"}), f"{OWNER}/{name}")


def save(job: Job, key: str, text: str) -> Step:
    (job.workspace / "state").mkdir(exist_ok=True)
    (job.workspace / "state" / "data.txt").write_text(text)
    return job.uses("cache/save", path="state", key=key)


def restore(world, repository: str, **given: str) -> tuple[Step, Job]:
    """Restore in a fresh job of the same repository (an empty workspace)."""
    job = world.job(world.github.workflow_token(repository, {"contents": "read"}), repository)
    return job.uses("cache/restore", path="state", **given), job


def test_restore_keys_restore_the_newest_entry_of_the_prefix_and_an_exact_key_is_a_hit(world):
    repository = f"{OWNER}/cache-prefix"
    job = cache_job(world, "cache-prefix")
    assert (saved := save(job, "A-1", "one")).code == 0 and "Cache saved with key: A-1" in saved.log, saved
    assert (saved := save(job, "A-2", "two")).code == 0 and "Cache saved with key: A-2" in saved.log, saved
    assert (saved := save(job, "B-9", "other prefix")).code == 0, saved

    step, fresh = restore(world, repository, key="X", restore_keys="A-")
    assert step.code == 0, step
    assert step.outputs == {"cache-hit": "false", "cache-matched-key": "A-2", "cache-primary-key": "X"}
    assert (fresh.workspace / "state" / "data.txt").read_text() == "two"

    step, fresh = restore(world, repository, key="A-1", restore_keys="A-")
    assert step.code == 0, step
    assert step.outputs == {"cache-hit": "true", "cache-matched-key": "A-1", "cache-primary-key": "A-1"}
    assert (fresh.workspace / "state" / "data.txt").read_text() == "one"

    # a miss: cache-hit left unset (restoreImpl.ts: "intentionally not set"), the step passes ...
    step, fresh = restore(world, repository, key="Z", restore_keys="C-")
    assert step.code == 0 and step.outputs == {"cache-primary-key": "Z"}, step
    assert "Cache not found for input keys: Z, C-" in step.log and not (fresh.workspace / "state").exists()
    # ... unless fail-on-cache-miss
    step, _ = restore(world, repository, key="Z", fail_on_cache_miss="true")
    assert step.code != 0 and "Failed to restore cache entry" in step.log, step


def test_saving_a_key_that_exists_keeps_the_first_entry_and_the_step_passes(world):
    repository = f"{OWNER}/cache-twice"
    job = cache_job(world, "cache-twice")
    assert save(job, "A-1", "first").code == 0
    again = save(job, "A-1", "second")
    # actions/cache@5a3ec84 dist/save-only/index.js: the service's 409 is a ReserveCacheError, logged
    # with core.info("Failed to save: Unable to reserve cache with key ..., another job may be creating
    # this cache. More details: <the service's message>"); saveOnlyRun then warns "Cache save failed."
    assert again.code == 0, again
    told = [line for line in again.log.splitlines() if "Unable to reserve cache with key A-1" in line]
    assert len(told) == 1 and told[0].startswith("Failed to save: ") and "Cache already exists" in told[0], again
    assert "::warning::Cache save failed." in again.log and "Cache saved with key" not in again.log
    entries = [e for e in world.github.snapshot()["caches"] if e["repository"] == repository]
    assert [e["key"] for e in entries] == ["A-1"]
    step, fresh = restore(world, repository, key="A-1")
    assert step.outputs["cache-hit"] == "true" and (fresh.workspace / "state" / "data.txt").read_text() == "first"


# -- actions/create-github-app-token --------------------------------------------------------------------

@pytest.fixture(scope="module")
def app(world):
    """Return the app's private key (PEM): the app installed on acme with more than any token asks for."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    world.github.register_app(APP_ID, public, slug="standin-app")
    world.github.install(APP_ID, OWNER, {"contents": "write", "issues": "write", "administration": "write"})
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def app_token(world, app: str, contents: str):
    """Return (job, step, token): the stand-in run for a token of the repository `other` alone, with
    contents `contents`."""
    job = world.job(world.code_token())
    step = job.uses("create-github-app-token", app_id=str(APP_ID), private_key=app, owner=OWNER,
                    repositories="other", permission_contents=contents)
    assert step.code == 0, step
    return job, step, step.outputs["token"]


@needs_node
def test_an_app_token_for_one_repository_reaches_it_alone_with_the_permissions_asked(world, app):
    job, step, token = app_token(world, app, "write")
    assert token.startswith("ghs_") and f"::add-mask::{token}" in step.log
    assert step.outputs["app-slug"] == "standin-app" and step.outputs["installation-id"]

    # the named repository: read over REST, clone and push over git
    status, found = world.api("GET", f"repos/{OTHER}", token)
    assert status == 200 and found["permissions"]["push"] is True, found
    clone = job.root / "other"
    env = git_env(world.github, job.home, token)
    assert git("clone", "-q", f"{world.github.base}/{OTHER}", str(clone), cwd=job.root, env=env).returncode == 0
    (clone / "pushed.txt").write_text("by the app\n")
    git("add", "pushed.txt", cwd=clone)
    git("commit", "-qm", "by the app", cwd=clone)
    pushed = git("push", "-q", "origin", "HEAD:main", cwd=clone, env=env, check=False)
    assert pushed.returncode == 0, pushed.stderr
    head = git("rev-parse", "HEAD", cwd=clone).stdout.strip()
    assert world.github.world.ref(world.github.world.repository(OTHER), "refs/heads/main") == head

    # another repository of the same owner, which the installation covers: refused over REST and git
    status, _ = world.api("GET", f"repos/{CODE}", token)
    assert status == 404
    refused = git("clone", "-q", f"{world.github.base}/{CODE}", str(job.root / "code"), cwd=job.root, env=env,
                  check=False)
    assert refused.returncode != 0 and "not found" in refused.stderr.lower(), refused.stderr

    # permissions the installation has but the token was not given
    status, found = world.api("POST", f"repos/{OTHER}/issues", token, {"title": "not allowed"})
    assert status == 403, found
    status, found = world.api("POST", f"orgs/{OWNER}/repos", token, {"name": "made-by-app", "private": True})
    assert status == 403, found
    assert world.github.world.repository(f"{OWNER}/made-by-app") is None
    assert world.github.world.repository(OTHER).issues == []


@needs_node
def test_the_post_step_revokes_the_app_token(world, app):
    _, step, token = app_token(world, app, "read")
    assert world.api("GET", f"repos/{OTHER}", token)[0] == 200
    post = step.post()
    assert post.returncode == 0 and "Token revoked" in post.stdout, post.stdout + post.stderr
    # README.md at the pinned commit: the token is revoked in the post step; GitHub then refuses it
    status, found = world.api("GET", f"repos/{OTHER}", token)
    assert status == 401 and found["message"] == "Bad credentials", found
