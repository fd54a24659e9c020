"""Every edit is detected: each way of changing the record or its database fails `export verify`, named.

A record of four signed, doubly timestamped export files and its working
database verify; then each case changes one thing, as someone with the
repository, the sqlite3 shell or both would, and verification must fail
naming where.
"""

from __future__ import annotations

import bz2
import json
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from collector import settings
from collector.cli.export import export as export_command
from collector.clock import Clock
from collector.collect.context import RunContext
from collector.evidence import sshsig
from collector.evidence.signing import sign_verified
from collector.evidence.timestamps import load_authorities, stamp_missing, token_path
from collector.evidence.verify import VerificationFailed, verify_record
from collector.record.export import export_new
from collector.record.fileformat import file_sha256
from collector.record.folder import batches
from collector.record.store import Store
from testing.keys import allowed_signers, make_key
from testing.trust import make_trust
from tests.record.test_export import TEXT, _article, _run, _snapshot


@dataclass
class Signed:
    """A record folder, its trust folder and key, and its database."""

    out: Path
    trust: Path
    key: Path
    db: Path

    def files(self) -> list[Path]:
        return batches(self.out)


def build_record(root: Path, farm, files: int = 4) -> Signed:
    """Return a record of `files` export files, each signed and timestamped by two loopback authorities."""
    trust = make_trust(root / "trust", farm)
    out, db = root / "record", root / "work.db"
    store = Store(db)
    stamper = RunContext.open(store, "timestamp", clock=Clock(), vantage="v", warc_dir=root / "warc",
                              interval=0.01, allow_loopback=True)
    for n in range(files):
        run = _run(store)
        _snapshot(store, run, _article(store, run, n), TEXT + str(n))
        store.insert("run_finishes", {"run_id": run, "finished_at": "t", "counts": "{}"})
        export_new(store, out)
        sign_verified(out, trust.key, trust.folder / "allowed_signers", store.conn)
        report = stamp_missing(stamper.fetcher, out, load_authorities(trust.folder))
        assert report.failed == [] and len(report.kept) == 2
    stamper.warc.close()
    store.close()
    return Signed(out, trust.folder, trust.key, db)


@pytest.fixture
def signed(tmp_path, farm):
    return build_record(tmp_path, farm)


def test_an_untouched_record_and_database_verify(signed):
    report = verify_record(signed.out, signed.trust, db=signed.db, require_timestamps=True)
    assert report.files == report.signed == 4 and len(report.tokens) == 8 and report.awaiting == []
    assert report.rows_compared > 10 and report.late == []
    result = CliRunner().invoke(export_command, ["verify", "--out", str(signed.out), "--trust", str(signed.trust),
                                                 "--db", str(signed.db), "--require-timestamps"])
    assert result.exit_code == 0 and "4 signatures good" in result.output and "8 timestamp tokens good" in result.output


# -- the cases -------------------------------------------------------------------------------------

def _flip_byte(path: Path, where: float) -> None:
    data = bytearray(path.read_bytes())
    data[int(len(data) * where)] ^= 0x01
    path.write_bytes(bytes(data))


def _rewrite(path: Path, edit) -> None:
    """Rewrite an export file's text through edit(lines) and compress it again, as a careful forger would."""
    lines = bz2.decompress(path.read_bytes()).decode().split("\n")
    path.write_bytes(bz2.compress("\n".join(edit(lines)).encode(), 9))


def _edit_text(lines: list[str]) -> list[str]:
    return [line.replace("বৈঠক", "সভা") for line in lines]


def byte_edit_old(s: Signed):
    _flip_byte(s.files()[0], 0.5)


def byte_edit_newest(s: Signed):
    _flip_byte(s.files()[-1], 0.6)


def valid_edit_newest(s: Signed):  # content still agrees with its header: only the signature tells
    _rewrite(s.files()[-1], _edit_text)


def deleted_middle(s: Signed):
    s.files()[1].unlink()


def deleted_newest(s: Signed):
    newest = s.files()[-1]
    for extra in newest.parent.glob(newest.name + ".*"):
        extra.unlink()
    newest.unlink()


def swapped(s: Signed):
    a, b = s.files()[1:3]
    temporary = a.with_name("swap")
    a.rename(temporary)
    b.rename(a)
    temporary.rename(b)


