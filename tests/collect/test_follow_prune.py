"""A database that follows every stream, pruned with its streams' own: what its jobs read stays (follow_prune.py)."""

from __future__ import annotations

import shutil
from datetime import timedelta

from click.testing import CliRunner

from collector.cli.main import cli
from collector.clock import Clock, iso
from collector.collect.context import RunContext
from collector.collect.revisits import run_rechecks
from collector.collect.follow_prune import prune_followed
from collector.publish.cells import read_block, read_block_rows
from collector.publish.history import History
from collector.record import export as ex, fold_latest, follow, merge, shadows, streams
from collector.record.articles import key_digest
from collector.record.store import Store
from collector.wayback.history import attempts_by_snapshot, candidates
from tests.collect.test_pipeline import outlets  # noqa: F401  (the loopback outlets fixture)
from tests.conftest import TEST_INTERVAL
from tests.record.test_follow_figures import NOW, collect, figures

JOBS = [("hosted-1of2", ["robotsmap"], 0), ("bd-1of2", ["robotsmap"], 0), ("hosted-2of2", ["homelink"], 1)]


def archive_job(db, root, when, confirm: int | None = None, fail: int = 0):
    """The archive job: follows every stream, writes its answers (`confirm` captures confirmed, `fail` tried)."""
    done = follow.follow(db, [root], "archive")
    store = Store(db)
    try:
        queue = candidates(store, when)
        run = store.insert("runs", {"command": "archive", "started_at": iso(when), "vantage": "hosted",
                                    "software_version": "0", "settings": "{}"})
        for n, (snapshot, url) in enumerate(queue[:fail]):
            store.insert("archive_submissions", {"snapshot_id": snapshot, "run_id": run, "kind": "submit",
                                                 "url": url, "recorded_at": iso(when), "status": "error",
                                                 "status_ext": "error:service-unavailable"})
        for snapshot, url in queue[fail:][:confirm]:
            store.insert("archive_submissions", {"snapshot_id": snapshot, "run_id": run, "kind": "status",
                                                 "url": url, "recorded_at": iso(when), "status": "success",
                                                 "timestamp": f"{when:%Y%m%d%H%M%S}"})
        ex.export_new(store, streams.folder(root, "archive"), now=when + timedelta(minutes=5))
    finally:
        store.close()
    return done


def queue_of(db, when):
    store = Store(db)
    try:
        return candidates(store, when), attempts_by_snapshot(store)
    finally:
        store.close()


def count(db, table):
    store = Store(db)
    try:
        return store.one(f'SELECT COUNT(*) FROM "{table}"')[0]
    finally:
        store.close()


def identities(db):
    """Return {key digest: (article id, first seen)} of every article a database knows."""
    store = Store(db)
    try:
        found = {key_digest(r[0]): (r[1], r[2]) for r in store.query("SELECT url_key, id, first_seen_at FROM articles")}
        if store.one("SELECT 1 FROM sqlite_master WHERE name = 'prune_identities'"):
            found.update({bytes(r[0]): (r[1], r[2]) for r in store.query("SELECT * FROM prune_identities")})
        return found
    finally:
        store.close()


def revisit_job(db, name, when, warc, root):
    """One job of a stream that only revisits: its checks due, one export into its folder."""
    store = Store(db)
    ctx = RunContext.open(store, "run", clock=Clock(when), vantage=name.split("-")[0], warc_dir=warc,
                          interval=TEST_INTERVAL, allow_loopback=True, backoff=(0.02, 0.04),
                          connect_timeout=2.0, read_timeout=1.0, total_timeout=3.0)
    assert run_rechecks(ctx)["performed"] > 0
    ctx.finish()
    assert ex.export_new(store, streams.folder(root, name), warc_dir=warc, now=when).path is not None
    store.close()


