"""Which tables the record is made of, and how each is keyed: read from the database itself."""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path

from collector.record import schema
from collector.record.fileformat import APPEND_BY_ID, NOT_RECORDED, ORDER


def record_tables(conn: sqlite3.Connection) -> list[str]:
    """Return the tables the record is made of, in export order (no FTS, no bookkeeping)."""
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' "
                        "AND name NOT LIKE 'sqlite_%'").fetchall()
    virtual = [name for name, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL")]
    names = [name for name, _ in rows if name not in virtual and not name.startswith(NOT_RECORDED)
             and not any(name.startswith(v + "_") for v in virtual) and name not in schema.STORAGE_TABLES]
    # A record table kept as a view over storage tables is exported as the view.
    views = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'view'")}
    names += [v for v in set(schema.STORAGE_TABLES.values()) if v in views]
    known = [t for t in ORDER if t in names]
    return known + sorted(set(names) - set(known))


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    """Return a table's column names in their declared order."""
    return [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]


def key_columns(conn: sqlite3.Connection, table: str) -> list[str]:
    """Return a table's primary-key columns (the rowid when it declares none)."""
    if table in schema.STORAGE_TABLES.values():
        return ["id"]  # a view: PRAGMA table_info names no key, its id is its storage row's
    info = sorted((r[5], r[1]) for r in conn.execute(f'PRAGMA table_info("{table}")') if r[5])
    return [name for _, name in info] or ["rowid"]


def appended_by_id(conn: sqlite3.Connection, table: str) -> bool:
    """Return True for an append-only table keyed by a growing integer `id` (exported by id)."""
    return table in APPEND_BY_ID and key_columns(conn, table) == ["id"]


def key_select(conn: sqlite3.Connection, table: str) -> tuple[list[str], str]:
    """Return (key columns, the select list that reads a row with its key)."""
    keys = key_columns(conn, table)
    return keys, ('rowid AS "rowid", *' if keys == ["rowid"] else "*")


# Objects only the record's schema has together: how a browsing tool knows a
# database file is a copy of the record, whatever the file is called.
RECORD_MARKERS = ("runs", "requests", "snapshots", "snapshots_fts", "warc_files")


@functools.lru_cache(maxsize=64)
def is_record(path: str) -> bool:
    """Return True when the SQLite file at path holds the record's schema (read-only look; cached per path)."""
    try:
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
    except (sqlite3.Error, OSError, ValueError):
        return False
    try:
        marks = ", ".join("?" for _ in RECORD_MARKERS)
        found = conn.execute(f"SELECT COUNT(DISTINCT name) FROM sqlite_master WHERE name IN ({marks})",
                             RECORD_MARKERS).fetchone()[0]
        return found == len(RECORD_MARKERS)
    except sqlite3.Error:
        return False
    finally:
        conn.close()
