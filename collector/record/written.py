"""Migration 16: the export files a working database wrote itself, so its job signs those and no other.

A stream's job signs the files it exported (collector/evidence/signing.py).
The record repository can also receive a file nobody's job wrote (a leaked
token, a mistaken commit), well chained to the last one; a rebuild or a
resume reads it like any other. What tells the two apart is this table:
`export_new` adds a row for each file it writes (its record name and
SHA-256) in the transaction that makes the database in sync with it, and
nothing else ever adds one. A rebuilt database starts with none: it wrote
nothing. Bookkeeping, never exported (its name starts with export_);
`export prune` keeps it as it is.
"""

from __future__ import annotations

import sqlite3

TABLE = "export_written"
V16 = f"""
CREATE TABLE {TABLE} (
    name TEXT PRIMARY KEY,          -- the file's record name, YYYY/MM/DD/NNNNNN.jsonl.bz2
    sha256 TEXT NOT NULL,           -- of the file as written
    written_at TEXT NOT NULL        -- its header's written_at
);
"""


def note(conn: sqlite3.Connection, name: str, sha256: str, written_at: str) -> None:
    """Record that this database's export wrote the file `name` with this SHA-256."""
    conn.execute(f"INSERT INTO {TABLE} (name, sha256, written_at) VALUES (?, ?, ?)", (name, sha256, written_at))


def files(conn: sqlite3.Connection) -> dict[str, str]:
    """Return {record name: SHA-256} of every file this database's exports wrote (none before migration 16)."""
    try:
        return {name: sha for name, sha in conn.execute(f"SELECT name, sha256 FROM {TABLE}")}
    except sqlite3.OperationalError:  # a database of older software, opened read-only: it noted nothing
        return {}
