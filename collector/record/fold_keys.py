"""Migration 18: the address keys' projection, folded forward from the appended rows in every database.

Every address key a database has seen (collector/record/articles.py
article_key: an address with its tracking parameters gone, whether a listing
gave it, a redirect ended on it or a page named it canonical), known by a
128-bit digest of it (`key_digest`), one row a key in TABLE. What
discovery reads (articles.known): a page listed again, under any address an
article was recorded by, is not queued again, however long ago its rows left
a pruned working database.

The triggers below fold each `articles` and `article_urls` row in as it is
inserted, whatever inserts it (a run, a rebuild, a merge, a pruning's copy, a
follower's dormant article woken); TABLE is a set, so the order rows arrive in does not
change it and a row folded twice changes nothing (`from_rows` computes it
from the rows; tests/record/test_fold_keys.py holds the two equal). A pruning
keeps it whole: it is what lets the rows go.

The digest is SHA-256, computed in Python (SQLite has none): every
connection that writes articles registers FUNCTION (Store does), as for the
search index (record/search.py); a connection without it cannot write an
address. TABLE is derived, never an observation: its name starts with
fileformat.DERIVED_PREFIX, it is never exported, and the record's rows make
it again.

Before migration 18 a pruned database knew the keys of the articles it had
left out by a bookkeeping table, export_known_keys, written by each pruning;
`migrate` folds it in and drops it. Not folded yet: which article was first
listed at a key, what a merge of every stream maps one address of two
streams by (record/articles.py IDENTITIES, kept by a follower's pruned
stream databases). Holding it here, in every database, cost about 16 bytes
more a key and crossed 2 GB at day 729 of bench/working_db.py (docs/figures.md).
"""

from __future__ import annotations

import hashlib
import sqlite3

TABLE = "fold_keys"
FUNCTION = "tw_key_digest"
_OLD_KEYS = "export_known_keys"  # the table migration 18 replaces


def key_digest(key: str) -> bytes:
    """Return the digest an address key is known by (the first 16 bytes of its SHA-256): TABLE's, and
    record/articles.py IDENTITIES' and the tallies' (which import it from there)."""
    return hashlib.sha256(key.encode("utf-8")).digest()[:16]


def register(conn: sqlite3.Connection) -> None:
    """Give a connection FUNCTION, which TABLE's triggers and the migration compute digests with."""
    conn.create_function(FUNCTION, 1, key_digest, deterministic=True)  # url_key is NOT NULL in both tables


CREATE = f"""
CREATE TABLE {TABLE} (
    digest BLOB PRIMARY KEY         -- the first 16 bytes of the SHA-256 of an address key
) WITHOUT ROWID;
CREATE TRIGGER {TABLE}_listing AFTER INSERT ON articles
BEGIN
    INSERT INTO {TABLE} (digest) VALUES ({FUNCTION}(NEW.url_key)) ON CONFLICT (digest) DO NOTHING;
END;
CREATE TRIGGER {TABLE}_address AFTER INSERT ON article_urls
BEGIN
    INSERT INTO {TABLE} (digest) VALUES ({FUNCTION}(NEW.url_key)) ON CONFLICT (digest) DO NOTHING;
END;
"""

# Every row the database holds, folded in as the triggers would (over what TABLE holds).
_FOLD_ROWS = tuple(f"INSERT INTO {TABLE} (digest) SELECT {FUNCTION}(url_key) FROM {table} WHERE true "
                   "ON CONFLICT (digest) DO NOTHING" for table in ("articles", "article_urls"))


def migrate(conn: sqlite3.Connection, execute) -> None:
    """Migration 18: create TABLE and its triggers, fold in every row the database holds and the known keys of
    a database pruned before, then drop that table."""
    register(conn)
    execute(CREATE)
    refold(conn)
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (_OLD_KEYS,)).fetchone():
        bad = conn.execute(f"SELECT digest FROM {_OLD_KEYS} WHERE typeof(digest) != 'blob' OR length(digest) != 16 "
                           "LIMIT 1").fetchone()
        if bad:
            raise ValueError(f"{_OLD_KEYS} holds a damaged digest ({bad[0]!r})")
        conn.execute(f"INSERT INTO {TABLE} (digest) SELECT digest FROM {_OLD_KEYS} WHERE true "
                     "ON CONFLICT (digest) DO NOTHING")
        execute(f"DROP TABLE {_OLD_KEYS}")


def refold(conn: sqlite3.Connection) -> None:
    """Fold every articles and article_urls row into TABLE again, over what it holds. What
    `export restore-triggers` runs after putting back one of its triggers."""
    register(conn)
    for statement in _FOLD_ROWS:
        conn.execute(statement)


def known(conn: sqlite3.Connection, key: str) -> bool:
    """Return True when an address with this key was listed or recorded for an article, in any database."""
    return conn.execute(f"SELECT 1 FROM {TABLE} WHERE digest = ?", (key_digest(key),)).fetchone() is not None


def projection(conn: sqlite3.Connection) -> frozenset[bytes]:
    """Return TABLE's digests."""
    return frozenset(bytes(r[0]) for r in conn.execute(f"SELECT digest FROM {TABLE}"))


def from_rows(conn: sqlite3.Connection) -> frozenset[bytes]:
    """Return the projection computed from the database's rows alone, as `projection` gives it."""
    return frozenset(key_digest(r[0]) for r in conn.execute(
        "SELECT url_key FROM articles UNION SELECT url_key FROM article_urls"))


def keep(conn: sqlite3.Connection, source: str = "src") -> None:
    """Copy TABLE whole from an attached database (a pruning's source), over what main's triggers folded from the
    rows it copied. A pruning leaves rows out; their keys stay known."""
    conn.execute(f"INSERT INTO main.{TABLE} SELECT * FROM {source}.{TABLE} WHERE true ON CONFLICT (digest) DO NOTHING")
