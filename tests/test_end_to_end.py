"""Collect, then archive against the fake Save Page Now, then publish the closed week and read
its stats: the published archive rate is exactly the share of captured articles with a
confirmed copy."""

from __future__ import annotations

import json
from datetime import timedelta

from click.testing import CliRunner

from collector.cli.main import cli
from collector.collect.pipeline import active_outlets, run_collection
from collector.registry import parse_registry
from collector.record.registry_mirror import sync_registry
from testing import replica
from testing.fake_spn import FakeSPN
from testing.farm import Reply

NOW = replica.FEED_SNAPSHOT_TIME


def test_collect_archive_stats(make_ctx, store, farm, tmp_path, monkeypatch):
    hosts = {}
    for name in ("one", "two", "three"):
        host = farm.add()
        host.routes.update({
            "/robots.txt": Reply(404),
            "/": Reply(200, replica.homepage("/feed/")),
            "/feed/": Reply(200, replica.moved_feed("bd24live", host.base), content_type="application/rss+xml"),
            "/*": replica.article_route(replica.article_page(), host.base),
        })
        hosts[name] = host
    registry_text = replica.registry_toml(hosts)
    registry = tmp_path / "outlets.toml"
    registry.write_text(registry_text, encoding="utf-8")
    ctx = make_ctx(now=NOW)
    sync_registry(store, parse_registry(registry_text), ctx.clock)
    run_collection(ctx, active_outlets(ctx))
    ctx.finish()
    captured = store.one("SELECT COUNT(DISTINCT article_id) AS n FROM snapshots")["n"]
    assert captured >= 6

    spn = FakeSPN(farm, polls=1)
    # The service refuses submissions without keys; the fake takes any key pair.
    monkeypatch.setenv("IA_ACCESS_KEY", "end-to-end")
    monkeypatch.setenv("IA_SECRET_KEY", "end-to-end-secret")
    later = NOW.replace(hour=NOW.hour + 1).isoformat()
    result = CliRunner().invoke(cli, [
        "archive", "--db", store.path, "--warc-dir", str(tmp_path / "warc"), "--outlets", str(registry),
        "--now", later, "--base-url", spn.base, "--min-interval", "0.05", "--per-minute", "6000",
        "--poll-seconds", "0.05", "--limit", "6"], catch_exceptions=False)
    assert result.exit_code == 0, result.output

    confirmed = store.one(
        "SELECT COUNT(DISTINCT s.article_id) AS n FROM archive_submissions a JOIN snapshots s "
        "ON s.id = a.snapshot_id WHERE a.status = 'success' AND a.timestamp IS NOT NULL")["n"]
    assert confirmed == 6

    closed = (NOW + timedelta(days=8)).isoformat()  # the week of NOW has closed and is published
    history = ["--published", str(tmp_path / "published")]
    done = CliRunner().invoke(cli, ["publish", "--db", store.path, "--now", closed, *history,
                                    "--decisions", str(tmp_path / "decisions")], catch_exceptions=False)
    assert done.exit_code == 0 and "disclosure audit passed" in done.output, done.output
    stats = CliRunner().invoke(cli, ["stats", *history, "--json"], catch_exceptions=False)
    assert stats.exit_code == 0, stats.output
    published = json.loads(stats.output)
    week = published["latest"]["week"]
    figures = published["figures"]["all-outlets"][week]
    # The job submits the oldest captures first; the three outlets are captured at once, so which
    # outlets the first ones belong to depends on timing. Fewer than 3 of them must be withheld.
    archived_outlets = store.one(
        "SELECT COUNT(DISTINCT r.outlet_id) AS n FROM archive_submissions a JOIN snapshots s "
        "ON s.id = a.snapshot_id JOIN articles r ON r.id = s.article_id "
        "WHERE a.status = 'success' AND a.timestamp IS NOT NULL")["n"]
    if archived_outlets >= 3:
        assert figures["articles_captured"] == captured
        assert figures["articles_archived"] == confirmed
        assert abs(figures["archive_rate"] - confirmed / captured) < 1e-4
        assert published["figures"]["all-outlets"]["all"]["articles_captured"] == captured
    else:  # a count from fewer than 3 outlets withholds the whole cell, with the one marker
        withheld = {"withheld": True}
        assert figures["articles_archived"] == withheld and figures["articles_captured"] == withheld
