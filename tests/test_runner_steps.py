"""bench/runner.py takes its steps from the workflow files: no second copy of them to drift (issue 29, item 5).

The year simulation's own run (tests/test_year_bench.py) checks that every job ran the workflow's
writing steps; these check the reading of the files, quickly, and what a change to them does.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import runner  # noqa: E402
import workflow  # noqa: E402


def test_the_runner_takes_every_step_that_writes_in_the_workflows_order_and_skips_none():
    for kind, name in runner.KINDS.items():
        planned = runner.plan(kind)
        writing = [(job, step, command) for job, step, command, _ in planned
                   if any(workflow.command_writes(c) for c in command.split(" ; "))]
        assert writing == workflow.writing_steps(name)
        assert all(way != "skipped" for job, step, command, way in planned if (job, step, command) in writing)
    commands = [c for _, _, c in workflow.writing_steps("collect.yml")]
    # The steps the simulation once lacked are among those it now runs (issue 29).
    for gap in ("python -m collector export timestamp", "python -m collector export sign",
                "bash .github/scripts/package_wacz.sh"):
        assert gap in commands
    assert commands.count("python -m collector export new") == 2


def _workflows(tmp_path, monkeypatch, edit) -> Path:
    """Point the runner at a copy of the workflows, collect.yml's collect job's steps changed by `edit`."""
    folder = Path(tempfile.mkdtemp(dir=tmp_path)) / "workflows"
    shutil.copytree(ROOT / ".github" / "workflows", folder)
    spec = yaml.safe_load((folder / "collect.yml").read_text())
    edit(spec["jobs"]["collect"]["steps"])
    (folder / "collect.yml").write_text(yaml.safe_dump(spec, sort_keys=False))
    monkeypatch.setattr(workflow, "WORKFLOWS", folder)
    return folder


def _writing(kind="collect"):
    return [(step, command) for job, step, command, way in runner.plan(kind)
            if any(workflow.command_writes(c) for c in command.split(" ; "))]


def test_a_writing_step_added_removed_or_moved_in_a_workflow_is_what_the_runner_then_runs(tmp_path, monkeypatch):
    before = _writing()
    index = next(i for i, (_, c) in enumerate(before) if c == "python -m collector export timestamp")

    def drop(steps):
        steps[:] = [s for s in steps if "export timestamp" not in s.get("run", "")]
    _workflows(tmp_path, monkeypatch, drop)
    assert _writing() == before[:index] + before[index + 1:]

    def move(steps):
        sign = next(s for s in steps if "export sign" in s.get("run", ""))
        steps.remove(sign)
        steps.insert(next(i for i, s in enumerate(steps) if "commit_record.sh" in s.get("run", "")) + 1, sign)
    _workflows(tmp_path, monkeypatch, move)
    moved = _writing()
    assert [c for _, c in moved].index("python -m collector export sign") > \
        [c for _, c in moved].index("bash .github/scripts/commit_record.sh")


def test_a_writing_step_the_runner_cannot_take_stops_it_rather_than_being_skipped(tmp_path, monkeypatch):
    _workflows(tmp_path, monkeypatch, lambda steps: steps.insert(-2, {"name": "A new writer",
                                                                      "run": "bash .github/scripts/new_writer.sh"}))
    with pytest.raises(workflow.Unknown, match="new_writer.sh"):
        runner.plan("collect")
    _workflows(tmp_path, monkeypatch, lambda steps: steps.insert(-2, {"uses": "actions/cache@0123456789abcdef",
                                                                      "with": {"path": "data", "key": "k"}}))
    with pytest.raises(workflow.Unknown, match="actions/cache"):
        runner.plan("collect")


def test_edits_of_steps_that_write_nothing_leave_the_runners_writing_steps_alone(tmp_path, monkeypatch):
    before = _writing()

    def edit(steps):
        steps.insert(1, {"name": "Point git at the server", "run": 'git config --global url."$GITHUB_SERVER_URL/".'
                         'insteadOf https://github.com/\necho "server: $GITHUB_SERVER_URL"'})
        checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout"))
        checkout["with"]["sparse-checkout"] = ".github\ncollector"
        steps[:] = [s for s in steps if s.get("name") != "Summary"]
    _workflows(tmp_path, monkeypatch, edit)
    assert _writing() == before
    assert ("Point git at the server", "shell", "skipped") in [(s, c, w) for _, s, c, w in runner.plan("collect")]


def test_a_steps_commands_are_named_from_its_script():
    assert workflow.command({"run": 'python -m collector export new --db "$DB"'}) == "python -m collector export new"
    assert workflow.command({"run": ">-\n  python -m collector run --db x"}) == "python -m collector run"
    assert workflow.command({"uses": "actions/cache/save@5a3ec84e"}) == "uses actions/cache/save"
    assert workflow.command({"run": 'python3 .github/scripts/prune_cache.py prune "$P"'}) == \
        "python3 .github/scripts/prune_cache.py prune"
    assert workflow.command({"run": 'bash .github/scripts/push_site.sh site "x"'}) == \
        "bash .github/scripts/push_site.sh"
    assert workflow.command({"run": 'if [ -z "$K" ]; then exit 0; fi\n# python -m collector run\n'
                                    'python -m collector export sign --key "$k" | tee -a "$S"'}) == \
        "python -m collector export sign"
    assert workflow.command({"run": "echo hello\ngit status"}) == "shell"
    with pytest.raises(workflow.Unknown):
        workflow.command_writes("python -m collector something-new")


def test_expressions_evaluate_as_githubs_do():
    context = {"vars": {}, "matrix": {"first": True, "cache": "record-db-"}, "steps": {"r": {"outputs": {"due": "no"}}},
               "needs": {"plan": {"outputs": {"matrix": '{"include": [{"a": 1}]}'}}}}
    assert workflow.truthy("vars.TAKEDOWNWATCH_SITE_REPOSITORY == ''", context)  # null == '': both 0
    assert not workflow.truthy("vars.TAKEDOWNWATCH_SITE_REPOSITORY != ''", context)
    assert not workflow.truthy("steps.r.outputs.due == 'yes'", context) and workflow.truthy("matrix.first", context)
    assert workflow.truthy("${{ always() }}", context) and workflow.truthy(None, context)
    assert workflow.substitute("${{ vars.RUNNER || 'ubuntu-24.04' }}", context) == "ubuntu-24.04"
    assert workflow.substitute("${{ matrix.cache }}${{ github.run_id }}-1", {**context, "github": {"run_id": "7"}}) \
        == "record-db-7-1"
    assert workflow.evaluate("fromJSON(needs.plan.outputs.matrix)", context) == {"include": [{"a": 1}]}
    assert workflow.truthy("'A' == 'a' && !(1 == 2)", context)
    # contains(): a string without regard to case, an array by its elements; an output never set is ''
    names = {**context, "steps": {"names": {"outputs": {"history-names": "tw-record-2026,tw-record-2027"}}}}
    assert workflow.truthy("contains(steps.names.outputs.history-names, ',')", names)
    assert not workflow.truthy("contains(steps.names.outputs.history-names, ',')", context)
    assert workflow.truthy("contains('Hello', 'LL') && contains(fromJSON('[1, 2]'), 2)", context)
    assert not workflow.truthy("contains(fromJSON('[\"ab\"]'), 'a')", context)
    with pytest.raises(workflow.Unknown):
        workflow.evaluate("hashFiles('x')", context)


def test_step_files_are_read_as_github_writes_them(tmp_path):
    written = tmp_path / "output"
    written.write_text("name=github-actions-x\nmatrix={\"a\": 1}\nbody<<EOF\nline one\nline=two\nEOF\nlast=1\n")
    assert runner._file_commands(written) == {"name": "github-actions-x", "matrix": '{"a": 1}',
                                              "body": "line one\nline=two", "last": "1"}


def test_date_in_a_simulated_step_counts_from_the_simulated_instant(tmp_path):
    date = tmp_path / "date"
    date.write_text("#!/usr/bin/env bash\n" + runner.DATE.format(date=shutil.which("date")))
    date.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "SIM_NOW": "2026-09-02T00:10:00Z"}
    run = lambda *args: subprocess.run([str(date), *args], env=env, capture_output=True, text=True,  # noqa: E731
                                       check=True).stdout.strip()
    assert run("-u", "-d", "+8 minutes", "+%Y-%m-%dT%H:%M:%SZ") == "2026-09-02T00:18:00Z"
    assert run("-u", "-d", "yesterday", "+%Y-%m-%d") == "2026-09-01"
    assert run("-u", "+%Y-%m-%d") == "2026-09-02"
