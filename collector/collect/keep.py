"""Which rows a pruning keeps: the temporary tables of ids that collector/collect/prune.py copies.

Every rule moves forward in time only (an article leaves its revisit window
for good, the recent ledger and the unpublished months only advance), so a
pruning run every hour and one run once a day keep the same rows.

An article still inside its revisit window is kept one of two ways. Of a
*quiet* one (`quiet`: every check it is owed is a regular slot, none of its
rows is in the recent ledger, no capture of it awaits the archive job, no
comparison of it is retried) no row is copied: what its revisit reads is
folded (record/fold.py, fold_latest.py, fold_visit.py, fold_absence.py: an
absence open or recorded gone included). The others keep every row a
revisit reads. (Beside a follower, a
stream's database packs each quiet one's rows in a dormant row,
record/dormant.py, which its merge reads: collect/prune.py.)
"""

from __future__ import annotations

from datetime import timedelta

from collector import settings
from collector.clock import iso, parse_instant
from collector.record import schema
from collector.wayback.answers import PERMANENT_EXTS

def select(conn, articles: set[int], follow_ups: set[int], recent: str, awake: str,
           archive_queue: bool = True, revisited: bool = True) -> list[int]:
    """Fill the temporary tables of ids to keep; return the quiet articles, whose rows are left out.

    `articles` are those with a check still owed (collect/revisits.py
    pending_articles), `follow_ups` those owed a follow-up or a retry. An
    article with a row since `awake` (settings.WORKING_RECENT_HOURS) is kept
    whole; the requests, runs and listings of the recent ledger since `recent`.
    With `archive_queue` False (a collect or vantages stream's own database:
    the archive job submits its captures from the database that follows
    every stream, and its answers are never in this one) a capture the
    archive has not confirmed keeps nothing awake: here, none ever is.
    With `revisited` False (a database no job revisits from) an article is
    quiet even without its latest snapshot's facts (see quiet).
    """
    for name in ("articles", "snapshots", "listings", "checks", "submissions", "requests", "runs"):
        # Not a rowid table: a NULL (a subquery that found nothing) is skipped by INSERT OR IGNORE, never numbered.
        conn.execute(f"CREATE TEMP TABLE keep_{name} (id INTEGER NOT NULL PRIMARY KEY) WITHOUT ROWID")
    conn.executemany("INSERT INTO keep_articles VALUES (?)", [(a,) for a in sorted(articles)])
    p = {"recent": recent, "awake": awake}
    # Articles in the recent ledger: everything a revisit reads of them.
    conn.execute("CREATE TEMP TABLE keep_recent (id INTEGER NOT NULL PRIMARY KEY) WITHOUT ROWID")
    conn.execute("""INSERT OR IGNORE INTO keep_recent
        SELECT id FROM src.articles WHERE first_seen_at >= :awake
        UNION SELECT article_id FROM src.capture_queue WHERE state = 'pending' AND article_id IS NOT NULL
        UNION SELECT article_id FROM src.checks WHERE performed_at >= :awake
        UNION SELECT article_id FROM src.capture_attempts WHERE attempted_at >= :awake
        UNION SELECT article_id FROM src.snapshot_rows WHERE captured_at >= :awake
        UNION SELECT article_id FROM src.comparisons WHERE outcome = 'not_comparable'
           AND attempted_at >= :retried""", {**p, "retried": iso(parse_instant(recent) - timedelta(
        days=settings.COMPARISON_RETRY_DAYS))})
    held = quiet(conn, follow_ups, archive_queue, revisited)
    conn.execute("INSERT OR IGNORE INTO keep_articles SELECT id FROM keep_recent")
    conn.execute("""INSERT OR IGNORE INTO keep_snapshots
        SELECT s.id FROM src.snapshot_rows s JOIN keep_articles k ON k.id = s.article_id
         WHERE s.purpose = 'capture'
        UNION SELECT (SELECT s.id FROM src.snapshot_rows s WHERE s.article_id = k.id
                       ORDER BY s.captured_at DESC, s.id DESC LIMIT 1) FROM keep_articles k
        UNION SELECT id FROM src.snapshot_rows WHERE captured_at >= :awake
        UNION SELECT c.snapshot_before FROM src.comparisons c JOIN keep_articles k ON k.id = c.article_id
        UNION SELECT c.snapshot_after FROM src.comparisons c JOIN keep_articles k ON k.id = c.article_id
        UNION SELECT a.snapshot_id FROM src.archive_submissions a WHERE a.recorded_at >= :awake
        UNION SELECT a.snapshot_id FROM src.archive_submissions a JOIN src.snapshot_rows s ON s.id = a.snapshot_id
          WHERE a.status = 'success' AND s.article_id IN (SELECT id FROM keep_articles)
        UNION SELECT s.id FROM src.snapshot_rows s WHERE s.purpose = 'capture' AND :queue = 1 AND NOT EXISTS (
            SELECT 1 FROM src.archive_submissions a WHERE a.snapshot_id = s.id AND a.status = 'success'
               AND a.timestamp IS NOT NULL)""", {**p, "queue": int(archive_queue)})  # the archive's queue
    # Submissions: the recent ledger's; every attempt at a kept snapshot not yet settled (the archive job counts
    # them: wayback/history.py); of a settled one, the answer that settled it and its first confirmed copy
    # (what candidates() and the figures' archived_at read).
    settled = (f"((a.status = 'success' AND a.timestamp IS NOT NULL) OR (a.status = 'error' AND a.status_ext IN "
               f"({', '.join(repr(e) for e in PERMANENT_EXTS)})))")
    conn.execute(f"""INSERT OR IGNORE INTO keep_submissions
        SELECT id FROM src.archive_submissions WHERE recorded_at >= :awake
        UNION SELECT a.id FROM src.archive_submissions a JOIN keep_snapshots k ON k.id = a.snapshot_id
         WHERE NOT EXISTS (SELECT 1 FROM src.archive_submissions a WHERE a.snapshot_id = k.id AND {settled})
        UNION SELECT MIN(a.id) FROM src.archive_submissions a JOIN keep_snapshots k ON k.id = a.snapshot_id
         WHERE {settled} GROUP BY a.snapshot_id
        UNION SELECT (SELECT a.id FROM src.archive_submissions a WHERE a.snapshot_id = k.id
                        AND a.status = 'success' AND a.timestamp IS NOT NULL
                       ORDER BY julianday(a.recorded_at), a.id LIMIT 1) FROM keep_snapshots k""", p)
    conn.execute("""INSERT OR IGNORE INTO keep_checks
        SELECT c.id FROM src.checks c JOIN keep_articles k ON k.id = c.article_id
        UNION SELECT id FROM src.checks WHERE performed_at >= :awake
        UNION SELECT c.id FROM src.checks c WHERE c.article_id IN (
            SELECT s.article_id FROM src.snapshot_rows s JOIN keep_snapshots k ON k.id = s.id
             WHERE s.purpose = 'capture')""", p)  # an article's first capture schedules its slots: all its checks
    # Listings: the recent ledger's, the latest of each source by each stream (an export's base, and the listing
    # its next unchanged answer names by entries_of: a database following every stream holds several streams').
    conn.execute(f"""INSERT OR IGNORE INTO keep_listings
        SELECT id FROM src.listings WHERE fetched_at >= :recent
        UNION SELECT MAX(id) FROM src.listings GROUP BY outlet_id, url, (id - 1) / {settings.STREAM_ID_RANGE}""", p)
    conn.execute("""INSERT OR IGNORE INTO keep_listings
        SELECT l.entries_of FROM src.listings l JOIN keep_listings k ON k.id = l.id
         WHERE l.entries_of IS NOT NULL""")
    conn.execute("""INSERT OR IGNORE INTO keep_requests
        SELECT id FROM src.requests WHERE started_at >= :recent
        UNION SELECT l.request_id FROM src.listings l JOIN keep_listings k ON k.id = l.id
         WHERE l.request_id IS NOT NULL
        UNION SELECT a.request_id FROM src.archive_submissions a JOIN keep_submissions k ON k.id = a.id
         WHERE a.request_id IS NOT NULL""", p)
    conn.execute("""INSERT OR IGNORE INTO keep_runs
        SELECT id FROM src.runs WHERE started_at >= :recent
        UNION SELECT run_id FROM src.request_intents WHERE intended_at >= :recent""", p)
    # Article identities: of every article a job may read (revisited, first seen or queued in the recent ledger,
    # with a snapshot or an event kept); every other address is known by its key's digest. (The figures count
    # articles by the running aggregates' own keys: collector/publish/tallies.py.)
    conn.execute("CREATE TEMP TABLE keep_identities (id INTEGER NOT NULL PRIMARY KEY) WITHOUT ROWID")
    conn.execute("""INSERT OR IGNORE INTO keep_identities
        SELECT id FROM keep_articles
        UNION SELECT id FROM src.articles WHERE first_seen_at >= :recent
        UNION SELECT article_id FROM src.capture_queue WHERE article_id IS NOT NULL
           AND (state = 'pending' OR queued_at >= :recent)
        UNION SELECT s.article_id FROM src.snapshot_rows s JOIN keep_snapshots k ON k.id = s.id
        UNION SELECT article_id FROM src.events""", p)
    for table, keep in (("snapshots", "snapshots"), ("listings", "listings"), ("checks", "checks"),
                        ("archive_submissions", "submissions"), ("requests", "requests"), ("runs", "runs")):
        storage = schema.VIEW_ROWS.get(table, table)
        conn.execute(f"INSERT OR IGNORE INTO keep_{keep} SELECT MAX(id) FROM src.{storage} "
                     f"WHERE id IS NOT NULL")  # the boundary row an export continues from
    return held


