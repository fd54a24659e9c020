"""Evidence over a record of several streams: the bundle holds every stream's rows, verify --db the merged ones.

Two vantages' jobs collect one outlet, each into its own stream (streams/NAME),
each exporting, signing and timestamping its own files twice; `export rebuild`
merges them: one article per address, the second stream's checks of a slot
relabelled, its articles and addresses folded into the first's.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from collector.cli.main import cli
from collector.clock import Clock
from collector.collect.context import RunContext
from collector.evidence.signing import sign_verified
from collector.evidence.timestamps import load_authorities, stamp_missing
from collector.record import export as ex, merge, streams
from collector.record.folder import batches
from collector.record.store import Store
from testing.trust import make_trust
from tests.collect.test_pipeline import outlets  # noqa: F401  (the loopback outlets fixture)
from tests.record.test_streams import NOW, _collect
from collector.collect.revisits import run_rechecks

STREAMS = {"bd-1of1": (0, 2), "hosted-1of1": (1, 3)}  # each stream's runs, hours after NOW: bd saw it first
_BUILT: dict[str, Path] = {}


@pytest.fixture
def record(tmp_path, tmp_path_factory, request):
    """Return the folder of a record two streams wrote (and beside it: trust/, warc/, merged.db, NAME.db)."""
    if "root" not in _BUILT:
        outlets = request.getfixturevalue("outlets")
        farm = request.getfixturevalue("farm")
        built = tmp_path_factory.mktemp("stream-evidence")
        trust = make_trust(built / "trust", farm)
        root, warc = built / "record", built / "warc"
        for hours in (0, 1):
            for name, runs in STREAMS.items():
                when = NOW + timedelta(hours=runs[hours])
                store = _collect(built / f"{name}.db", outlets, name, ["robotsmap"], when, warc)
                _recheck(store, when, warc)
                folder = streams.folder(root, name)
                assert ex.export_new(store, folder, warc_dir=warc, now=when).path is not None
                assert sign_verified(folder, trust.key, trust.folder / "allowed_signers", store.conn)
                stamper = RunContext.open(store, "timestamp", clock=Clock(), vantage="v", warc_dir=warc,
                                          interval=0.02, allow_loopback=True)
                assert len(stamp_missing(stamper.fetcher, folder, load_authorities(trust.folder)).kept) == 2
                stamper.finish()
                store.close()
        _vantages(built, trust)
        merge.rebuild_record([root], built / "merged.db")
        _BUILT["root"] = built
    shutil.copytree(_BUILT["root"], tmp_path, dirs_exist_ok=True)
    return tmp_path / "record"


def _recheck(store, when, warc) -> None:
    """The run's revisits (a later run checks what an earlier one captured), as `run` makes them."""
    ctx = RunContext.open(store, "run", clock=Clock(when + timedelta(minutes=5)), vantage="hosted", warc_dir=warc,
                          interval=0.02, allow_loopback=True, backoff=(0.02, 0.04))
    run_rechecks(ctx, outlets=["robotsmap"])
    ctx.finish()


def _vantages(built: Path, trust) -> None:
    """A third stream, as vantages.yml writes it: one difference by vantage naming both streams' answers."""
    address = _both(built / "record")
    first = built / "first.db"
    merge.rebuild_record([built / "record"], first)
    conn = sqlite3.connect(first)
    (article, key) = conn.execute("SELECT id, url_key FROM articles WHERE url = ?", (address,)).fetchone()
    answers = [conn.execute("SELECT MIN(request_id) FROM snapshots WHERE article_id = ? AND request_id > ? "
                            "AND request_id <= ?", (article, streams.base(n), streams.base(n) + 2 ** 40)).fetchone()[0]
               for n in STREAMS]
    conn.close()
    store = Store(built / "vantages.db")
    with store.transaction() as c:
        streams.set_stream(c, "vantages")
    when = NOW + timedelta(hours=4)
    run = store.insert("runs", {"command": "compare-vantages", "started_at": when.isoformat(), "vantage": "hosted",
                                "software_version": "0", "settings": "{}"})
    store.conn.execute("PRAGMA foreign_keys = OFF")  # as compare_streams does: the answers are other streams'
    store.insert("vantage_differences", {"run_id": run, "found_at": when.isoformat(), "url_key": key,
                                         "article_id": article, "kind": "text", "request_a": answers[0],
                                         "request_b": answers[1], "vantage_a": "bd", "vantage_b": "hosted",
                                         "detail": "{}"})
    store.conn.execute("PRAGMA foreign_keys = ON")
    store.insert("run_finishes", {"run_id": run, "finished_at": when.isoformat(), "counts": "{}"})
    folder = streams.folder(built / "record", "vantages")
    assert ex.export_new(store, folder, now=when).path is not None
    assert sign_verified(folder, trust.key, trust.folder / "allowed_signers", store.conn)
    stamper = RunContext.open(store, "timestamp", clock=Clock(), vantage="v", warc_dir=built / "warc",
                              interval=0.02, allow_loopback=True)
    assert len(stamp_missing(stamper.fetcher, folder, load_authorities(trust.folder)).kept) == 2
    stamper.finish()
    store.close()


