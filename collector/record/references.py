"""What a row's reference may point at: a row the database holds, or a row the record holds.

A full database checks its references as SQLite does (`PRAGMA foreign_keys = ON`):
each points at a row it holds. A pruned working database (collector/collect/level.py)
has left out rows already in the record, so a new row may point at one of them, a
check at an article whose rows were left out, a comparison at a snapshot no longer
held. There the rule is the record's, not the file's: a reference resolves against a
row the database holds or a row the record holds, that is an id of the stream's own
range at or below what the record's last file goes through (`through` in its header;
pruning leaves out only rows at or below it). SQLite cannot express that, so a pruned
database is opened with its foreign keys off (collector/record/store.py) and every
row an export is about to write is checked here first (`check`, from
collector/record/export.py): the record never gains a row pointing at nothing.

A reference into another stream's range is that stream's to vouch for (a vantage
difference names the other vantage's request, collector/collect/vantages.py), as a
rebuild leaves it too (collector/record/rebuild.py). A reference to a table the
record does not export by id (outlet groups, the stored texts and values) must be
held: pruning keeps those as they are needed.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from typing import Iterator

from collector.record import schema, shadows
from collector.record.fileformat import ExportError
from collector.record.tables import appended_by_id, record_tables

_VIEWS = {storage: view for view, storage in schema.VIEW_ROWS.items()}  # storage table -> the record's name
SHOWN = 5  # unresolved references named in a refusal


def pruned(conn: sqlite3.Connection) -> bool:
    """Return True for a database pruning left rows out of (it has the pruning's state)."""
    return shadows.levelled_at(conn) is not None


@contextmanager
def unchecked(conn: sqlite3.Connection) -> Iterator[None]:
    """Run the block with SQLite's foreign keys off, then put back what was set (on, or off in a pruned database)."""
    was = conn.execute("PRAGMA foreign_keys").fetchone()[0]
    conn.execute("PRAGMA foreign_keys = OFF")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA foreign_keys = {'ON' if was else 'OFF'}")


def unresolved(conn: sqlite3.Connection, through: dict[str, int], own: tuple[int, int]) -> list[str]:
    """Return the references (at most SHOWN) of the rows an export would write that resolve against nothing.

    `through`: the last id of each table the record holds (the last file's header); `own`: (low, high], the
    stream's id range. The rows checked are those of the stream's range above `through` in the tables exported
    by id, and every row of the tables exported whole (state tables: what the export compares with its shadow).
    """
    low, high = own
    found: list[str] = []
    tables = record_tables(conn)
    for table in tables:
        storage = schema.VIEW_ROWS.get(table, table)
        by_id = appended_by_id(conn, table)
        rows = "c.id > :after AND c.id > :low AND c.id <= :high" if by_id else "1"
        for ref in conn.execute(f'PRAGMA foreign_key_list("{storage}")').fetchall():
            column, parent, key = ref[3], ref[2], ref[4] or "id"
            name = _VIEWS.get(parent, parent)
            exported = name in tables and appended_by_id(conn, name)
            # An integer reference into the stream's own range; at or below `through` it is in the record.
            record = ("AND c.\"{c}\" > :low AND c.\"{c}\" <= :high AND c.\"{c}\" > :parent_through"
                      if exported else "").format(c=column)
            sql = (f'SELECT c.rowid, c."{column}" FROM "{storage}" c WHERE {rows} AND c."{column}" IS NOT NULL '
                   f'{record} AND NOT EXISTS (SELECT 1 FROM "{parent}" p WHERE p."{key}" = c."{column}") '
                   f"LIMIT {SHOWN}")
            params = {"after": max(through.get(table, 0), low), "low": low, "high": high,
                      "parent_through": max(through.get(name, 0), low)}
            for rowid, value in conn.execute(sql, params):
                found.append(f"{table} row {rowid}: {column} = {value!r} is neither held in {parent} "
                             f"nor in the record")
                if len(found) >= SHOWN:
                    return found
    return found


def check(conn: sqlite3.Connection, through: dict[str, int], own: tuple[int, int]) -> None:
    """Raise ExportError when a row about to be exported points at a row neither held nor in the record."""
    problems = unresolved(conn, through, own)
    if problems:
        raise ExportError("export refused: rows point at rows neither the database nor the record holds: "
                          + "; ".join(problems) + ". Nothing was written; the rows stay for a fix and a "
                          "later export (a pruned database checks its references here, not as it writes them)")
