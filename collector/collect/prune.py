"""The bounded working database: the rows the jobs read, copied from a database in sync with the record.

The database a job restores from the Actions cache and updates need not hold
the whole record: the committed record (data/record, one repository per
period) holds it, and `export rebuild` makes the full database for browsing.
`prune` writes a new, smaller database holding:

* every state table (outlets, run finishes) whole but the capture queue, of
  which the rows still pending and those a release still counts (their month
  not yet published): a finished row never changes again, and its address is
  known by article_urls; sources and source probes, events, WARC files,
  vantage differences and operator actions, whole;
* the article identities and their addresses (articles, article_urls) of
  every article a job reads (revisited, a figure's, first seen or queued in
  a month a release reads, with a snapshot or an event kept); every
  address is known by a digest of its key in the address keys' projection
  (record/fold_keys.py), kept whole, so a page listed again is not queued again;
* of every article owed a check (due now or later) or whose rows are kept,
  its schedule, address, address keys and absence streak (the articles'
  projection, record/fold.py, fold_visit.py, fold_absence.py), its latest
  check's address digest and what comparing with its latest snapshot needs
  (record/fold_latest.py); of each owed one that is quiet (collect/keep.py),
  nothing more (a follower's stream database packs its rows: record/dormant.py);
* for each other (a row of the last settings.WORKING_RECENT_HOURS; a
  follow-up or retry owed; a capture the archive job has not seen
  confirmed; a comparison still retried, settings.COMPARISON_RETRY_DAYS):
  its capture snapshots, its latest snapshot (what the next revisit compares
  with; its text, unless of those hours or a comparison's still retried,
  left out), every check, comparison and capture attempt,
  and of the archive submissions of every snapshot kept, every try while it
  is not settled, else the answer that settled it (its first confirmed copy);
* the recent ledger (settings.WORKING_LEDGER_DAYS): its requests, intents, runs, listings;
* with figures=True (`export prune --for-figures`) what a release still reads
  (publish/release.py, unpublished_from): the running aggregates of every week
  from the first month not yet published (publish/tallies.py), not their rows;
* each stream's latest listing of every source (an export's base, its next
  304's entries_of), and the last row of every table (an export's boundary).

Nothing is deleted: the rows are copied into a new file, and the file
replaces the old one only when complete. Pruning refuses, leaving the
database as it was, unless every row it would leave out is already in the
record: the database must be in sync with the folder's last export file (its
head names that file, by SHA-256; the resume or rebuild that brought it
in sync checked the chain up to it), hold no row after that file's last ids
and no state that differs from the record's. Search is the full database's.

This is `python -m collector export prune` (formerly `export level`, still
accepted; this module was level.py). What a pruning left out is its table
prune_state. "Sync" says a database holds what the record holds up to its
last file; "prune" says rows in the record were left out.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from collector import settings
from collector.clock import Clock, iso, parse_instant
from collector.collect import keep
from collector.collect.revisits import awaiting_follow_up, pending_articles
from collector.publish import tallies
from collector.publish.cells import first_event
from collector.publish.release import unpublished_from
from collector.record import articles as identities, dormant, fold, fold_absence, fold_keys, fold_latest, fold_visit
from collector.record import schema, shadows, streams
from collector.record.fileformat import BOOKKEEPING_PREFIX, SYNC_PREFIX, ExportError, file_sha256
from collector.record.folder import last_batch, record_name
from collector.record.rebuild import check_nothing_unexported
from collector.record.store import Store
from collector.record.tables import appended_by_id, columns, record_tables

MERGED_TABLE = streams.MERGED_TABLE  # a database merging every stream: how each row two streams recorded was merged

# Record tables copied whole (besides every state table): small, or read whole by a job.
WHOLE = ("outlet_groups", "outlets", "source_probes", "sources", "events",
         "warc_files", "vantage_differences", "operator_actions")


@dataclass
class Pruned:
    """What one pruning kept and left out, rows per table, and how long it took."""

    path: Path
    kept: dict[str, int] = field(default_factory=dict)
    left_out: dict[str, int] = field(default_factory=dict)
    bytes_before: int = 0
    bytes_after: int = 0
    seconds: float = 0.0
    skipped: str | None = None  # why the database was left as it was


def prune(db_path: str | Path, out_dir: str | Path, now: datetime | None, history=None,
          new_path: str | Path | None = None, figures: bool = False, archive_queue: bool = True,
          identity_digests: bool = False, revisited: bool = True, awake_hours: float | None = None,
          check=None, ranges: list[tuple[int, int]] = ()) -> Pruned:
    """Return what was kept after writing the bounded working database of db_path.

    out_dir is the record folder the database is in sync with (its newest
    period's, a sparse checkout will do); history the published history
    (publish/history.py; None: nothing published yet, every row a release
    could read is kept). Writes new_path, or replaces db_path when None.
    Raises ExportError, having changed nothing, when the database holds a row
    the record does not. With now None, "now" is when the database's last
    run started: the record's own clock, so a cache restored late, or a
    replay of another time, keeps its recent ledger whatever the runner's clock.
    With archive_queue False (`export prune --no-archive-queue`: a collect or
    vantages stream's database, whose captures the archive job submits from
    the database that follows every stream) no capture is kept for want of
    an archive answer: none is ever recorded in that database.

    A database that follows every stream (collect/follow_prune.py) prunes its
    streams' own databases with identity_digests=True (of every article left
    out, its key's digest, id and first sighting, record/articles.py
    IDENTITIES, and of each quiet one a dormant row: what a merge maps an
    address several streams recorded by) and itself with revisited=False
    (no job revisits from it), awake_hours (what its job reads back,
    settings.WORKING_RECENT_HOURS by default) and its own `check` (a callable
    given the source Store, raising ExportError) instead of out_dir's head;
    `ranges`, each stream's id range (low, high], keep each stream's last row
    of every table too, the boundary its next rows are followed from.
    """
    started = time.monotonic()
    db_path, target = Path(db_path), Path(new_path) if new_path else None
    temporary = (target or db_path).with_name((target or db_path).name + ".pruning")
    for leftover in _files(temporary):
        leftover.unlink(missing_ok=True)
    if check is None and last_batch(Path(out_dir)) is None and _empty(db_path):
        size = _size(db_path)
        return Pruned(db_path, bytes_before=size, bytes_after=size, skipped=f"{out_dir} holds no export file "
                        "yet and the database no row: nothing to leave out")
    source = Store(db_path)
    try:
        (check or (lambda store: _check_in_record(store, Path(out_dir), db_path)))(source)
        if now is None:
            now = _last_run(source) or Clock().now()
        articles = pending_articles(source.conn)
        follow_ups = awaiting_follow_up(source.conn)
        published_from = unpublished_from(source, history) if figures and history is not None else None
        available = tallies.available_from(source.conn) if figures else None
        if figures:
            tallies.update(source.conn)  # derived data, never exported: in sync with the rows before any is left out
        floor = first_event(source)
        before = {t: _count(source.conn, "main", t) for t in record_tables(source.conn)}
        head = shadows.head(source.conn)
    finally:
        source.close()
    recent = now - timedelta(days=settings.WORKING_LEDGER_DAYS)
    # figures_from: from when a release can compute figures (release.py refuses a pruning that kept less); with
    # figures and no published history given, or nothing observed yet, every week's ("") but what a database
    # pruned before still holds (tallies.available_from).
    since = iso(recent if published_from is None else min(recent, published_from))
    since = "" if figures and published_from is None else since
    if available and (not since or parse_instant(since) < parse_instant(available)):
        since = available
    result = Pruned(target or db_path, bytes_before=_size(db_path))
    try:
        new = Store(temporary)
        try:
            conn = new.conn
            conn.execute("PRAGMA foreign_keys = OFF")  # rows point at rows left out (they are in the record)
            conn.execute("ATTACH DATABASE ? AS src", (str(db_path),))
            with new.transaction():
                hours = settings.WORKING_RECENT_HOURS if awake_hours is None else awake_hours
                awake = iso(now - timedelta(hours=hours))
                held = keep.select(conn, articles, follow_ups, iso(recent), awake, archive_queue, revisited)
                _boundaries(conn, ranges)
                _copy(conn, iso(recent), awake, ranges)
                fold.keep(conn, articles)  # the schedules still read (record/fold.py): owed a check, or rows kept
                fold_keys.keep(conn)  # every address key, whole
                fold_latest.keep(conn)  # what comparing with an article's latest snapshot needs (fold_latest.py)
                fold_visit.keep(conn)  # each article's latest check, what its next one's export repeats
                fold_absence.keep(conn)  # each article's absence streak, what the gone rule reads
                if figures:
                    tallies.keep(conn, since)
                if revisited and identity_digests:  # a follower's stream database: its merge reads them
                    _dormant(conn, held)
                if identity_digests:
                    _identities(conn)
                for table in record_tables(conn):
                    if not appended_by_id(conn, table):
                        shadows.copy_table(conn, table)  # as exported: the state equals the record's
                if head is not None:  # a database that follows every stream and writes none has no head
                    shadows.set_head(conn, *head)
                conn.execute(f"CREATE TABLE {shadows.PRUNE_TABLE} (id INTEGER PRIMARY KEY CHECK (id = 1), "
                             "first_event REAL, pruned_at TEXT NOT NULL, recent_from TEXT NOT NULL, "
                             "figures_from TEXT NOT NULL, source_bytes INTEGER, seconds REAL, aggregates INTEGER, "
                             "leaves_out INTEGER)")
                conn.execute(f"INSERT INTO {shadows.PRUNE_TABLE} VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)",
                             (floor, iso(now), iso(recent), since, result.bytes_before,
                              time.monotonic() - started, int(figures),  # what it cost: prunetime.py
                              int(revisited and not identity_digests)))  # shadows.leaves_out
                result.kept = {t: _count(conn, "main", t) for t in record_tables(conn)}
            conn.execute("DETACH DATABASE src")
            new.checkpoint()
        finally:
            new.close()
    except BaseException:
        for leftover in _files(temporary):
            leftover.unlink(missing_ok=True)
        raise
    result.left_out = {t: before[t] - result.kept.get(t, 0) for t in before if before[t] != result.kept.get(t, 0)}
    if target is None:  # the old file's WAL must never meet the new file
        for old in _files(db_path)[1:]:
            old.unlink(missing_ok=True)
    os.replace(temporary, result.path)
    result.bytes_after = _size(result.path)
    result.seconds = time.monotonic() - started
    return result


def _check_in_record(source: Store, out: Path, db_path: Path) -> None:
    """Raise unless every row of the database is in the record folder's chained files."""
    if getattr(source, "tampering", None):
        raise ExportError(f"prune refused: {db_path} was tampered with ({'; '.join(source.tampering)})")
    last = last_batch(out)  # found without listing the folder: the check costs the same whatever its age
    if last is None:
        raise ExportError(f"prune refused: {out} holds no export file, so nothing left out would be kept")
    head = shadows.head(source.conn)
    if head != (record_name(last), file_sha256(last)):
        raise ExportError(f"prune refused: {db_path} is not in sync with {out}'s last file {record_name(last)} "
                          f"(it was last in sync with {head[0] if head else 'no file'}): bring it in sync first "
                          "(export rebuild --resume, which checks the chain up to that file)")
    check_nothing_unexported(source.conn, last, f"prune refused: {db_path}")


