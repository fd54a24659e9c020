"""The per-article record is written only to private repositories, each year's to a repository of its own.

The workflow scripts run here against a fake GitHub (testing/fake_github.py): bare repositories in folders,
a visibility for each, releases as lists of assets.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from collector.collect.prune import prune as prune_copy
from collector.publish.history import History

from collector.record import export, folder
from collector.record import rebuild as rebuilding
from collector.record.store import Store
from testing.fake_github import FakeGitHub
from tests.record.test_export import dump
from tests.record.test_rollover import years  # noqa: F401  (two years of record, rolled over)

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / ".github" / "scripts"
CODE = "activaterights/takedownwatch"
PYTHON = {"PYTHON": sys.executable, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def script(github: FakeGitHub, name: str, *args: str, cwd: Path | None = None, **env: str):
    return subprocess.run(["bash", str(SCRIPTS / name), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=github.env(**PYTHON, **env))


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


# -- require_private.sh ---------------------------------------------------------------------------

@pytest.mark.parametrize("context, visibility, allowed", [
    ("private", "private", True),
    ("", "private", True),  # the event says nothing (a schedule, long ago): the API's answer decides
    ("public", "private", False),
    ("", "public", False),
    ("private", "public", False),  # made public while the job ran
    ("", "internal", False),  # every member of the enterprise could read it
    ("", None, False),  # no such repository, or the token may not see it
    ("", "outage", False),  # GitHub does not answer: refused, never assumed private
])
def test_only_a_repository_both_the_context_and_the_api_call_private_is_written_to(tmp_path, context, visibility,
                                                                                     allowed):
    github = FakeGitHub(tmp_path)
    if visibility not in (None, "outage"):
        github.create(CODE, visibility)
    if visibility == "outage":
        github.create(CODE)
        github.outage()
    summary = tmp_path / "summary.md"
    done = script(github, "require_private.sh", CODE, context, GITHUB_STEP_SUMMARY=str(summary))
    assert (done.returncode == 0) is allowed, done.stdout + done.stderr
    if allowed:
        assert not summary.exists()
    else:
        text = summary.read_text()
        assert text.startswith(f"## Refused: {CODE} is not a private repository\n")
        assert "Nothing was committed, pushed or uploaded." in text and "::error" in done.stdout


def _record_repository(github: FakeGitHub, tmp_path: Path, name: str, visibility: str) -> Path:
    """Return a clone of a record repository holding one export file, and one more file not yet committed."""
    bare = github.create(name, visibility)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(bare), "clone")
    store = Store(tmp_path / "job.db")
    for day in range(2):
        store.insert("runs", {"command": "run", "started_at": f"d{day}", "vantage": "v", "software_version": "0",
                              "settings": "{}"})
        export.export_new(store, clone, now=datetime(2026, 9, 1 + day, tzinfo=timezone.utc))
        if day == 0:
            git(clone, "add", ".")
            git(clone, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "record: 1")
            git(clone, "push", "-q", "origin", "main")
    store.close()
    return clone


@pytest.mark.parametrize("visibility", ["public", "internal"])
def test_commit_record_never_pushes_to_a_repository_that_is_not_private(tmp_path, visibility):
    github = FakeGitHub(tmp_path / "gh")
    name = f"{CODE}-record-2026"
    clone = _record_repository(github, tmp_path, name, visibility)
    before = git(github.url_base / f"{name}.git", "log", "--format=%s", "main")
    summary = tmp_path / "summary.md"
    done = script(github, "commit_record.sh", "record: run 2", RECORD=str(clone), RECORD_REPOSITORY=name,
                  GITHUB_STEP_SUMMARY=str(summary))
    assert done.returncode == 1 and f"the GitHub API says it is {visibility}" in done.stdout
    assert git(github.url_base / f"{name}.git", "log", "--format=%s", "main") == before  # nothing pushed
    assert git(clone, "log", "--format=%s") == before  # nor even committed
    assert "## Refused" in summary.read_text()
    github.set_visibility(name, "private")
    done = script(github, "commit_record.sh", "record: run 2", RECORD=str(clone), RECORD_REPOSITORY=name)
    assert done.returncode == 0, done.stderr
    assert git(github.url_base / f"{name}.git", "log", "--format=%s", "main").split("\n")[0] == "record: run 2"


def test_publish_warc_uploads_nothing_from_a_public_repository(tmp_path):
    github = FakeGitHub(tmp_path / "gh")
    github.create(CODE, "public")
    warc = tmp_path / "warc" / "2026/09/01/run-000001-001700-aaaa.warc.gz"
    warc.parent.mkdir(parents=True)
    warc.write_bytes(b"warc")
    done = script(github, "publish_warc.sh", str(tmp_path / "warc"), GITHUB_REPOSITORY=CODE)
    assert done.returncode == 1 and "Refused" in done.stdout
    assert not [c for c in github.calls() if c.startswith("release")]


# -- record_repository.sh: a year's record in a repository of its own ----------------------------

def _year_of_jobs(store: Store, record: Path, start: datetime, hours: int) -> None:
    for hour in range(hours):
        when = start + timedelta(hours=hour)
        store.insert("runs", {"command": "run", "started_at": when.isoformat(), "vantage": "v",
                              "software_version": "0", "settings": "{}"})
        export.export_new(store, record, now=when)


def _commit(github: FakeGitHub, record: Path, repository: str, message: str) -> None:
    done = script(github, "commit_record.sh", message, RECORD=str(record), RECORD_REPOSITORY=repository)
    assert done.returncode == 0, done.stdout + done.stderr


def test_by_default_each_half_year_has_its_repository_named_by_its_first_month(tmp_path):
    """settings.RECORD_REPOSITORY_MONTHS (6): a year's repository would pass 5 GB at 40 outlets."""
    github = FakeGitHub(tmp_path / "gh")
    env = {"RECORD_PREFIX": CODE, "RECORD_FIRST_PERIOD": "2026-01"}
    prepared = script(github, "record_repository.sh", "prepare", NOW="2026-06-20T05:23:00Z", **env)
    assert prepared.returncode == 0, prepared.stdout + prepared.stderr
    assert [c for c in github.calls() if c.startswith("repo create")] == [
        f"repo create {CODE}-record-2026-01 --private --add-readme --description "
        "Takedown Watch: the record of 2026-01 (private; never make it public)",
        f"repo create {CODE}-record-2026-07 --private --add-readme --description "
        "Takedown Watch: the record of 2026-07 (private; never make it public)"]
    out = script(github, "record_repository.sh", "checkout", str(tmp_path / "job"), NOW="2026-07-01T00:17:00Z",
                 **env)
    assert out.returncode == 0 and out.stdout == f"repository={CODE}-record-2026-07\ndue=yes\n", out.stderr


