"""GitHub Actions as a job meets it, on this machine: a fresh runner, the Actions cache, the workflows' own steps.

Each job starts from what a hosted runner has: a checkout of the record's
repository (here a clone of a bare "GitHub" repository on disk, reset and
cleaned as actions/checkout does, so data/warc, the database and the site are
gone), the files the Actions cache restores, and whatever the job downloads itself.

Its steps are the workflow file's own (.github/workflows/collect.yml, archive.yml,
pages.yml), read at every job by bench/workflow.py, in their order, with their
`env:`, `with:` and `if:` evaluated: every workflow job in the order its `needs`
allows, a matrix from the plan job's output, `$GITHUB_ENV` and `$GITHUB_OUTPUT`
carried between steps, a failed step ending the job (but where
`continue-on-error`), so a saved cache only after every step before succeeded.
No step is copied here. Each step is one of:

- run as written: its `run:` script through `bash --noprofile --norc -eo pipefail`
  (GitHub's default shell), with `python` the interpreter (a fork server's in
  bench/year.py), `gh` testing/fake_gh.sh against the loopback release store, and
  `date` at the simulated instant; a script that is one `python -m collector`
  command runs that click command in this process (its arguments expanded by
  bash from the step's environment), with what the simulation adds (SIMULATION:
  the simulated clock, the loopback pace, the Save Page Now fake);
- modelled (MODELLED): checkout (the record is in the same repository here, so
  record_repository.sh's checkout is that checkout), the cache's restore, save and
  prune (bench/actions_cache.py: GitHub's 10 GB cache, sized as the databases at 40
  outlets), the app tokens, the vantage's name, the artifacts;
- skipped: a step that writes neither the database, the record nor the cache and
  that the simulation need not measure (setup-python, pip, the run summary, Pages'
  deployment). A step that writes is never skipped: `plan` refuses one it cannot run.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import yaml

import workflow
from collector.cli.main import cli
from collector.clock import iso_seconds
from collector.record.fileformat import read_header
from collector.record.folder import batches
from collector.record.rebuild import rebuild

from actions_cache import PERIOD_DAYS, ActionsCache, size

ROOT = Path(__file__).resolve().parent.parent
FAKE_GH = ROOT / "testing" / "fake_gh.sh"  # curl: a Python gh would start twice a second job
WORKFLOWS = ROOT / ".github" / "workflows"
KINDS = {"collect": "collect.yml", "archive": "archive.yml", "pages": "pages.yml"}
VANTAGE = "github-actions-sim"

# What the simulation adds to a workflow's `python -m collector` command: the simulated clock, the
# loopback hosts' pace, and the Save Page Now fake with its polls shortened (the options come last,
# so a workflow's own option of the same name is overridden).
SIMULATION = {
    "run": ["--now", "{now}", "--min-interval", "{interval}"],
    "archive": ["--now", "{now}", "--base-url", "{spn}", "--min-interval", "{interval}", "--per-minute", "6000",
                "--poll-seconds", "0.02", "--max-wait", "60"],
    "export new": ["--now", "{now}"],
    "export timestamp": ["--now", "{now}", "--min-interval", "{interval}"],
    "publish": ["--now", "{now}"],
    "build-site": ["--now", "{now}"],
}
# The steps the simulation models rather than runs, and why.
MODELLED = {
    "uses actions/checkout": "a fresh clone's files: git fetch, reset --hard, clean -ffdx",
    "uses actions/cache/restore": "bench/actions_cache.py, and the files of the entry it finds",
    "uses actions/cache/save": "bench/actions_cache.py, and the files saved",
    "python3 .github/scripts/prune_cache.py prune": "bench/actions_cache.py, the script's own rule",
    "bash .github/scripts/record_repository.sh checkout": "the record is in the checked-out repository here",
    "uses actions/create-github-app-token": "the loopback store's one token",
    "bash .github/scripts/vantage.sh": f"{VANTAGE}: its address is no loopback one",
    "uses actions/upload-artifact": "a folder of the work folder",
    "uses actions/download-artifact": "that folder",
    "uses actions/upload-pages-artifact": "the site's size, for the job's disk",
}
# Steps that write nothing the simulation keeps but that it runs as written, for their outputs or their cost.
# (require_private.sh is not among them: publish_warc.sh, package_wacz.sh and commit_record.sh call it
# before they write.)
READ_AND_RUN = {"date", "python3 .github/scripts/collect_matrix.py",
                "python -m collector audit", "python -m collector build-site", "bash .github/scripts/check_site.sh"}


def _workflow_minutes() -> tuple[dict[str, int], dict[str, int]]:
    """Return (deadline, timeout) minutes of each job kind, as its workflow says them."""
    deadline, timeout = {}, {}
    for kind, name, job in (("collect", "collect.yml", "collect"), ("archive", "archive.yml", "archive"),
                            ("pages", "pages.yml", None)):
        jobs = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))["jobs"]
        chosen = jobs[job] if job else max(jobs.values(), key=lambda j: j.get("timeout-minutes", 0))
        timeout[kind] = int(chosen["timeout-minutes"])
        first = chosen["steps"][0].get("run", "")
        found = re.search(r"date -u -d '\+(\d+) minutes'", first)
        if found:
            deadline[kind] = int(found.group(1))
    return deadline, timeout


DEADLINE_MINUTES, TIMEOUT_MINUTES = _workflow_minutes()  # e.g. collect 8 of 18, archive 50 of 60
SPN_KEYS = {"IA_ACCESS_KEY": "sim-access", "IA_SECRET_KEY": "sim-secret"}


class StepFailed(Exception):
    """A step of a job ended with a non-zero exit: the job fails and saves no cache, as on Actions."""


def how(step: workflow.Step) -> str:
    """Return how the runner takes a step: modelled, in process, as written or skipped (see the module)."""
    if step.command in MODELLED:
        return "modelled"
    if step.command.startswith("uses "):
        if step.writes:
            raise workflow.Unknown(f"{step.name!r} ({step.command}) writes, and bench/runner.py has no model of it")
        return "skipped"
    if not step.writes and step.command not in READ_AND_RUN:
        return "skipped"
    return "in process" if _one_command(step.raw["run"]) else "as written"


def plan(kind: str) -> list[tuple[str, str, str, str]]:
    """Return (job, step name, command, how) of every step of a kind of job's workflow, in order."""
    return [(name, step.name, step.command, how(step)) for name, job in workflow.jobs(KINDS[kind]).items()
            for step in workflow.steps(job)]


