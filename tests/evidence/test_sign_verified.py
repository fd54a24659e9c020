"""The record's key signs only what it verified: a forged file pushed into the record repository stops the job.

The forgery is made as an attacker with a leaked token would make it: with
the project's own code (it is public), from the last file of the record
repository, chained to it, its content in the record's format, one more
`runs` row of the right shape; committed and pushed to the repository the
job clones. `export verify --chain-only` cannot tell it from the record;
`export sign` refuses it (and the job's own next file, chained to it), signs
nothing, exits 1 naming it, and the health check `evidence-unverified` fails
naming it. The stream's own new files are still signed.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from collector import settings
from collector.cli.main import cli
from collector.evidence import sshsig
from collector.record.export import export_new
from collector.record.fileformat import (
    FORMAT, SUFFIX, decode_value, file_sha256, file_text, read_header, read_lines, row_digest, row_line,
)
from collector.record.folder import batches, last_batch, write_new
from collector.record.store import Store
from testing.keys import allowed_signers, make_key
from tests.record.test_export import TEXT, _article, _run, _snapshot


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main",
                           *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def _new_file(store: Store, record: Path, n: int) -> Path:
    """One run of the stream's own job: its rows, exported by it."""
    run = _run(store)
    _snapshot(store, run, _article(store, run, n), TEXT + str(n))
    store.insert("run_finishes", {"run_id": run, "finished_at": "t", "counts": "{}"})
    path = export_new(store, record).path
    assert path is not None
    return path


def _sign(record: Path, key: Path, trust: Path, db: Path):
    return CliRunner().invoke(cli, ["export", "sign", "--out", str(record), "--key", str(key),
                                    "--trust", str(trust), "--db", str(db)])


def _health(record: Path, trust: Path, db: Path) -> tuple[int, list[dict]]:
    result = CliRunner().invoke(cli, ["health", "--db", str(db), "--record", str(record), "--trust", str(trust),
                                      "--check", "evidence-unverified", "--json"])
    return result.exit_code, json.loads(result.output)["findings"]


@pytest.fixture
def job(tmp_path):
    """Return (record clone, trust folder, key, the stream's database, the repository): two files, signed, pushed."""
    key = make_key(tmp_path / "keys", "record")
    trust = tmp_path / "trust"
    allowed_signers(trust / "allowed_signers", settings.RECORD_SIGNER, key, namespace=settings.RECORD_SIGNING_NAMESPACE)
    remote = tmp_path / "record.git"
    _git(tmp_path, "init", "-q", "--bare", str(remote))
    record = tmp_path / "record"
    _git(tmp_path, "clone", "-q", str(remote), str(record))
    db = tmp_path / "work.db"
    store = Store(db)
    for n in range(2):
        _new_file(store, record, n)
        signed = _sign(record, key, trust, db)
        assert signed.exit_code == 0 and "signed 1 export file(s)" in signed.output, signed.output
    store.close()
    _git(record, "add", "-A")
    _git(record, "commit", "-qm", "record: collection run 1")
    _git(record, "push", "-q", "origin", "HEAD:main")
    return record, trust, key, db, remote


def _forge(remote: Path, where: Path) -> str:
    """Push a forged, well-chained, unsigned export file into the record repository; return its record name."""
    _git(where.parent, "clone", "-q", str(remote), str(where))
    last = last_batch(where)
    header = read_header(last)
    genuine = next(line["r"] for line in read_lines(last) if line["t"] == "runs")
    row = {k: decode_value(v) for k, v in genuine.items()} | {  # its settings written whole, not as a $same
        "id": header["through"]["runs"] + 1, "started_at": "2026-09-01T03:00:00+00:00",
        "settings": json.dumps({"MIN_INTERVAL_SECONDS": 2.0})}
    head = {"format": FORMAT, "record": "takedownwatch", "batch": header["batch"] + 1,
            "written_at": "2026-09-01T03:05:00Z", "software": header["software"],
            "schema_version": header["schema_version"], "previous_sha256": file_sha256(last),
            "after": dict(header["through"]), "through": {**header["through"], "runs": row["id"]},
            "boundary": {**header["boundary"], "runs": row_digest(row)}, "rows": {"runs": 1}}
    relative = f"{last.relative_to(where).parent.as_posix()}/{head['batch']:06d}{SUFFIX}"
    write_new(where / relative, file_text(head, [row_line("runs", row)]))
    _git(where, "add", "-A")
    _git(where, "commit", "-qm", "record: collection run 2")
    _git(where, "push", "-q", "origin", "HEAD:main")
    return relative


