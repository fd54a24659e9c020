"""Fixtures of the archive tests: one farm for the package's tests, a fresh fake Save Page Now each."""

from __future__ import annotations

import threading

import pytest

from testing.fake_spn import FakeSPN
from testing.farm import Farm


@pytest.fixture(scope="module")
def hosts():
    """Return a farm shared by this module's tests, its hosts closed together at the end."""
    farm = Farm()
    yield farm
    # Each host takes half a second to shut down (its serve_forever poll): close them at once.
    closers = [threading.Thread(target=host.close) for host in farm.hosts]
    for closer in closers:
        closer.start()
    for closer in closers:
        closer.join()


@pytest.fixture
def fake(hosts):
    return FakeSPN(hosts)