def test_each_year_is_written_to_its_own_repository_and_the_chain_runs_across(tmp_path):
    github = FakeGitHub(tmp_path / "gh")
    env = {"RECORD_PREFIX": CODE, "RECORD_MONTHS": "12", "RECORD_FIRST_PERIOD": "2026"}
    # 20 December 2026: this year's repository and next year's are made, private.
    prepared = script(github, "record_repository.sh", "prepare", NOW="2026-12-20T05:23:00Z", **env)
    assert prepared.returncode == 0, prepared.stdout + prepared.stderr
    assert [c for c in github.calls() if c.startswith("repo create")] == [
        f"repo create {CODE}-record-2026 --private --add-readme --description "
        "Takedown Watch: the record of 2026 (private; never make it public)",
        f"repo create {CODE}-record-2027 --private --add-readme --description "
        "Takedown Watch: the record of 2027 (private; never make it public)"]
    # The last jobs of 2026 write to 2026's repository.
    store = Store(tmp_path / "work.db")
    out = script(github, "record_repository.sh", "checkout", str(tmp_path / "job-2026"),
                 NOW="2026-12-31T21:17:00Z", **env)
    assert out.returncode == 0 and out.stdout == f"repository={CODE}-record-2026\ndue=no\n", out.stderr
    _year_of_jobs(store, tmp_path / "job-2026", datetime(2026, 12, 31, 21, 17, tzinfo=timezone.utc), 3)
    _commit(github, tmp_path / "job-2026", f"{CODE}-record-2026", "record: the last of 2026")
    store.checkpoint()
    shutil.copyfile(tmp_path / "work.db", tmp_path / "cached.db")
    # The first job of 2027 finds its repository empty and rolls the record over into it.
    out = script(github, "record_repository.sh", "checkout", str(tmp_path / "job-2027"),
                 NOW="2027-01-01T00:17:00Z", **env)
    assert out.returncode == 0 and out.stdout == f"repository={CODE}-record-2027\ndue=yes\n", out.stderr
    seeded = script(github, "record_repository.sh", "seed", str(tmp_path / "job-2027"),
                    NOW="2027-01-01T00:17:00Z", **env)
    assert seeded.returncode == 0 and "rolled over" in seeded.stdout, seeded.stderr
    _year_of_jobs(store, tmp_path / "job-2027", datetime(2027, 1, 1, 0, 17, tzinfo=timezone.utc), 2)
    _commit(github, tmp_path / "job-2027", f"{CODE}-record-2027", "record: the first of 2027")
    store.close()
    # A later job of 2027 finds the rollover done.
    later = script(github, "record_repository.sh", "checkout", str(tmp_path / "later"),
                   NOW="2027-01-01T01:17:00Z", **env)
    assert later.returncode == 0 and later.stdout.endswith("due=no\n")
    assert folder.verify(tmp_path / "later") == 3  # the copy of the last file of 2026, and 2027's two
    # Every year's repository, oldest first, makes one chain and rebuilds the database.
    history = script(github, "record_repository.sh", "history", str(tmp_path / "all"), NOW="2027-03-01T00:00:00Z",
                     **env)
    assert history.returncode == 0, history.stderr
    folders = history.stdout.split()
    assert [Path(f).name for f in folders] == ["takedownwatch-record-2026", "takedownwatch-record-2027"]
    assert folder.verify(folders) == 5
    rebuilding.rebuild(folders, tmp_path / "rebuilt.db")
    assert dump(tmp_path / "rebuilt.db") == dump(tmp_path / "work.db")
    rebuilding.resume(folders[-1], tmp_path / "cached.db")  # the cache of 2026 resumes from 2027 alone
    assert dump(tmp_path / "cached.db") == dump(tmp_path / "work.db")