def forged_appended(s: Signed):
    newest = s.files()[-1]
    header = json.loads(bz2.decompress(newest.read_bytes()).decode().split("\n")[0])
    forged = {**header, "batch": header["batch"] + 1, "previous_sha256": file_sha256(newest),
              "after": header["through"], "rows": {}, "through": header["through"]}
    (newest.parent / f"{forged['batch']:06d}.jsonl.bz2").write_bytes(bz2.compress((json.dumps(forged) + "\n").encode()))


def forged_with_another_key(s: Signed):
    forged_appended(s)
    stranger = make_key(s.out.parent / "stranger", "stranger")
    sshsig.sign(s.files()[-1], stranger, settings.RECORD_SIGNING_NAMESPACE)


def rewritten_chain(s: Signed):
    files = s.files()
    _rewrite(files[1], _edit_text)
    for before, after in zip(files[1:], files[2:]):
        sha = file_sha256(before)

        def rechain(lines, sha=sha):
            header = json.loads(lines[0])
            header["previous_sha256"] = sha
            return [json.dumps(header, ensure_ascii=False, separators=(",", ":")), *lines[1:]]

        _rewrite(after, rechain)


def bad_json_newest(s: Signed):
    _rewrite(s.files()[-1], lambda lines: [*lines[:-2], lines[-2][:-3], *lines[-1:]])


def token_of_another_file(s: Signed):
    files = s.files()
    shutil.copy(token_path(files[0], "tsa-one"), token_path(files[2], "tsa-one"))


def _shell(s: Signed, *statements: str) -> None:
    conn = sqlite3.connect(s.db)
    for statement in statements:
        conn.execute(statement)
    conn.commit()
    conn.close()


def _trigger_sql(s: Signed, name: str) -> str:
    conn = sqlite3.connect(s.db)
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE name = ?", (name,)).fetchone()[0]
    conn.close()
    return sql


def dropped_trigger(s: Signed):
    _shell(s, "DROP TRIGGER requests_no_update")


def altered_trigger(s: Signed):
    _shell(s, "DROP TRIGGER requests_no_delete",
           "CREATE TRIGGER requests_no_delete BEFORE DELETE ON requests BEGIN SELECT 1; END")


def updated_old_row(s: Signed):  # the trigger dropped, the row changed, the trigger put back as it was
    sql = _trigger_sql(s, "requests_no_update")
    _shell(s, "DROP TRIGGER requests_no_update", "UPDATE requests SET result = 'not_found' WHERE id = 2", sql)


def deleted_old_row(s: Signed):
    sql = _trigger_sql(s, "requests_no_delete")
    _shell(s, "DROP TRIGGER requests_no_delete", "DELETE FROM requests WHERE id = 1", sql)


def inserted_row(s: Signed):
    _shell(s, "INSERT INTO requests (run_id, purpose, method, url, attempt, sent, started_at, finished_at, "
              "result, vantage) VALUES ((SELECT MIN(run_id) FROM run_finishes), 'capture', 'GET', 'https://o.test/forged', 1, 1, 't', 't', 'ok', 't')")


