"""Every run ends inside its time budget: a deadline, and per-outlet budgets of captures and checks."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from click.testing import CliRunner

from collector import settings
from collector.cli.main import cli
from collector.clock import Clock
from collector.collect.context import RunContext
from collector.collect.pipeline import active_outlets, run_collection
from collector.collect.revisits import run_rechecks
from collector.record import export
from collector.record.registry_mirror import sync_registry
from collector.registry import parse_registry
from testing import hostile, replica
from testing.farm import Reply, stall

NOW = replica.FEED_SNAPSHOT_TIME
# Short limits, so that one fetch's worst case is a few seconds and a deadline seconds away means something.
LIMITS = {"interval": 0.02, "backoff": (0.02, 0.04), "connect_timeout": 0.5, "read_timeout": 0.5,
          "total_timeout": 1.0}


def run_until(store, tmp_path, hosts, now, seconds):
    """Return (context, seconds taken) of a whole run, collection and checks, with a deadline `seconds` away."""
    ctx = RunContext.open(store, "test", clock=Clock(now), vantage="test", warc_dir=tmp_path / "warc",
                          allow_loopback=True, deadline=now + timedelta(seconds=seconds), **LIMITS)
    sync_registry(store, parse_registry(replica.registry_toml(hosts)), ctx.clock)
    began = time.monotonic()
    run_collection(ctx, active_outlets(ctx))
    run_rechecks(ctx)
    ctx.finish()
    return ctx, time.monotonic() - began


def captured(store, host):
    return store.one("SELECT COUNT(*) FROM capture_queue WHERE state = 'captured' AND url LIKE ?",
                     (host.base + "/%",))[0]


@pytest.fixture
def margin(monkeypatch):
    """Return the run's reserve for its last fetch's work, made small to suit the short limits."""
    monkeypatch.setattr(settings, "DEADLINE_WORK_SECONDS", 1.0)
    return 1.0


def test_an_outlet_whose_every_article_stalls_cannot_keep_the_run_past_its_deadline(
        farm, store, tmp_path, monkeypatch, margin):
    monkeypatch.setattr(settings, "CAPTURE_HOST_DOWN_AFTER", 1000)  # the deadline alone must end the run
    slow = hostile.add_host(farm)
    slow.routes.update(hostile.outlet_routes(slow, NOW, [f"/news/{i}" for i in range(40)]))
    slow.routes["/news/*"] = stall(60)  # a minute before anything, for every article
    quick = hostile.add_host(farm)
    quick.routes.update(hostile.outlet_routes(quick, NOW, [f"/news/{i}" for i in range(5)]))
    ctx, took = run_until(store, tmp_path, {"slow": slow, "quick": quick}, NOW, 20)
    assert took < 20  # started at NOW on the run's clock: the whole run, collection and checks, ended in time
    assert ctx.counts["stopped_at_deadline"] == 1 and ctx.counts["capture_carried_over"] > 0
    assert any(w.startswith("deadline:") for w in ctx.warnings)
    assert captured(store, quick) == 5  # the other outlet was not held up
    left = store.one("SELECT COUNT(*) FROM capture_queue WHERE state = 'pending' AND attempts = 0 AND url LIKE ?",
                     (slow.base + "/%",))[0]
    assert left > 0  # carried over untried, for the next run


def test_a_stalling_host_leaves_its_other_captures_and_checks_for_the_next_run(farm, store, tmp_path, margin):
    host = hostile.add_host(farm)
    host.routes.update(hostile.outlet_routes(host, NOW, [f"/news/{i}" for i in range(10)]))
    run_until(store, tmp_path, {"o": host}, NOW, 600)
    host.routes["/news/*"] = stall(60)
    later = NOW + timedelta(hours=1, minutes=1)  # every article's 1 h check is due
    ctx, took = run_until(store, tmp_path, {"o": host}, later, 600)
    tried = store.query("SELECT outcome FROM checks")
    assert len(tried) == settings.RECHECK_HOST_DOWN_AFTER  # then the host counted as down for this run
    assert ctx.counts["recheck_deferred"] == 10 - settings.RECHECK_HOST_DOWN_AFTER
    assert took < 3 * settings.MAX_ATTEMPTS * 2 + 10


def test_checks_per_outlet_are_budgeted_most_overdue_first(farm, store, tmp_path, monkeypatch, margin):
    monkeypatch.setattr(settings, "RECHECKS_PER_OUTLET_PER_RUN", 4)
    host = hostile.add_host(farm)
    host.routes.update(hostile.outlet_routes(host, NOW, [f"/news/{i}" for i in range(6)]))
    run_until(store, tmp_path, {"o": host}, NOW, 600)
    ctx, _took = run_until(store, tmp_path, {"o": host}, NOW + timedelta(hours=7), 600)  # 1 h and 6 h due: 12
    assert store.one("SELECT COUNT(*) FROM checks")[0] == 4
    assert [r[0] for r in store.query("SELECT slot FROM checks ORDER BY id")] == ["1h"] * 4
    assert ctx.counts["recheck_over_budget"] == 8


def test_a_feed_of_200000_undated_entries_cannot_keep_the_run_from_exporting(farm, store, tmp_path):
    # The default reserve: recording the biggest listing the size limit lets in must fit in it.
    big = hostile.add_host(farm)
    big.routes.update(hostile.outlet_routes(big, NOW, ["/news/dated"]))
    undated = [(big.url(f"/news/u{i}"), None) for i in range(200_000)]
    big.routes[hostile.FEED_PATH] = Reply(200, hostile.rss(undated), content_type=hostile.RSS_TYPE)
    budget = settings.DEADLINE_WORK_SECONDS + 30
    ctx, took = run_until(store, tmp_path, {"big": big}, NOW, budget)
    assert took < budget
    feed = store.one("SELECT entry_count FROM listings WHERE url = ?", (big.url(hostile.FEED_PATH),))
    assert feed["entry_count"] == 200_000  # the whole listing kept, as the method says
    assert ctx.counts["queued"] >= 200_000  # and every undated entry queued
    tried = store.one("SELECT COUNT(*) FROM capture_attempts")[0]
    assert tried <= settings.CAPTURES_PER_OUTLET_PER_RUN  # the rest carried over, for later runs
    began = time.monotonic()
    written = export.export_new(store, tmp_path / "record", warc_dir=tmp_path / "warc", now=NOW)
    assert written.path is not None and written.rows["capture_queue"] == ctx.counts["queued"]
    # The job's time after the run (timeout-minutes less the deadline) holds the export with room.
    assert time.monotonic() - began < settings.DEADLINE_WORK_SECONDS * 2


@pytest.mark.parametrize("deadline, problem", [("2026-08-13T05:00:00", "names no time zone"),
                                               ("2026-08-13T04:00:00Z", "is not after the run's start")])
def test_a_deadline_is_an_instant_with_its_zone_after_the_start(tmp_path, deadline, problem):
    result = CliRunner().invoke(cli, ["run", "--db", str(tmp_path / "r.db"), "--outlets", "data/outlets.toml",
                                      "--now", NOW.isoformat(), "--deadline", deadline])
    assert result.exit_code == 2 and problem in result.output
    assert not (tmp_path / "r.db").exists()
