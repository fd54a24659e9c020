"""The evidence bundle over a record that rolled over: rows of both periods, one chain across the boundary.

An article is captured in the first period (record-2026-01) and checked in the
second (record-2026-07, rolled over from it as collector/record/rollover.py
does); `evidence --record OLD --record NEW` bundles both periods' lines.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from collector.cli.main import cli
from collector.clock import Clock
from collector.collect.context import RunContext
from collector.evidence.signing import sign_verified
from collector.evidence.timestamps import load_authorities, stamp_missing
from collector.record import rollover
from collector.record.export import export_new
from collector.record.fileformat import file_sha256
from collector.record.store import Store
from testing.trust import make_trust
from tests.record.test_export import TEXT, _article, _run, _snapshot

NEW_PERIOD = datetime(2026, 7, 1, tzinfo=timezone.utc)
ADDRESS = "https://o.test/0"


def _file(store: Store, folder: Path, when: datetime, trust, stamper) -> None:
    store.insert("run_finishes", {"run_id": store.conn.execute("SELECT max(id) FROM runs").fetchone()[0],
                                  "finished_at": "t", "counts": "{}"})
    assert export_new(store, folder, now=when).path is not None
    sign_verified(folder, trust.key, trust.folder / "allowed_signers", store.conn)
    assert len(stamp_missing(stamper.fetcher, folder, load_authorities(trust.folder)).kept) == 2


@pytest.fixture
def periods(tmp_path, farm):
    """Return the root: record-2026-01 (two files), record-2026-07 rolled over from it (the copy, two more)."""
    trust = make_trust(tmp_path / "trust", farm)
    store = Store(tmp_path / "work.db")
    stamper = RunContext.open(store, "timestamp", clock=Clock(), vantage="v", warc_dir=tmp_path / "warc",
                              interval=0.01, allow_loopback=True)
    old, new = tmp_path / "record-2026-01", tmp_path / "record-2026-07"
    run = _run(store, NEW_PERIOD - timedelta(days=2))
    article = _article(store, run, 0)  # captured in the first period
    snapshot = _snapshot(store, run, article, TEXT)
    _file(store, old, NEW_PERIOD - timedelta(days=2), trust, stamper)
    run = _run(store, NEW_PERIOD - timedelta(days=1))
    _snapshot(store, run, _article(store, run, 1), TEXT + " ১")  # another article: the first period's last file
    _file(store, old, NEW_PERIOD - timedelta(days=1), trust, stamper)
    new.mkdir()
    rollover.seed(old, new, "o/takedownwatch-record-2026-01", NEW_PERIOD)
    run = _run(store, NEW_PERIOD + timedelta(hours=1))  # checked in the second period
    again = _snapshot(store, run, article, TEXT, purpose="recheck")
    request = store.conn.execute("SELECT request_id FROM snapshots WHERE id = ?", (again,)).fetchone()[0]
    store.insert("checks", {"article_id": article, "slot": "48h", "due_at": "t", "performed_at": "t", "run_id": run,
                            "url": ADDRESS, "result": "ok", "request_id": request,
                            "request_chain": json.dumps([request]), "snapshot_id": again, "outcome": "present"})
    _file(store, new, NEW_PERIOD + timedelta(hours=1), trust, stamper)
    run = _run(store, NEW_PERIOD + timedelta(days=1))
    _snapshot(store, run, _article(store, run, 2), TEXT + " ২")  # the head is a later file
    _file(store, new, NEW_PERIOD + timedelta(days=1), trust, stamper)
    stamper.warc.close()
    store.close()
    assert snapshot
    return tmp_path


def _bundle(root: Path, *records: str, out: str = "bundle"):
    args = ["evidence", ADDRESS, "--out", str(root / out), "--db", str(root / "work.db"),
            "--warc-dir", str(root / "warc"), "--trust", str(root / "trust")]
    for record in records:
        args += ["--record", str(root / record)]
    return CliRunner().invoke(cli, args)


def _check(folder: Path) -> subprocess.CompletedProcess:
    """Run the bundle's checker offline, with no ssh-keygen or openssl to be found (PATH empty)."""
    return subprocess.run([sys.executable, "-I", "verify.py"], cwd=folder, capture_output=True, text=True,
                          env={"PATH": ""})


