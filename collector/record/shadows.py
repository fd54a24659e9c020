"""What the database last exported: a shadow copy of every keyed table, and the head file.

State tables (the capture queue, outlets) change in place, so an export
cannot find their new rows by id. Each keyed table `T` has a shadow
`export_shadow_T` holding its rows as last exported; an export writes the
rows that differ from their shadow and then updates it. `export_head` names
the export file the database was last in sync with, and its SHA-256.
`prune_state` (export_level before migration 19) is what a working database left out when it was pruned
(collector/collect/prune.py): the first instant the whole record observed.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from collector.record import renames, schema
from collector.record.fileformat import decode_value, read_lines, row_line
from collector.record.tables import columns, key_select


def shadow_name(table: str) -> str:
    """Return the name of a keyed table's shadow."""
    return f"export_shadow_{table}"


def create(conn: sqlite3.Connection, table: str) -> None:
    """(Re)create a keyed table's shadow, keeping what it held (columns a migration added start empty)."""
    keys, select = key_select(conn, table)
    shadow, old = shadow_name(table), shadow_name(table) + "_old"
    had = columns(conn, shadow)
    if had:
        conn.execute(f'ALTER TABLE "{shadow}" RENAME TO "{old}"')
        conn.execute(f'DROP INDEX IF EXISTS "{shadow}_key"')
    conn.execute(f'CREATE TABLE "{shadow}" AS SELECT {select} FROM "{table}" WHERE 0')
    names = ", ".join(f'"{k}"' for k in keys)
    conn.execute(f'CREATE UNIQUE INDEX "{shadow}_key" ON "{shadow}" ({names})')
    if had:
        common = ", ".join(f'"{c}"' for c in columns(conn, shadow) if c in had)
        conn.execute(f'INSERT INTO "{shadow}" ({common}) SELECT {common} FROM "{old}"')
        conn.execute(f'DROP TABLE "{old}"')


def copy_table(conn: sqlite3.Connection, table: str) -> None:
    """Make a keyed table's shadow hold exactly the table as it is (after a rebuild)."""
    conn.execute(f'DROP TABLE IF EXISTS "{shadow_name(table)}"')
    create(conn, table)
    _keys, select = key_select(conn, table)
    conn.execute(f'INSERT INTO "{shadow_name(table)}" SELECT {select} FROM "{table}"')


def changed_rows(conn: sqlite3.Connection, table: str) -> list[dict]:
    """Return every row of a keyed table that is new or (state tables) changed since exported."""
    keys, select = key_select(conn, table)
    shadow = shadow_name(table)
    if columns(conn, shadow) != [*(["rowid"] if keys == ["rowid"] else []), *columns(conn, table)]:
        create(conn, table)
    on = " AND ".join(f's."{k}" = t."{k}"' for k in keys)
    where = f's."{keys[0]}" IS NULL'
    if table not in schema.APPEND_ONLY_TABLES:
        where += " OR NOT (" + " AND ".join(f's."{c}" IS t."{c}"' for c in columns(conn, table)) + ")"
    query = (f'SELECT {select.replace("*", "t.*").replace("rowid AS", "t.rowid AS")} FROM "{table}" AS t '
             f'LEFT JOIN "{shadow}" AS s ON {on} WHERE {where}')
    return [dict(record) for record in conn.execute(query)]


def changed_lines(conn: sqlite3.Connection, table: str, rows: list[dict]) -> list[str]:
    """Return the lines of changed rows: an upsert ("u") for a state row, an insert for an append-only one."""
    state = table not in schema.APPEND_ONLY_TABLES
    return [row_line(table, row, state=state) for row in rows]


def upsert(conn: sqlite3.Connection, table: str, rows: list[dict]) -> None:
    """Record rows as exported in the table's shadow."""
    if not rows:
        return
    cols = list(rows[0])
    names = ", ".join(f'"{c}"' for c in cols)
    marks = ", ".join("?" for _ in cols)
    conn.executemany(f'INSERT OR REPLACE INTO "{shadow_name(table)}" ({names}) VALUES ({marks})',
                     [[r[c] for c in cols] for r in rows])


def fill_from_files(conn: sqlite3.Connection, tables: list[str], files: list[Path]) -> None:
    """Make the shadows of `tables` hold the keyed rows as the export files hold them (reads them all)."""
    for table in tables:
        create(conn, table)
    wanted = set(tables)
    for path in files:
        for line in read_lines(path):
            row = line.get("r") if "r" in line else line.get("u")
            if row is not None and line["t"] in wanted:
                upsert(conn, line["t"], [{k: decode_value(v) for k, v in row.items()}])


def head(conn: sqlite3.Connection) -> tuple[str, str] | None:
    """Return (export file, its SHA-256) the database was last in sync with, or None."""
    row = conn.execute("SELECT batch, sha256 FROM export_head WHERE id = 1").fetchone()
    return (row[0], row[1]) if row else None


def set_head(conn: sqlite3.Connection, batch: str, sha: str) -> None:
    """Record that the database is in sync with export file `batch` (relative name) of SHA-256 `sha`."""
    conn.execute("INSERT INTO export_head (id, batch, sha256) VALUES (1, ?, ?) "
                 "ON CONFLICT(id) DO UPDATE SET batch = excluded.batch, sha256 = excluded.sha256",
                 (batch, sha))


PRUNE_TABLE = "prune_state"  # bookkeeping (never exported): what pruning left out (export_level before migration 19)


def prune_floor(conn: sqlite3.Connection) -> float | None:
    """Return the Julian day of the whole record's first observation, when this database was pruned."""
    row = _prune_row(conn, "first_event")
    return None if row is None else row[0]


def pruned_at(conn: sqlite3.Connection) -> str | None:
    """Return the instant (the record's clock) this database was last pruned at, or None."""
    row = _prune_row(conn, "pruned_at")
    return None if row is None else row[0]


def figures_from(conn: sqlite3.Connection) -> str | None:
    """Return the instant this database's last pruning kept every row a release reads from ("": every row), or None.

    None: never pruned. collector/collect/prune.py writes it; a release
    (publish/release.py) refuses a database that lacks rows it would read.
    """
    row = _prune_row(conn, "figures_from")
    return None if row is None else row[0]


def leaves_out(conn: sqlite3.Connection) -> bool:
    """Return True when this database's last pruning made it a working database a job revisits from and no
    follower merges from (a quiet article's rows left out, not packed with its snapshot as a follower's stream
    database packs them): rows it cannot hold whole as it resumes may be left out (record/rebuild.py)."""
    row = _prune_row(conn, "leaves_out")
    return bool(row and row[0])


def figures_as_aggregates(conn: sqlite3.Connection) -> bool:
    """Return True when this database's last pruning kept the figures as running aggregates, not as rows.

    (collector/publish/tallies.py; a pruning before they existed has no such column.)
    """
    row = _prune_row(conn, "aggregates")
    return bool(row and row[0])


def _prune_row(conn: sqlite3.Connection, column: str):
    """Return the pruning's row holding `column` (under its former name in a database not migrated), or None."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (PRUNE_TABLE,)).fetchone():
        return None
    name = renames.column_in(conn, PRUNE_TABLE, column)
    return None if name is None else conn.execute(f'SELECT "{name}" FROM {PRUNE_TABLE} WHERE id = 1').fetchone()
