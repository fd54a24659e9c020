"""A capture run's span against its politeness bound when the pages cost real extraction time.

    .venv/bin/python bench/write_lock.py                      # 16 hosts x 12 articles, interval 0.4 s, 3 crawls
    .venv/bin/python bench/write_lock.py --hosts 8 --interval 0.5 --repeat 5

Issue 32, item 8: every outlet's ledger rows (a request's intent before it is
sent, its row after) are written through the store's one lock. When a
capture extracted its page inside its write transaction, a host's next
request waited, at its intent, for whichever outlet was extracting: the
requests left later than the pacer allowed and the run took longer than the
politeness bound. The farm (bench/farmserver.py `articles`, in a process of its
own at nice 19, as bench/pacing.py) serves a real article (ukbdnews.com's,
83 kB) at every address; each host's queue is captured by
collector.collect.capture.capture_outlet, one thread per outlet, with the
first contacts at a common line, as the collect pipeline does.

Printed per crawl and as the median crawl: the span the servers saw (first
request to last, over all hosts), the bound (interval x (the busiest host's
requests - 1)), their ratio, the smallest gap one server saw (never under
the interval), the mean lateness of a host's request after its interval,
and the CPU time one extraction took (median, measured here beforehand).
Run it on the code before a change and after it to compare.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from pacing import FarmProcess, figures  # noqa: E402

ARTICLE = ROOT / "tests" / "data" / "articles" / "ukbdnews.com__2020-08_23646__trafilatura-tests-eval.html"


def extraction_ms(times: int = 15) -> float:
    """Return the median CPU milliseconds of one extraction of the farm's article."""
    from collector.parse.extract import extract

    body, spent = ARTICLE.read_bytes(), []
    for _ in range(times):
        started = time.process_time()
        extract(body, "text/html; charset=utf-8", "https://example.invalid/p/0")
        spent.append(time.process_time() - started)
    return 1000 * statistics.median(spent)


def crawl(bases: list[str], pages: int, interval: float) -> float:
    """Return the wall time of capturing every host's queue, one thread per outlet, as the pipeline does."""
    from collector import settings
    from collector.cli.main import tune_interpreter
    from collector.clock import Clock
    from collector.collect import capture
    from collector.collect.context import RunContext
    from collector.record.store import Store

    tune_interpreter()
    work = Path(tempfile.mkdtemp())
    store = Store(work / "bench.db")
    ctx = RunContext.open(store, "bench", clock=Clock(), vantage="bench", warc_dir=work / "warc",
                          interval=interval, allow_loopback=True)
    outlets = {}
    for number, base in enumerate(bases):
        outlet = outlets[base] = f"o{number}"
        for page in range(pages):
            url = f"{base}/p/{page}"
            article = store.insert("articles", {"outlet_id": outlet, "url_key": url, "url": url,
                                               "first_seen_at": ctx.clock.now_iso(), "first_seen_run": ctx.run_id})
            store.insert("capture_queue", {"url_key": url, "url": url, "article_id": article, "outlet_id": outlet,
                                           "reason": "listing", "queued_at": ctx.clock.now_iso(),
                                           "queued_run": ctx.run_id})
    gate = threading.Event()

    def work_on(base: str) -> int:
        gate.wait()
        return capture.capture_outlet(ctx, outlets[base], limit=pages)

    started = time.monotonic()
    with ThreadPoolExecutor(len(bases)) as pool:
        futures = [pool.submit(work_on, base) for base in bases]
        ctx.fetcher.start_line(time.monotonic() + settings.START_LINE_SECONDS)
        gate.set()
        made = sum(future.result() for future in futures)
    wall = time.monotonic() - started
    if made != len(bases) * pages:
        raise SystemExit(f"only {made} of {len(bases) * pages} captures made")
    ctx.finish()
    store.close()
    return wall


def lateness(log: dict, interval: float) -> float:
    """Return the mean seconds a host's request came after its interval from the one before."""
    late = []
    for arrivals in log.values():
        times = sorted(at for at, path in arrivals if path != "/robots.txt")
        late += [max(0.0, b - a - interval) for a, b in zip(times, times[1:])]
    return statistics.mean(late)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=16)
    parser.add_argument("--pages", type=int, default=12)
    parser.add_argument("--interval", type=float, default=0.4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cost = extraction_ms()
    rows = []
    for number in range(args.repeat):
        farm = FarmProcess(args.hosts, args.pages, mode="articles")
        try:
            wall = crawl(farm.bases, args.pages, args.interval)
        finally:
            log = farm.finish()
        rows.append({"wall_s": wall, **figures(log, args.interval), "late_s": lateness(log, args.interval)})
        row = rows[-1]
        print(f"crawl {number + 1}/{args.repeat}: span {row['span_s']:.3f} s, bound {row['bound_s']:.3f} s, "
              f"ratio {row['ratio']:.4f}, min gap {row['min_gap_s']:.4f} s, mean lateness {row['late_s']:.4f} s",
              flush=True)
    median = sorted(rows, key=lambda r: r["ratio"])[(len(rows) - 1) // 2]
    print(f"\n{args.hosts} hosts x {args.pages} articles (+ robots.txt), interval {args.interval} s; "
          f"one extraction {cost:.1f} ms of CPU")
    print(f"median crawl: span {median['span_s']:.3f} s against a bound of {median['bound_s']:.3f} s: "
          f"ratio {median['ratio']:.4f}; mean lateness {median['late_s']:.4f} s; "
          f"smallest gap {min(r['min_gap_s'] for r in rows):.4f} s "
          f"({sum(r['gaps_under_interval'] for r in rows)} under the interval)")


if __name__ == "__main__":
    main()