def _one_command(script: str) -> bool:
    return re.fullmatch(r"python3? -m collector [^|;&<>`\n]*", " ".join(script.split())) is not None


@dataclass
class Job:
    """What one job did and cost: its steps' seconds, the disk it used, the database, the rows it added."""

    kind: str
    scheduled: datetime
    steps: dict[str, float] = field(default_factory=dict)
    ran: list[tuple[str, str]] = field(default_factory=list)  # (step name, command) of each step run or modelled
    peak_disk: int = 0
    db_bytes: int = 0
    rows_added: int = 0
    requests: int = 0
    busiest_host_requests: int = 0
    submissions: int = 0  # archive: POSTs to Save Page Now
    failed: str | None = None  # the step that failed, and why: the job saved no cache

    @property
    def wall(self) -> float:
        return sum(self.steps.values())


class Runner:
    """Runs the workflows' jobs, one after another, each on a fresh runner over the same remote and cache."""

    def __init__(self, work: Path, registry_toml: str, spn_base: str, store_api: str, interval: float,
                 python: Path | str = sys.executable, prune: bool = True, cache_from_day: float = 0.0,
                 period_days: int = PERIOD_DAYS, trust: Path | None = None, secrets: dict[str, str] | None = None):
        self.work, self.interval = work, interval
        # GitHub's cache (bench/actions_cache.py): each job's restore and save, the entries sized as the
        # databases at 40 outlets on the simulated day; a miss loses the saved copy, as eviction does.
        self.actions_cache = ActionsCache(prune=prune)
        self.cache_from_day, self.period_days, self._first = cache_from_day, period_days, None
        self.spn_base, self.store_api = spn_base, store_api
        self.secrets = {**SPN_KEYS, **(secrets or {})}
        self.origin, self.checkout = work / "origin.git", work / "runner"
        self.caches, self.artifacts = work / "cache", work / "artifacts"  # an entry's files, by key prefix
        self.cache = self.caches / "record-db-" / "data" / "takedownwatch.db"  # the default stream's database
        self.bin = work / "bin"
        self.bin.mkdir(parents=True, exist_ok=True)
        date = shutil.which("date") or "/usr/bin/date"
        for name, text in (("gh", f'exec bash "{FAKE_GH}" "$@"\n'), ("python", f'exec "{python}" "$@"\n'),
                           ("python3", f'exec "{python}" "$@"\n'), ("date", DATE.format(date=date))):
            (self.bin / name).write_text("#!/usr/bin/env bash\n" + text)
            (self.bin / name).chmod(0o755)
        _git(work, "init", "-q", "--bare", "-b", "main", str(self.origin))
        _git(work, "clone", "-q", str(self.origin), str(self.checkout))
        for key, value in (("user.name", "takedownwatch[bot]"), ("user.email", "bot@example.invalid"),
                           ("gc.auto", "0")):
            _git(self.checkout, "config", key, value)
        (self.checkout / "data" / "record").mkdir(parents=True)
        (self.checkout / "data" / "outlets.toml").write_text(registry_toml, encoding="utf-8")
        (self.checkout / "data" / "record" / ".keep").write_text("")
        if trust:  # the allowed signers and the loopback time-stamping authorities, as data/trust holds them
            shutil.copytree(trust, self.checkout / "data" / "trust", ignore=shutil.ignore_patterns("keys"))
        (self.checkout / ".github").symlink_to(ROOT / ".github")  # the workflows' scripts, where the steps call them
        _git(self.checkout, "add", ".")
        _git(self.checkout, "commit", "-q", "-m", "the registry")
        _git(self.checkout, "push", "-q", "origin", "HEAD:main")
        # The simulated repository is private, as the supported layout requires (docs/operating.md, "The public and
        # the private"): the release store says so, and the scripts ask it before they write.
        self.repository = urlsplit(store_api).path.split("/repos/", 1)[1].strip("/")
        self.api_url = store_api.split("/repos/", 1)[0]
        self.env = dict(os.environ, PYTHON=str(python), GITHUB_REF_NAME="main", GH_API=store_api,
                        GH_TOKEN="sim-token", PATH=f"{self.bin}{os.pathsep}{os.environ['PATH']}",
                        GITHUB_REPOSITORY=self.repository, GITHUB_API_URL=self.api_url, RUNNER_NAME="sim",
                        GITHUB_SERVER_URL=self.api_url,  # as Actions always sets both: the loopback store's
                        PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.db = self.checkout / "data" / "takedownwatch.db"
        self._runs = 0

    # -- one job -------------------------------------------------------------------

    def run_job(self, kind: str, scheduled: datetime) -> Job:
        """Return the figures of one run of `kind`'s workflow (collect, archive, pages) started at `scheduled`."""
        job = Job(kind, scheduled)
        self._runs += 1
        began = time.monotonic()
        self._now = lambda: scheduled + timedelta(seconds=time.monotonic() - began)  # noqa: E731
        github = {"token": "sim-token", "repository": self.repository, "api_url": self.api_url,
                  "server_url": self.api_url,
                  "repository_owner": self.repository.split("/")[0], "run_id": str(self._runs), "run_attempt": "1",
                  "ref": "refs/heads/main", "ref_name": "main",
                  "event_name": "workflow_run" if kind == "pages" else "schedule",
                  "event": {"repository": {"visibility": "private"}, "workflow_run": {"conclusion": "success"}}}
        done: dict[str, dict] = {}
        for name, spec in workflow.jobs(KINDS[kind]).items():
            needs = {n: done.get(n, {"result": "skipped", "outputs": {}}) for n in workflow.needs_of(spec)}
            context = {"github": github, "vars": {}, "secrets": self.secrets, "needs": needs}
            if any(n["result"] != "success" for n in needs.values()) or not workflow.truthy(spec.get("if"), context):
                done[name] = {"result": "skipped", "outputs": {}}
                continue
            matrix = workflow.evaluate(spec["strategy"]["matrix"][3:-2], context) \
                if isinstance(spec.get("strategy", {}).get("matrix"), str) else spec.get("strategy", {}).get("matrix")
            outputs = {}
            for entry in (matrix or {}).get("include", [{}]):  # one job per entry, one after another
                try:
                    outputs.update(self._job(job, spec, {**context, "matrix": entry}))
                except StepFailed as exc:
                    job.failed = job.failed or f"{name}: {exc}"
            done[name] = {"result": "failure" if job.failed else "success", "outputs": outputs}
        return job

    def _job(self, job: Job, spec: dict, context: dict) -> dict:
        """Run one workflow job's steps on a fresh runner; return its outputs."""
        env: dict[str, str] = {}
        context = {**context, "env": env, "steps": {}}
        env.update({k: workflow.substitute(v, context) for k, v in spec.get("env", {}).items()})
        folder, before = None, 0
        for step in workflow.steps(spec):
            if not workflow.truthy(step.raw.get("if"), context):
                continue
            way = how(step)
            if way == "skipped":
                continue
            step_env = {**env, **{k: workflow.substitute(v, context) for k, v in step.raw.get("env", {}).items()}}
            given = {k: workflow.substitute(v, context) for k, v in step.raw.get("with", {}).items()}
            if step.command == "python -m collector export new" and folder is None:
                folder = self.checkout / step_env["STREAM_DIR"]
                before = len(batches(folder))
            job.ran.append((step.name, step.command))
            began = time.monotonic()
            try:
                outputs = self._take(job, step, way, step_env, given, context)
            except StepFailed:
                if not step.raw.get("continue-on-error"):
                    raise
                outputs = {}
            finally:
                label = _label(step.command)
                job.steps[label] = job.steps.get(label, 0.0) + time.monotonic() - began
            if step.raw.get("id"):
                context["steps"][step.raw["id"]] = {"outputs": outputs, "outcome": "success"}
            if step.command in ("python -m collector run", "python -m collector archive"):
                self._ledger_figures(job, self.checkout / env["DB"])
            if step.command in ("python -m collector run", "python -m collector archive",
                                "python -m collector export new", "python -m collector build-site"):
                job.peak_disk = max(job.peak_disk, _disk(self.checkout, env.get("DB", "data/takedownwatch.db")))
        if folder is not None:
            job.rows_added += sum(sum(read_header(p).get("rows", {}).values()) for p in batches(folder)[before:])
        return {k: workflow.substitute(v, context) for k, v in spec.get("outputs", {}).items()}

    def _take(self, job: Job, step: workflow.Step, way: str, env: dict, given: dict, context: dict) -> dict:
        """Take one step; return its outputs."""
        if way == "modelled":
            return self._model(job, step, env, given, context)
        files = self.work / "step"
        shutil.rmtree(files, ignore_errors=True)
        files.mkdir()
        special = {"GITHUB_ENV": str(files / "env"), "GITHUB_OUTPUT": str(files / "output"),
                   "GITHUB_STEP_SUMMARY": str(files / "summary"), "RUNNER_TEMP": str(files),
                   "SIM_NOW": iso_seconds(self._now())}
        for name in ("env", "output", "summary"):
            (files / name).write_text("")
        full = {**self.env, **env, **special}
        if way == "in process":
            self._cli(self._argv(step.raw["run"], full), {**env, **special})
        else:
            script = files / "script.sh"
            script.write_text(step.raw["run"], encoding="utf-8")
            done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=self.checkout,
                                  env=full, capture_output=True, text=True, timeout=3600)
            if done.returncode != 0:
                raise StepFailed(f"{step.name!r} exited {done.returncode}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
        context["env"].update(_file_commands(files / "env"))
        return _file_commands(files / "output")

    def _model(self, job: Job, step: workflow.Step, env: dict, given: dict, context: dict) -> dict:
        command = step.command
        if command == "uses actions/checkout":
            self._fresh_checkout()
        elif command == "uses actions/cache/restore":
            return self._cache_restore(job, given)
        elif command == "uses actions/cache/save":
            self._cache_save(job, given, context)
        elif command == "python3 .github/scripts/prune_cache.py prune":
            prefix, saved, *restored = self._argv(step.raw["run"], {**self.env, **env}, "python3")[2:]
            if self.actions_cache.pruning:
                self.actions_cache.prune(prefix, self._saved[saved], (restored or [""])[0], self._now())
        elif command == "bash .github/scripts/record_repository.sh checkout":
            return {"repository": self.repository, "due": "no"}
        elif command == "uses actions/create-github-app-token":
            return {"token": "sim-token"}
        elif command == "bash .github/scripts/vantage.sh":
            return {"name": VANTAGE}
        elif command == "uses actions/upload-artifact":
            target = self.artifacts / given["name"]
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir(parents=True)
            shutil.copy2(self.checkout / given["path"], target)
        elif command == "uses actions/download-artifact":
            shutil.copytree(self.artifacts / given["name"], self.checkout / given.get("path", "."), dirs_exist_ok=True)
        elif command == "uses actions/upload-pages-artifact":
            job.peak_disk = max(job.peak_disk, _size(self.checkout / given["path"]))
        return {}

    def _cache_restore(self, job: Job, given: dict) -> dict:
        """Restore the newest entry of the step's prefix from the modelled cache; on a miss, start without it."""
        prefix = given["restore-keys"].split()[0]
        self._first = self._first or job.scheduled
        missed = len(self.actions_cache.misses)
        restored = self.actions_cache.restore(prefix, self._now())
        entry = self.caches / prefix
        if len(self.actions_cache.misses) > missed or restored is None:
            shutil.rmtree(entry, ignore_errors=True)
        for path in given["path"].split():
            _copy(entry / path, self.checkout / path)
        return {"cache-hit": "false", "cache-matched-key": restored or "",
                "cache-primary-key": given["key"]}

    def _cache_save(self, job: Job, given: dict, context: dict) -> None:
        """Save the step's paths as a new entry of its prefix, in the model and on disk; its prune step follows."""
        key = given["key"]
        prefix = key.removesuffix(f"{context['github']['run_id']}-{context['github']['run_attempt']}")
        entry = self.caches / prefix
        shutil.rmtree(entry, ignore_errors=True)
        for path in given["path"].split():
            _copy(self.checkout / path, entry / path)
        job.db_bytes = _size(entry)
        day = self.cache_from_day + (self._now() - self._first).total_seconds() / 86400
        self._saved = {key: self.actions_cache.save(prefix, size(job.kind, day, self.period_days), self._now(),
                                                    None, prune=False)}

    def full_database(self) -> Path:
        """Return the full database rebuilt from the pushed record (`export rebuild`), as a reader browses it.

        The working database the jobs save is pruned: a quiet article's rows are left out there
        (tests/collect/test_quiet.py), so what the year observed is judged from the record itself.
        """
        self._fresh_checkout()
        db = self.work / "judge.db"
        for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            path.unlink(missing_ok=True)
        rebuild(self.checkout / "data" / "record", db)
        return db

    def merged_database(self) -> Path:
        """Return a database following every stream of the pushed record, never pruned (the archive's answers too).

        The full database above is the collection's stream alone; the archive
        job writes its answers to a stream of its own (streams/archive).
        """
        self._fresh_checkout()
        db = self.work / "merged.db"
        shutil.rmtree(Path(f"{db}.streams"), ignore_errors=True)
        for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            path.unlink(missing_ok=True)
        script = self.checkout / ".github" / "scripts" / "follow_database.sh"
        done = subprocess.run(["bash", str(script), "data/record", str(db)], cwd=self.checkout,
                              env={**self.env, "PRUNE_EVERY_HOURS": "0"}, capture_output=True, text=True, timeout=3600)
        if done.returncode != 0:
            raise StepFailed(f"follow_database.sh exited {done.returncode}: {done.stdout[-2000:]}{done.stderr[-2000:]}")
        return db

    def _fresh_checkout(self) -> None:
        _git(self.checkout, "fetch", "-q", "origin", "main")
        _git(self.checkout, "reset", "-q", "--hard", "origin/main")
        _git(self.checkout, "clean", "-qffdx")

    def _argv(self, script: str, env: dict, program: str = "python") -> list[str]:
        """Return the arguments a script's command is called with, as bash expands them in the step's environment."""
        stub = f'{program}() {{ printf "%s\\0" "$@"; }}\n'
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", stub + script],
                              cwd=self.checkout, env=env, capture_output=True, timeout=60)
        if done.returncode != 0:
            raise StepFailed(f"expanding {script!r}: {done.stderr.decode()[-2000:]}")
        return done.stdout.decode().split("\0")[:-1]

    def _cli(self, argv: list[str], env: dict[str, str]) -> None:
        """Run `python -m collector ARGS` as the step does: the click command, in this process, in its environment."""
        args = argv[2:]  # after -m collector
        sub = " ".join(args[:2]) if args[0] == "export" else args[0]
        values = {"now": iso_seconds(self._now()), "interval": str(self.interval), "spn": self.spn_base}
        args += [a.format(**values) for a in SIMULATION.get(sub, [])]
        if sub == "build-site" and "--from-stats" in args:
            args = args[:-2]  # a build from stats.json alone reads no clock
        out, err = io.StringIO(), io.StringIO()
        cwd, saved = os.getcwd(), dict(os.environ)
        os.chdir(self.checkout)
        os.environ.update(env)
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = 0
                try:
                    cli.main(list(args), prog_name="python -m collector", standalone_mode=False)
                except SystemExit as exc:
                    code = exc.code or 0
                except Exception as exc:  # click's own errors carry an exit code
                    code = getattr(exc, "exit_code", 1)
                    err.write(f"{type(exc).__name__}: {exc}\n")
        finally:
            os.chdir(cwd)
            os.environ.clear()
            os.environ.update(saved)
        if code:
            raise StepFailed(f"python -m collector {' '.join(args)} exited {code}:\n{err.getvalue()[-4000:]}")

    def _ledger_figures(self, job: Job, db: Path) -> None:
        conn = sqlite3.connect(db)
        try:
            # The job's own run: the latest started (a database following every stream holds every stream's).
            run = conn.execute("SELECT id FROM runs ORDER BY started_at DESC, id DESC LIMIT 1").fetchone()[0]
            rows = conn.execute("SELECT host, COUNT(*) FROM requests WHERE run_id = ? AND sent = 1 GROUP BY host",
                                (run,)).fetchall()
            job.submissions = conn.execute("SELECT COUNT(*) FROM requests WHERE run_id = ? AND method = 'POST'",
                                           (run,)).fetchone()[0]
        finally:
            conn.close()
        job.requests = sum(n for _, n in rows)
        job.busiest_host_requests = max((n for _, n in rows), default=0)

    def repository_bytes(self) -> int:
        """Return the remote repository's size once packed (what GitHub would hold)."""
        _git(self.origin, "gc", "-q")
        return _size(self.origin)