def test_checkout_refuses_a_public_or_missing_repository_and_never_starts_a_chain_on_an_outage(tmp_path):
    github = FakeGitHub(tmp_path / "gh")
    env = {"RECORD_PREFIX": CODE, "RECORD_MONTHS": "12", "NOW": "2027-01-01T00:17:00Z"}
    missing = script(github, "record_repository.sh", "checkout", str(tmp_path / "a"), **env)
    assert missing.returncode == 1 and "run the rollover workflow" in missing.stderr
    github.create(f"{CODE}-record-2027", "public")
    public = script(github, "record_repository.sh", "checkout", str(tmp_path / "b"), **env)
    assert public.returncode == 1 and not (tmp_path / "b").exists()
    github.set_visibility(f"{CODE}-record-2027", "private")
    # Last year's repository cannot be read (or never was): only the year the record began starts from nothing.
    due = script(github, "record_repository.sh", "checkout", str(tmp_path / "d"), **env)
    assert due.returncode == 0 and due.stdout.endswith("due=yes\n"), due.stderr
    unseen = script(github, "record_repository.sh", "seed", str(tmp_path / "d"), **env)
    assert unseen.returncode == 1 and "TAKEDOWNWATCH_FIRST_PERIOD to 2027" in unseen.stderr
    assert folder.last_batch(tmp_path / "d") is None
    first = script(github, "record_repository.sh", "checkout", str(tmp_path / "e"), RECORD_FIRST_PERIOD="2027", **env)
    assert first.returncode == 0 and first.stdout == f"repository={CODE}-record-2027\ndue=no\n", first.stderr
    github.create(f"{CODE}-record-2026")  # exists, but holds no export file: nothing to continue
    empty = script(github, "record_repository.sh", "seed", str(tmp_path / "d"), **env)
    assert empty.returncode == 1 and "holds no export file: nothing to continue" in empty.stderr
    github.outage()
    down = script(github, "record_repository.sh", "checkout", str(tmp_path / "c"), **env)
    assert down.returncode == 1 and not (tmp_path / "c").exists()


