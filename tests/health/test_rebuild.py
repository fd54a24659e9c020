"""A restore that fell back to a rebuild is recorded (sync_database.sh, `run --restored-by-rebuild`) and raised."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

from click.testing import CliRunner

from collector.cli.main import cli
from testing import hostile, replica

ROOT = Path(__file__).resolve().parents[2]
WHEN = datetime(2026, 9, 1, tzinfo=timezone.utc)


def _sync(tmp_path: Path, db: Path, resumes: bool) -> str:
    """Return what sync_database.sh appended to $GITHUB_ENV, its collector a stand-in whose resume
    succeeds or not (the real rebuild and resume are tests/test_workflows.py's)."""
    stand_in = tmp_path / "python"
    stand_in.write_text("#!/bin/bash\n"
                        f'if [[ "$*" == *"--resume"* ]]; then exit {0 if resumes else 1}; fi\n'
                        "exit 0\n")
    stand_in.chmod(0o755)
    env_file = tmp_path / "github_env"
    env_file.write_text("")
    env = dict(os.environ, PYTHON=str(stand_in), GITHUB_ENV=str(env_file))
    done = subprocess.run(["bash", str(ROOT / ".github" / "scripts" / "sync_database.sh"), str(tmp_path / "record"),
                           str(db)], env=env, capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    return env_file.read_text()


def test_sync_database_says_when_it_rebuilt(tmp_path):
    saved = tmp_path / "saved.db"
    saved.write_bytes(b"a cached copy")
    assert _sync(tmp_path, saved, resumes=True) == ""  # the cached copy continues the record
    assert _sync(tmp_path, tmp_path / "none.db", resumes=True) == "RESTORED_BY=missing\n"
    assert _sync(tmp_path, saved, resumes=False) == "RESTORED_BY=unusable\n"


def test_runs_on_a_rebuilt_database_raise_storage_rebuild(tmp_path, farm):
    host = hostile.add_host(farm)
    host.routes.update(hostile.outlet_routes(host, WHEN, ["/news/1"]))
    (tmp_path / "outlets.toml").write_text(replica.registry_toml({"alpha": host}))
    db = str(tmp_path / "work.db")

    def run(at: datetime, *rebuilt: str) -> None:
        result = CliRunner().invoke(cli, ["run", "--db", db, "--outlets", str(tmp_path / "outlets.toml"),
                                          "--warc-dir", str(tmp_path / "warc"), "--now", at.isoformat(),
                                          "--min-interval", "0.01", "--record", str(tmp_path / "record"),
                                          *rebuilt])
        assert result.exit_code == 0, result.output

    def rebuild_check(at: datetime) -> dict:
        result = CliRunner().invoke(cli, ["health", "--db", db, "--now", at.isoformat(), "--json",
                                          "--check", "storage-rebuild"])
        return {f["subject"]: (f["state"], f["value"]) for f in json.loads(result.output)["findings"]}

    run(WHEN)
    run(WHEN + timedelta(minutes=15), "--restored-by-rebuild", "unusable")
    assert rebuild_check(WHEN + timedelta(minutes=20)) == {"default": ("warn", 1)}
    run(WHEN + timedelta(minutes=30), "--restored-by-rebuild", "missing")
    assert rebuild_check(WHEN + timedelta(minutes=35)) == {"default": ("fail", 2)}
    warnings = sqlite3.connect(db).execute("SELECT warnings FROM run_finishes ORDER BY run_id DESC").fetchone()[0]
    assert "rebuilt from the record: its cached copy was missing" in warnings
    run(WHEN + timedelta(hours=25))  # a day of cached restores later, it clears
    assert rebuild_check(WHEN + timedelta(hours=25, minutes=5)) == {"default": ("ok", 0)}
