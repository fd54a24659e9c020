"""A one-article evidence bundle verifies offline, and one changed byte anywhere in it fails, named."""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from collector.cli.main import cli
from collector.clock import Clock
from collector.collect.context import RunContext
from collector.collect.pipeline import active_outlets, run_collection
from collector.evidence.signing import sign_unsigned
from collector.evidence.timestamps import load_authorities, stamp_missing
from collector.record.export import export_new
from collector.record.registry_mirror import sync_registry
from collector.record.store import Store
from collector.registry import parse_registry
from testing import hostile, replica
from testing.trust import make_trust

CHECKER = Path(__file__).resolve().parents[2] / "collector" / "evidence" / "bundle_check.py"


@pytest.fixture
def collected(tmp_path, farm):
    """Return (root, an article's address) after a loopback run, exported, signed and timestamped twice."""
    host = hostile.add_host(farm)
    host.routes.update(hostile.outlet_routes(host, replica.FEED_SNAPSHOT_TIME, ["/news/1", "/news/2"]))
    trust = make_trust(tmp_path / "trust", farm)
    store = Store(tmp_path / "work.db")
    ctx = RunContext.open(store, "run", clock=Clock(replica.FEED_SNAPSHOT_TIME), vantage="v",
                          warc_dir=tmp_path / "warc", interval=0.02, allow_loopback=True)
    sync_registry(store, parse_registry(replica.registry_toml({"alpha": host})), ctx.clock)
    run_collection(ctx, active_outlets(ctx))
    ctx.finish()
    for _ in range(2):  # a second file: the one holding the rows is not the head
        export_new(store, tmp_path / "record", warc_dir=tmp_path / "warc")
        sign_unsigned(tmp_path / "record", trust.key, trust.folder / "allowed_signers")
        stamper = RunContext.open(store, "timestamp", clock=Clock(), vantage="v", warc_dir=tmp_path / "warc",
                                  interval=0.02, allow_loopback=True)
        assert stamp_missing(stamper.fetcher, tmp_path / "record", load_authorities(trust.folder)).failed == []
        stamper.finish()
    store.close()
    return tmp_path, host.url("/news/1")


def _bundle(root: Path, address: str) -> Path:
    result = CliRunner().invoke(cli, ["evidence", address, "--out", str(root / "bundle"), "--db", str(root / "work.db"),
                                      "--record", str(root / "record"), "--warc-dir", str(root / "warc"),
                                      "--trust", str(root / "trust")])
    assert result.exit_code == 0, result.output
    return root / "bundle"


def _check(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", "verify.py"], cwd=folder, capture_output=True, text=True)


def test_a_bundle_verifies_offline_and_holds_what_the_record_says(collected):
    root, address = collected
    bundle = _bundle(root, address)
    done = _check(bundle)
    assert done.returncode == 0 and "VERIFIED" in done.stdout, done.stdout
    assert "signatures: 2 good" in done.stdout and "timestamp tokens: 4 good" in done.stdout, done.stdout
    assert "0 WARC records" not in done.stdout and "0 rows" not in done.stdout
    text = (bundle / "VERIFY.md").read_text(encoding="utf-8")
    assert "python3 verify.py" in text and "যাচাই" in text
    with zipfile.ZipFile(root / "bundle.zip") as archive:
        assert archive.testzip() is None and "bundle/verify.py" in archive.namelist()


def test_one_changed_byte_anywhere_fails_and_says_where(collected):
    root, address = collected
    bundle = _bundle(root, address)
    files = sorted(p for p in bundle.rglob("*") if p.is_file())
    assert len(files) > 15
    for path in files:
        original = path.read_bytes()
        for where in (0.1, 0.9):
            changed = bytearray(original)
            changed[int(len(changed) * where)] ^= 0x20
            path.write_bytes(bytes(changed))
            done = _check(bundle)
            name = path.relative_to(bundle).as_posix()
            if name == "verify.py":  # a changed checker cannot be asked to say where: it must not pass
                assert done.returncode != 0 and "VERIFIED" not in done.stdout, done.stdout
                continue
            assert done.returncode == 1 and "FAILED" in done.stdout and name in done.stdout, (name, done.stdout)
        path.write_bytes(original)
    assert _check(bundle).returncode == 0


def test_a_row_edited_with_its_manifest_entry_still_fails_on_the_record(collected):
    root, address = collected
    bundle = _bundle(root, address)
    rows = bundle / "rows.json"
    rows.write_text(rows.read_text(encoding="utf-8").replace('"result": "ok"', '"result": "not_found"', 1),
                    encoding="utf-8")
    import hashlib
    import json
    manifest = json.loads((bundle / "MANIFEST.json").read_text())
    manifest["rows.json"] = hashlib.sha256(rows.read_bytes()).hexdigest()
    (bundle / "MANIFEST.json").write_text(json.dumps(manifest))
    done = _check(bundle)
    assert done.returncode == 1 and "column result differs from record/" in done.stdout, done.stdout


def test_the_checker_uses_the_standard_library_only():
    allowed = set(sys.stdlib_module_names)
    tree = ast.parse(CHECKER.read_text())
    imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported and imported <= allowed, imported - allowed