def due(db_path: str | Path, now: datetime | None, hours: float) -> tuple[bool, str | None]:
    """Return (whether pruning is due, when the database was last pruned): not within `hours` of now."""
    store = Store(db_path)
    try:
        last = shadows.pruned_at(store.conn)
        now = now or _last_run(store) or Clock().now()
    finally:
        store.close()
    return last is None or parse_instant(last) <= now - timedelta(hours=hours), last


def _empty(db_path: Path) -> bool:
    """Return True when the database holds no row of any record table (a first job's, before its first export)."""
    store = Store(db_path)
    try:
        return not any(_count(store.conn, "main", t) for t in record_tables(store.conn))
    finally:
        store.close()


def _last_run(source: Store) -> datetime | None:
    """Return when the database's last run started, or None (no run, or a start that is not an instant)."""
    row = source.one("SELECT started_at FROM runs ORDER BY id DESC LIMIT 1")
    try:
        return parse_instant(row[0]) if row and row[0] else None
    except ValueError:
        return None


# Appended tables kept by rule: table -> the WHERE clause over the source's rows.
_RULES = {
    "runs": "id IN (SELECT id FROM keep_runs)",
    "request_intents": "intended_at >= :recent",
    "requests": "id IN (SELECT id FROM keep_requests)",
    "listings": "id IN (SELECT id FROM keep_listings)",
    "checks": "id IN (SELECT id FROM keep_checks)",
    "archive_submissions": "id IN (SELECT id FROM keep_submissions)",
    "articles": "id IN (SELECT id FROM keep_identities)",
    "article_urls": "article_id IN (SELECT id FROM keep_identities)",
    "comparisons": "article_id IN (SELECT id FROM keep_articles) OR attempted_at >= :recent",
    "capture_attempts": "article_id IN (SELECT id FROM keep_articles) OR attempted_at >= :recent",
}