def test_a_pruned_followers_increment_holds_every_row_its_streams_revisits_wrote(tmp_path, outlets):  # noqa: F811
    """A stream's database a follower keeps holds its quiet articles' latest snapshot in their dormant rows: a
    later revisit's rows, which repeat it, are merged whole (record/rebuild.py leaves nothing out there)."""
    root, warc = tmp_path / "record", tmp_path / "warc"
    for name, only, hours in JOBS:
        collect(tmp_path / f"{name}.db", outlets, name, only, NOW + timedelta(hours=hours), warc, root)
    archiving, whole = tmp_path / "archive.db", tmp_path / "whole.db"
    archive_job(archiving, root, NOW + timedelta(hours=2), confirm=3)
    follow.follow(archiving, [root], "archive")
    pruned_at = NOW + timedelta(hours=61)
    assert prune_followed(archiving, [root], 4, now=pruned_at).skipped is None
    part = follow.parts_folder(archiving) / "hosted-1of2.db"
    assert count(part, "prune_dormant") > 0 and not shadows.leaves_out(Store(part).conn)
    revisit_job(tmp_path / "hosted-1of2.db", "hosted-1of2", NOW + timedelta(hours=73), warc, root)  # the 72 h slot
    follow.follow(archiving, [root], "archive")
    follow.follow(whole, [root])
    mine, theirs = (Store(db) for db in (archiving, whole))
    try:
        since = iso(pruned_at)
        wrote = {tuple(r) for r in theirs.query("SELECT id, headline, final_url, html_sha256 FROM snapshots "
                                                "WHERE captured_at > ?", (since,))}
        assert wrote and any(r[0] for r in theirs.query("SELECT COUNT(*) FROM snapshots WHERE purpose = 'recheck' "
                                                         "AND captured_at > ?", (since,)))
        assert {tuple(r) for r in mine.query("SELECT id, headline, final_url, html_sha256 FROM snapshots "
                                             "WHERE captured_at > ?", (since,))} == wrote
        # Their texts: the stream's database shares the texts it left out (held as NULL there and here, as before
        # fold_latest: collector/record/rebuild.py); what comparing needs is each snapshot's facts, equal.
        assert all(fold_latest.of(mine.conn, a, i).facts == fold_latest.of(theirs.conn, a, i).facts
                   for i, a in mine.query("SELECT id, article_id FROM snapshot_rows WHERE captured_at > ?", (since,)))
    finally:
        mine.close()
        theirs.close()


def test_pruned_followers_keep_the_archive_queue_and_the_figures_and_follow_on_by_increments(tmp_path, outlets):  # noqa: F811
    root, warc = tmp_path / "record", tmp_path / "warc"
    for name, only, hours in JOBS:  # both vantages capture the same outlet's articles
        collect(tmp_path / f"{name}.db", outlets, name, only, NOW + timedelta(hours=hours), warc, root)
    archiving = tmp_path / "archive.db"
    archive_job(archiving, root, NOW + timedelta(hours=2), confirm=3, fail=2)  # the rest waits for a later job
    later = NOW + timedelta(hours=60)  # past the recent ledger (2 days): articles known by digest alone
    for name, only, _ in JOBS[:2]:  # a later job of each vantage: new listings, nothing new to capture
        collect(tmp_path / f"{name}.db", outlets, name, only, later, warc, root)
    follow.follow(archiving, [root], "archive")

    # A database following every stream, never pruned, as the reference.
    whole = tmp_path / "whole.db"
    follow.follow(whole, [root])
    before = queue_of(whole, later)
    assert before[0] and before[1]  # captures still wait, and two have been tried once

    done = prune_followed(archiving, [root], 4, now=later + timedelta(hours=1))
    assert done.skipped is None, done.skipped
    assert set(done.parts) == {"hosted-1of2", "bd-1of2", "hosted-2of2", "archive"}
    # Each stream's database left its quiet articles dormant, yet knows every article: whole, or by its
    # key's digest, id and first sighting (what merge.article_map maps one address of two streams by).
    for name in ("hosted-1of2", "bd-1of2"):
        part = follow.parts_folder(archiving) / f"{name}.db"
        assert done.parts[name].left_out and count(part, "prune_dormant") > 0
        assert 0 < count(part, "prune_identities") and identities(part) == identities(tmp_path / f"{name}.db")
    # The merged database left rows out (the older ledger, the quiet articles' rows), but the queue is the same.
    assert done.merged.left_out.get("requests", 0) > 0 and done.merged.bytes_after < done.merged.bytes_before
    assert queue_of(archiving, later) == before
    # Of how two streams' rows were merged, only what concerns a row it still holds.
    assert 0 < count(archiving, "sync_merged") <= count(whole, "sync_merged")
    store = Store(archiving)
    try:
        for table, row_id, kept_id in store.query("SELECT table_name, row_id, kept_id FROM sync_merged"):
            assert store.one(f'SELECT 1 FROM "{table}" WHERE id = ?', (kept_id or row_id,)), (table, row_id)
    finally:
        store.close()

    # The next archive job follows on by an increment, not a merge anew, and its queue is still the same.
    step = archive_job(archiving, root, later + timedelta(hours=2), confirm=1)
    assert not step.merged_anew, step.why
    follow.follow(whole, [root])
    assert queue_of(archiving, later + timedelta(hours=3)) == queue_of(whole, later + timedelta(hours=3))
    again = prune_followed(archiving, [root], 4, now=later + timedelta(hours=3))
    assert again.skipped and "less than 4 hours ago" in again.skipped

    # Forced to merge anew (a stream's own database lost), it rebuilds the pruned ones whole first.
    (follow.parts_folder(archiving) / "bd-1of2.db").unlink()
    anew = follow.follow(archiving, [root], "archive")
    assert anew.merged_anew and set(anew.rebuilt) >= {"hosted-1of2", "bd-1of2", "hosted-2of2", "archive"}
    assert not any(follow.pruned(p) for p in follow.parts_folder(archiving).glob("*.db"))
    assert queue_of(archiving, later + timedelta(hours=3)) == queue_of(whole, later + timedelta(hours=3))


