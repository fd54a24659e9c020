"""Migration 18: the address keys' projection, folded forward from the appended rows in every database.

Every address key a database has seen (collector/record/articles.py
article_key: an address with its tracking parameters gone), known by a
128-bit digest of it (`digest`), in TABLE: one row a key, holding the
article first listed at it (the `articles` row whose url_key it is: the
earliest first_seen_at, then the lowest id) and when, or NULL when the key is
only another address of an article (a redirect's final address, a canonical
one). Two readers:

* discovery (articles.known): a page listed again, under any address an
  article was recorded by, is not queued again, however long ago its rows
  left a levelled working database;
* a merge of every stream (collector/record/merge.py article_map): one
  address several streams recorded is one article, the earliest seen, whether
  or not each stream's database still holds that article's rows.

The triggers below fold each `articles` and `article_urls` row in as it is
inserted, whatever inserts it (a run, a rebuild, a merge, a level's copy, a
dormant article woken); each value is the row's own or the earlier of two, so
the order rows arrive in does not change TABLE, and a row folded twice changes
nothing (`from_rows` computes TABLE from the rows; tests/record/test_fold_keys.py
holds the two equal). A level keeps TABLE whole: it is what lets the rows go.

The digest is SHA-256 computed in Python (SQLite has none): every connection
that writes articles registers FUNCTION (Store does), as for the search index
(record/search.py). TABLE is derived, never an observation: its name starts
with fileformat.DERIVED_PREFIX, it is never exported, and the record's rows
make it again.

Before migration 18 a levelled database knew the keys of the articles it had
left out by two bookkeeping tables, export_known_keys (every key's digest)
and, in a stream's database beside a follower, export_identities (each
article's key digest, id and first sighting); `migrate` folds both in and
drops them. (A working database's known keys carried no article: those keys
stay in TABLE with article NULL, which is all discovery reads of them.)
"""

from __future__ import annotations

import hashlib
import sqlite3

from collector.record.fold import micros_sql, text_sql

TABLE = "fold_keys"
FUNCTION = "tw_key_digest"
_OLD_KEYS, _OLD_IDENTITIES = "export_known_keys", "export_identities"  # the tables migration 18 replaces


def digest(key: str) -> bytes:
    """Return the digest an address key is known by (the first 16 bytes of its SHA-256)."""
    return hashlib.sha256(key.encode("utf-8")).digest()[:16]


def register(conn: sqlite3.Connection) -> None:
    """Give a connection FUNCTION, which TABLE's triggers and the migration compute digests with."""
    conn.create_function(FUNCTION, 1, lambda key: None if key is None else digest(key), deterministic=True)


# How a listing is folded in: its article replaces the row's when the row has none or a later (then a higher) one.
_ON_LISTING = (f"ON CONFLICT (digest) DO UPDATE SET article_id = excluded.article_id, listed_us = excluded.listed_us "
               f"WHERE {TABLE}.article_id IS NULL OR (excluded.listed_us, excluded.article_id) "
               f"< ({TABLE}.listed_us, {TABLE}.article_id)")

CREATE = f"""
CREATE TABLE {TABLE} (
    digest BLOB PRIMARY KEY,        -- the first 16 bytes of the SHA-256 of an address key
    article_id INTEGER,             -- the article first listed at it; NULL: only another article's address
    listed_us INTEGER               -- that article's first_seen_at, microseconds since 1970 UTC
) WITHOUT ROWID;
CREATE TRIGGER {TABLE}_listing AFTER INSERT ON articles
BEGIN
    INSERT INTO {TABLE} (digest, article_id, listed_us)
    VALUES ({FUNCTION}(NEW.url_key), NEW.id, {micros_sql("NEW.first_seen_at")}) {_ON_LISTING};
END;
CREATE TRIGGER {TABLE}_address AFTER INSERT ON article_urls
BEGIN
    INSERT INTO {TABLE} (digest) VALUES ({FUNCTION}(NEW.url_key)) ON CONFLICT (digest) DO NOTHING;
END;
"""

# Every row the database holds, folded in as the triggers would (over what TABLE holds).
_FOLD_ROWS = (
    f"""INSERT INTO {TABLE} (digest, article_id, listed_us)
        SELECT {FUNCTION}(url_key), id, {micros_sql("first_seen_at")} FROM articles WHERE true {_ON_LISTING}""",
    f"INSERT INTO {TABLE} (digest) SELECT {FUNCTION}(url_key) FROM article_urls WHERE true ON CONFLICT (digest) DO NOTHING",
)


