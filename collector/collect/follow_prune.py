"""Bounding a database that follows every stream: its streams' own databases and itself, pruned.

`export follow` (collector/record/follow.py) keeps, beside the merged
database, each stream's own database, and merges their new rows. Both grew
with the whole period's record (about twice the full database). After a
follow, `prune_followed` prunes them as a stream's working database is
pruned (collector/collect/prune.py), when the last pruning is older than
`every` hours by the record's clock:

* each stream's own database as its job's (the recent ledger, no archive
  queue: a stream's answers are the archive stream's), each quiet article's
  rows packed in one dormant row (record/dormant.py: what its next merge reads),
  with of every article it leaves out its key's digest, id and first
  sighting (record/articles.py IDENTITIES), so the next follow still maps
  an address several streams recorded to the one article a full merge keeps
  (merge.article_map);
* the merged database by what its job reads: the archive job's queue
  (`archive_queue`: every capture the archive has not confirmed, every try
  of it, from whichever stream), the rows a release computes figures from
  (`figures`, with the published history: the pages job), the last
  `awake_hours` of every stream (the vantages job compares the last day's
  answers), and no dormant row (no job revisits from it).

A pruning is refused, the databases left whole, unless the merged database
holds exactly what its streams' databases hold (sync_followed), the
stream it writes included (nothing written since its last export). The
merged database keeps sync_followed, so the next follow copies only the
rows after it. When a later follow must merge anew from pruned streams'
databases, it rebuilds them from their folders first (follow.py), since a
pruned stream's database no longer holds the rows another stream's
decision reads (the archive queue's captures and their answers are in
different streams).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from collector import settings
from collector.clock import parse_instant
from collector.collect.prune import Pruned, prune
from collector.record import merge, shadows, streams
from collector.record.fileformat import ExportError
from collector.record.follow import DEFAULT_PART, parts_folder, tops
from collector.record.store import Store
from collector.record.tables import appended_by_id, record_tables


@dataclass
class FollowPruned:
    """What one pruning of a following database did: each stream's database's, the merged one's, or why none."""

    parts: dict[str, Pruned] = field(default_factory=dict)
    merged: Pruned | None = None
    skipped: str | None = None


def prune_followed(db_path: str | Path, record_dirs, every: float, now: datetime | None = None, history=None,
                   figures: bool = False, archive_queue: bool = True,
                   awake_hours: float | None = None) -> FollowPruned:
    """Return what was pruned of a following database and its streams' own, after a follow brought them in sync."""
    db = Path(db_path)
    folders = [Path(f) for f in (record_dirs if isinstance(record_dirs, (list, tuple)) else [record_dirs])]
    found = merge.stream_folders(folders)
    parts = {name: parts_folder(db) / f"{name or DEFAULT_PART}.db" for name in found}
    done = FollowPruned()
    store = Store(db)
    try:
        clock = now or _newest_run(store.conn)
        last = shadows.pruned_at(store.conn)
        if clock is None:
            done.skipped = "it holds no run yet"
            return done
        if last is not None and parse_instant(last) > clock - timedelta(hours=every):
            done.skipped = f"it was pruned at {last}, less than {every:g} hours ago"
            return done
        done.skipped = _cannot_prune(store.conn, parts)
        if not done.skipped:
            try:
                _check_merged(store, parts)
            except ExportError as exc:
                done.skipped = str(exc)
    finally:
        store.close()
    if done.skipped:
        return done
    for name, part in parts.items():  # each pruning is whole or nothing: one refused leaves the rest for later
        if part.exists() and found[name]:
            try:
                done.parts[name or ""] = prune(part, found[name][-1], clock, archive_queue=False,
                                              identity_digests=True)
            except ExportError as exc:
                done.skipped = f"stream {name or '(default)'}'s own database: {exc}"
                return done
    done.merged = prune(db, None, clock, history, figures=figures and history is not None,
                        archive_queue=archive_queue, revisited=False, awake_hours=awake_hours,
                        check=lambda source: _check_merged(source, parts),
                        ranges=[(streams.base(n), streams.base(n) + settings.STREAM_ID_RANGE) for n in parts])
    return done


def _newest_run(conn) -> datetime | None:
    """Return when the newest run of any stream started: the record's clock (ids are by stream, not time)."""
    row = conn.execute("SELECT MAX(started_at) FROM runs").fetchone()
    try:
        return parse_instant(row[0]) if row and row[0] else None
    except ValueError:
        return None


def _cannot_prune(conn, parts: dict) -> str | None:
    """Return why the databases cannot be pruned now, or None."""
    if streams.stream_of(conn) is None:
        return "it is not a database that follows every stream"
    missing = [name or "(default)" for name, part in parts.items() if not part.exists()]
    return f"the own database of {', '.join(missing)} is missing" if missing else None


def _check_merged(source: Store, parts: dict) -> None:
    """Raise unless the merged database holds exactly the rows its streams' own databases hold."""
    conn = source.conn
    if getattr(source, "tampering", None):
        raise ExportError(f"prune refused: the database was tampered with ({'; '.join(source.tampering)})")
    marks = {(s, t): n for s, t, n in conn.execute(f"SELECT stream, table_name, through FROM {streams.FOLLOWED_TABLE}")}
    writer = streams.stream_of(conn)
    for name, part in parts.items():
        label = name or ""
        for table, top in tops(part).items():
            if name == writer:
                low = streams.base(name)
                held = conn.execute(f'SELECT COALESCE(MAX(id), 0) FROM "{table}" WHERE id > ? AND id <= ?',
                                    (low, low + settings.STREAM_ID_RANGE)).fetchone()[0]
                if held != top:
                    raise ExportError(f"prune refused: it holds {table} rows of stream {name} its folder does not "
                                      f"({held} != {top}): export them first")
            elif marks.get((label, table), 0) != top:
                raise ExportError(f"prune refused: it does not hold what stream {name or '(default)'}'s own "
                                  f"database holds ({table})")
    for table in record_tables(conn) if writer != streams.MERGED else []:  # a writer's state, as exported
        if not appended_by_id(conn, table) and shadows.changed_rows(conn, table):
            raise ExportError(f"prune refused: it holds {table} rows that differ from the record's")