def test_a_pruned_pages_follower_publishes_the_full_rebuilds_figures(tmp_path, outlets):  # noqa: F811
    root, warc = tmp_path / "record", tmp_path / "warc"
    for name, only, hours in JOBS:
        collect(tmp_path / f"{name}.db", outlets, name, only, NOW + timedelta(hours=hours), warc, root)
    archive_job(tmp_path / "archive.db", root, NOW + timedelta(hours=2), confirm=4)
    for name, only, _ in JOBS[:2]:
        collect(tmp_path / f"{name}.db", outlets, name, only, NOW + timedelta(hours=20), warc, root)
    pages = tmp_path / "pages.db"
    runner = CliRunner()
    done = runner.invoke(cli, ["export", "follow", "--out", str(root), "--db", str(pages), "--prune-every", "4",
                               "--for-figures", "--published", str(tmp_path / "published")])
    assert done.exit_code == 0, done.output
    assert "pruned" in done.output and "not pruned" not in done.output
    store = Store(pages)
    try:
        assert shadows.pruned_at(store.conn) is not None
    finally:
        store.close()
    merge.rebuild_record([root], tmp_path / "full.db")
    assert figures(pages) == figures(tmp_path / "full.db")
    # The pruned follower's running aggregates equal the full database's own rows, counted.
    kept, whole = Store(pages), Store(tmp_path / "full.db")
    try:
        aggregated, counted = read_block(kept, "2026-08"), read_block_rows(whole, "2026-08")
        assert counted.values and counted.delays and aggregated.values == counted.values
        assert {k: sorted(v) for k, v in aggregated.delays.items()} == {k: sorted(v) for k, v in counted.delays.items()}
    finally:
        kept.close()
        whole.close()
    # Without --prune-every, nothing says what pruning keeps.
    refused = runner.invoke(cli, ["export", "follow", "--out", str(root), "--db", str(pages), "--for-figures"])
    assert refused.exit_code == 2 and "--prune-every" in refused.output


def test_a_follower_holding_rows_it_has_not_exported_is_not_pruned(tmp_path, outlets):  # noqa: F811
    root, warc = tmp_path / "record", tmp_path / "warc"
    for name, only, hours in JOBS[:1]:
        collect(tmp_path / f"{name}.db", outlets, name, only, NOW + timedelta(hours=hours), warc, root)
    archiving = tmp_path / "archive.db"
    archive_job(archiving, root, NOW + timedelta(hours=2), confirm=1)
    follow.follow(archiving, [root], "archive")
    store = Store(archiving)
    try:  # a time-stamping run's row, written after the job's last export
        store.insert("runs", {"command": "timestamp", "started_at": iso(NOW + timedelta(hours=30)),
                              "vantage": "hosted", "software_version": "0", "settings": "{}"})
    finally:
        store.close()
    size = archiving.stat().st_size
    copy = tmp_path / "copy.db"
    shutil.copyfile(archiving, copy)
    done = prune_followed(archiving, [root], 4)
    assert done.skipped and "export them first" in done.skipped and not done.parts
    assert archiving.stat().st_size == size and archiving.read_bytes() == copy.read_bytes()