# date(1) at the simulated instant: the steps' `date -u -d '+8 minutes'` and package_wacz.sh's `yesterday`
# count from SIM_NOW (GNU date reads "2026-09-02T00:10:00Z +8 minutes"); without SIM_NOW, the real date.
DATE = """[[ -n "${{SIM_NOW:-}}" ]] || exec "{date}" "$@"
args=() given=
while (($#)); do
  case "$1" in
    -d|--date) args+=(-d "$SIM_NOW $2"); given=1; shift 2 ;;
    --date=*) args+=(-d "$SIM_NOW ${{1#--date=}}"); given=1; shift ;;
    *) args+=("$1"); shift ;;
  esac
done
[[ -n "$given" ]] || args+=(-d "$SIM_NOW")
exec "{date}" "${{args[@]}}"
"""


def _file_commands(path: Path) -> dict[str, str]:
    """Return the NAME=value lines (and NAME<<DELIMITER blocks) a step wrote to $GITHUB_ENV or $GITHUB_OUTPUT.

    The format of docs.github.com/en/actions/reference/workflows-and-actions/workflow-commands
    ("Setting an environment variable", "Setting an output parameter", "Multiline strings").
    """
    found, lines = {}, path.read_text(encoding="utf-8").splitlines()
    while lines:
        line = lines.pop(0)
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value = []
            while lines and lines[0] != delimiter:
                value.append(lines.pop(0))
            lines = lines[1:]
            found[name] = "\n".join(value)
        elif "=" in line:
            name, value = line.split("=", 1)
            found[name] = value
    return found


def _label(command: str) -> str:
    """Return a step's short name in a job's figures: `run`, `export new`, `sync_database`, `save`, ..."""
    if command.startswith("python -m collector "):
        return command.removeprefix("python -m collector ")
    if command.startswith("uses "):
        return command.rsplit("/", 1)[-1]
    if command.startswith("python -c PRAGMA"):
        return "checkpoint"
    found = re.search(r"\.github/scripts/([\w-]+)", command)
    return found.group(1) if found else command


def _copy(source: Path, target: Path) -> None:
    """Copy a file or a folder (replacing the target), or nothing when the source is missing."""
    if target.is_dir():
        shutil.rmtree(target)
    if source.is_dir():
        shutil.copytree(source, target)
    elif source.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def _disk(checkout: Path, db: str) -> int:
    """Return the bytes the job holds on the runner: the database and its WAL, WARC files, the record, the site."""
    return sum(_size(checkout / f"{db}{suffix}") for suffix in ("", "-wal", "-shm", ".streams")) \
        + sum(_size(checkout / part) for part in ("data/warc", "data/record", "_site", "_figures"))