def _both(record: Path) -> str:
    """Return an address both streams captured and checked."""
    keys = []
    for name in STREAMS:
        conn = sqlite3.connect(record.parent / f"{name}.db")
        keys.append({r[0] for r in conn.execute("SELECT a.url FROM articles a JOIN checks c ON c.article_id = a.id "
                                                "JOIN snapshots s ON s.article_id = a.id")})
        conn.close()
    both = sorted(keys[0] & keys[1])
    assert both, "the two streams checked no article in common"
    return both[0]


def _bundle(record: Path, address: str, db: str = "merged.db", code: int = 0):
    root = record.parent
    result = CliRunner().invoke(cli, ["evidence", address, "--out", str(root / "bundle"), "--db", str(root / db),
                                      "--record", str(record), "--warc-dir", str(root / "warc"),
                                      "--trust", str(root / "trust")])
    assert result.exit_code == code, result.output
    return root / "bundle", result


def _check(folder: Path) -> subprocess.CompletedProcess:
    """Run the bundle's checker as a lawyer would, with no ssh-keygen or openssl to be found (PATH empty)."""
    return subprocess.run([sys.executable, "-I", "verify.py"], cwd=folder, capture_output=True, text=True,
                          env={"PATH": ""})


def _rows_of(db: Path, address: str) -> dict[str, set]:
    conn = sqlite3.connect(db)
    (article,) = conn.execute("SELECT id FROM articles WHERE url = ?", (address,)).fetchone()
    found = {t: {r[0] for r in conn.execute(f"SELECT id FROM {t} WHERE article_id = ?", (article,))}
             for t in ("snapshots", "checks")}
    found["articles"] = {article}
    conn.close()
    return found


