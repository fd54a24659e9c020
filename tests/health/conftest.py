"""The healthy loopback world the health tests start from (tests/health/world.py), made once a session."""

from __future__ import annotations

import threading

import pytest

from tests.health.world import World, start_loopback


@pytest.fixture(scope="session")
def healthy(tmp_path_factory):
    """Return a world after four hours of a healthy schedule (nothing failing, nothing warning)."""
    folder = tmp_path_factory.mktemp("health-world")
    loop = start_loopback(folder)
    world = World(loop, folder / "world")
    world.folder.mkdir()
    world.collect()
    world.archive()
    world.advance(4)
    yield world
    loop.trust.close()
    closers = [threading.Thread(target=host.close) for host in loop.farm.hosts]
    for closer in closers:
        closer.start()
    for closer in closers:
        closer.join()


@pytest.fixture
def world(healthy, tmp_path):
    """Return this test's own copy of the healthy world."""
    return healthy.fork(tmp_path / "world")
