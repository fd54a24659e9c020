"""RFC 3161 timestamps from loopback authorities: kept when they vouch, refused when not, retried when down."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from click.testing import CliRunner

from collector.cli.export import export as export_command
from collector.evidence.timestamps import TimestampError, check_token, load_authorities, token_path
from collector.evidence.verify import verify_record
from collector.record.export import export_new
from collector.record.store import Store
from testing.trust import make_trust
from tests.record.test_export import TEXT, _article, _run, _snapshot


@pytest.fixture
def one_file(tmp_path, farm):
    """Return (root, trust, the export file) of a record of one signed file, not yet timestamped."""
    trust = make_trust(tmp_path / "trust", farm)
    store = Store(tmp_path / "work.db")
    run = _run(store)
    _snapshot(store, run, _article(store, run, 0), TEXT)
    path = export_new(store, tmp_path / "record").path
    store.close()
    result = CliRunner().invoke(export_command, ["sign", "--out", str(tmp_path / "record"), "--key", str(trust.key),
                                                 "--trust", str(trust.folder), "--db", str(tmp_path / "work.db")])
    assert result.exit_code == 0, result.output
    return tmp_path, trust, path


def _stamp(root, trust):
    return CliRunner().invoke(export_command, [
        "timestamp", "--out", str(root / "record"), "--db", str(root / "work.db"), "--warc-dir", str(root / "warc"),
        "--min-interval", "0.02", "--trust", str(trust.folder), "--vantage", "test"])


def test_a_failing_authority_is_recorded_and_asked_again_by_the_next_run(one_file):
    root, trust, path = one_file
    down = trust.authorities[1]
    down.mode = "down"
    first = _stamp(root, trust)
    assert first.exit_code == 0 and "1 token(s) kept, 1 failed" in first.output, first.output
    assert token_path(path, "tsa-one").exists() and not token_path(path, "tsa-two").exists()
    store = Store(root / "work.db")
    row = store.one("SELECT * FROM requests WHERE purpose = 'timestamp' AND url = ?", (down.url,))
    assert row["result"] == "server_error" and row["status_code"] == 503 and row["warc_file"]
    warnings = json.loads(store.one("SELECT warnings FROM run_finishes ORDER BY run_id DESC")["warnings"])
    assert any("tsa-two failed" in w for w in warnings)
    store.close()
    awaiting = verify_record(root / "record", trust.folder)
    assert awaiting.awaiting == [path.relative_to(root / "record").as_posix()]
    down.mode = "ok"
    second = _stamp(root, trust)
    assert second.exit_code == 0 and "1 token(s) kept, 0 failed" in second.output
    assert trust.authorities[0].answered == 1 and down.answered == 1  # the first token was not asked for again
    report = verify_record(root / "record", trust.folder, require_timestamps=True)
    assert sorted(c.authority for _f, c in report.tokens) == ["tsa-one", "tsa-two"]


@pytest.mark.parametrize("mode, why", [("garbage", "not an RFC 3161 answer"),
                                       ("other", "does not vouch for")])
def test_an_answer_that_does_not_vouch_is_not_kept(one_file, mode, why):
    root, trust, path = one_file
    trust.authorities[0].mode = mode
    result = _stamp(root, trust)
    assert result.exit_code == 0 and why in result.output, result.output
    assert not token_path(path, "tsa-one").exists()


def test_a_token_earlier_than_the_files_export_time_is_refused(tmp_path, farm):
    trust = make_trust(tmp_path / "trust", farm)
    store = Store(tmp_path / "work.db")
    _run(store)
    later = datetime.now(timezone.utc) + timedelta(days=1)  # a file claiming to be written tomorrow
    path = export_new(store, tmp_path / "record", now=later).path
    store.close()
    result = _stamp(tmp_path, trust)
    assert "before the file's export time" in result.output and not token_path(path, "tsa-one").exists()


def test_a_late_token_is_reported_as_late(tmp_path, farm):
    trust = make_trust(tmp_path / "trust", farm)
    store = Store(tmp_path / "work.db")
    _run(store)
    path = export_new(store, tmp_path / "record", now=datetime.now(timezone.utc) - timedelta(days=5)).path
    store.close()
    assert _stamp(tmp_path, trust).exit_code == 0
    check = check_token(path, load_authorities(trust.folder)[0])
    assert check.late and timedelta(days=4) < check.delay < timedelta(days=6)


def test_a_token_is_checked_against_the_roots_the_repository_keeps(one_file):
    root, trust, path = one_file
    assert _stamp(root, trust).exit_code == 0
    authority = load_authorities(trust.folder)[0]
    check_token(path, authority)
    (trust.folder / "tsa-one.pem").write_bytes(trust.authorities[1].root_pem)  # another authority's root
    with pytest.raises(TimestampError, match="does not vouch"):
        check_token(path, load_authorities(trust.folder)[0])


def test_the_default_authorities_have_their_roots_in_the_repository():
    from pathlib import Path

    authorities = load_authorities(Path(__file__).resolve().parents[2] / "data" / "trust")
    assert len(authorities) >= 2 and all(a.roots and a.url.startswith("http") for a in authorities)
    assert len({a.name for a in authorities}) == len(authorities)


def test_an_authority_that_rejects_the_request_is_a_failure_recorded_not_a_crash(one_file):
    """RFC 3161 2.4.2: an answer may carry a status other than granted and no token (openssl ts -reply writes
    one when it fails). Found by the Actions scenario: the time-stamping step died on it ("Missing SignedData")."""
    root, trust, path = one_file
    trust.authorities[0].mode = "reject"
    result = _stamp(root, trust)
    assert result.exit_code == 0 and "rejection" in result.output, result.output
    assert not token_path(path, "tsa-one").exists() and token_path(path, "tsa-two").exists()