def _remanifest(bundle: Path, *names: str) -> None:
    manifest = json.loads((bundle / "MANIFEST.json").read_text(encoding="utf-8"))
    for name in names:
        manifest[name] = hashlib.sha256((bundle / name).read_bytes()).hexdigest()
    (bundle / "MANIFEST.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_the_bundle_holds_every_streams_rows_as_each_stream_wrote_them_and_verifies(record):
    address = _both(record)
    bundle, _ = _bundle(record, address)
    done = _check(bundle)
    assert done.returncode == 0 and "VERIFIED" in done.stdout, done.stdout
    for name, files in (*((n, 2) for n in STREAMS), ("vantages", 1)):
        assert f"OK  stream {name}: chain of {files} export files to the head streams/{name}/" in done.stdout
        assert (bundle / "record" / "streams" / name / "chain.json").is_file()
    assert "signatures: 5 good (stream bd-1of1: 2, stream hosted-1of1: 2, stream vantages: 1)" in done.stdout
    assert "timestamp tokens: 10 good" in done.stdout and "note:" not in done.stdout, done.stdout
    bundled = json.loads((bundle / "rows.json").read_text(encoding="utf-8"))
    rows = {t: {r["id"] for r in items} for t, items in bundled["rows"].items()}
    for name in STREAMS:  # each stream's own rows about the article, every one of them
        for table, ids in _rows_of(record.parent / f"{name}.db", address).items():
            assert ids and ids <= rows[table], (name, table)
    # Each row is as its stream's file holds it: the later stream's checks keep their slot and their
    # own article id, which the merged database reads as 'SLOT@STREAM' of the earlier stream's article.
    later = [c for c in bundled["rows"]["checks"] if streams.in_range("hosted-1of1", c["id"])]
    assert later and all("@" not in c["slot"] and streams.in_range("hosted-1of1", c["article_id"]) for c in later)
    conn = sqlite3.connect(record.parent / "merged.db")
    merged_slots = {r[0] for r in conn.execute(f"SELECT slot FROM checks WHERE id IN ({','.join('?' * len(later))})",
                                               [c["id"] for c in later])}
    conn.close()
    assert any(s.endswith("@hosted-1of1") for s in merged_slots)
    assert {(m["table_name"], m["how"]) for m in bundled["merged"]} >= {("articles", "folded"),
                                                                        ("checks", "relabelled")}
    assert set(bundled["streams"]) == {*STREAMS, "vantages"}
    # The third stream's difference by vantage, and both answers it names, one from each stream.
    (difference,) = bundled["rows"]["vantage_differences"]
    assert streams.in_range("vantages", difference["id"])
    assert {difference["request_a"], difference["request_b"]} <= rows["requests"]
    assert {next(n for n in STREAMS if streams.in_range(n, difference[s])) for s in ("request_a", "request_b")} \
        == set(STREAMS)


def test_the_checker_names_the_stream_that_fails(record):
    address = _both(record)
    bundle, _ = _bundle(record, address)
    # A signature of the later stream's files spoiled (and the manifest made to agree).
    sig = next((bundle / "record" / "streams" / "hosted-1of1").rglob("*.sig"))
    data = bytearray(sig.read_bytes())
    data[len(data) // 2] ^= 0x01
    sig.write_bytes(bytes(data))
    name = sig.relative_to(bundle).as_posix()
    _remanifest(bundle, name)
    done = _check(bundle)
    assert done.returncode == 1 and f"FAILED  stream hosted-1of1: {name}" in done.stdout, done.stdout
    # A row of the earlier stream edited in rows.json: named with its stream.
    bundle.with_name("bundle.zip").unlink()
    shutil.rmtree(bundle)
    bundle, _ = _bundle(record, address)
    rows = bundle / "rows.json"
    bundled = json.loads(rows.read_text(encoding="utf-8"))
    check = next(c for c in bundled["rows"]["checks"] if streams.in_range("bd-1of1", c["id"]))
    check["outcome"] = "absent"
    rows.write_text(json.dumps(bundled, ensure_ascii=False), encoding="utf-8")
    _remanifest(bundle, "rows.json")
    done = _check(bundle)
    assert done.returncode == 1 and f"FAILED  stream bd-1of1: rows.json: checks row {check['id']} column outcome" \
        in done.stdout, done.stdout
    # A file moved from one stream's chain to the other's is not that stream's.
    chain = bundle / "record" / "streams" / "bd-1of1" / "chain.json"
    other = json.loads((bundle / "record" / "streams" / "hosted-1of1" / "chain.json").read_text(encoding="utf-8"))
    chain.write_text(json.dumps(other), encoding="utf-8")
    _remanifest(bundle, chain.relative_to(bundle).as_posix())
    done = _check(bundle)
    assert done.returncode == 1 and "FAILED  stream bd-1of1: record/streams/hosted-1of1/" in done.stdout, done.stdout


def test_a_streams_working_database_is_refused_for_a_record_of_several_and_serves_its_own_folder(record):
    address = _both(record)
    _, result = _bundle(record, address, db="bd-1of1.db", code=2)
    assert "merges them" in result.output
    # One stream's folder and its own database: a bundle of that stream alone, its chain record/chain.json.
    root = record.parent
    result = CliRunner().invoke(cli, ["evidence", address, "--out", str(root / "alone"), "--db",
                                      str(root / "bd-1of1.db"), "--record", str(streams.folder(record, "bd-1of1")),
                                      "--warc-dir", str(root / "warc"), "--trust", str(root / "trust")])
    assert result.exit_code == 0, result.output
    done = _check(root / "alone")
    assert done.returncode == 0 and "OK  chain of 2 export files" in done.stdout, done.stdout
    assert "signatures: 2 good" in done.stdout and "timestamp tokens: 4 good" in done.stdout, done.stdout


def test_verify_compares_the_merged_database_with_the_stream_that_wrote_each_row(record):
    runner = CliRunner()
    merged, trust = record.parent / "merged.db", record.parent / "trust"
    args = ["export", "verify", "--out", str(record), "--trust", str(trust), "--db", str(merged)]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert "rows as the streams that wrote them hold them" in result.output and "3 streams verified" in result.output
    # An edit to a row of stream hosted-1of1 in the merged database (triggers dropped to make it) is caught...
    conn = sqlite3.connect(merged)
    (request,) = conn.execute("SELECT MAX(id) FROM requests WHERE purpose != 'timestamp'").fetchone()
    assert streams.in_range("hosted-1of1", request)
    (trigger,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'requests_no_update'").fetchone()
    conn.execute("DROP TRIGGER requests_no_update")
    conn.execute("UPDATE requests SET result = 'not_found' WHERE id = ?", (request,))
    conn.execute(trigger)
    conn.commit()
    conn.close()
    result = runner.invoke(cli, args)
    assert result.exit_code == 1, result.output
    # ... and named: its stream, its row, the file of that stream that holds it.
    assert f"stream hosted-1of1: requests row id={request}: result is 'not_found' in the database" in result.output
    assert "streams/hosted-1of1/" in result.output
    # The merge's bookkeeping is compared too: a row it says the other stream wrote.
    rebuilt = record.parent / "again.db"
    merge.rebuild_record([record], rebuilt)
    conn = sqlite3.connect(rebuilt)
    conn.execute("UPDATE sync_merged SET stream = 'bd-1of1' WHERE stream = 'hosted-1of1' AND rowid = "
                 "(SELECT MIN(rowid) FROM sync_merged)")
    conn.commit()
    conn.close()
    result = runner.invoke(cli, ["export", "verify", "--out", str(record), "--trust", str(trust), "--db", str(rebuilt)])
    assert result.exit_code == 1, result.output
    assert "stream hosted-1of1: sync_merged row" in result.output, result.output
    assert "stream is 'bd-1of1' in the database, 'hosted-1of1' in the stream's record" in result.output


def test_signing_and_timestamping_cover_each_streams_head(record):
    """Each job signs and stamps its own stream's folder; verify fails naming a stream whose head is unsigned."""
    runner = CliRunner()
    trust = record.parent / "trust"
    args = ["export", "verify", "--out", str(record), "--trust", str(trust), "--require-timestamps"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0 and "stream vantages: 1 export files, chain intact, content checked, 1 " \
        "signatures good, 2 timestamp tokens good, 0 file(s) awaiting tokens" in result.output, result.output
    for name in STREAMS:
        assert f"stream {name}: 2 export files, chain intact, content checked, 2 signatures good, " \
               "4 timestamp tokens good, 0 file(s) awaiting tokens" in result.output
    head = batches(streams.folder(record, "hosted-1of1"))[-1]
    for companion in head.parent.glob(head.name + ".*"):
        companion.unlink()
    result = runner.invoke(cli, args)
    assert result.exit_code == 1 and "stream hosted-1of1:" in result.output and head.name in result.output
    # The stream's job signs its own folder's unsigned files: that head, and nothing of the other stream.
    signed = runner.invoke(cli, ["export", "sign", "--out", str(streams.folder(record, "hosted-1of1")),
                                 "--key", str(trust / "keys" / "record"), "--trust", str(trust),
                                 "--db", str(record.parent / "hosted-1of1.db")])
    assert signed.exit_code == 0 and "signed 1 export file(s)" in signed.output and head.name in signed.output
    result = runner.invoke(cli, args[:-1])
    assert result.exit_code == 0 and "stream hosted-1of1: 2 export files, chain intact, content checked, " \
        "2 signatures good, 2 timestamp tokens good, 1 file(s) awaiting tokens" in result.output, result.output
    result = runner.invoke(cli, args)  # its tokens are still owed: the stream is named
    assert result.exit_code == 1 and f"stream hosted-1of1: {head}: 0 timestamp token(s)" in result.output