def _exists(conn: sqlite3.Connection, table: str, schema: str = "main") -> bool:
    return conn.execute(f"SELECT 1 FROM {schema}.sqlite_master WHERE type = 'table' AND name = ?",
                        (table,)).fetchone() is not None


def migrate(conn: sqlite3.Connection, execute) -> None:
    """Migration 18: create TABLE and its triggers, fold in every row the database holds and the two bookkeeping
    tables of a database levelled before (their articles' first sightings, their keys), then drop those."""
    register(conn)
    execute(CREATE)
    refold(conn)
    if _exists(conn, _OLD_IDENTITIES):
        bad = conn.execute(f"SELECT digest FROM {_OLD_IDENTITIES} WHERE typeof(digest) != 'blob' "
                           "OR length(digest) != 16 OR first_seen_at IS NULL LIMIT 1").fetchone()
        if bad:
            raise ValueError(f"{_OLD_IDENTITIES} holds a damaged row ({bad[0]!r})")
        conn.execute(f"""INSERT INTO {TABLE} (digest, article_id, listed_us)
            SELECT digest, article_id, {micros_sql("first_seen_at")} FROM {_OLD_IDENTITIES} WHERE true {_ON_LISTING}""")
        execute(f"DROP TABLE {_OLD_IDENTITIES}")
    if _exists(conn, _OLD_KEYS):
        conn.execute(f"INSERT INTO {TABLE} (digest) SELECT digest FROM {_OLD_KEYS} WHERE typeof(digest) = 'blob' "
                     "AND length(digest) = 16 ON CONFLICT (digest) DO NOTHING")
        execute(f"DROP TABLE {_OLD_KEYS}")


def refold(conn: sqlite3.Connection) -> int:
    """Fold every articles and article_urls row into TABLE again, over what it holds; return its rows. What
    `export restore-triggers` runs after putting back one of its triggers."""
    register(conn)
    for statement in _FOLD_ROWS:
        conn.execute(statement)
    return conn.execute(f"SELECT COUNT(*) FROM {TABLE}").fetchone()[0]


def known(conn: sqlite3.Connection, key: str) -> bool:
    """Return True when an address with this key was listed or recorded for an article, in any database."""
    return conn.execute(f"SELECT 1 FROM {TABLE} WHERE digest = ?", (digest(key),)).fetchone() is not None


def projection(conn: sqlite3.Connection, schema: str = "main") -> dict[bytes, tuple]:
    """Return TABLE as {digest: (article id, first listed as the record's text)} (None, None: an address only)."""
    return {bytes(r[0]): (r[1], r[2]) for r in conn.execute(
        f"SELECT digest, article_id, CASE WHEN listed_us IS NULL THEN NULL ELSE {text_sql('listed_us')} END "
        f"FROM {schema}.{TABLE}")}


def from_rows(conn: sqlite3.Connection) -> dict[bytes, tuple]:
    """Return the projection computed from the database's rows alone, as `projection` gives it."""
    out: dict[bytes, tuple] = {}
    micros = micros_sql("first_seen_at")
    for key, article_id, seen in conn.execute(f"SELECT url_key, id, {text_sql(micros)} FROM articles "
                                              f"ORDER BY {micros} DESC, id DESC"):
        out[digest(key)] = (article_id, seen)  # the earliest, then the lowest id, written last
    for (key,) in conn.execute("SELECT url_key FROM article_urls"):
        out.setdefault(digest(key), (None, None))
    return out


def keep(conn: sqlite3.Connection, source: str = "src") -> int:
    """Copy TABLE whole from an attached database (a level's source), over what main's triggers folded from the
    rows it copied; return its rows. A level leaves rows out; what they said of their keys stays."""
    conn.execute(f"INSERT OR REPLACE INTO main.{TABLE} SELECT * FROM {source}.{TABLE}")
    return conn.execute(f"SELECT COUNT(*) FROM main.{TABLE}").fetchone()[0]


def listings(schema: str) -> str:
    """Return the SQL of (id, digest, first listed) of every article TABLE of `schema` names: what a merge maps."""
    return f"SELECT article_id, digest, listed_us FROM {schema}.{TABLE} WHERE article_id IS NOT NULL"
