"""Each day's WARC files become a WACZ package that `wacz validate` passes, signed inside (WACZ signing) and beside."""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from collector import settings
from collector.cli.export import export as export_command
from collector.clock import Clock
from collector.collect.context import RunContext
from collector.collect.pipeline import active_outlets, run_collection
from collector.evidence import sshsig
from collector.evidence.wacz import NAMESPACE, package_day, validate
from collector.evidence.wacz_signing import WaczSignatureError, new_key, verify_package
from collector.record.registry_mirror import sync_registry
from collector.record.store import Store
from collector.registry import parse_registry
from testing import hostile, replica
from testing.keys import allowed_signers, make_key

DAY = replica.FEED_SNAPSHOT_TIME.strftime("%Y-%m-%d")


def _two_runs(tmp_path, farm):
    host = hostile.add_host(farm)
    host.routes.update(hostile.outlet_routes(host, replica.FEED_SNAPSHOT_TIME, ["/news/1", "/news/2"]))
    store = Store(tmp_path / "w.db")
    for _ in range(2):  # a day is many runs, each with its own WARC file
        ctx = RunContext.open(store, "run", clock=Clock(replica.FEED_SNAPSHOT_TIME), vantage="v",
                              warc_dir=tmp_path / "warc", interval=0.02, allow_loopback=True)
        sync_registry(store, parse_registry(replica.registry_toml({"alpha": host})), ctx.clock)
        run_collection(ctx, active_outlets(ctx))
        ctx.finish()
    store.close()
    return host


def test_a_days_warc_files_package_as_a_wacz_that_validates(tmp_path, farm):
    host = _two_runs(tmp_path, farm)
    path = package_day(tmp_path / "warc", DAY, tmp_path / "wacz")
    valid, said = validate(path)
    assert valid, said
    with zipfile.ZipFile(path) as package:
        names = set(package.namelist())
        assert {"datapackage.json", "datapackage-digest.json", "indexes/index.cdx.gz", "pages/pages.jsonl"} <= names
        assert len([n for n in names if n.startswith("archive/")]) == 2
        assert host.url("/news/1").encode() in package.read("pages/pages.jsonl")


def test_a_changed_package_does_not_validate(tmp_path, farm):
    _two_runs(tmp_path, farm)
    path = package_day(tmp_path / "warc", DAY, tmp_path / "wacz")
    with zipfile.ZipFile(path) as package:
        members = {n: package.read(n) for n in package.namelist()}
    members["pages/pages.jsonl"] = members["pages/pages.jsonl"].replace(b"news/1", b"news/9")
    with zipfile.ZipFile(path, "w") as package:
        for name, data in members.items():
            package.writestr(name, data)
    assert validate(path)[0] is False


def test_the_command_packages_validates_and_signs(tmp_path, farm):
    _two_runs(tmp_path, farm)
    key = make_key(tmp_path / "keys", "record")
    signers = allowed_signers(tmp_path / "allowed_signers", settings.RECORD_SIGNER, key, namespace=NAMESPACE)
    result = CliRunner().invoke(export_command, ["wacz", "--day", DAY, "--warc-dir", str(tmp_path / "warc"),
                                                 "--out", str(tmp_path / "wacz"), "--key", str(key)])
    assert result.exit_code == 0 and "valid WACZ" in result.output and "signed" in result.output, result.output
    sshsig.verify(tmp_path / "wacz" / f"{DAY}.wacz", settings.RECORD_SIGNER, signers, NAMESPACE)


def _signed_package(tmp_path, farm):
    _two_runs(tmp_path, farm)
    key = new_key(tmp_path / "wacz.key")
    result = CliRunner().invoke(export_command, ["wacz", "--day", DAY, "--warc-dir", str(tmp_path / "warc"),
                                                 "--out", str(tmp_path / "wacz"), "--wacz-key", str(key)])
    assert result.exit_code == 0 and "signed inside" in result.output, result.output
    return tmp_path / "wacz" / f"{DAY}.wacz", Path(f"{key}.pub")


def _read(path):
    with zipfile.ZipFile(path) as package:
        return {n: package.read(n) for n in package.namelist()}


def test_a_package_signed_per_the_wacz_signing_spec_validates_and_verifies_as_replayweb_page_does(tmp_path, farm):
    path, public = _signed_package(tmp_path, farm)
    valid, said = validate(path)
    assert valid and "Has signature" in said, said  # py-wacz sees the signature, and its created matches
    members = _read(path)
    digest = json.loads(members["datapackage-digest.json"])
    signed = digest["signedData"]
    assert set(signed) == {"hash", "created", "software", "version", "signature", "publicKey"}  # anonymous format
    # As webrecorder/wabac.js (ReplayWeb.page) checks it: the digest file's hash, the SPKI key imported as
    # ECDSA P-384, a WebCrypto (r||s) signature with SHA-256 over the hash string.
    assert signed["hash"] == digest["hash"] == "sha256:" + hashlib.sha256(members["datapackage.json"]).hexdigest()
    assert signed["created"] == json.loads(members["datapackage.json"])["created"]
    key = serialization.load_der_public_key(base64.b64decode(signed["publicKey"]))
    assert key.curve.name == "secp384r1"
    raw = base64.b64decode(signed["signature"])
    assert len(raw) == 96
    key.verify(encode_dss_signature(int.from_bytes(raw[:48], "big"), int.from_bytes(raw[48:], "big")),
               signed["hash"].encode(), ec.ECDSA(hashes.SHA256()))
    assert verify_package(path, public) == signed["hash"]
    done = CliRunner().invoke(export_command, ["verify-wacz", str(path), "--signers", str(public)])
    assert done.exit_code == 0 and "signature good" in done.output, done.output
    stranger = new_key(tmp_path / "stranger.key")
    with pytest.raises(WaczSignatureError, match="not the record's"):
        verify_package(path, f"{stranger}.pub")


def test_a_signed_package_changed_afterwards_does_not_verify(tmp_path, farm):
    path, public = _signed_package(tmp_path, farm)
    original = _read(path)

    def rewrite(changes):
        members = dict(original, **changes)
        with zipfile.ZipFile(path, "w") as package:
            for name, data in members.items():
                package.writestr(name, data)

    # A datapackage.json edited and its digest recomputed, by someone without the key.
    edited = original["datapackage.json"].replace(b"Takedown Watch", b"Takedown Watcx", 1)
    digest = json.loads(original["datapackage-digest.json"])
    digest["hash"] = "sha256:" + hashlib.sha256(edited).hexdigest()
    rewrite({"datapackage.json": edited, "datapackage-digest.json": json.dumps(digest).encode()})
    with pytest.raises(WaczSignatureError, match="for another datapackage.json"):
        verify_package(path, public)
    # The signed hash moved along too: the signature no longer fits it.
    digest["signedData"]["hash"] = digest["hash"]
    rewrite({"datapackage.json": edited, "datapackage-digest.json": json.dumps(digest).encode()})
    with pytest.raises(WaczSignatureError, match="does not verify"):
        verify_package(path, public)
    rewrite({})
    assert verify_package(path, public)
