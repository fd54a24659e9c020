"""Shards: rendezvous hashing of registrable domains splits the outlets among N collector processes."""

from __future__ import annotations

import sqlite3
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from collector.cli.main import cli
from collector.collect.shards import in_shard, outlet_domain, parse_shard, shard_of
from collector.errors import BadArgument
from testing import replica
from testing.farm import Reply

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = tomllib.loads((ROOT / "data" / "outlets.toml").read_text(encoding="utf-8"))
HOMEPAGES = {oid: o["homepage"] for oid, o in REGISTRY["outlets"].items() if o.get("active", True)}
# Made-up domains (the registry has 41 outlets: too few to measure a share)
DOMAINS = [f"outlet{n}.com.bd" for n in range(3000)]


@pytest.mark.parametrize("text, expected", [("1/1", (1, 1)), ("2/4", (2, 4)), (" 3 / 3 ", (3, 3))])
def test_parse_shard(text, expected):
    assert parse_shard(text) == expected


@pytest.mark.parametrize("text", ["0/4", "5/4", "1/0", "1", "a/b", "-1/2", "", "1/2/3"])
def test_parse_shard_refuses(text):
    with pytest.raises(BadArgument):
        parse_shard(text)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_shards_are_disjoint_and_cover_every_active_outlet(n):
    taken = {k: {oid for oid, home in HOMEPAGES.items() if in_shard(home, (k, n))} for k in range(1, n + 1)}
    assert set().union(*taken.values()) == set(HOMEPAGES)
    assert sum(len(s) for s in taken.values()) == len(HOMEPAGES)


@pytest.mark.parametrize("n", [1, 2, 4, 9])
def test_one_more_shard_moves_about_one_in_n_plus_one_and_only_to_the_new_shard(n):
    before = {d: shard_of(d, n) for d in DOMAINS}
    after = {d: shard_of(d, n + 1) for d in DOMAINS}
    moved = [d for d in DOMAINS if before[d] != after[d]]
    assert all(after[d] == n + 1 for d in moved)
    share = len(moved) / len(DOMAINS)
    assert abs(share - 1 / (n + 1)) < 0.03, share


def test_shards_are_balanced():
    counts = [sum(shard_of(d, 4) == k for d in DOMAINS) for k in range(1, 5)]
    assert min(counts) > 0.8 * len(DOMAINS) / 4


def test_outlets_of_one_site_share_a_shard():
    assert outlet_domain("https://www.prothomalo.com/") == outlet_domain("https://en.prothomalo.com/bangladesh")
    for n in range(2, 7):
        assert shard_of(outlet_domain("https://www.kalerkantho.com.bd/"), n) == \
            shard_of(outlet_domain("https://epaper.kalerkantho.com.bd/"), n)


def test_a_bad_shard_is_refused_before_the_database_is_touched(tmp_path):
    result = CliRunner().invoke(cli, ["run", "--db", str(tmp_path / "r.db"), "--shard", "3/2"])
    assert result.exit_code == 2 and "--shard" in result.output
    assert not (tmp_path / "r.db").exists()


def test_a_shard_run_requests_only_its_outlets(farm, tmp_path):
    hosts = {}
    for n in range(6):
        host = farm.add()
        host.routes.update({"/robots.txt": Reply(404), "/": Reply(200, replica.homepage("/rss/rss.xml")),
                            "/rss/rss.xml": Reply(200, replica.moved_feed("bd24live", host.base),
                                                  content_type="application/rss+xml")})
        hosts[f"outlet{n}"] = host
    registry = tmp_path / "outlets.toml"
    registry.write_text(replica.registry_toml(hosts), encoding="utf-8")
    mine = {oid for oid, h in hosts.items() if in_shard(h.base + "/", (1, 2))}
    assert 0 < len(mine) < len(hosts), "the farm's addresses should fall to both shards"
    result = CliRunner().invoke(cli, [
        "run", "--db", str(tmp_path / "r.db"), "--warc-dir", str(tmp_path / "warc"), "--outlets", str(registry),
        "--now", replica.FEED_SNAPSHOT_TIME.isoformat(), "--min-interval", "0.05", "--shard", "1/2"],
        catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert {oid for oid, h in hosts.items() if h.paths_seen()} == mine
    db = sqlite3.connect(tmp_path / "r.db")
    assert {r[0] for r in db.execute("SELECT DISTINCT outlet_id FROM requests")} == mine


def test_a_shard_revisits_only_its_own_outlets_articles(store):
    from datetime import datetime, timedelta, timezone

    from collector.collect.revisits import count_due, due_checks

    store.insert("outlet_groups", {"id": "g", "name": "G", "name_bn": "জি"})
    run_id = store.insert("runs", {"command": "run", "started_at": "2026-01-01T00:00:00Z", "vantage": "t",
                                   "software_version": "0", "settings": {}})
    for oid in ("a", "b"):
        store.insert("outlets", {"id": oid, "name": oid, "name_bn": oid, "homepage": f"https://{oid}.test/",
                                 "group_id": "g", "first_seen_at": "t", "last_synced_at": "t"})
        article = store.insert("articles", {"outlet_id": oid, "url_key": f"https://{oid}.test/1",
                                            "url": f"https://{oid}.test/1", "first_seen_at": "t",
                                            "first_seen_run": run_id})
        request = store.insert("requests", {"run_id": run_id, "purpose": "capture", "method": "GET",
                                            "url": f"https://{oid}.test/1", "attempt": 1, "sent": 1,
                                            "started_at": "t", "finished_at": "t", "result": "ok", "vantage": "t"})
        store.insert("snapshots", {"article_id": article, "request_id": request, "run_id": run_id,
                                   "purpose": "capture", "captured_at": "2026-01-01T00:00:00.000000Z",
                                   "status_code": 200, "final_url": f"https://{oid}.test/1", "text": "t",
                                   "html_sha256": "0" * 64, "warc_file": "w", "warc_offset": 0, "warc_length": 1,
                                   "extractor": "e", "extractor_info": {}})
    now = datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(hours=7)
    assert {d.outlet_id for d in due_checks(store, now)} == {"a", "b"}
    assert {d.outlet_id for d in due_checks(store, now, outlets={"a"})} == {"a"}
    assert count_due(store, now, outlets={"b"}) == count_due(store, now) // 2 == 2
