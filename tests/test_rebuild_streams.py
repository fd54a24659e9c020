"""rebuild-database.yml's logic: each stream's working database rebuilt alone, as its collect job resumes it."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from collector.cli.export import export as export_command
from collector.record import streams
from tests.collect.test_pipeline import outlets  # noqa: F401  (the loopback outlets fixture)
from tests.record.test_streams import SHARDS, record  # noqa: F401  (two shards' streams, two files each)

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / ".github" / "scripts" / "rebuild_stream.sh"


def _rebuild(stream: str, db: Path, *folders: Path) -> subprocess.CompletedProcess:
    env = {"PATH": os.environ["PATH"], "PYTHON": sys.executable, "PYTHONPATH": str(ROOT), "STREAM": stream}
    return subprocess.run(["bash", str(SCRIPT), str(db), *map(str, folders)], capture_output=True, text=True,
                          env=env, cwd=db.parent, timeout=300)


def _runs(db: Path) -> set:
    conn = sqlite3.connect(db)
    try:
        return {r[0] for r in conn.execute("SELECT id FROM runs")}
    finally:
        conn.close()


def test_each_streams_database_is_rebuilt_alone_pruned_and_resumable_by_its_job(tmp_path, record):  # noqa: F811
    for name in SHARDS:
        db = tmp_path / f"rebuilt-{name}.db"
        done = _rebuild(name, db, record)
        assert done.returncode == 0 and done.stdout == "rebuilt=yes\n", done.stdout + done.stderr
        assert "pruned" in done.stderr, done.stderr
        conn = sqlite3.connect(db)
        assert conn.execute("SELECT name FROM export_stream").fetchone() == (name,)
        conn.close()
        assert _runs(db) == _runs(tmp_path / f"{name}.db")  # the stream's own runs, none of the other's
        # What the stream's collect job does next (sync_database.sh): resume from the stream's folder.
        resumed = CliRunner().invoke(export_command, ["rebuild", "--resume", "--out",
                                                      str(streams.folder(record, name)), "--db", str(db)])
        assert resumed.exit_code == 0 and "already in sync" in resumed.output, resumed.output


def test_a_stream_with_no_file_yet_has_nothing_to_save_and_a_bad_name_is_refused(tmp_path, record):  # noqa: F811
    for stream in ("", "bd-1of2"):  # the default stream holds no file here; bd's first job has not run
        done = _rebuild(stream, tmp_path / "none.db", record)
        assert done.returncode == 0 and done.stdout == "rebuilt=no\n", done.stdout + done.stderr
        assert "starts from an empty database" in done.stderr and not (tmp_path / "none.db").exists()
    bad = _rebuild("Bad/name", tmp_path / "bad.db", record)
    assert bad.returncode == 2 and "not a stream name" in bad.stderr and bad.stdout == ""
