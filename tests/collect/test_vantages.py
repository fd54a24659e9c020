"""Differences by vantage: the same addresses asked from two source addresses, answered differently."""

from __future__ import annotations

import json
import sqlite3
from datetime import timedelta

from click.testing import CliRunner

from collector.cli.main import cli
from collector.collect.vantages import Answer, differences
from testing import replica, vantage_farm
from testing.farm import Reply

NOW = replica.FEED_SNAPSHOT_TIME
OTHER_PAGE = "synthetic-prothomalo-8fdqj2xuxp-zwnj-nfd-time.html"


def _answer(**changes):
    values = {"headline": "h", "byline": "b", "text": "t"}
    base = dict(request_id=1, vantage="a", url_key="https://o.test/1", started_at="2026-01-01T00:00:00.000000Z",
                result="ok", status=200, final_key="https://o.test/1", values=values)
    return Answer(**{**base, **changes})


def test_the_kinds_of_difference():
    ok = _answer()
    assert differences(ok, _answer(request_id=2, vantage="b")) == []
    assert [k for k, _ in differences(ok, _answer(vantage="b", result="challenge", status=403, values=None))] == ["reach"]
    assert [k for k, _ in differences(ok, _answer(vantage="b", result="timeout", status=None, values=None))] == ["reach"]
    assert [k for k, _ in differences(_answer(result="timeout", status=None, values=None),
                                      _answer(vantage="b", result="connection_error", status=None, values=None))] == ["status"]
    moved = _answer(vantage="b", final_key="https://o.test/2")
    assert [k for k, _ in differences(ok, moved)] == ["final_address"]
    edited = _answer(vantage="b", values={"headline": "h", "byline": "b", "text": "other"})
    (kind, detail), = differences(ok, edited)
    assert kind == "text" and detail["fields"] == ["text"]


def test_a_farm_that_answers_by_source_address(farm, tmp_path):
    host, registry = vantage_farm.site_by_source_address(
        farm, tmp_path, ("/news/open", "/news/blocked", "/news/edited"), NOW,
        blocked=lambda path: path.startswith("/news/blocked"), edited=lambda path: path.startswith("/news/edited"),
        other_page=OTHER_PAGE)
    db = tmp_path / "r.db"

    def run(vantage, source, when):
        result = CliRunner().invoke(cli, [
            "run", "--db", str(db), "--warc-dir", str(tmp_path / "warc"), "--outlets", str(registry),
            "--now", when.isoformat(), "--min-interval", "0.05", "--vantage", vantage, "--source-address", source],
            catch_exceptions=False)
        assert result.exit_code == 0, result.output

    run("inside", "127.0.0.2", NOW)
    assert {s.client for s in host.seen} == {"127.0.0.2"}
    run("outside", "127.0.0.3", NOW + timedelta(hours=1, minutes=5))  # the 1 h revisits, from outside
    assert "127.0.0.3" in {s.client for s in host.seen}
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    found = {(r["url_key"].rsplit("/", 1)[1], r["kind"]): r for r in conn.execute("SELECT * FROM vantage_differences")}
    assert set(found) == {("blocked", "reach"), ("edited", "text")}
    blocked = found[("blocked", "reach")]
    assert (blocked["vantage_a"], blocked["vantage_b"]) == ("outside", "inside")
    vantages = dict(conn.execute("SELECT id, vantage FROM requests WHERE id IN (?, ?)",
                                 (blocked["request_a"], blocked["request_b"])).fetchall())
    assert vantages == {blocked["request_a"]: "outside", blocked["request_b"]: "inside"}
    assert json.loads(blocked["detail"])["a"]["status"] == 403
    listed = CliRunner().invoke(cli, ["vantage-differences", "--db", str(db)])
    assert listed.exit_code == 0 and "reach" in listed.output and "text (" in listed.output
    # The comparison over every answer of the database finds the same pairs, already recorded by the run.
    again = CliRunner().invoke(cli, ["compare-vantages", "--db", str(db), "--now",
                                     (NOW + timedelta(hours=1, minutes=30)).isoformat()])
    assert again.exit_code == 0 and "0 differences recorded (none), 2 already recorded" in again.output, again.output


def test_a_bad_source_address_is_refused(tmp_path):
    result = CliRunner().invoke(cli, ["run", "--db", str(tmp_path / "r.db"), "--source-address", "not-an-ip"])
    assert result.exit_code == 2 and "--source-address" in result.output


def test_a_run_with_no_other_vantages_answers_normalises_nothing(farm, tmp_path, monkeypatch):
    # A job's own working database holds one vantage: the comparison has nothing to
    # compare, and normalising every snapshot of the window cost more than the crawl.
    from collector.collect import vantages

    normalised = []
    real = vantages.normalise_for_comparison
    monkeypatch.setattr(vantages, "normalise_for_comparison", lambda text: normalised.append(text) or real(text))
    host = farm.add()
    articles = [host.url(f"/news/{n}") for n in range(3)]
    host.routes.update({
        "/robots.txt": replica.robots([host.url("/news.xml")]),
        "/news.xml": Reply(200, replica.news_sitemap([(a, NOW) for a in articles]), content_type="application/xml"),
        "/news/*": Reply(200, replica.article_page()),
    })
    registry = tmp_path / "outlets.toml"
    registry.write_text(replica.registry_toml({"one": host}), encoding="utf-8")
    db = tmp_path / "r.db"
    for hours in (0, 1.1):  # a capture run, then its 1 h revisits: one vantage only
        result = CliRunner().invoke(cli, [
            "run", "--db", str(db), "--warc-dir", str(tmp_path / "warc"), "--outlets", str(registry),
            "--now", (NOW + timedelta(hours=hours)).isoformat(), "--min-interval", "0.05", "--vantage", "inside"],
            catch_exceptions=False)
        assert result.exit_code == 0, result.output
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT COUNT(*) FROM snapshots").fetchone()[0] == 6
    assert conn.execute("SELECT COUNT(*) FROM vantage_differences").fetchone()[0] == 0
    assert normalised == []