# State tables kept by rule: a row no job reads again (its shadow, copied after, leaves it out alike, so an
# export sees no change). A queue row that is over (captured or failed) never changes again, and its address is
# known by article_urls (record/articles.py known()); the figures count them by tallies.py QUEUED.
_STATE_RULES = {"capture_queue": "state = 'pending' OR queued_at >= :recent"}


def _last_ids(table: str, ranges) -> str:
    """Return a query of a source table's last id, and of each stream's range."""
    each = "".join(f" UNION ALL SELECT MAX(id) FROM src.{table} WHERE id > {int(low)} AND id <= {int(high)}"
                   for low, high in ranges)
    return f"SELECT MAX(id) FROM src.{table}{each}"


def _boundaries(conn, ranges) -> None:
    """Keep each stream's last row of the tables keep.py keeps by id (a database following every stream)."""
    for table, kept in (("snapshots", "snapshots"), ("listings", "listings"), ("checks", "checks"),
                        ("archive_submissions", "submissions"), ("requests", "requests"), ("runs", "runs")):
        storage = schema.VIEW_ROWS.get(table, table)
        for low, high in ranges:
            conn.execute(f"INSERT OR IGNORE INTO keep_{kept} SELECT MAX(id) FROM src.{storage} "
                         "WHERE id > ? AND id <= ? HAVING MAX(id) IS NOT NULL", (low, high))


