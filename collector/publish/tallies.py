"""The running aggregates the site's figures are computed from, kept up to date as rows are added (issue 16).

A release reads these, not the rows they count (collector/publish/cells.py
read_block). They are derived data, never observations: projections
(`fold_tally_*`, never exported; `export_tally_*` before migration 19), made from every row the first time a
database is read for figures. A database pruned keeping them and not the
rows (`export prune --for-figures`) cannot make them again: a release refuses
it when they are gone (publish/release.py). `update` adds what every row
appended since its last call contributes: each appended table is followed
by id, one watermark per stream's id range (collector/record/streams.py),
since a database that follows every stream appends a stream's new rows below
another stream's older ones. Each aggregate is a count, a distinct set or a
minimum, and an article's outlet and its first capture are kept apart, so the
order rows arrive in (a stream late, a merge table by table, a capture before
its article's row) does not change them. The capture queue is state (one row
per address, its latest): it is read whole at every update, the latest row
of each address replacing what an earlier one gave.

Kept per outlet and week (its Monday, as SQLite's date() gives it): requests
by result, and the distinct addresses listed and queued. Per article: its
outlet and first capture, its first confirmed archive copy, its address keys'
digests. Per address key's digest: its first listing (an article's capture
delay is read from its keys' first listings when the release runs, as the
record's capture_delays view finds them, so no article's own rows need be
kept). A pruning keeps the weeks' aggregates from the first unpublished month,
and every article's outlet and first capture and every key's first listing
whole (another capture of an article captured long ago is not its first; an
address listed long ago may become a new article's): those grow with the
record's period, about 80 bytes an article (bench/follower_db.py).

Every value equals the row-based count (cells.py read_block_rows), which
tests/publish/test_tallies.py, test_release_pruned.py and
tests/collect/test_follow_prune.py (real loopback collections) compare.
"""

from __future__ import annotations

import sqlite3

from collector import settings
from collector.clock import parse_instant
from collector.publish.periods import julian_day
from collector.record import shadows
from collector.record.articles import key_digest

MARKS = "fold_tally_marks"
COUNTS = "fold_tally_counts"
LISTED = "fold_tally_listed"
QUEUED = "fold_tally_queued"
FIRST_LISTED = "fold_tally_first_listed"
ARTICLES = "fold_tally_articles"
ARCHIVED = "fold_tally_archived"
SNAPSHOTS = "fold_tally_snapshots"
KEYS = "fold_tally_keys"
TABLES = (MARKS, COUNTS, LISTED, QUEUED, FIRST_LISTED, ARTICLES, ARCHIVED, SNAPSHOTS, KEYS)

CREATE = f"""
CREATE TABLE IF NOT EXISTS {MARKS} (tbl TEXT NOT NULL, bucket INTEGER NOT NULL, last_id INTEGER NOT NULL,
    PRIMARY KEY (tbl, bucket)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS {COUNTS} (outlet_id TEXT NOT NULL, week TEXT NOT NULL, measure TEXT NOT NULL,
    value INTEGER NOT NULL, PRIMARY KEY (week, outlet_id, measure)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS {LISTED} (week TEXT NOT NULL, outlet_id TEXT NOT NULL, digest BLOB NOT NULL,
    PRIMARY KEY (week, outlet_id, digest)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS {QUEUED} (digest BLOB PRIMARY KEY, outlet_id TEXT NOT NULL, week TEXT) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS {FIRST_LISTED} (digest BLOB PRIMARY KEY, j REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS {ARTICLES} (article_id INTEGER PRIMARY KEY, outlet_id TEXT, captured_j REAL);
CREATE INDEX IF NOT EXISTS {ARTICLES}_j ON {ARTICLES}(captured_j);
CREATE TABLE IF NOT EXISTS {ARCHIVED} (article_id INTEGER PRIMARY KEY, j REAL NOT NULL);
CREATE TABLE IF NOT EXISTS {SNAPSHOTS} (snapshot_id INTEGER PRIMARY KEY, article_id INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS {KEYS} (article_id INTEGER NOT NULL, digest BLOB NOT NULL,
    PRIMARY KEY (article_id, digest)) WITHOUT ROWID;
"""

WEEK_OF = "date({}, '-6 days', 'weekday 1')"  # the Monday of the ISO week holding an instant, as bucket_sql finds it


def ensure(conn: sqlite3.Connection) -> None:
    """Create the aggregates' tables when missing."""
    for statement in CREATE.strip().split(";"):
        if statement.strip():
            conn.execute(statement.replace("EXISTS fold_", "EXISTS main.fold_", 1))


def digest(key: str | None) -> bytes:
    """Return an address key's digest (empty for a missing key, which still counts once, as GROUP BY does)."""
    return b"" if key is None else key_digest(key)


