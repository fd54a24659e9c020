"""Article identity: the comparison key of an address, and the rows that say which addresses are one article.

An article is first known by the address a listing gave; a redirect's final
address and a page's canonical address join it later. Nothing is merged away:
every address stays, beside the key it was compared by.
"""

from __future__ import annotations

import sqlite3

from collector.urls import comparison_key
from collector.record import fold_keys, fold_visit
from collector.record.fold_keys import key_digest
from collector.record.streams import next_id


def article_key(url: str) -> str:
    """Return url's comparison key (tracking parameters gone), or url itself when it has none."""
    try:
        return comparison_key(url)
    except ValueError:
        return url


# A stream's own database beside one that follows every stream, pruned (collector/collect/follow_prune.py),
# keeps of each article it leaves out the digest of its key, its id and when it was first seen: what a merge
# maps an address several streams recorded by (collector/record/merge.py article_map). Bookkeeping too.
IDENTITIES = "prune_identities"  # export_identities before migration 19
CREATE_IDENTITIES = (f"CREATE TABLE IF NOT EXISTS {IDENTITIES} (digest BLOB PRIMARY KEY, article_id INTEGER NOT NULL, "
                     "first_seen_at TEXT NOT NULL) WITHOUT ROWID")


def known(conn: sqlite3.Connection, key: str) -> bool:
    """Return True when an address with this key was queued or belongs to an article already: the queue, or the
    address keys' projection (record/fold_keys.py), which a pruned database keeps whole."""
    return (conn.execute("SELECT 1 FROM capture_queue WHERE url_key = ?", (key,)).fetchone() is not None
            or fold_keys.known(conn, key))


def new_article(conn: sqlite3.Connection, outlet_id: str, url: str, key: str, stamp: str, run_id: int) -> int:
    """Return the id of a new article first listed at url, with that address recorded as 'listing'."""
    article_id = conn.execute(
        "INSERT INTO articles (id, outlet_id, url_key, url, first_seen_at, first_seen_run) "
        "VALUES (?, ?, ?, ?, ?, ?)", (next_id(conn, "articles"), outlet_id, key, url, stamp, run_id)).lastrowid
    add_address(conn, article_id, url, key, "listing", stamp, run_id)
    return article_id


def add_address(conn: sqlite3.Connection, article_id: int, url: str, key: str, how: str, stamp: str,
                run_id: int, snapshot_id: int | None = None) -> None:
    """Record another address of the same article (how: listing, redirect, canonical); a repeat is ignored,
    whether or not the database holds the article's rows (its keys' projection, record/fold_visit.py)."""
    if fold_visit.knows(fold_visit.addresses(conn, article_id), key):
        return
    conn.execute(
        "INSERT OR IGNORE INTO article_urls (id, article_id, url, url_key, how, recorded_at, run_id, snapshot_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (next_id(conn, "article_urls"), article_id, url, key, how, stamp, run_id, snapshot_id))