def quiet(conn, follow_ups: set[int], archive_queue: bool = True, revisited: bool = True) -> list[int]:
    """Return the articles of keep_articles whose rows are left out (quiet), and take them out of keep_articles.

    With `archive_queue` False, whether the archive confirmed a capture is not asked (see select). With
    `revisited` True (a database a job revisits from) an article whose latest snapshot's facts are not folded
    (record/fold_latest.py) is kept as it is: its revisit compares with the snapshot's row. With `revisited`
    False one is not kept for want of them: the projection still says it is owed a check after its capture
    was left out (record/fold.py), and its later rows (a stream's revisit, merged in) would otherwise be kept
    until its window ended.
    """
    conn.execute("CREATE TEMP TABLE keep_awake (id INTEGER NOT NULL PRIMARY KEY) WITHOUT ROWID")
    conn.executemany("INSERT OR IGNORE INTO keep_awake VALUES (?)", [(a,) for a in sorted(follow_ups)])
    conn.execute("INSERT OR IGNORE INTO keep_awake SELECT id FROM keep_recent")
    # A capture the archive job has not seen confirmed (its queue: wayback/history.py).
    conn.execute("""INSERT OR IGNORE INTO keep_awake
        SELECT s.article_id FROM src.snapshot_rows s WHERE s.purpose = 'capture' AND ? AND NOT EXISTS (
            SELECT 1 FROM src.archive_submissions a WHERE a.snapshot_id = s.id AND a.status = 'success'
               AND a.timestamp IS NOT NULL)""", (int(archive_queue),))
    # No snapshot to compare with (record/fold_latest.py holds what comparing needs): kept as it is.
    if revisited:
        conn.execute("""INSERT OR IGNORE INTO keep_awake
            SELECT k.id FROM keep_articles k WHERE NOT EXISTS (
                SELECT 1 FROM src.fold_latest f WHERE f.article_id = k.id)""")
    held = [r[0] for r in conn.execute("SELECT id FROM keep_articles WHERE id NOT IN (SELECT id FROM keep_awake) "
                                       "ORDER BY id")]
    conn.execute("DELETE FROM temp.keep_articles WHERE id NOT IN (SELECT id FROM keep_awake)")
    return held