def _remanifest(bundle: Path) -> None:
    """Rewrite MANIFEST.json over the bundle as it now is (what someone altering a bundle would do)."""
    names = sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*")
                   if p.is_file() and p.name != "MANIFEST.json")
    (bundle / "MANIFEST.json").write_text(json.dumps({n: file_sha256(bundle / n) for n in names}), encoding="utf-8")


def test_the_bundle_holds_both_periods_rows_and_the_chain_across_them(periods):
    result = _bundle(periods, "record-2026-01", "record-2026-07")
    assert result.exit_code == 0, result.output
    bundle = periods / "bundle"
    done = _check(bundle)
    assert done.returncode == 0 and "VERIFIED" in done.stdout, done.stdout
    assert "across 2 record periods" in done.stdout and "newer than the record" not in done.stdout, done.stdout
    assert "chain of 4 export files" in done.stdout and "signatures: 3 good" in done.stdout, done.stdout
    rows = json.loads((bundle / "rows.json").read_text(encoding="utf-8"))
    lines = {(loc["table"], loc["id"]): loc["file"] for loc in rows["lines"]}
    assert [lines[("snapshots", s["id"])][:7] for s in rows["rows"]["snapshots"]] == ["2026/06", "2026/07"]
    assert [lines[("checks", c["id"])][:7] for c in rows["rows"]["checks"]] == ["2026/07"]
    chain = json.loads((bundle / "record" / "chain.json").read_text(encoding="utf-8"))
    assert [e["period"] for e in chain] == [1, 1, 2, 2]
    assert rows["periods"]["default"][1]["continues"]["file"] == chain[1]["file"]
    # One period's folder alone: the earlier period's rows are not in it (what --record twice is for).
    alone = _bundle(periods, "record-2026-07", out="alone")
    assert alone.exit_code == 0, alone.output
    assert "snapshots row 1 is newer than the record" in _check(periods / "alone").stdout


def test_a_spoiled_file_of_the_first_period_is_refused_naming_it(periods):
    first = sorted((periods / "record-2026-01").rglob("000001.jsonl.bz2"))[0]
    data = bytearray(first.read_bytes())
    data[len(data) // 2] ^= 0x01
    first.write_bytes(bytes(data))
    result = _bundle(periods, "record-2026-01", "record-2026-07")
    assert result.exit_code != 0 and "000001.jsonl.bz2" in result.output, result.output
    assert not (periods / "bundle.zip").exists()


def test_a_broken_link_at_the_boundary_fails_naming_it(periods):
    assert _bundle(periods, "record-2026-01", "record-2026-07").exit_code == 0
    bundle = periods / "bundle"
    chain_file = bundle / "record" / "chain.json"
    chain = json.loads(chain_file.read_text(encoding="utf-8"))
    chain[2]["previous_sha256"] = "0" * 64  # the new period's first own file no longer follows the copy
    chain_file.write_text(json.dumps(chain), encoding="utf-8")
    _remanifest(bundle)
    done = _check(bundle)
    assert done.returncode == 1, done.stdout
    assert f"{chain[2]['file']} does not follow {chain[1]['file']}" in done.stdout, done.stdout
    assert "boundary of record periods 1 and 2" in done.stdout, done.stdout


def test_a_continuation_naming_another_file_fails(periods):
    assert _bundle(periods, "record-2026-01", "record-2026-07").exit_code == 0
    bundle = periods / "bundle"
    rows = json.loads((bundle / "rows.json").read_text(encoding="utf-8"))
    rows["periods"]["default"][1]["continues"]["sha256"] = "f" * 64
    (bundle / "rows.json").write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    _remanifest(bundle)
    done = _check(bundle)
    assert done.returncode == 1 and "record period 2 (record-2026-07) continues from" in done.stdout, done.stdout


def test_a_spoiled_first_period_file_in_the_bundle_fails_naming_it(periods):
    assert _bundle(periods, "record-2026-01", "record-2026-07").exit_code == 0
    bundle = periods / "bundle"
    rows = json.loads((bundle / "rows.json").read_text(encoding="utf-8"))
    first = next(loc["file"] for loc in rows["lines"] if loc["file"].startswith("2026/06"))
    (bundle / "record" / first).write_bytes(b"spoiled")
    _remanifest(bundle)
    done = _check(bundle)
    assert done.returncode == 1 and f"record/{first}: not the file the chain names" in done.stdout, done.stdout
