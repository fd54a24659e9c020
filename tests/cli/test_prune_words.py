"""`export prune` and `--prune-every` name the pruning; `export level` and `--level-every`, former names, still work.

"Level" said both "in sync with the record" and "pruned"; since issue 33 it is only a former name: a database is
in sync with the record, and the command that leaves out of the working database the rows already in the record
is `export prune`. Scripts and jobs that still call the
old names run the same command, hidden from --help.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from collector.cli.export import export, level_command, prune_command
from collector.cli.main import cli
from collector.record import export as record_export
from collector.record.store import Store

SCRIPTS = Path(__file__).resolve().parents[2] / ".github" / "scripts"

def invoke(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def exported(tmp_path, name: str):
    """Return (database, record folder): one run, exported, so the database is in sync with the record."""
    db, out = tmp_path / f"{name}.db", tmp_path / f"record-{name}"
    store = Store(db)
    store.insert("runs", {"command": "run", "started_at": "2027-02-06T00:00:00.000000Z", "vantage": "v",
                          "software_version": "0", "settings": {}})
    record_export.export_new(store, out)
    store.conn.close()
    return db, out


def test_export_prune_is_the_commands_name_and_says_it_prunes():
    shown = invoke("export", "prune", "--help")
    assert shown.exit_code == 0 and "Usage: cli export prune" in shown.output
    assert "Prune the working database: leave out the rows already in the record" in shown.output
    listed = invoke("export", "--help").output
    assert "  prune " in listed and "  level " not in listed, listed  # the old name is hidden


def test_export_level_runs_the_same_command_hidden():
    old, new = export.commands["level"], export.commands["prune"]
    assert (old, new) == (level_command, prune_command)  # the module's former name for it too
    assert old.hidden and not new.hidden
    assert old.callback is new.callback
    assert [p.opts for p in old.params] == [p.opts for p in new.params]


@pytest.mark.parametrize("name", ["prune", "level"])
def test_both_names_prune_a_database_in_sync_with_the_record(tmp_path, name):
    db, out = exported(tmp_path, name)
    done = invoke("export", name, "--db", str(db), "--out", str(out), "--published", str(tmp_path / "published"))
    assert done.exit_code == 0 and done.output.startswith(f"pruned {db}: "), done.output
    assert done.output.rstrip().endswith("left out (in the record): nothing"), done.output
    again = invoke("export", name, "--db", str(db), "--out", str(out), "--published", str(tmp_path / "published"),
                   "--unless-within", "4", "--now", "2027-02-06T01:00:00Z")
    assert f"{db} was pruned at " in again.output and "left as it is" in again.output, again.output


def test_follow_shows_prune_every_and_still_takes_level_every(tmp_path):
    shown = invoke("export", "follow", "--help").output
    assert "--prune-every" in shown and "--level-every" not in shown, shown
    (tmp_path / "record").mkdir()
    for option in ("--prune-every", "--level-every"):
        db = tmp_path / f"{option.strip('-')}.db"
        done = invoke("export", "follow", "--out", str(tmp_path / "record"), "--db", str(db), option, "4")
        # Given either name, the follow goes on to prune: here refused, for a database that holds no run yet.
        assert done.exit_code == 0 and f"{db} not pruned: " in done.output, done.output
    plain = invoke("export", "follow", "--out", str(tmp_path / "record"), "--db", str(tmp_path / "plain.db"))
    assert plain.exit_code == 0 and "pruned" not in plain.output, plain.output


@pytest.mark.parametrize("options, says", [
    (["--for-figures"], "give --prune-every too"),
    (["--prune-every", "4", "--level-every", "4"], "--level-every is the former name of --prune-every"),
])
def test_follow_refuses_what_says_nothing_or_twice_how_often_to_prune(tmp_path, options, says):
    refused = CliRunner().invoke(cli, ["export", "follow", "--out", str(tmp_path), "--db", str(tmp_path / "x.db"),
                                       *options])
    assert refused.exit_code == 2 and says in refused.output, refused.output
    assert not (tmp_path / "x.db").exists()


def _called(tmp_path, script: str, **env) -> list[str]:
    """Return the collector commands a script runs, its interpreter a stand-in that records them and succeeds."""
    calls = tmp_path / "calls"
    calls.write_text("")
    stand_in = tmp_path / "python"
    stand_in.write_text(f'#!/bin/bash\necho "$*" >> {calls}\n')
    stand_in.chmod(0o755)
    db = tmp_path / "cached.db"
    db.write_bytes(b"a cached copy")  # sync_database.sh resumes it
    clean = {k: v for k, v in os.environ.items() if k not in ("PRUNE_EVERY_HOURS", "LEVEL_EVERY_HOURS", "DEADLINE")}
    done = subprocess.run(["bash", str(SCRIPTS / script), str(tmp_path / "record"), str(db)],
                          env=dict(clean, PYTHON=str(stand_in), **env), capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    return calls.read_text().splitlines()


@pytest.mark.parametrize("env, every", [({}, "4"), ({"PRUNE_EVERY_HOURS": "2"}, "2"), ({"LEVEL_EVERY_HOURS": "3"}, "3"),
                                        ({"PRUNE_EVERY_HOURS": "0", "LEVEL_EVERY_HOURS": "3"}, None)])
def test_the_jobs_scripts_call_the_new_names(tmp_path, env, every):
    followed = _called(tmp_path, "follow_database.sh", **env)
    assert len(followed) == 1 and followed[0].startswith("-m collector export follow "), followed
    assert "--level-every" not in followed[0]
    assert (f"--prune-every {every}" in followed[0]) if every else ("--prune-every" not in followed[0])
    if every is not None:  # sync_database.sh: PRUNE_EVERY_HOURS 0 prunes every time (--unless-within 0)
        pruned = _called(tmp_path, "sync_database.sh", **env)[-1]
        assert pruned.startswith("-m collector export prune ") and f"--unless-within {every} " in pruned, pruned
