"""The site's figures over every stream: from a database that follows them all (collector/record/follow.py)."""

from __future__ import annotations

import json
import shutil
from datetime import timedelta

from collector.clock import Clock
from collector.collect.context import RunContext
from collector.collect.pipeline import active_outlets, run_collection
from collector.publish.cells import read_block
from collector.publish.figures import TOTAL_ID, cells_of, membership
from collector.publish.periods import month
from collector.publish.site import published_figures
from collector.record import export as ex, follow, merge, streams
from collector.record.folder import batches
from collector.record.registry_mirror import sync_registry
from collector.record.store import Store
from collector.registry import parse_registry
from testing import replica
from tests.conftest import TEST_INTERVAL
from tests.collect.test_pipeline import outlets  # noqa: F401  (the loopback outlets fixture)

NOW = replica.FEED_SNAPSHOT_TIME
AFTER = NOW + timedelta(days=70)  # the month collected has closed: its figures are published


def collect(db, hosts, name, only, when, warc, root):
    """One job of a stream: its own database, the given outlets, one run, one export into its folder."""
    store = Store(db)
    with store.transaction() as conn:
        streams.set_stream(conn, name)
    ctx = RunContext.open(store, "run", clock=Clock(when), vantage=name.split("-")[0], warc_dir=warc,
                          interval=TEST_INTERVAL, allow_loopback=True, backoff=(0.02, 0.04),
                          connect_timeout=2.0, read_timeout=1.0, total_timeout=3.0)
    sync_registry(store, parse_registry(replica.registry_toml(hosts)), ctx.clock)
    run_collection(ctx, active_outlets(ctx, only))
    ctx.finish()
    assert ex.export_new(store, streams.folder(root, name), warc_dir=warc, now=when).path is not None
    store.close()


def figures(db) -> tuple[str, dict]:
    """Return stats.json's figures (as the site is built from them) and the month's all-outlets counts."""
    store = Store(db)
    try:
        published = json.dumps(published_figures(store, AFTER), sort_keys=True, ensure_ascii=False)
        block = read_block(store, "2026-08")
        counts = cells_of(block, membership(store), [month("2026-08")])[(TOTAL_ID, "2026-08")].counts
    finally:
        store.close()
    return published, counts


def test_figures_from_the_followed_streams_equal_the_full_rebuilds_and_count_an_outlet_once(tmp_path, outlets):  # noqa: F811
    """Both vantages collect the same outlet, each shard job its own: followed in two increments."""
    written, warc = tmp_path / "written", tmp_path / "warc"
    jobs = [("hosted-1of2", ["robotsmap"], 1), ("bd-1of2", ["robotsmap"], 0), ("hosted-2of2", ["homelink"], 1)]
    for name, only, hours in jobs:
        collect(tmp_path / f"{name}.db", outlets, name, only, NOW + timedelta(hours=hours), warc, written)
    for name, only, hours in jobs[:2]:
        collect(tmp_path / f"{name}.db", outlets, name, only, NOW + timedelta(hours=hours + 3), warc, written)
    # The record as the pages job finds it twice: first with each stream's first file, then with all.
    root, db = tmp_path / "record", tmp_path / "followed.db"
    for increment in (1, None):
        for name, _, _ in jobs:
            for path in batches(streams.folder(written, name))[:increment]:
                target = root / path.relative_to(written)
                if not target.exists():
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(path, target)
        done = follow.follow(db, [root])
    assert not done.merged_anew and done.files == {"hosted-1of2": 1, "bd-1of2": 1, "hosted-2of2": 0}
    merge.rebuild_record([root], tmp_path / "full.db")
    followed, full = figures(db), figures(tmp_path / "full.db")
    assert followed == full
    _, counts = followed
    each = {name: figures(tmp_path / f"{name}.db")[1] for name, _, _ in jobs}
    # Two outlets contributed, though three streams captured: robotsmap, by both vantages, once.
    assert counts["outlets_contributing"] == 2
    assert [each[n]["outlets_contributing"] for n, _, _ in jobs] == [1, 1, 1]
    # Its articles once too: an article both its vantages captured counts once, not twice.
    captured = [each[n]["articles_captured"] for n, _, _ in jobs]
    assert all(captured) and max(captured) <= counts["articles_captured"] < sum(captured)