def _copy(conn, recent: str, whole: str, ranges=()) -> None:
    """Copy the kept rows of every record table into the new database, ids unchanged."""
    params = {"recent": recent}
    for table in record_tables(conn):
        if table in schema.VIEW_ROWS:
            continue
        cols = ", ".join(f'"{c}"' for c in columns(conn, table))
        if table in _RULES:
            last = f" OR id IN ({_last_ids(table, ranges)})"
            where = f" WHERE {_RULES[table]}{last}"
        elif table in _STATE_RULES:
            where = f" WHERE {_STATE_RULES[table]}"
        else:
            where = ""  # a state table, one of WHOLE, or a table no rule names yet: kept whole
        conn.execute(f'INSERT INTO main."{table}" ({cols}) SELECT {cols} FROM src."{table}"{where}', params)
    # Views: their storage rows, ids unchanged (the search index is the full database's).
    conn.execute("INSERT INTO main.listing_items SELECT * FROM src.listing_items "
                 "WHERE listing_id IN (SELECT id FROM keep_listings)")
    conn.execute("INSERT INTO main.listing_entry_values SELECT * FROM src.listing_entry_values "
                 "WHERE id IN (SELECT value_id FROM main.listing_items)")
    conn.execute("INSERT INTO main.snapshot_rows SELECT * FROM src.snapshot_rows "
                 "WHERE id IN (SELECT id FROM keep_snapshots)")
    _texts(conn, whole)
    # The database's own bookkeeping (its record stream, collector/record/streams.py), as it was.
    own = {r[0] for r in conn.execute("SELECT name FROM src.sqlite_master WHERE type = 'table'")
           if r[0].startswith((BOOKKEEPING_PREFIX, SYNC_PREFIX))}
    for table in sorted(own - {"export_head"}):
        if not table.startswith("export_shadow_") and conn.execute(
                "SELECT 1 FROM main.sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone():
            where = _merged_kept(conn) if table == MERGED_TABLE and ranges else ""
            conn.execute(f'INSERT INTO main."{table}" SELECT * FROM src."{table}"{where}')


def _merged_kept(conn) -> str:
    """Return the WHERE of a following database's sync_merged rows whose row it keeps (what it folded into,
    or relabelled): the rest say how rows it no longer holds were merged (the full database's say it too)."""
    tables = set(record_tables(conn))
    named = [r[0] for r in conn.execute(f"SELECT DISTINCT table_name FROM src.{MERGED_TABLE}") if r[0] in tables]
    kept = " OR ".join(f"(table_name = '{t}' AND COALESCE(kept_id, row_id) IN (SELECT id FROM main.\"{t}\"))"
                       for t in named)
    return f" WHERE {kept}" if kept else " WHERE 0"


def _texts(conn, whole: str) -> None:
    """Copy the texts of snapshots since `whole`, and of those a comparison not yet made names; leave the others
    out (what comparing with them needs is in record/fold_latest.py, the texts are in the record).

    The highest text id stays whole (a new text is numbered after it: never the
    id of a text left out, which rows still name), so does the last snapshot's
    (the boundary an export compares whole).
    """
    conn.execute("CREATE TEMP TABLE whole_texts (id INTEGER NOT NULL PRIMARY KEY) WITHOUT ROWID")
    conn.execute("""INSERT OR IGNORE INTO whole_texts
        SELECT text_id FROM main.snapshot_rows WHERE captured_at >= ? AND text_id IS NOT NULL
        UNION SELECT text_id FROM main.snapshot_rows WHERE id = (SELECT MAX(id) FROM main.snapshot_rows)
           AND text_id IS NOT NULL
        UNION SELECT r.text_id FROM main.snapshot_rows r JOIN main.comparisons c
           ON r.id IN (c.snapshot_before, c.snapshot_after) WHERE c.outcome = 'not_comparable' AND r.text_id IS NOT NULL
        UNION SELECT MAX(id) FROM src.snapshot_texts WHERE id IS NOT NULL""", (whole,))
    conn.execute("INSERT INTO main.snapshot_texts SELECT t.* FROM src.snapshot_texts t "
                 "JOIN whole_texts w ON w.id = t.id")
    conn.execute("DROP TABLE temp.whole_texts")


def _dormant(conn, held: list[int]) -> None:
    """Write main's dormant rows (a follower's stream database): the quiet articles' (made afresh where src holds
    rows of them, else copied), and the dormant rows of the articles kept awake."""
    if dormant.exists(conn, "src"):
        conn.execute("CREATE TEMP TABLE dormant_held (id INTEGER NOT NULL PRIMARY KEY) WITHOUT ROWID")
        conn.executemany("INSERT INTO dormant_held VALUES (?)", [(a,) for a in held])
        conn.execute(f"""INSERT INTO main.{dormant.TABLE} SELECT d.* FROM src.{dormant.TABLE} d
            WHERE d.article_id IN (SELECT id FROM keep_articles) OR (d.article_id IN (SELECT id FROM dormant_held)
              AND NOT EXISTS (SELECT 1 FROM src.articles a WHERE a.id = d.article_id)
              AND NOT EXISTS (SELECT 1 FROM src.snapshot_rows s WHERE s.article_id = d.article_id)
              AND NOT EXISTS (SELECT 1 FROM src.checks c WHERE c.article_id = d.article_id))""")
        copied = {r[0] for r in conn.execute(f"SELECT article_id FROM main.{dormant.TABLE}")}
        held = [a for a in held if a not in copied]
        conn.execute("DROP TABLE temp.dormant_held")
    dormant.make(conn, held)  # a follower's stream database: the merge needs it


def _identities(conn) -> None:
    """Write main's identities: the source's, and each left-out article's key digest, id and first sighting."""
    table = identities.IDENTITIES
    conn.execute(identities.CREATE_IDENTITIES)
    if conn.execute("SELECT 1 FROM src.sqlite_master WHERE name = ?", (table,)).fetchone():
        conn.execute(f"INSERT OR IGNORE INTO main.{table} SELECT * FROM src.{table}")
    rows = conn.execute("SELECT url_key, id, first_seen_at FROM src.articles "
                        "WHERE id NOT IN (SELECT id FROM main.articles)")
    insert = f"INSERT OR IGNORE INTO main.{table} VALUES (?, ?, ?)"
    while batch := rows.fetchmany(10000):
        conn.executemany(insert, [(identities.key_digest(key), i, seen) for key, i, seen in batch])


def _count(conn, db: str, table: str) -> int:
    return conn.execute(f'SELECT COUNT(*) FROM {db}."{table}"').fetchone()[0]


def _files(path: Path) -> list[Path]:
    return [path, Path(f"{path}-wal"), Path(f"{path}-shm")]


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in _files(path) if p.exists())
