"""Differences by vantage across the matrix's record streams: compared where every stream is present.

Each (vantage, shard) job writes its own stream into its own working database, so no job's database
holds another vantage's answers. The comparison reads the database `export rebuild` merges from every
stream, and writes its differences into a stream of its own, exported like any observation.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from collector.cli.main import cli
from collector.collect.vantages import Answer, pairs
from collector.record import export, references, streams
from collector.record.fileformat import ExportError
from collector.record.merge import rebuild_record
from collector.record.store import Store
from testing import replica, vantage_farm

ROOT = Path(__file__).resolve().parents[2]
NOW = replica.FEED_SNAPSHOT_TIME
OTHER_PAGE = "synthetic-prothomalo-8fdqj2xuxp-zwnj-nfd-time.html"
STREAMS = vantage_farm.STREAMS


def invoke(*args: str):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    return result


def ok(*args: str) -> str:
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return result.output


def _farm_answering_by_source_address(farm, tmp_path) -> Path:
    _, registry = vantage_farm.site_by_source_address(
        farm, tmp_path, ("/news/open", "/news/blocked", "/news/edited"), NOW,
        blocked=lambda path: path.startswith("/news/blocked"), edited=lambda path: path.startswith("/news/edited"),
        other_page=OTHER_PAGE)
    return registry


def _collect_two_vantages_at_once(tmp_path, registry: Path, record: Path) -> None:
    vantage_farm.collect_both_vantages(tmp_path, registry, record, NOW)


def _rows(db: Path) -> list[sqlite3.Row]:
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute("SELECT * FROM vantage_differences ORDER BY id").fetchall()
    finally:
        conn.close()


def test_differences_are_found_across_two_vantages_streams_once(farm, tmp_path):
    registry = _farm_answering_by_source_address(farm, tmp_path)
    record = tmp_path / "record"
    _collect_two_vantages_at_once(tmp_path, registry, record)
    for name in STREAMS:  # neither job's own database could see a difference
        assert _rows(tmp_path / f"{name}.db") == []
    merged = tmp_path / "merged.db"
    ok("export", "rebuild", "--out", str(record), "--db", str(merged))

    mine = tmp_path / "vantages.db"
    compare = ["compare-vantages", "--db", str(mine), "--stream", "vantages", "--from", str(merged),
               "--now", (NOW + timedelta(minutes=10)).isoformat(), "--vantage", "comparer"]
    said = ok(*compare)
    assert "2 differences recorded (reach 1, text 1)" in said, said
    found = {(r["url_key"].rsplit("/", 1)[1], r["kind"]): r for r in _rows(mine)}
    assert set(found) == {("blocked", "reach"), ("edited", "text")}
    conn = sqlite3.connect(merged)
    vantage_of = dict(conn.execute("SELECT id, vantage FROM requests").fetchall())
    for row in found.values():  # both request ids, each from its own vantage's stream
        assert {vantage_of[row["request_a"]], vantage_of[row["request_b"]]} == {"inside", "outside"}
        assert (row["vantage_a"], row["vantage_b"]) == (vantage_of[row["request_a"]], vantage_of[row["request_b"]])
        assert streams.in_range("vantages", row["id"]) and streams.in_range("vantages", row["run_id"])
        assert row["article_id"] in {r[0] for r in conn.execute("SELECT id FROM articles")}
    blocked = json.loads(found[("blocked", "reach")]["detail"])
    assert {blocked["a"]["status"], blocked["b"]["status"]} == {403, 200}
    conn.close()

    again = ok(*compare)  # a second run over the same rows writes nothing new
    assert "0 differences recorded (none), 2 already recorded" in again, again
    assert len(_rows(mine)) == 2

    # Exported like any observation: the merge of every stream holds them, and their references resolve.
    ok("export", "new", "--db", str(mine), "--out", str(streams.folder(record, "vantages")))
    ok("export", "verify", "--chain-only", "--out", str(record))
    merged2 = tmp_path / "merged2.db"
    ok("export", "rebuild", "--out", str(record), "--db", str(merged2))
    assert [tuple(r) for r in _rows(merged2)] == [tuple(r) for r in _rows(mine)]
    listed = ok("vantage-differences", "--db", str(merged2))
    assert "reach" in listed and "text (" in listed and "one" in listed  # the outlet, for review
    # The comparing job's database is rebuilt from its stream alone (a lost cache: the workflow's
    # sync_database.sh), and compares again over a merged database holding its own differences: nothing new.
    rebuilt = tmp_path / "vantages-rebuilt.db"
    synced = subprocess.run(["bash", str(ROOT / ".github" / "scripts" / "sync_database.sh"),
                            str(streams.folder(record, "vantages")), str(rebuilt)],
                           env={**os.environ, "PYTHON": sys.executable, "PYTHONPATH": str(ROOT)},
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert synced.returncode == 0, synced.stdout + synced.stderr
    assert [tuple(r) for r in _rows(rebuilt)] == [tuple(r) for r in _rows(mine)]
    again = ok("compare-vantages", "--db", str(rebuilt), "--from", str(merged2),
               "--now", (NOW + timedelta(minutes=20)).isoformat())
    assert "0 differences recorded" in again and len(_rows(rebuilt)) == 2


def _answer(request_id, vantage, minutes, url="https://o.test/1"):
    at = (NOW + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return Answer(request_id, vantage, url, at, "ok", 200, url, {"headline": "h", "byline": "", "text": "t"})


def test_each_answer_is_paired_with_every_other_vantages_latest_earlier_answer_within_the_window():
    answers = [_answer(1, "in", 0), _answer(2, "out", 30), _answer(3, "in", 40), _answer(4, "out", 200),
               _answer(5, "in", 0, url="https://o.test/2"), _answer(6, "bd", 10, url="https://o.test/2")]
    since = answers[0].started_at
    found = {(a.request_id, b.request_id) for a, b in pairs(answers, since, timedelta(hours=2))}
    # 4 is 160 minutes after 3: outside the window; the two addresses are never mixed
    assert found == {(2, 1), (3, 2), (6, 5)}
    later = {(a.request_id, b.request_id) for a, b in pairs(answers, answers[2].started_at, timedelta(hours=2))}
    assert later == {(3, 2)}  # answers before --since are only the earlier side of a pair


def test_the_command_refuses_what_it_cannot_compare(tmp_path):
    missing = invoke("compare-vantages", "--db", str(tmp_path / "x.db"))
    assert missing.exit_code == 2 and "--db" in missing.output and not (tmp_path / "x.db").exists()
    (tmp_path / "junk.db").write_text("not a database")
    junk = invoke("compare-vantages", "--db", str(tmp_path / "v.db"), "--from", str(tmp_path / "junk.db"))
    assert junk.exit_code == 2 and "--from" in junk.output
    late = invoke("compare-vantages", "--db", str(tmp_path / "v.db"), "--since", "2030-01-01T00:00:00Z",
                  "--now", "2026-01-01T00:00:00Z")
    assert late.exit_code == 2 and "--since" in late.output
    zoneless = invoke("compare-vantages", "--db", str(tmp_path / "v.db"), "--since", "2026-01-01T00:00:00")
    assert zoneless.exit_code == 2 and "time zone" in zoneless.output
    bad = invoke("compare-vantages", "--db", str(tmp_path / "v.db"), "--stream", "Not A Name")
    assert bad.exit_code == 2 and "--stream" in bad.output


def test_a_merged_database_is_never_written(tmp_path):
    record = tmp_path / "record"
    for name in ("a-1of1", "b-1of1"):
        store = Store(tmp_path / f"{name}.db")
        with store.transaction() as conn:
            streams.set_stream(conn, name)
        store.insert("runs", {"command": "run", "started_at": "2026-01-01T00:00:00.000000Z", "vantage": name,
                              "software_version": "0", "settings": "{}"})
        export.export_new(store, streams.folder(record, name), now=NOW)
        store.close()
    merged = tmp_path / "merged.db"
    rebuild_record(record, merged)
    refused = invoke("compare-vantages", "--db", str(merged))
    assert refused.exit_code == 2 and "never written" in refused.output
    assert [r[0] for r in sqlite3.connect(merged).execute("SELECT command FROM runs")] == ["run", "run"]


def test_a_stream_may_name_another_streams_requests_but_not_a_missing_one_of_its_own(tmp_path, monkeypatch):
    def stream_record(name: str, request_id: int) -> Path:
        store = Store(tmp_path / f"{name}.db")
        with store.transaction() as conn:
            streams.set_stream(conn, "vantages")
        run = store.insert("runs", {"command": "compare-vantages", "started_at": "2026-01-01T00:00:00.000000Z",
                                    "vantage": "v", "software_version": "0", "settings": "{}"})
        store.conn.execute("PRAGMA foreign_keys = OFF")
        store.insert("vantage_differences", {
            "run_id": run, "found_at": "2026-01-01T00:00:00.000000Z", "url_key": "https://o.test/1",
            "kind": "reach", "request_a": request_id, "request_b": request_id + 1, "vantage_a": "a",
            "vantage_b": "b", "detail": "{}"})
        out = tmp_path / f"{name}-record"
        export.export_new(store, streams.folder(out, "vantages"), now=NOW)
        store.close()
        return out

    elsewhere = stream_record("elsewhere", streams.base("inside-1of1") + 5)
    rebuild_record(elsewhere, tmp_path / "elsewhere-rebuilt.db", stream="vantages")
    # In its own range, and no such request: the export refuses it (collector/record/references.py) ...
    with pytest.raises(ExportError, match="request_b = .* is neither held in requests nor in the record"):
        stream_record("own", streams.base("vantages") + 999)
    # ... and a record written without that check (by code before it) does not rebuild.
    monkeypatch.setattr(references, "check", lambda *args: None)
    own = stream_record("own-unchecked", streams.base("vantages") + 999)
    with pytest.raises(ExportError, match="point at rows the record lacks"):
        rebuild_record(own, tmp_path / "own-rebuilt.db", stream="vantages")


def test_the_site_never_reads_the_differences():
    """Nothing about a single article is published: the site's code never reads vantage_differences."""
    publish = ROOT / "collector" / "publish"
    readers = [p.name for p in publish.rglob("*.py") if "vantage_differences" in p.read_text(encoding="utf-8")]
    assert readers == []
    assert not [p for p in (ROOT / "site").rglob("*") if p.is_file() and p.suffix in {".html", ".md", ".txt"}
                and "vantage_differences" in p.read_text(encoding="utf-8")]
