"""Run counters: no increment lost when outlet threads count at once (issue 32, item 7).

RunContext.count is called from up to settings.MAX_CONCURRENT_OUTLETS
threads; the counts end in run_finishes, an append-only observation, so a
lost increment is a wrong figure kept for good.
"""

from __future__ import annotations

import sys
import threading

from collector.collect.context import RunContext

THREADS, EACH = 48, 2000


def test_many_threads_counting_lose_nothing():
    ctx = RunContext(store=None, clock=None, run_id=1, vantage="test")
    start = threading.Barrier(THREADS)

    def work():
        start.wait()
        for _ in range(EACH):
            ctx.count("snapshots")
            ctx.count("capture_captured", 2)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # a thread switch between the read and the write becomes likely
    try:
        threads = [threading.Thread(target=work) for _ in range(THREADS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert ctx.counts == {"snapshots": THREADS * EACH, "capture_captured": 2 * THREADS * EACH}
