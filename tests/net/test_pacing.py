"""The pacer's scheduling: the wait at the wire, the start line, release spacing, right of way.

The gaps servers see are tested in test_fetch.py; these tests pin down the
pieces that keep a crawl of many hosts close to the pacing lower bound
without ever shortening a gap.
"""

from __future__ import annotations

import threading
import time
from datetime import datetime

from collector import settings
from collector.clock import Clock
from collector.net.pacing import HostPacer, _first_clear
from testing.farm import Reply

PAGE = Reply(200, b"<html><body><p>hello</p></body></html>")
NO_ROBOTS = Reply(404, b"none", content_type="text/plain")


def _ms(value: float) -> float:
    return round(value * 1000, 6)


# -- release spacing ------------------------------------------------------------

def test_a_release_keeps_clear_of_every_other_release():
    s = 0.001

    def release(ready, taken):
        return _ms(_first_clear(ready, taken, s, s))

    assert release(10.0, []) == 10000                     # nothing else: on time
    assert release(10.0, [10.0]) == 10001                 # same instant: after it
    assert release(10.0, [10.0, 10.001]) == 10002         # a train: after the train
    assert release(10.0, [9.0, 11.0]) == 10000            # well clear on both sides
    assert release(10.0, [10.0005, 10.5]) == 10001.5      # just after: after it


def test_a_release_keeps_clear_of_the_last_one():
    pacer = HostPacer(0.05, Clock())
    pacer._going(1, None)  # released just now
    now = pacer.clock.monotonic()
    assert pacer._going(2, now) >= pacer._last_release + pacer.spacing


def test_turns_due_together_are_released_apart():
    pacer = HostPacer(0.05, Clock())
    now = pacer.clock.monotonic() + 0.05
    times = sorted(pacer._going(key, now) for key in range(5))
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert min(gaps) >= pacer.spacing - 1e-9
    assert times[0] == now  # the first is not held back


# -- right of way -----------------------------------------------------------------

def test_quiet_moment_is_after_a_train_of_due_turns():
    w, s = 0.001, 0.0003
    assert _first_clear(5.0, [], w, s) == 5.0
    assert _first_clear(5.0, [7.0], w, s) == 5.0                   # due later than the window
    assert _ms(_first_clear(5.0, [5.0005], w, s)) == 5000.8       # due within it: after that turn
    assert _ms(_first_clear(5.0, [5.0005, 5.001, 5.0015], w, s)) == 5001.8  # a train: after all
    assert _ms(_first_clear(5.0, [5.0005, 5.003], w, s)) == 5000.8  # a gap the window fits in
    assert _first_clear(5.0, [4.0], w, s) == 5.0                   # overdue and gone long ago


def test_give_way_returns_at_once_when_nothing_is_due():
    pacer = HostPacer(0.05, Clock())
    assert pacer.give_way() < 0.005


def test_give_way_waits_for_a_turn_due_within_the_window_and_is_capped():
    pacer = HostPacer(0.05, Clock())
    # A turn of another host due in 20 ms, looked at with a 50 ms window.
    pacer._going(1, pacer.clock.monotonic() + 0.02)
    waited = pacer.give_way(window=0.05, limit=1.0)
    assert waited >= 0.018
    # Still registered as due (it never went): the limit caps the wait.
    pacer._due[1] = pacer.clock.monotonic() + 0.01
    began = time.monotonic()
    pacer.give_way(window=10.0, limit=0.03)
    assert time.monotonic() - began < 0.5


def test_give_way_waits_while_a_request_is_on_the_wire():
    pacer = HostPacer(0.05, Clock())
    pacer._going(7, None)  # on the wire
    done = threading.Event()

    def bookkeeping():
        pacer.give_way(limit=5.0)
        done.set()

    worker = threading.Thread(target=bookkeeping)
    worker.start()
    assert not done.wait(0.05)  # held while the write is in progress
    pacer._written()
    assert done.wait(2.0)
    worker.join()


def test_a_turn_left_without_a_write_leaves_the_wire(farm, make_ctx):
    ctx = make_ctx()
    refused = "http://127.0.0.1:9/x"  # the discard port: nothing listens
    ctx.fetcher.get(refused, purpose="test", robots=False)
    assert ctx.fetcher.pacer._on_wire == 0
    assert ctx.fetcher.pacer._due == {}
    assert ctx.fetcher.pacer.give_way() < 0.005
    # The next wait is measured from the end of the failed attempt.
    assert ctx.fetcher.pacer.gap_until_ready("127.0.0.1:9") > ctx.fetcher.interval / 2


# -- the wait at the wire and the start line -------------------------------------

def test_the_wait_happens_at_the_wire_and_the_ledger_times_the_request_not_the_wait(farm, make_ctx):
    host = farm.add({"/robots.txt": NO_ROBOTS, "/p*": PAGE})
    ctx = make_ctx(interval=0.3)
    ctx.fetcher.get(host.url("/p1"), purpose="test")
    ctx.fetcher.get(host.url("/p2"), purpose="test")
    rows = ctx.store.query("SELECT started_at, elapsed_ms FROM requests WHERE run_id = ? ORDER BY id",
                           (ctx.run_id,))
    assert len(rows) == 3  # robots.txt, p1, p2
    starts = [datetime.fromisoformat(r["started_at"].replace("Z", "+00:00")) for r in rows]
    for before, after in zip(starts, starts[1:]):
        assert (after - before).total_seconds() >= 0.3 - 0.002
    # Elapsed is the exchange itself: the 0.3 s wait before it is not counted.
    assert all(r["elapsed_ms"] < 250 for r in rows)
    gaps = host.gaps()
    assert min(gaps) >= 0.3 - 0.015


def test_first_contacts_wait_for_the_start_line(farm, make_ctx):
    hosts = [farm.add({"/robots.txt": NO_ROBOTS, "/p": PAGE}) for _ in range(3)]
    ctx = make_ctx()
    line_wall = time.time() + 0.25
    ctx.fetcher.pacer.start_line(ctx.clock.monotonic() + 0.25)
    threads = [threading.Thread(target=ctx.fetcher.get, args=(h.url("/p"),), kwargs={"purpose": "test"})
               for h in hosts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for host in hosts:
        first = min(s.at for s in host.seen)
        assert first >= line_wall - 0.01, "a host was contacted before the start line"


def test_each_host_keeps_its_own_margin_above_the_interval():
    pacer = HostPacer(1.0, Clock(), safety=lambda host: 0.0002 if host.startswith("127.") else 0.05)
    with pacer.acquire("far.example") as turn:
        turn.wait()
    with pacer.acquire("127.0.0.1:8000") as turn:
        turn.wait()
    assert 1.04 < pacer.gap_until_ready("far.example") <= 1.05
    assert 0.99 < pacer.gap_until_ready("127.0.0.1:8000") <= 1.0002


def test_loopback_hosts_get_the_loopback_margin(farm, make_ctx):
    host = farm.add({"/robots.txt": NO_ROBOTS, "/p": PAGE})
    ctx = make_ctx()
    ctx.fetcher.get(host.url("/p"), purpose="test")
    netloc = host.url("/").split("/")[2]
    assert ctx.fetcher.pacer._slot(netloc).safety == settings.LOOPBACK_PACING_SAFETY_SECONDS
    assert settings.PACING_SAFETY_SECONDS > settings.LOOPBACK_PACING_SAFETY_SECONDS
