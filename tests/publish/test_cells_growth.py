"""The month's figures read each article's first listing through indexes: work grows with the record, not its square.

The pages job reads them at every release. Through the listing_entries view, materialised once per
article in a correlated subquery, a week of four outlets' hourly listings took 1.2 s an article
(bench/year.py --days 30 --outlets 4: the first closed week's publish ran past the pages job's timeout;
the capture_delays view, migration 12, reads the storage tables instead). Work is counted in SQLite
virtual-machine steps (a progress handler), not in seconds.
"""

from __future__ import annotations

from datetime import timedelta

from collector.publish.cells import read_block
from collector.record.store import Store
from testing.synthetic import NOW, SyntheticRecord

W48 = NOW - timedelta(days=3, hours=12)  # Monday 23 November 00:00
OUTLETS = ("oa-17", "ob-29", "oc-31")


def _record(path, articles: int) -> Store:
    store = Store(path)
    r = SyntheticRecord(store)
    r.group("g", "Group G")
    for outlet in OUTLETS:
        r.outlet(outlet, "g")
    for i in range(articles):
        r.article(OUTLETS[i % 3], W48 + timedelta(minutes=10 * i), timedelta(hours=1))
    return store


def _steps(store: Store) -> int:
    counted = [0]

    def step() -> int:
        counted[0] += 1
        return 0  # go on

    store.conn.set_progress_handler(step, 1000)
    try:
        block = read_block(store, "2026-11")
    finally:
        store.conn.set_progress_handler(None, 0)
    assert sum(len(d) for d in block.delays.values()) > 0
    return counted[0]


def test_the_months_figures_cost_grows_linearly_with_the_articles_and_listings(tmp_path):
    small, large = _record(tmp_path / "small.db", 100), _record(tmp_path / "large.db", 400)
    try:
        ratio = _steps(large) / _steps(small)
    finally:
        small.conn.close()
        large.conn.close()
    # Four times the articles and the listings: about four times the work (each article's own listings
    # read through the index); reading every listing for every article would be about sixteen.
    assert ratio < 7, ratio