def present(conn: sqlite3.Connection) -> bool:
    """Return True when the database holds the aggregates."""
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (MARKS,)).fetchone() is not None


def update(conn: sqlite3.Connection) -> int:
    """Add every row appended since the last update to the aggregates; return the span of ids read (0: none new)."""
    ensure(conn)
    conn.create_function("tw_tally_digest", 1, digest, deterministic=True)
    conn.execute("SAVEPOINT tallies")
    try:
        read = 0
        for table, add in (("requests", _requests), ("listings", _listings), ("articles", _keys),
                           ("article_urls", _keys), ("snapshot_rows", _captures), ("archive_submissions", _archived)):
            for bucket, low, high in _new_ranges(conn, table):
                add(conn, low, high, table)
                conn.execute(f"INSERT INTO {MARKS} VALUES (?, ?, ?) ON CONFLICT (tbl, bucket) "
                             "DO UPDATE SET last_id = excluded.last_id", (table, bucket, high))
                read += high - low
        _queued(conn)
        conn.execute("RELEASE tallies")
    except BaseException:
        conn.execute("ROLLBACK TO tallies")
        conn.execute("RELEASE tallies")
        raise
    return read


def _new_ranges(conn: sqlite3.Connection, table: str) -> list[tuple[int, int, int]]:
    """Return (bucket, low, high) of each stream's id range holding rows above its watermark: ids in (low, high]."""
    size = settings.STREAM_ID_RANGE
    done = dict(conn.execute(f"SELECT bucket, last_id FROM {MARKS} WHERE tbl = ?", (table,)).fetchall())
    out, cursor = [], 0
    while True:
        first = conn.execute(f"SELECT MIN(id) FROM {table} WHERE id > ?", (cursor,)).fetchone()[0]
        if first is None:
            return out
        bucket = (first - 1) // size
        floor, ceiling = bucket * size, (bucket + 1) * size
        top = conn.execute(f"SELECT MAX(id) FROM {table} WHERE id > ? AND id <= ?", (floor, ceiling)).fetchone()[0]
        low = max(done.get(bucket, floor), floor)
        if top > low:
            out.append((bucket, low, top))
        cursor = ceiling


def _requests(conn, low: int, high: int, _table: str) -> None:
    """Requests per outlet, week and result (archive submissions have no outlet and are not counted)."""
    conn.execute(f"""
        INSERT INTO {COUNTS} (outlet_id, week, measure, value)
        SELECT outlet_id, w, 'requests:' || result, n FROM (
            SELECT outlet_id, {WEEK_OF.format('started_at')} AS w, result, COUNT(*) AS n FROM requests
             WHERE id > ? AND id <= ? AND outlet_id IS NOT NULL AND purpose != 'archive' GROUP BY 1, 2, 3)
         WHERE w IS NOT NULL
        ON CONFLICT (week, outlet_id, measure) DO UPDATE SET value = value + excluded.value""", (low, high))


def _listings(conn, low: int, high: int, _table: str) -> None:
    """Distinct addresses listed per outlet and week; each address's first listing (capture_delays' rule)."""
    conn.execute(f"""
        INSERT OR IGNORE INTO {LISTED} (week, outlet_id, digest)
        SELECT w, outlet_id, tw_tally_digest(url_key) FROM (
            SELECT {WEEK_OF.format('l.fetched_at')} AS w, l.outlet_id AS outlet_id, e.url_key AS url_key
              FROM listings l JOIN listing_entries e ON e.listing_id = l.id WHERE l.id > ? AND l.id <= ?)
         WHERE w IS NOT NULL""", (low, high))
    # As the view: listing_items of listings in this range (a listing holding an earlier one's entries
    # by entries_of lists nothing earlier than that one did).
    conn.execute(f"""
        INSERT INTO {FIRST_LISTED} (digest, j)
        SELECT d, MIN(j) FROM (
            SELECT tw_tally_digest(v.url_key) AS d, julianday(f.fetched_at) AS j
              FROM listings f JOIN listing_items i ON i.listing_id = f.id JOIN listing_entry_values v ON v.id = i.value_id
             WHERE f.id > ? AND f.id <= ?)
         WHERE j IS NOT NULL GROUP BY d
        ON CONFLICT (digest) DO UPDATE SET j = MIN(j, excluded.j)""", (low, high))


def _keys(conn, low: int, high: int, table: str) -> None:
    """Every address key of every article, by digest (an article's first listing is its keys' first), and every
    article's outlet: its capture may come from another stream after a pruning left its row out."""
    column = "id" if table == "articles" else "article_id"
    conn.execute(f"""
        INSERT OR IGNORE INTO {KEYS} (article_id, digest)
        SELECT {column}, tw_tally_digest(url_key) FROM {table} WHERE id > ? AND id <= ?""", (low, high))
    if table == "articles":
        conn.execute(f"""
            INSERT INTO {ARTICLES} (article_id, outlet_id) SELECT id, outlet_id FROM articles WHERE id > ? AND id <= ?
            ON CONFLICT (article_id) DO UPDATE SET outlet_id = excluded.outlet_id""", (low, high))


