"""A one-article evidence bundle verifies offline, and one changed byte anywhere in it fails, named."""

from __future__ import annotations

import ast
import json
import shutil
import sqlite3
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
from collector.evidence.signing import sign_verified
from collector.evidence.timestamps import load_authorities, stamp_missing
from collector.record.export import export_new
from collector.record.registry_mirror import sync_registry
from collector.record.store import Store
from collector.registry import parse_registry
from testing import hostile, replica
from testing.release_store import FakeReleaseStore
from testing.trust import make_trust

CHECKER = Path(__file__).resolve().parents[2] / "collector" / "evidence" / "checker"


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
        sign_verified(tmp_path / "record", trust.key, trust.folder / "allowed_signers", store.conn)
        stamper = RunContext.open(store, "timestamp", clock=Clock(), vantage="v", warc_dir=tmp_path / "warc",
                                  interval=0.02, allow_loopback=True)
        assert stamp_missing(stamper.fetcher, tmp_path / "record", load_authorities(trust.folder)).failed == []
        stamper.finish()
    store.close()
    return tmp_path, host.url("/news/1")


def _bundle(root: Path, address: str, *more: str, code: int = 0, out: str = "bundle"):
    result = CliRunner().invoke(cli, ["evidence", address, "--out", str(root / out), "--db", str(root / "work.db"),
                                      "--record", str(root / "record"), "--warc-dir", str(root / "warc"),
                                      "--trust", str(root / "trust"), *more])
    assert result.exit_code == code, result.output
    return (root / out) if not (more or code) else (root / out, result)


def _published(root: Path, farm) -> FakeReleaseStore:
    """Return a loopback release store holding every WARC file as the record names it, data/warc then gone."""
    releases = FakeReleaseStore(farm)
    conn = sqlite3.connect(root / "work.db")
    named = conn.execute("SELECT name, release_tag, asset_name FROM warc_files").fetchall()
    conn.close()
    assert named
    for name, tag, asset in named:
        releases.add(tag, asset, (root / "warc" / name).read_bytes())
    shutil.rmtree(root / "warc")  # a fresh runner, or a lawyer's laptop
    return releases


def _check(folder: Path) -> subprocess.CompletedProcess:
    """Run the bundle's checker as a lawyer would, with no ssh-keygen or openssl to be found (PATH empty)."""
    return subprocess.run([sys.executable, "-I", "verify.py"], cwd=folder, capture_output=True, text=True,
                          env={"PATH": ""})


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


def test_without_local_warc_files_the_records_come_from_the_release_assets_each_download_in_the_ledger(
        collected, farm, monkeypatch):
    root, address = collected
    local = _bundle(root, address, out="local")
    expected = sorted(p.name for p in (local / "warc").iterdir())
    assert expected
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    releases = _published(root, farm)
    bundle, result = _bundle(root, address, "--warc-store", releases.base, "--min-interval", "0.02")
    assert sorted(p.name for p in (bundle / "warc").iterdir()) == expected
    for name in expected:  # the same bytes as cut from the local file
        assert (bundle / "warc" / name).read_bytes() == (local / "warc" / name).read_bytes()
    done = _check(bundle)
    assert done.returncode == 0 and "VERIFIED" in done.stdout, done.stdout
    conn = sqlite3.connect(root / "work.db")
    ledger = conn.execute("SELECT id, url, status_code FROM requests WHERE purpose = 'evidence' ORDER BY id").fetchall()
    conn.close()
    assert releases.downloads() >= 1 and ledger and "/releases/tags/" in ledger[0][1]
    bundled = json.loads((bundle / "rows.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in bundled["downloads"]] == [r[0] for r in ledger]
    assert bundled["incomplete"] == [] and all(e["from"].startswith("release asset warc-") for e in bundled["warc"])


def test_with_the_release_store_down_the_bundle_says_which_records_it_lacks(collected, farm, monkeypatch):
    root, address = collected
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    releases = _published(root, farm)
    releases.down = True
    bundle, result = _bundle(root, address, "--warc-store", releases.base, "--min-interval", "0.02", code=3)
    bundled = json.loads((bundle / "rows.json").read_text(encoding="utf-8"))
    missing = bundled["incomplete"]
    assert missing and {m["request_id"] for m in missing} == {e["request_id"] for e in bundled["warc"]}
    assert all("503" in m["why"] for m in missing), missing
    for item in missing:
        assert f"incomplete: request {item['request_id']} ({item['warc_file']})" in result.output
    assert "INCOMPLETE" in result.output and list((bundle / "warc").iterdir()) == []
    done = _check(bundle)
    assert done.returncode == 2 and "INCOMPLETE" in done.stdout and "VERIFIED" not in done.stdout, done.stdout
    # Without a release store at all, the same bundle says the asset was not asked.
    again, said = _bundle(root, address, code=3, out="unasked")
    assert "not asked (no release store given: --warc-store)" in said.output


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
    modules = sorted(CHECKER.glob("*.py"))
    own = {p.stem for p in modules}
    assert {"verify", "verify_der", "verify_ssh", "verify_math"} <= own
    allowed = set(sys.stdlib_module_names) - {"subprocess"}  # and no ssh-keygen or openssl either
    for module in modules:
        tree = ast.parse(module.read_text())
        imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert imported and imported <= allowed | own, (module.name, imported - allowed - own)


def test_each_snapshot_replays_at_its_records_warc_date_and_the_checker_holds_it_to_that(collected):
    """Issue 32, item 4: rows.json "replay" names the day's WACZ, the address and the record's own time."""
    import hashlib

    from warcio.archiveiterator import ArchiveIterator

    root, address = collected
    bundle = _bundle(root, address)
    bundled = json.loads((bundle / "rows.json").read_text(encoding="utf-8"))
    snapshots = bundled["rows"]["snapshots"]
    files = {e["request_id"]: e["file"] for e in bundled["warc"]}
    replays = {r["snapshot_id"]: r for r in bundled["replay"]}
    assert snapshots and set(replays) == {s["id"] for s in snapshots}
    for snapshot in snapshots:
        with open(bundle / files[snapshot["request_id"]], "rb") as handle:
            record = next(iter(ArchiveIterator(handle)))
        warc_date = record.rec_headers.get_header("WARC-Date")
        replay = replays[snapshot["id"]]
        assert replay["warc_date"] == warc_date and replay["ts"] == "".join(c for c in warc_date if c.isdigit())[:14]
        assert replay["url"] == record.rec_headers.get_header("WARC-Target-URI") == address
        assert replay["wacz"] == f"{snapshot['warc_file'][:10].replace('/', '-')}.wacz"
        assert f"&ts={replay['ts']}" in replay["fragment"]
    rows = bundle / "rows.json"  # a replay moved to captured_at's second, manifest and all: the checker refuses it
    bundled["replay"][0]["ts"] = str(int(bundled["replay"][0]["ts"]) + 1)
    rows.write_text(json.dumps(bundled), encoding="utf-8")
    manifest = json.loads((bundle / "MANIFEST.json").read_text())
    manifest["rows.json"] = hashlib.sha256(rows.read_bytes()).hexdigest()
    (bundle / "MANIFEST.json").write_text(json.dumps(manifest))
    done = _check(bundle)
    assert done.returncode == 1 and "is not at its WARC record's WARC-Date" in done.stdout, done.stdout
