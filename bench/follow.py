"""Following every record stream: one increment against a full rebuild of the same files.

S streams (synthetic writers, as S collect jobs) each export R times; every
export holds a run, A new articles (a tenth of them addresses another stream
also records, so the merge folds them), one request and one check per article
and the capture queue's rows. The database that follows every stream
(`export follow`, collector/record/follow.py) is written after R - 1 rounds;
then every stream exports once more and the bench prints:

- the time of that follow (one new file per stream), and whether it merged
  anew (it must not);
- the time of a full `export rebuild` of the same files;
- that both hold the same rows in every record table;
- the sizes of the followed database and of the streams' databases beside it.

Run: python bench/follow.py [--streams 10] [--rounds 40] [--articles 100]
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collector.record import export as ex, follow, merge, streams, tables  # noqa: E402
from collector.record.store import Store  # noqa: E402

START = datetime(2026, 8, 13, 4, 0, tzinfo=timezone.utc)


def write_round(store: Store, name: str, index: int, round_no: int, articles: int, root: Path) -> None:
    """One export of one stream: a run, its articles, a request and a check each, the queue rows."""
    when = START + timedelta(minutes=15 * round_no, seconds=index)
    seen = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    run = store.insert("runs", {"command": "run", "started_at": seen, "vantage": name, "software_version": "0",
                                "settings": "{}"})
    with store.transaction() as conn:
        for n in range(articles):
            shared = n % 10 == 0  # the next stream records it too
            owner = (index - 1) if shared and index else index
            url = f"https://o{owner}.test/r{round_no}/a{n}"
            request = store.insert("requests", {"run_id": run, "purpose": "capture", "method": "GET", "url": url,
                                                "attempt": 1, "sent": 1, "started_at": seen, "finished_at": seen,
                                                "result": "ok", "vantage": name})
            article = store.insert("articles", {"outlet_id": "o", "url_key": url, "url": url,
                                                "first_seen_at": seen, "first_seen_run": run})
            store.insert("article_urls", {"article_id": article, "url_key": url, "url": url, "how": "listing",
                                          "recorded_at": seen, "run_id": run})
            store.insert("checks", {"article_id": article, "slot": "1h", "due_at": seen, "performed_at": seen,
                                    "run_id": run, "url": url, "result": "ok", "request_chain": f"[{request}]",
                                    "outcome": "present"})
            conn.execute("INSERT OR REPLACE INTO capture_queue (url_key, url, outlet_id, article_id, reason, "
                         "queued_at, queued_run) VALUES (?, ?, 'o', ?, 'new', ?, ?)", (url, url, article, seen, run))
    ex.export_new(store, streams.folder(root, name), now=when)


def rows(db: Path) -> dict[str, set]:
    conn = sqlite3.connect(db)
    try:
        return {t: set(conn.execute(f'SELECT * FROM "{t}"')) for t in tables.record_tables(conn)}
    finally:
        conn.close()


def size(path: Path) -> int:
    return path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--articles", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-follow-") as scratch:
        base = Path(scratch)
        root, db = base / "record", base / "followed.db"
        names = [f"bench-{k}of{args.streams}" for k in range(1, args.streams + 1)]
        stores = {}
        for name in names:
            stores[name] = Store(base / f"{name}.db")
            with stores[name].transaction() as conn:
                streams.set_stream(conn, name)
        began = time.monotonic()
        for round_no in range(args.rounds - 1):
            for index, name in enumerate(names):
                write_round(stores[name], name, index, round_no, args.articles, root)
        written = time.monotonic() - began
        began = time.monotonic()
        first = follow.follow(db, [root])
        first_s = time.monotonic() - began
        for index, name in enumerate(names):
            write_round(stores[name], name, index, args.rounds - 1, args.articles, root)
            stores[name].close()
        began = time.monotonic()
        done = follow.follow(db, [root])
        increment_s = time.monotonic() - began
        began = time.monotonic()
        merge.rebuild_record([root], base / "full.db")
        full_s = time.monotonic() - began
        same = rows(db) == rows(base / "full.db")
        files = sum(1 for _ in root.rglob("*.jsonl.bz2"))
        print(f"streams {args.streams}, rounds {args.rounds}, articles per export {args.articles}: "
              f"{files} export files written in {written:.1f} s")
        print(f"first follow (no database: every stream rebuilt, merged anew): {first_s:.2f} s "
              f"(merged anew: {first.merged_anew})")
        print(f"follow of one new file per stream: {increment_s:.2f} s (merged anew: {done.merged_anew}; "
              f"files read {sum(done.files.values())})")
        print(f"full export rebuild of the same files: {full_s:.2f} s "
              f"({full_s / max(increment_s, 1e-9):.1f} x the increment)")
        print(f"rows equal in every record table: {same}")
        print(f"followed database {size(db) / 2**20:.1f} MiB, streams' databases beside it "
              f"{size(follow.parts_folder(db)) / 2**20:.1f} MiB, full rebuild {size(base / 'full.db') / 2**20:.1f} MiB")
        return 0 if same and not done.merged_anew else 1


if __name__ == "__main__":
    sys.exit(main())