def _captures(conn, low: int, high: int, _table: str) -> None:
    """Each article's first capture (and its capture snapshots, what archive answers point at)."""
    conn.execute(f"""
        INSERT OR IGNORE INTO {SNAPSHOTS} (snapshot_id, article_id)
        SELECT id, article_id FROM snapshot_rows WHERE id > ? AND id <= ? AND purpose = 'capture'""", (low, high))
    conn.execute(f"""
        INSERT INTO {ARTICLES} (article_id, captured_j)
        SELECT article_id, MIN(julianday(captured_at)) FROM snapshot_rows
         WHERE id > ? AND id <= ? AND purpose = 'capture' AND julianday(captured_at) IS NOT NULL GROUP BY article_id
        ON CONFLICT (article_id) DO UPDATE SET captured_j = MIN(COALESCE(captured_j, excluded.captured_j),
                                                                excluded.captured_j)""", (low, high))


def _archived(conn, low: int, high: int, _table: str) -> None:
    """Each article's first successful, timestamped Internet Archive submission."""
    conn.execute(f"""
        INSERT INTO {ARCHIVED} (article_id, j)
        SELECT article_id, MIN(j) FROM (
            SELECT COALESCE(t.article_id, s.article_id) AS article_id, julianday(x.recorded_at) AS j
              FROM archive_submissions x
              LEFT JOIN {SNAPSHOTS} t ON t.snapshot_id = x.snapshot_id
              LEFT JOIN snapshot_rows s ON s.id = x.snapshot_id
             WHERE x.id > ? AND x.id <= ? AND x.status = 'success' AND x.timestamp IS NOT NULL)
         WHERE article_id IS NOT NULL AND j IS NOT NULL GROUP BY article_id
        ON CONFLICT (article_id) DO UPDATE SET j = MIN(j, excluded.j)""", (low, high))


def _queued(conn) -> None:
    """Queued addresses per outlet and week: the queue is state, one row per address, so its rows are read
    again (a pruning keeps the pending ones and the unpublished months', collector/collect/prune.py) and the
    latest state of each address wins, as it does in the queue."""
    conn.execute(f"""
        INSERT OR REPLACE INTO {QUEUED} (digest, outlet_id, week)
        SELECT tw_tally_digest(url_key), outlet_id, {WEEK_OF.format('queued_at')} FROM capture_queue""")


def keep(conn: sqlite3.Connection, since: str) -> None:
    """Copy the source's (`src`) aggregates into main, those of the weeks from the instant `since` on ("": all).

    A week is kept when it starts less than 7 days before since, so the
    week holding since is whole; the addresses' first listings are all kept
    (an address first listed long ago may become a newly captured article's).
    """
    ensure(conn)  # the source's are always there: pruning brings them up to date first
    day = julian_day(parse_instant(since)) if since else None
    week = "1" if day is None else f"julianday(week) > {day!r} - 7"
    captured = "1" if day is None else f"captured_j >= {day!r} - 7"
    conn.execute(f"INSERT INTO main.{MARKS} SELECT * FROM src.{MARKS}")
    conn.execute(f"INSERT INTO main.{FIRST_LISTED} SELECT * FROM src.{FIRST_LISTED}")
    for table in (COUNTS, LISTED, QUEUED):
        conn.execute(f"INSERT INTO main.{table} SELECT * FROM src.{table} WHERE week IS NULL OR {week}")
    # Every article, with its first capture: another capture of one first captured long ago (another vantage's,
    # a new shard's) is not its first.
    conn.execute(f"INSERT INTO main.{ARTICLES} SELECT * FROM src.{ARTICLES}")
    recent = f"article_id IN (SELECT article_id FROM src.{ARTICLES} WHERE captured_j IS NULL OR {captured})"
    for table in (ARCHIVED, SNAPSHOTS, KEYS):  # of the articles the kept weeks count, or whose capture may come
        conn.execute(f"INSERT INTO main.{table} SELECT * FROM src.{table} WHERE {recent}")


def available_from(conn: sqlite3.Connection) -> str | None:
    """Return from when a database pruned before can still give figures (None or "": never pruned, or all).

    Its figures_from; but one pruned keeping the figures as aggregates that are gone holds its recent
    ledger's rows alone (and a release refuses it: publish/release.py). Asked before update() makes them anew.
    """
    if shadows.figures_as_aggregates(conn) and not present(conn):
        return conn.execute(f"SELECT recent_from FROM {shadows.PRUNE_TABLE}").fetchone()[0]
    return shadows.figures_from(conn)
