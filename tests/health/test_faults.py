"""Each fault, introduced in turn into a healthy loopback world, fails exactly its check, and clears when it ends.

The world (tests/health/world.py) runs the real collection, export,
time-stamping and archive code on a virtual clock: four hours of a healthy
schedule first (shared by the module's tests), then each test works on its
own copy. "Exactly its check" means no finding of any other check fails;
warnings elsewhere are allowed where the fault explains them.
"""

from __future__ import annotations

from collector import settings
from tests.health.world import challenge, failing, states
from testing.farm import Reply


def test_the_healthy_world_warns_of_nothing(world):
    report = world.health()
    assert report["state"] == "ok", [f for f in report["findings"] if f["state"] != "ok"]
    assert {f["check"] for f in report["findings"]} >= {"outlet-silent", "schedule-gap", "archive-refusals",
                                                        "evidence-authority", "storage-database"}


def test_an_outlets_feed_gone(world):
    world.loop.fault("alpha", "/news_sitemap.xml", Reply(404))
    try:
        world.advance(0.5)
        assert states(world.health(), "outlet-no-source")["alpha"] == "warn"
        world.advance(0.25)
        assert failing(world.health()) == {("outlet-no-source", "alpha")}
    finally:
        world.loop.healthy("alpha")
    world.advance(0.25)
    assert failing(world.health()) == set()


def test_robots_txt_answering_5xx_for_several_runs(world):
    world.loop.fault("beta", "/robots.txt", Reply(503))
    try:
        world.advance(0.75)
        assert failing(world.health()) == {("outlet-robots", "beta")}
    finally:
        world.loop.healthy("beta")
    world.advance(0.25)
    assert failing(world.health()) == set()


def test_a_cloudflare_challenge(world):
    world.loop.fault("gamma", "*", challenge())
    try:
        world.advance(0.75)
        assert failing(world.health()) == {("outlet-challenge", "gamma")}
    finally:
        world.loop.healthy("gamma")
    world.advance(0.25)
    assert failing(world.health()) == set()


def test_a_time_stamping_authority_down(world):
    authority = world.loop.trust.authorities[0]
    host = authority.host.netloc
    authority.mode = "down"
    try:
        world.advance(0.25)
        assert states(world.health(), "evidence-authority")[host] == "ok"  # one run: asked again next run
        world.advance(0.5)
        assert failing(world.health()) == {("evidence-authority", host)}
    finally:
        authority.mode = "ok"
    world.advance(0.25)
    assert failing(world.health()) == set()


def test_the_archive_answering_429_for_hours(world):
    world.loop.spn.per_minute = 0  # every submission over the limit: the 429 page
    try:
        world.advance(1)
        assert states(world.health(), "archive-refusals")[None] == "warn"  # refused, not yet for hours
        world.advance(2)
        assert failing(world.health()) == {("archive-refusals", None)}
    finally:
        world.loop.spn.per_minute = None
    world.advance(1)
    assert failing(world.health()) == set()


def test_a_three_hour_gap_in_the_schedule(world, monkeypatch):
    world.advance(3, runs=False)
    world.advance(0.25)
    # The health job runs on the same scheduler: it must still see the gap once runs resume.
    report = world.health()
    assert failing(report) == {("schedule-gap", "default/run")}
    assert states(report, "schedule-gap")["default/archive"] == "warn"  # three of its hourly starts missed
    monkeypatch.setattr(settings, "HEALTH_SCHEDULE_WINDOW_HOURS", 2.0)  # a short window, so it passes quickly
    world.advance(2)
    assert failing(world.health()) == set()


def test_a_database_near_its_bound(world):
    size = world.db.stat().st_size
    near = int(size / 0.96)
    assert failing(world.health("--database-bound", str(near))) == {("storage-database", world.db.name)}
    world.advance(0.5)  # the database grows with the runs: still near
    assert failing(world.health("--database-bound", str(near))) == {("storage-database", world.db.name)}
    assert failing(world.health("--database-bound", str(size * 3))) == set()


# The forged export file (issue 30 item 6) is the signing helper's: fork `healthy`, push a forged,
# well-chained unsigned file into `world.folder / "record"`, and expect its check alone to fail with
# `world.health("--record", str(world.folder / "record"), "--trust", str(world.loop.trust.folder))`.