# -- the public site: the built pages and stats.json, nothing else ---------------------------------

def _site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    (site / "bn").mkdir(parents=True)
    (site / "static").mkdir()
    for page in ("index.html", "method.html", "outlets.html", "bn/index.html"):
        (site / page).write_text(f"<html>{page}</html>\n", encoding="utf-8")
    (site / "static" / "style.css").write_text("body {}\n", encoding="utf-8")
    (site / "stats.json").write_text("{}\n", encoding="utf-8")
    return site


@pytest.mark.parametrize("intruder", [None, "takedownwatch.db", "data/record/2026/09/01/000001.jsonl.bz2",
                                      "warc/run-000001.warc.gz", "static/stats.json", ".git-credentials"])
def test_the_site_is_checked_before_it_is_published(tmp_path, intruder):
    site = _site(tmp_path)
    if intruder:
        (site / intruder).parent.mkdir(parents=True, exist_ok=True)
        (site / intruder).write_bytes(b"private")
    done = subprocess.run(["bash", str(SCRIPTS / "check_site.sh"), str(site)], capture_output=True, text=True)
    assert (done.returncode == 0) is (intruder is None), done.stdout + done.stderr
    if intruder:
        assert intruder in done.stderr


def test_the_site_is_pushed_to_a_public_site_repository_and_nothing_else_is(tmp_path):
    github = FakeGitHub(tmp_path / "gh")
    bare = github.create("activaterights/takedownwatch-site", "public")
    site = _site(tmp_path)

    def push():
        return subprocess.run(["bash", str(SCRIPTS / "push_site.sh"), str(site), str(bare)], capture_output=True,
                              text=True, timeout=60, env=github.env())

    first = push()
    assert first.returncode == 0 and "pushed the site" in first.stdout, first.stderr
    tree = sorted(git(bare, "ls-tree", "-r", "--name-only", "main").split())
    assert tree == [".nojekyll", "bn/index.html", "index.html", "method.html", "outlets.html", "static/style.css",
                    "stats.json"]  # the site repository's README is replaced by the site
    assert "site unchanged" in push().stdout
    (site / "takedownwatch.db").write_bytes(b"SQLite format 3\x00")
    refused = push()
    assert refused.returncode == 1 and "takedownwatch.db" in refused.stderr
    assert git(bare, "log", "--format=%s", "main").count("\n") == 2  # the README's commit and one build


def test_a_job_without_a_cache_asks_for_the_rebuild_of_every_year(years, tmp_path):  # noqa: F811
    _old, new, _work, saved = years
    env = dict(os.environ, **PYTHON)
    lost = subprocess.run(["bash", str(SCRIPTS / "sync_database.sh"), str(new), str(tmp_path / "none.db")],
                          capture_output=True, text=True, timeout=120, env=env)
    assert lost.returncode == 1 and "run the rebuild-database workflow" in lost.stderr
    assert not (tmp_path / "none.db").exists()
    cached = subprocess.run(["bash", str(SCRIPTS / "sync_database.sh"), str(new), str(saved)],
                            capture_output=True, text=True, timeout=120, env=env)
    assert cached.returncode == 0 and "2 newer export file(s)" in cached.stdout, cached.stderr


