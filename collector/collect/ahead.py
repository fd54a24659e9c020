"""Fetching ahead of the work on what was fetched: one host's requests never wait for its parsing.

A capture or a recheck fetches an address, then extracts the page and writes
the snapshot, then asks for the next address. Done in that order, every
request of a host waits for the CPU work on the one before: at 400 hosts on
two cores that was most of the time above the pacing bound (bench/shards.py:
each capture of a host a mean 0.7 s later than its interval allowed). Here
the fetches run in a thread of their own, at most `depth` answers ahead of
the caller, so the host's next request is waiting at the pacer while the
previous answer is worked on; the pacer alone decides when it is sent.

The answers come out in the order they were fetched, each exactly once; the
fetching generator's own bookkeeping (host-down counts, the deadline) runs in
the fetching thread, before the answer is handed over, so it sees what it saw
when the work on an answer came between two fetches. An error in the fetching
thread (a record that cannot be written) is raised in the caller's; a caller
that stops early stops the fetching at its next answer, and the thread has
ended by the time the caller's loop has.
"""

from __future__ import annotations

import queue
import threading
from typing import Callable, Iterator, TypeVar

T = TypeVar("T")
_DONE = object()


def fetched_ahead(answers: Iterator[T], depth: int = 1, name: str = "fetch-ahead",
                  before: Callable[[], object] | None = None) -> Iterator[T]:
    """Yield the items of `answers`, produced in a thread of their own at most `depth` ahead of the caller.

    `before` is called in the caller's thread before each item is handed over:
    the pacer's give_way, so the work on an answer waits while another host's
    request is due on the wire (net/pacing.py).
    """
    handed: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce() -> None:
        try:
            for answer in answers:
                if not _offer(handed, stop, (answer, None)):
                    return
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, raised there
            _offer(handed, stop, (_DONE, exc))
            return
        finally:
            close = getattr(answers, "close", None)
            if close is not None:
                close()  # a generator stopped early runs its own cleanup, in its own thread
        _offer(handed, stop, (_DONE, None))

    worker = threading.Thread(target=produce, name=name, daemon=True)
    worker.start()
    try:
        while True:
            answer, error = handed.get()
            if error is not None:
                raise error
            if answer is _DONE:
                return
            if before is not None:
                before()
            yield answer
    finally:
        stop.set()
        while worker.is_alive():  # the fetcher may be putting an answer: make room, then wait
            try:
                handed.get(timeout=0.05)
            except queue.Empty:
                pass
        worker.join()


def _offer(handed: queue.Queue, stop: threading.Event, item) -> bool:
    """Put item in the queue unless the caller has stopped; return False when it has."""
    while not stop.is_set():
        try:
            handed.put(item, timeout=0.05)
            return True
        except queue.Full:
            continue
    return False
