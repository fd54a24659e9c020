"""A refused signing stops the job before it pushes: each workflow's sign step fails when `export sign` does.

The step pipes the command into `tee` (its list of files goes to the job
summary). GitHub runs a step with no `shell` as `bash -e {0}`, which takes
the status of a pipeline's last command, tee's; only `shell: bash` runs it as
`bash --noprofile --norc -eo pipefail {0}` (docs.github.com, workflow syntax,
jobs.<job_id>.steps[*].shell; github/docs#18933 and actions/runner#1955 on the
difference). Here each sign step's script runs as the runner would run it,
with a `python` that refuses as `export sign` does on a forged file.
"""

from __future__ import annotations

import os
import stat
import subprocess

import pytest

from tests.test_workflows import WORKFLOWS, load

# jobs.<job_id>.steps[*].shell on Linux: the command the runner runs the step's script with.
RUNNER_SHELLS = {None: ["bash", "-e"], "bash": ["bash", "--noprofile", "--norc", "-eo", "pipefail"]}
SIGNING = ("collect.yml", "archive.yml", "vantages.yml")


def _job_steps(name: str) -> tuple[dict, list[dict]]:
    workflow = load(WORKFLOWS / name)
    job = next(j for j in workflow["jobs"].values() if any(s.get("name") == "Sign the new export files"
                                                             for s in j.get("steps", [])))
    return job, job["steps"]


@pytest.mark.parametrize("name", SIGNING)
def test_a_refused_signing_fails_the_step_and_no_later_step_pushes(tmp_path, name):
    job, listed = _job_steps(name)
    names = [s.get("name", "") for s in listed]
    sign = names.index("Sign the new export files")
    step = listed[sign]
    assert "continue-on-error" not in step
    push = next(i for i, s in enumerate(listed) if "commit_record.sh" in s.get("run", ""))
    assert push > sign and not any(w in str(listed[push].get("if", "")) for w in ("always", "failure"))
    # The stream's own database signs: the one its exports wrote with.
    exports = [s["run"] for s in listed if "python -m collector export new " in s.get("run", "")]
    assert exports and all('--db "$DB"' in run for run in exports) and '--db "$DB"' in step["run"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    python = bin_dir / "python"
    python.write_text("#!/bin/sh\necho 'Error: refused to sign any file of data/record: 2026/09/01/000003.jsonl.bz2'"
                      " >&2\nexit 1\n")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    summary = tmp_path / "summary.md"
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "RECORD_SIGNING_KEY": "not a key",
           "RUNNER_TEMP": str(tmp_path), "GITHUB_STEP_SUMMARY": str(summary), "STREAM_DIR": "data/record",
           "DB": str(tmp_path / "work.db"), "HOME": str(tmp_path)}
    script = tmp_path / "step.sh"
    script.write_text(step["run"])
    ran = subprocess.run([*RUNNER_SHELLS[step.get("shell")], str(script)], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=30)
    assert ran.returncode != 0, f"{name}: the sign step passed although export sign refused"
    assert "000003.jsonl.bz2" in ran.stderr
    assert not (tmp_path / "record.key").exists()  # the key file goes, whatever the outcome


def test_the_rollovers_chain_check_fails_when_the_chain_does():
    """Its `export verify --chain-only` is piped into tee too: it runs with pipefail, or it could never fail."""
    step = next(s for s in load(WORKFLOWS / "rollover.yml")["jobs"]["rollover"]["steps"]
                if s.get("name") == "Check the chain across every period's record repository")
    assert "| tee" in step["run"] and RUNNER_SHELLS[step.get("shell")][-1] == "pipefail"


def test_every_step_that_pipes_a_command_runs_with_pipefail():
    """Not the sign steps alone: any step whose script pipes a command into another (tee to the job summary)
    would pass when the command fails unless it runs under `shell: bash` (vantages.yml's compare did)."""
    for path in sorted(WORKFLOWS.glob("*.yml")):
        workflow = load(path)
        for name, job in workflow["jobs"].items():
            default = ((workflow.get("defaults") or {}).get("run") or {}).get("shell")
            for step in job.get("steps", []):
                script = step.get("run", "")
                if any("|" in line.split("#", 1)[0].replace("||", "") for line in script.splitlines()):
                    assert step.get("shell", default) == "bash", f"{path.name} {name}: {step.get('name')!r}"