CASES = {
    "a byte edited in an old file": (byte_edit_old, "000001.jsonl.bz2"),
    "a byte edited in the newest file": (byte_edit_newest, "000004.jsonl.bz2"),
    "the newest file's text edited, header kept": (valid_edit_newest, "000004.jsonl.bz2: no good signature"),
    "a file deleted": (deleted_middle, "a file is missing"),
    "the newest file deleted with its signature and tokens": (deleted_newest, "not the file"),
    "two files swapped": (swapped, "its header says batch"),
    "a forged file appended with correct chain fields": (forged_appended, "000005.jsonl.bz2 has no signature"),
    "a forged file signed with a key not allowed": (forged_with_another_key, "000005.jsonl.bz2: no good signature"),
    "a rewritten chain": (rewritten_chain, "000002.jsonl.bz2: no good signature"),
    "bad JSON in the newest body": (bad_json_newest, "not JSON"),
    "a token copied from another file": (token_of_another_file, "000003.jsonl.bz2.tsa-one.tsr: does not vouch"),
    "a dropped trigger": (dropped_trigger, "trigger requests_no_update is missing"),
    "an altered trigger": (altered_trigger, "trigger requests_no_delete is not as the schema defines it"),
    "an updated old row": (updated_old_row, "requests row id=2: result is 'not_found' in the database, 'ok'"),
    "a deleted old row": (deleted_old_row, "requests row id=1 of the record"),
    "an inserted row": (inserted_row, "added after its run ended"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_edit_is_detected_and_named(signed, case):
    change, named = CASES[case]
    change(signed)
    with pytest.raises(VerificationFailed) as caught:
        verify_record(signed.out, signed.trust, db=signed.db, require_timestamps=True)
    assert named in str(caught.value), str(caught.value)


def test_a_dropped_trigger_is_never_recreated_and_export_refuses_until_an_operator_acts(signed):
    dropped_trigger(signed)
    for _ in range(2):  # opening the store again does not put it back
        store = Store(signed.db)
        assert store.tampering == ["trigger requests_no_update is missing"]
        store.close()
    runner = CliRunner()
    refused = runner.invoke(export_command, ["new", "--db", str(signed.db), "--out", str(signed.out)])
    assert refused.exit_code == 1 and "export refused: the database was tampered with" in refused.output
    restored = runner.invoke(export_command, ["restore-triggers", "--db", str(signed.db), "--out", str(signed.out),
                                              "--operator", "A. Rahman", "--reason", "rows checked"])
    assert restored.exit_code == 0, restored.output
    store = Store(signed.db)
    assert store.tampering == []
    action = store.one("SELECT * FROM operator_actions")
    assert (action["operator"], json.loads(action["findings"])) == ("A. Rahman", ["trigger requests_no_update is missing"])
    store.close()
    wrote = runner.invoke(export_command, ["new", "--db", str(signed.db), "--out", str(signed.out)])
    assert wrote.exit_code == 0 and "operator_actions 1" in wrote.output


def test_restoring_triggers_is_refused_when_a_row_differs(signed):
    sql = _trigger_sql(signed, "requests_no_update")
    _shell(signed, "DROP TRIGGER requests_no_update", "UPDATE requests SET result = 'gone' WHERE id = 3")
    restored = CliRunner().invoke(export_command, ["restore-triggers", "--db", str(signed.db), "--out",
                                                   str(signed.out), "--operator", "x", "--reason", "y"])
    assert restored.exit_code != 0 and "requests row id=3" in restored.output
    assert Store(signed.db).tampering == ["trigger requests_no_update is missing"]  # nothing was restored
    assert sql.startswith("CREATE TRIGGER")


def test_signing_refuses_a_key_the_allowed_signers_do_not_name(tmp_path, signed):
    store = Store(signed.db)
    run = _run(store)  # the stream's own next file: one its key would sign
    _snapshot(store, run, _article(store, run, 7), TEXT + " 7")
    store.insert("run_finishes", {"run_id": run, "finished_at": "t", "counts": "{}"})
    assert export_new(store, signed.out).path == signed.files()[-1]
    stranger = make_key(tmp_path / "other", "other")
    with pytest.raises(sshsig.SignatureError):
        sign_verified(signed.out, stranger, signed.trust / "allowed_signers", store.conn)
    assert not sshsig.signature_path(signed.files()[-1]).exists()
    allowed_signers(signed.trust / "allowed_signers", settings.RECORD_SIGNER, signed.key, stranger,
                    namespace=settings.RECORD_SIGNING_NAMESPACE)
    assert sign_verified(signed.out, stranger, signed.trust / "allowed_signers", store.conn) == [signed.files()[-1]]
    store.close()


def test_rows_added_since_the_last_export_are_not_differences(signed):
    store = Store(signed.db)
    run = _run(store)
    _snapshot(store, run, _article(store, run, 9), TEXT)
    store.insert("run_finishes", {"run_id": run, "finished_at": "t", "counts": "{}"})  # keyed by run, not id
    store.close()
    report = verify_record(signed.out, signed.trust, db=signed.db)
    assert report.unexported_rows >= 5


def test_an_edited_row_of_a_table_keyed_otherwise_is_named(signed):
    _shell(signed, "DROP TRIGGER run_finishes_no_update", "UPDATE run_finishes SET counts = '{\"x\": 1}'")
    # The trigger stays dropped, so the database check names it first; the comparison names the row.
    with pytest.raises(VerificationFailed, match="run_finishes_no_update is missing"):
        verify_record(signed.out, signed.trust, db=signed.db)
    from collector.record.compare import compare_database
    assert "run_finishes row run_id=" in compare_database(signed.out, signed.db).difference
