"""GitHub Actions as a job meets it, on this machine: a fresh runner, the Actions cache, the workflows' steps.

Each job starts from what a hosted runner has: a checkout of the record's
repository (here a clone of a bare "GitHub" repository on disk, reset and
cleaned as actions/checkout does, so data/warc, the database and the site are
gone), the database the Actions cache restores (the file the last successful
job saved), and whatever the job downloads itself. Its steps are the
workflow's, in order: .github/scripts/level_database.sh (the archive job:
follow_database.sh, its database following every stream and writing the
archive stream, restored from and saved to a cache of its own), `python -m collector
run|archive ...` with --now (the click commands themselves, called in this
process), `export new`, .github/scripts/publish_warc.sh (with a `gh` that talks
to the loopback release store), .github/scripts/commit_record.sh (pushing to
the bare repository), the WAL checkpoint, and the cache save, only when every
step before succeeded (as `actions/cache/save` without `if:`). The pages job is
pages.yml's two jobs: `publish` and commit_published.sh, then on a fresh
checkout `audit` and `build-site`, reading the saved database and saving none.
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

from collector.cli.main import cli
from collector.clock import iso_seconds
from collector.record.fileformat import read_header
from collector.record.folder import batches
from collector.record.rebuild import rebuild

from actions_cache import PERIOD_DAYS, PREFIXES, ActionsCache, size

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / ".github" / "scripts"
FAKE_GH = ROOT / "testing" / "fake_gh.sh"  # curl: a Python gh would start twice a second job
WORKFLOWS = ROOT / ".github" / "workflows"


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


DEADLINE_MINUTES, TIMEOUT_MINUTES = _workflow_minutes()  # e.g. collect 8 of 18, archive 35 of 45
SPN_KEYS = {"IA_ACCESS_KEY": "sim-access", "IA_SECRET_KEY": "sim-secret"}


class StepFailed(Exception):
    """A step of a job ended with a non-zero exit: the job fails and saves no cache, as on Actions."""


@dataclass
class Job:
    """What one job did and cost: its steps' seconds, the disk it used, the database, the rows it added."""

    kind: str
    scheduled: datetime
    steps: dict[str, float] = field(default_factory=dict)
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
                 period_days: int = PERIOD_DAYS):
        self.work, self.interval = work, interval
        # GitHub's cache (bench/actions_cache.py): each job's restore and save, the entries sized as the
        # databases at 40 outlets on the simulated day; a miss loses the saved copy, as eviction does.
        self.actions_cache = ActionsCache(prune=prune)
        self.cache_from_day, self.period_days, self._first = cache_from_day, period_days, None
        self.spn_base, self.store_api = spn_base, store_api
        self.origin, self.checkout, self.cache = work / "origin.git", work / "runner", work / "cache" / "db"
        self.cache.parent.mkdir(parents=True, exist_ok=True)
        self.bin = work / "bin"
        self.bin.mkdir(exist_ok=True)
        (self.bin / "gh").write_text(f'#!/bin/sh\nexec bash "{FAKE_GH}" "$@"\n')
        (self.bin / "gh").chmod(0o755)
        _git(work, "init", "-q", "--bare", "-b", "main", str(self.origin))
        _git(work, "clone", "-q", str(self.origin), str(self.checkout))
        for key, value in (("user.name", "takedownwatch[bot]"), ("user.email", "bot@example.invalid"),
                           ("gc.auto", "0")):
            _git(self.checkout, "config", key, value)
        (self.checkout / "data" / "record").mkdir(parents=True)
        (self.checkout / "data" / "outlets.toml").write_text(registry_toml, encoding="utf-8")
        (self.checkout / "data" / "record" / ".keep").write_text("")
        _git(self.checkout, "add", ".")
        _git(self.checkout, "commit", "-q", "-m", "the registry")
        _git(self.checkout, "push", "-q", "origin", "HEAD:main")
        # The simulated repository is private, as the supported layout requires (docs/operating.md, "The public and
        # the private"): the release store says so, and the scripts ask it before they write.
        repository = urlsplit(store_api).path.split("/repos/", 1)[1].strip("/")
        self.env = dict(os.environ, PYTHON=str(python), GITHUB_REF_NAME="main", GH_API=store_api,
                        GH_TOKEN="sim-token", PATH=f"{self.bin}{os.pathsep}{os.environ['PATH']}",
                        GITHUB_REPOSITORY=repository, RECORD_REPOSITORY=repository,
                        PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.db = self.checkout / "data" / "takedownwatch.db"
        self.pages_db = self.cache.parent / "pages.db"  # the pages job's database following every stream
        self.archive_cache = self.cache.parent / "archive"  # the archive job's cache: it follows every stream

    # -- one job -------------------------------------------------------------------

    def run_job(self, kind: str, scheduled: datetime) -> Job:
        """Return the figures of one job of `kind` (collect, archive, pages) started at `scheduled`."""
        job = Job(kind, scheduled)
        try:
            self._steps(job)
        except StepFailed as exc:
            job.failed = str(exc)
        return job

    def _steps(self, job: Job) -> None:
        kind, scheduled = job.kind, job.scheduled
        began = time.monotonic()
        now = lambda: iso_seconds(scheduled + timedelta(seconds=time.monotonic() - began))  # noqa: E731
        self._step(job, "checkout", self._fresh_checkout)
        restored = self._cache_restore(kind, scheduled)
        db = self.db
        if kind == "pages":  # pages.yml: a database that follows every stream, in a cache of its own
            db = self.pages_db
            self._step(job, "follow", lambda: self._script("follow_database.sh", "data/record", str(db),
                                                                   FOLLOW_KEEPS=PAGES_KEEPS))
            self._cache_save(job, restored)
        elif kind == "archive":  # archive.yml: it follows every stream and writes its own, in a cache of its own
            if self.archive_cache.exists():
                self._step(job, "restore", lambda: _restore(self.archive_cache, db))
            self._step(job, "follow", lambda: self._script("follow_database.sh", "data/record", str(db), "archive"))
        else:
            if self.cache.exists():
                self._step(job, "restore", lambda: shutil.move(self.cache, self.db))
            self._step(job, "level", lambda: self._script("level_database.sh", "data/record", str(db)))
        folder = self.checkout / "data" / "record" / ("streams/archive" if kind == "archive" else "")
        files_before = len(batches(folder))
        if kind == "collect":
            deadline = iso_seconds(scheduled + timedelta(minutes=DEADLINE_MINUTES["collect"]))
            self._step(job, "run", lambda: self._cli(job, "run", "--db", str(db), "--warc-dir", "data/warc",
                                                     "--outlets", "data/outlets.toml", "--vantage", "github-actions-sim",
                                                     "--now", now(), "--deadline", deadline,
                                                     "--warc-store", self.store_api,
                                                     "--min-interval", str(self.interval)))
        elif kind == "archive":  # archive.yml's deadline too
            deadline = iso_seconds(scheduled + timedelta(minutes=DEADLINE_MINUTES["archive"]))
            self._step(job, "run", lambda: self._cli(job, "archive", "--db", str(db), "--warc-dir", "data/warc",
                                                     "--vantage", "github-actions-sim", "--now", now(),
                                                     "--deadline", deadline,
                                                     "--base-url", self.spn_base, "--min-interval",
                                                     str(self.interval), "--per-minute", "6000",
                                                     "--poll-seconds", "0.02", "--max-wait", "60"))
        else:  # pages.yml: its publish job, then its build job on another runner
            self._step(job, "publish", lambda: self._cli(job, "publish", "--db", str(db), "--now", now()))
            self._step(job, "commit", lambda: self._script("commit_published.sh", f"published: at {now()}"))
            self._step(job, "checkout", self._fresh_checkout)
            self._step(job, "follow", lambda: self._script("follow_database.sh", "data/record", str(db),
                                                                   FOLLOW_KEEPS=PAGES_KEEPS))
            self._step(job, "audit", lambda: self._cli(job, "audit"))
            self._step(job, "build-site", lambda: self._cli(job, "build-site", "--db", str(db), "--out", "_site",
                                                            "--now", now()))
            job.peak_disk = _size(self.checkout / "_site") + _size(db)
            job.db_bytes = _size(db)
            return
        job.peak_disk = _disk(self.checkout, db)
        self._ledger_figures(job, db)
        out = "data/record/streams/archive" if kind == "archive" else "data/record"
        self._step(job, "export", lambda: self._cli(job, "export", "new", "--db", str(db), "--out", out,
                                                    "--warc-dir", "data/warc", "--now", now()))
        job.peak_disk = max(job.peak_disk, _disk(self.checkout, db))
        self._step(job, "publish", lambda: self._script("publish_warc.sh", "data/warc"))
        self._step(job, "commit", lambda: self._script("commit_record.sh", f"record: {kind} at {now()}"))
        self._step(job, "checkpoint", lambda: _checkpoint(db))
        if kind == "archive":
            self._step(job, "save", lambda: _save(db, self.archive_cache))
            job.db_bytes = _size(self.archive_cache)  # the database and its streams' own databases beside it
        else:
            self._step(job, "save", lambda: shutil.move(self.db, self.cache))
            job.db_bytes = _size(self.cache)
        self._cache_save(job, restored)
        new = batches(folder)[files_before:]
        job.rows_added = sum(sum(read_header(p).get("rows", {}).values()) for p in new)

    def _cache_restore(self, kind: str, scheduled: datetime) -> str | None:
        """Restore `kind`'s prefix from the modelled cache; on a miss the job starts without its copy."""
        self._first = self._first or scheduled
        missed = len(self.actions_cache.misses)
        restored = self.actions_cache.restore(PREFIXES[kind], scheduled)
        if len(self.actions_cache.misses) > missed:
            copies = {"collect": [self.cache], "archive": [self.archive_cache],
                      "pages": [self.pages_db, Path(f"{self.pages_db}.streams")]}[kind]
            for path in copies:
                shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
        return restored

    def _cache_save(self, job: Job, restored: str | None) -> None:
        """Save the job's entry in the modelled cache (after every step before succeeded), then prune."""
        when = job.scheduled + timedelta(seconds=job.wall)
        day = self.cache_from_day + (when - self._first).total_seconds() / 86400
        self.actions_cache.save(PREFIXES[job.kind], size(job.kind, day, self.period_days), when, restored)

    def _step(self, job: Job, name: str, action) -> None:
        began = time.monotonic()
        try:
            action()
        finally:
            job.steps[name] = job.steps.get(name, 0.0) + time.monotonic() - began

    def full_database(self) -> Path:
        """Return the full database rebuilt from the pushed record (`export rebuild`), as a reader browses it.

        The working database the jobs save is levelled: a quiet article is one dormant row there
        (collector/record/dormant.py), so what the year observed is judged from the record itself.
        """
        self._fresh_checkout()
        db = self.work / "judge.db"
        for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            path.unlink(missing_ok=True)
        rebuild(self.checkout / "data" / "record", db)
        return db

    def merged_database(self) -> Path:
        """Return a database following every stream of the pushed record, never levelled (the archive's answers too).

        The full database above is the collection's stream alone; the archive
        job writes its answers to a stream of its own (streams/archive).
        """
        self._fresh_checkout()
        db = self.work / "merged.db"
        shutil.rmtree(Path(f"{db}.streams"), ignore_errors=True)
        for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
            path.unlink(missing_ok=True)
        self._script("follow_database.sh", "data/record", str(db), LEVEL_EVERY_HOURS="0")
        return db

    def _fresh_checkout(self) -> None:
        _git(self.checkout, "fetch", "-q", "origin", "main")
        _git(self.checkout, "reset", "-q", "--hard", "origin/main")
        _git(self.checkout, "clean", "-qffdx")

    def _script(self, name: str, *args: str, **env: str) -> None:
        done = subprocess.run(["bash", str(SCRIPTS / name), *args], cwd=self.checkout, env={**self.env, **env},
                              capture_output=True, text=True, timeout=3600)
        if done.returncode != 0:
            raise StepFailed(f"{name} exited {done.returncode}: {done.stdout[-2000:]}{done.stderr[-2000:]}")

    def _cli(self, job: Job, *args: str) -> None:
        """Run `python -m collector ARGS` as the workflow does: the click command, in this process."""
        out, err = io.StringIO(), io.StringIO()
        cwd = os.getcwd()
        os.chdir(self.checkout)
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


def _pages_keeps() -> str:
    """Return what pages.yml's follow step keeps besides the job's reads (its FOLLOW_KEEPS)."""
    steps = yaml.safe_load((ROOT / ".github" / "workflows" / "pages.yml").read_text(encoding="utf-8"))
    return next(step["env"]["FOLLOW_KEEPS"] for job in steps["jobs"].values() for step in job.get("steps", [])
                if "follow_database.sh" in step.get("run", "") and "FOLLOW_KEEPS" in step.get("env", {}))


PAGES_KEEPS = _pages_keeps()


def _restore(cache: Path, db: Path) -> None:
    """Put a cache's database and its streams' databases (DB.streams/) in place, as actions/cache restores them."""
    shutil.copyfile(cache / "db", db)
    if (cache / "streams").exists():
        shutil.copytree(cache / "streams", Path(f"{db}.streams"))


def _save(db: Path, cache: Path) -> None:
    """Save a database and its streams' databases as the next job's cache (only after every step succeeded)."""
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    shutil.move(db, cache / "db")
    if Path(f"{db}.streams").exists():
        shutil.move(Path(f"{db}.streams"), cache / "streams")


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _checkpoint(db: Path) -> None:
    conn = sqlite3.connect(db)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def _disk(checkout: Path, db: Path) -> int:
    """Return the bytes the job holds on the runner: the database and its WAL, WARC files, the record."""
    return sum(_size(Path(f"{db}{suffix}")) for suffix in ("", "-wal", "-shm")) + _size(checkout / "data" / "warc") \
        + _size(checkout / "data" / "record")
