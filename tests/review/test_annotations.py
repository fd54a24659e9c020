"""Signed annotations: written apart from the record, reviewed by a second person, verified."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from collector.cli.review import annotate, annotate_review, annotations
from collector.review.annotations import NAMESPACE
from collector.record.store import Store

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None,
                                reason="ssh-keygen (OpenSSH 8.0 or later) is needed to sign annotations")
ROOT = Path(__file__).resolve().parents[2]
NOW = "2026-03-01T09:00:00Z"


@pytest.fixture
def keys(tmp_path) -> dict[str, Path]:
    """Return throwaway ed25519 private keys for alice, bob and mallory."""
    made = {}
    for name in ("alice", "bob", "mallory"):
        path = tmp_path / "keys" / name
        path.parent.mkdir(exist_ok=True)
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)], check=True)
        made[name] = path
    return made


def signer_line(principal: str, key: Path) -> str:
    kind, blob = key.with_suffix(".pub").read_text().split()[:2]
    return f'{principal} namespaces="{NAMESPACE}" {kind} {blob}\n'


@pytest.fixture
def folder(tmp_path, keys) -> Path:
    """Return an annotations folder whose allowed_signers names alice and bob (and carol, with alice's key)."""
    path = tmp_path / "annotations"
    path.mkdir()
    (path / "allowed_signers").write_text(
        "# test signers\n" + signer_line("alice", keys["alice"]) + signer_line("bob", keys["bob"])
        + signer_line("carol", keys["alice"]))
    return path


@pytest.fixture
def record(tmp_path) -> Path:
    """Return the path of a closed record holding one gone event (id 1), built from plain inserts."""
    store = Store(tmp_path / "record.db")
    run = store.insert("runs", {"command": "test", "started_at": NOW, "vantage": "t", "software_version": "0",
                                "settings": {}})
    article = store.insert("articles", {"outlet_id": "alpha", "url_key": "https://a.example/news/1",
                                        "url": "https://a.example/news/1", "first_seen_at": NOW, "first_seen_run": run})
    check = store.insert("checks", {"article_id": article, "slot": "168h", "due_at": NOW, "performed_at": NOW,
                                    "run_id": run, "url": "https://a.example/news/1", "result": "not_found",
                                    "request_chain": [], "outcome": "absent"})
    store.insert("events", {"article_id": article, "kind": "gone", "detected_at": NOW, "article_age_hours": 175.1,
                            "check_id": check, "evidence": {"absent_checks": [check]}, "run_id": run})
    store.close()
    return tmp_path / "record.db"


def invoke(command, *args):
    return CliRunner().invoke(command, [str(a) for a in args])


def write_annotation(record, folder, keys, author="alice", event=1):
    return invoke(annotate, event, "--db", record, "--annotations-dir", folder, "--author", author,
                  "--key", keys[author], "--text", "সংশোধনী নোটিশের পর সরানো হয়েছে", "--now", NOW)


def annotation_ids(folder: Path, kind: str = "annotation") -> list[str]:
    return sorted(p.stem for p in folder.glob(f"{kind}-*.json"))


def state_of(record: Path) -> tuple[str, list[str]]:
    """Return the record file's sha256 and its full SQL dump."""
    import sqlite3

    conn = sqlite3.connect(f"{record.as_uri()}?mode=ro", uri=True)
    try:
        return hashlib.sha256(record.read_bytes()).hexdigest(), list(conn.iterdump())
    finally:
        conn.close()


def test_annotate_review_and_verify(record, folder, keys):
    result = write_annotation(record, folder, keys)
    assert result.exit_code == 0, result.output
    (annotation_id,) = annotation_ids(folder)
    document = json.loads((folder / f"{annotation_id}.json").read_text())
    assert (document["author"], document["event_id"], document["event"]["kind"]) == ("alice", 1, "gone")
    assert document["written_at"].startswith("2026-03-01T09:00:00")
    assert (folder / f"{annotation_id}.json.sig").read_text().startswith("-----BEGIN SSH SIGNATURE-----")

    reviewed = invoke(annotate_review, annotation_id, "--db", record, "--annotations-dir", folder,
                      "--author", "bob", "--key", keys["bob"], "--now", NOW)
    assert reviewed.exit_code == 0, reviewed.output
    (review_id,) = annotation_ids(folder, "review")
    review = json.loads((folder / f"{review_id}.json").read_text())
    assert review["annotation_id"] == annotation_id and review["verdict"] == "approved"

    checked = invoke(annotations, "verify", "--db", record, "--annotations-dir", folder)
    assert checked.exit_code == 0, checked.output
    assert checked.output.count("ok  ") == 2 and "2 files verified" in checked.output


def test_observations_never_change_because_of_an_annotation(record, folder, keys):
    before = state_of(record)
    assert write_annotation(record, folder, keys).exit_code == 0
    (annotation_id,) = annotation_ids(folder)
    assert invoke(annotate_review, annotation_id, "--db", record, "--annotations-dir", folder,
                  "--author", "bob", "--key", keys["bob"]).exit_code == 0
    assert invoke(annotations, "verify", "--db", record, "--annotations-dir", folder).exit_code == 0
    assert state_of(record) == before
    assert "annotation" not in " ".join(before[1]).lower()  # no table, no row: interpretation lives in files


@pytest.mark.parametrize("reviewer, key, message", [
    ("alice", "alice", "a review needs a second person"),
    ("carol", "alice", "annotation's own key"),  # a second name for the same key is not a second person
])
def test_a_review_needs_a_second_person(record, folder, keys, reviewer, key, message):
    assert write_annotation(record, folder, keys).exit_code == 0
    (annotation_id,) = annotation_ids(folder)
    result = invoke(annotate_review, annotation_id, "--db", record, "--annotations-dir", folder,
                    "--author", reviewer, "--key", keys[key])
    assert result.exit_code != 0 and message in result.output
    assert annotation_ids(folder, "review") == []
    assert not list(folder.glob(".pending-*"))


@pytest.mark.parametrize("author, key, event, message", [
    ("mallory", "mallory", 1, "no good signature by mallory"),  # not an allowed signer
    ("bob", "alice", 1, "no good signature by bob"),           # someone else's key
    ("alice", "alice", 99, "no event 99"),
])
def test_refused_annotations_leave_nothing_behind(record, folder, keys, author, key, event, message):
    result = invoke(annotate, event, "--db", record, "--annotations-dir", folder, "--author", author,
                    "--key", keys[key], "--text", "x")
    assert result.exit_code != 0 and message in result.output
    assert sorted(p.name for p in folder.iterdir()) == ["allowed_signers"]


def _tamper_text(folder, keys):
    path = next(folder.glob("annotation-*.json"))
    path.write_text(path.read_text().replace("সরানো", "মুছে ফেলা"))


def _drop_signature(folder, keys):
    next(folder.glob("annotation-*.json.sig")).unlink()


def _resign_after_review(folder, keys):
    """Alice edits her annotation after Bob approved it and signs it again: the review no longer holds."""
    path = next(folder.glob("annotation-*.json"))
    path.write_text(path.read_text().replace("সরানো", "মুছে ফেলা"))
    Path(f"{path}.sig").unlink()
    subprocess.run(["ssh-keygen", "-q", "-Y", "sign", "-f", str(keys["alice"]), "-n", NAMESPACE, str(path)],
                   check=True)


def _stray_signature(folder, keys):
    (folder / "annotation-x.json.sig").write_text("-----BEGIN SSH SIGNATURE-----\n")


def _signer_removed(folder, keys):
    signers = folder / "allowed_signers"
    signers.write_text("".join(line for line in signers.read_text().splitlines(True) if not line.startswith("bob")))


@pytest.mark.parametrize("damage", [_tamper_text, _drop_signature, _resign_after_review, _stray_signature,
                                    _signer_removed])
def test_verify_fails_on_anything_that_does_not_verify(record, folder, keys, damage):
    assert write_annotation(record, folder, keys).exit_code == 0
    (annotation_id,) = annotation_ids(folder)
    assert invoke(annotate_review, annotation_id, "--annotations-dir", folder, "--db", record,
                  "--author", "bob", "--key", keys["bob"]).exit_code == 0
    damage(folder, keys)
    result = invoke(annotations, "verify", "--db", record, "--annotations-dir", folder)
    assert result.exit_code != 0
    assert "FAIL" in result.output and "did not verify" in result.output


def test_verify_fails_when_the_record_holds_a_different_event(record, folder, keys, tmp_path):
    assert write_annotation(record, folder, keys).exit_code == 0
    other = tmp_path / "other"
    other.mkdir()
    shutil.copy(record, other / "record.db")
    store = Store(other / "record.db")
    store.conn.execute("DROP TRIGGER events_no_update")  # simulate a record that is not the one annotated
    store.conn.execute("UPDATE events SET article_age_hours = 1.0")
    store.close()
    result = invoke(annotations, "verify", "--db", other / "record.db", "--annotations-dir", folder)
    assert result.exit_code != 0 and "not the event annotated" in result.output


def test_the_shipped_allowed_signers_lets_nobody_sign(record, tmp_path, keys):
    shipped = ROOT / "data" / "annotations" / "allowed_signers"
    lines = [line for line in shipped.read_text().splitlines() if line.strip() and not line.startswith("#")]
    assert lines == []
    result = invoke(annotate, 1, "--db", record, "--annotations-dir", tmp_path / "a", "--allowed-signers", shipped,
                    "--author", "alice", "--key", keys["alice"], "--text", "x")
    assert result.exit_code != 0 and "no good signature" in result.output