def test_a_forged_well_chained_file_pushed_into_the_record_is_not_signed_and_stops_the_job(tmp_path, job):
    record, trust, key, db, remote = job
    forged = _forge(remote, tmp_path / "attacker")
    _git(record, "pull", "-q", "origin", "main")  # the next job's checkout
    assert (record / forged).is_file() and not sshsig.signature_path(record / forged).exists()
    chain = CliRunner().invoke(cli, ["export", "verify", "--out", str(record), "--chain-only"])
    assert chain.exit_code == 0 and "3 export files, chain intact" in chain.output  # as good as the record
    # The job brings its database in sync with the record (it reads the forged rows), collects, exports.
    resumed = CliRunner().invoke(cli, ["export", "rebuild", "--resume", "--out", str(record), "--db", str(db)])
    assert resumed.exit_code == 0, resumed.output
    store = Store(db)
    own = _new_file(store, record, 5)
    store.close()
    assert read_header(own)["previous_sha256"] == file_sha256(record / forged)
    result = _sign(record, key, trust, db)
    assert result.exit_code == 1, result.output
    assert f"{record / forged}: the stream's working database did not write it" in result.output
    assert f"{own}: it follows {forged}, which does not verify" in result.output
    assert "Nothing was signed" in result.output
    assert [p for p in batches(record) if sshsig.signature_path(p).exists()] == batches(record)[:2]
    code, findings = _health(record, trust, db)  # on the stream's own database
    assert code == 1 and [f["state"] for f in findings] == ["fail"]
    assert findings[0]["subject"] == "." and forged in findings[0]["detail"]
    merged = tmp_path / "all.db"  # and on the one that follows every stream, as health.yml runs it
    assert CliRunner().invoke(cli, ["export", "follow", "--out", str(record), "--db", str(merged)]).exit_code == 0
    code, findings = _health(record, trust, merged)
    assert code == 1 and findings[0]["state"] == "fail" and forged in findings[0]["detail"]
    assert "none of them pushed this one" in findings[0]["detail"]


def test_the_streams_own_new_files_are_signed_also_those_left_unsigned_without_a_key(job):
    record, trust, key, db, _remote = job
    store = Store(db)
    own = [_new_file(store, record, 5), _new_file(store, record, 6)]  # two runs without RECORD_SIGNING_KEY
    store.close()
    code, findings = _health(record, trust, db)
    assert code == 0 and findings[0]["state"] == "ok" and "2 awaiting" in findings[0]["detail"]
    pruned = CliRunner().invoke(cli, ["export", "prune", "--out", str(record), "--db", str(db),
                                      "--published", str(record.parent / "published")])
    assert pruned.exit_code == 0 and f"pruned {db}" in pruned.output, pruned.output  # keeps what it wrote
    result = _sign(record, key, trust, db)
    assert result.exit_code == 0 and "signed 2 export file(s)" in result.output, result.output
    assert all(sshsig.signature_path(p).exists() for p in own)
    for path in batches(record):  # each a good signature of the record's key
        sshsig.verify(path, settings.RECORD_SIGNER, trust / "allowed_signers", settings.RECORD_SIGNING_NAMESPACE)
    assert _sign(record, key, trust, db).output.startswith("signed 0 export file(s)")


def test_a_rebuilt_database_wrote_nothing_and_a_bad_last_signature_verifies_nothing(tmp_path, job):
    record, trust, key, db, _remote = job
    store = Store(db)
    own = _new_file(store, record, 5)
    store.close()
    rebuilt = tmp_path / "rebuilt.db"  # the cache lost: the record's files are read, not written by it
    assert CliRunner().invoke(cli, ["export", "rebuild", "--out", str(record), "--db", str(rebuilt)]).exit_code == 0
    result = _sign(record, key, trust, rebuilt)
    assert result.exit_code == 1 and f"{own}: the stream's working database did not write it" in result.output
    stranger = make_key(tmp_path / "other", "other")
    last_signed = batches(record)[1]
    sshsig.signature_path(last_signed).unlink()
    sshsig.sign(last_signed, stranger, settings.RECORD_SIGNING_NAMESPACE)
    result = _sign(record, key, trust, db)
    assert result.exit_code == 1 and "does not verify" in result.output and not sshsig.signature_path(own).exists()


def test_the_archive_jobs_database_merged_anew_still_knows_what_it_wrote(tmp_path, job):
    """The archive job writes from the database that follows every stream; merged anew, it keeps export_written."""
    from collector.record import streams
    from collector.record.follow import parts_folder

    record, trust, key, _db, _remote = job
    archive, folder = tmp_path / "archive.db", streams.folder(record, "archive")
    follow = ["export", "follow", "--out", str(record), "--db", str(archive), "--writes", "archive"]
    assert CliRunner().invoke(cli, follow).exit_code == 0
    store = Store(archive)
    run = _run(store, command="archive")
    store.insert("run_finishes", {"run_id": run, "finished_at": "t", "counts": "{}"})
    own = export_new(store, folder).path  # pushed unsigned: RECORD_SIGNING_KEY was not set
    store.close()
    for part in parts_folder(archive).iterdir():  # a stream's own database lost: the next follow merges anew
        part.unlink()
    again = CliRunner().invoke(cli, follow)
    assert again.exit_code == 0 and "merged anew" in again.output, again.output
    result = _sign(folder, key, trust, archive)
    assert result.exit_code == 0 and str(own) in result.output, result.output
