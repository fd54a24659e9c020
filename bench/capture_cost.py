"""CPU per captured page: parse and extract, WARC write, database write.

For every real article page under tests/data/articles/, each stage is timed
in CPU seconds (time.process_time) over several repetitions; the medians
over pages are printed, with the total.

Run: python bench/capture_cost.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from collector.parse.extract import extract, extractor_info  # noqa: E402
from collector.record.store import Store  # noqa: E402
from collector.net.warc import WarcLog  # noqa: E402

PAGES = sorted((ROOT / "tests" / "data" / "articles").glob("*.html"))


def cpu(func, repeat: int) -> tuple[float, object]:
    """Return the median CPU seconds of func over `repeat` calls, and its last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.process_time()
        result = func()
        times.append(time.process_time() - start)
    return statistics.median(times), result


def measure(page: Path, warc: WarcLog, store: Store, run_id: int, repeat: int) -> dict:
    body = page.read_bytes()
    url = f"http://127.0.0.1/{page.stem}"
    now = datetime.now(timezone.utc)
    t_extract, extraction = cpu(lambda: extract(body, "text/html; charset=utf-8", url), repeat)
    t_warc, pointer = cpu(lambda: warc.write_exchange(
        url=url, method="GET", request_headers=[("Host", "127.0.0.1")], request_target="/",
        request_body=None, status_line="200 OK", protocol="HTTP/1.1",
        response_headers=[("Content-Type", "text/html; charset=utf-8")], body=body, ip="127.0.0.1",
        when=now), repeat)
    info = json.dumps(extractor_info(), sort_keys=True)

    def write() -> int:
        request = store.insert("requests", dict(run_id=run_id, purpose="capture", method="GET", url=url,
                                                attempt=1, sent=1, started_at="t", finished_at="t",
                                                result="ok", vantage="bench"))
        article = store.insert("articles", dict(outlet_id="o", url_key=f"{url}#{request}", url=url,
                                                first_seen_at="t", first_seen_run=run_id))
        return store.insert("snapshots", dict(
            article_id=article, request_id=request, run_id=run_id, purpose="capture", captured_at="t",
            status_code=200, final_url=url, headline=extraction.headline, text=extraction.text,
            html_sha256=extraction.html_sha256, warc_file=pointer.file, warc_offset=pointer.offset,
            warc_length=pointer.length, extractor=extraction.extractor, extractor_info=info))

    t_db, _ = cpu(write, repeat)
    return {"page": page.name, "bytes": len(body), "extract": t_extract, "warc": t_warc, "db": t_db}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp())
    store = Store(work / "bench.db")
    run_id = store.insert("runs", dict(command="bench", started_at="t", vantage="bench",
                                       software_version="bench", settings={}))
    warc = WarcLog(work / "warc", run_id, datetime.now(timezone.utc))
    rows = [measure(page, warc, store, run_id, args.repeat) for page in PAGES]
    print(f"\nCPU per captured page (median of {args.repeat} runs per page), ms")
    print(f"{'page':<62}{'bytes':>8}{'extract':>9}{'warc':>7}{'db':>7}{'total':>8}")
    for r in rows:
        total = r["extract"] + r["warc"] + r["db"]
        print(f"{r['page'][:61]:<62}{r['bytes']:>8}{r['extract'] * 1e3:>9.1f}{r['warc'] * 1e3:>7.1f}"
              f"{r['db'] * 1e3:>7.1f}{total * 1e3:>8.1f}")
    medians = {k: statistics.median(r[k] for r in rows) for k in ("extract", "warc", "db")}
    print(f"{'median over pages':<70}{medians['extract'] * 1e3:>9.1f}{medians['warc'] * 1e3:>7.1f}"
          f"{medians['db'] * 1e3:>7.1f}{sum(medians.values()) * 1e3:>8.1f}")
    warc.close()
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
