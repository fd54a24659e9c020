"""Each day's WARC files become a WACZ package that `wacz validate` passes, signed beside it."""

from __future__ import annotations

import zipfile

from click.testing import CliRunner

from collector import settings
from collector.cli.export import export as export_command
from collector.clock import Clock
from collector.collect.context import RunContext
from collector.collect.pipeline import active_outlets, run_collection
from collector.evidence import sshsig
from collector.evidence.wacz import NAMESPACE, package_day, validate
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
