"""Shared fixtures: a fresh record, a run context with a fast loopback fetcher, and a farm."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import socket
import sys
from pathlib import Path

import pytest

from collector.clock import Clock
from collector.collect.context import RunContext
from collector.record.store import Store
from testing.farm import Farm

DATA = Path(__file__).resolve().parent / "data"
# The Actions scenario (tests/actions) runs the workflows under act for many minutes: `make test-actions`
# runs it on its own (and .ci/run calls it), `make test` leaves it out.
collect_ignore = [] if os.environ.get("TAKEDOWNWATCH_ACT_SCENARIO") == "1" else ["actions"]
# The loopback servers run in the test process. A thread that has to wait
# for the GIL stamps a request late, by up to the switch interval (5 ms by
# default), which makes the next gap look short. A finer interval keeps the
# servers' timestamps within about a millisecond of the truth.
sys.setswitchinterval(0.0005)
# The reduced interval tests run at: short enough to keep the suite fast,
# long enough that a pacing bug shows in the server's timestamps.
TEST_INTERVAL = 0.05


@contextlib.contextmanager
def loopback_only():
    """Refuse, and report, any connection this process tries outside 127.0.0.0/8."""
    attempts: list[str] = []
    connect = socket.socket.connect

    def guarded(sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            if not ipaddress.ip_address(address[0].split("%")[0]).is_loopback:
                attempts.append(address[0])
                raise ConnectionRefusedError(f"test refused a connection to {address[0]}")
        return connect(sock, address)

    socket.socket.connect = guarded
    try:
        yield attempts
    finally:
        socket.socket.connect = connect
    assert attempts == [], f"something tried to reach {attempts}"


@pytest.fixture(autouse=True)
def _loopback_only():
    """Every test: real outlet names may appear as data, never as a connection's target."""
    with loopback_only():
        yield


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "record.db")
    yield s
    s.conn.close()


@pytest.fixture
def farm():
    with Farm() as f:
        yield f


@pytest.fixture
def make_ctx(tmp_path, store):
    """Return a factory of run contexts whose fetcher talks to loopback at TEST_INTERVAL."""
    made = []

    def factory(now=None, **options):
        options.setdefault("interval", TEST_INTERVAL)
        options.setdefault("backoff", (0.02, 0.04))
        options.setdefault("connect_timeout", 2.0)
        options.setdefault("read_timeout", 1.0)
        options.setdefault("total_timeout", 3.0)
        ctx = RunContext.open(store, "test", clock=Clock(now), vantage="test-vantage",
                              warc_dir=tmp_path / "warc", allow_loopback=True, **options)
        made.append(ctx)
        return ctx

    yield factory
    for ctx in made:
        if ctx.warc:
            ctx.warc.close()