def test_a_job_checks_out_only_the_newest_days_whatever_the_records_age(tmp_path):
    """The tree comes whole, file contents only for the newest days: a job's checkout does not grow with the year."""
    github = FakeGitHub(tmp_path / "gh")
    name = f"{CODE}-record-2027"
    github.create(name)
    env = {"RECORD_PREFIX": CODE, "RECORD_MONTHS": "12", "RECORD_FIRST_PERIOD": "2027"}
    first = script(github, "record_repository.sh", "checkout", str(tmp_path / "writer"), NOW="2027-03-01T00:17:00Z",
                   **env)
    assert first.returncode == 0, first.stderr
    store = Store(tmp_path / "work.db")
    for day in range(6):  # six days of record, a job's export an hour, the first day's cache kept
        _year_of_jobs(store, tmp_path / "writer", datetime(2027, 3, 1 + day, 0, 17, tzinfo=timezone.utc), 3)
        _commit(github, tmp_path / "writer", name, f"record: day {day + 1}")
        if day in (0, 4):
            store.checkpoint()
            shutil.copyfile(tmp_path / "work.db", tmp_path / f"cache-day-{day + 1}.db")
    store.close()
    job = tmp_path / "job"
    done = script(github, "record_repository.sh", "checkout", str(job), NOW="2027-03-07T00:17:00Z", **env)
    assert done.returncode == 0, done.stderr
    present = sorted(folder.record_name(p)[:10] for p in job.rglob("*.jsonl.bz2"))
    assert sorted(set(present)) == ["2027/03/05", "2027/03/06"]  # of six days
    assert git(job, "config", "remote.origin.promisor").strip() == "true"  # a partial clone: bytes on demand
    assert len(git(job, "ls-files").split()) == 1 + 18  # the README and every file, in the index
    # A cache of yesterday resumes from what is there; one of the first day has the rest checked out.
    for cache, files in (("cache-day-5.db", 3), ("cache-day-1.db", 15)):
        synced = script(github, "sync_database.sh", str(job), str(tmp_path / cache))
        assert synced.returncode == 0 and f"{files} newer export file(s)" in synced.stdout, \
            synced.stdout + synced.stderr
    assert ("checking out the whole record folder" in synced.stderr
            and len(list(job.rglob("*.jsonl.bz2"))) == 18)
    # The job then works on the pruned database (collector/collect/prune.py): what pruning the
    # whole database gives.
    shutil.copyfile(tmp_path / "work.db", tmp_path / "whole.db")
    prune_copy(tmp_path / "whole.db", job, None, History.open(tmp_path / "no-history"))
    assert dump(tmp_path / "cache-day-1.db") == dump(tmp_path / "whole.db")


def test_a_sparse_checkout_commits_its_new_files_and_checks_the_newest_days_after_a_rebase(tmp_path):
    github = FakeGitHub(tmp_path / "gh")
    name = f"{CODE}-record-2027"
    bare = github.create(name)
    env = {"RECORD_PREFIX": CODE, "RECORD_MONTHS": "12", "RECORD_FIRST_PERIOD": "2027"}
    assert script(github, "record_repository.sh", "checkout", str(tmp_path / "w"), NOW="2027-03-01T00:17:00Z",
                  **env).returncode == 0
    store = Store(tmp_path / "work.db")
    for day in range(3):
        _year_of_jobs(store, tmp_path / "w", datetime(2027, 3, 1 + day, 0, 17, tzinfo=timezone.utc), 2)
        _commit(github, tmp_path / "w", name, f"record: day {day + 1}")
    job = tmp_path / "job"  # the next day's job: today's folder does not exist yet
    assert script(github, "record_repository.sh", "checkout", str(job), NOW="2027-03-04T00:17:00Z",
                  **env).returncode == 0
    _year_of_jobs(store, job, datetime(2027, 3, 4, 0, 17, tzinfo=timezone.utc), 1)
    store.close()
    person = tmp_path / "person"  # meanwhile someone edits the README: the job's push is refused once
    git(tmp_path, "clone", "-q", str(bare), "person")
    (person / "README.md").write_text("the record of 2027\n")
    git(person, "-c", "user.name=p", "-c", "user.email=p@example.invalid", "commit", "-qam", "docs")
    git(person, "push", "-q", "origin", "main")
    done = script(github, "commit_record.sh", "record: day 4", RECORD=str(job), RECORD_REPOSITORY=name)
    assert done.returncode == 0 and "rebasing" in done.stderr, done.stdout + done.stderr
    assert "export files present, chain intact" in done.stdout  # the tail checked, as the checkout holds it
    assert git(bare, "log", "--format=%s", "-2", "main").split("\n")[:2] == ["record: day 4", "docs"]
    assert "2027/03/04/000007.jsonl.bz2" in git(bare, "ls-tree", "-r", "--name-only", "main").split()
