"""What a row's reference may point at: a row the database holds, or a row the record holds.

A full database checks its references as SQLite does (`PRAGMA foreign_keys = ON`):
each points at a row it holds. A pruned working database (collector/collect/prune.py)
has left out rows already in the record, so a new row may point at one of them, a
check at an article whose rows were left out, a comparison at a snapshot no longer
held. There the rule is the record's, not the file's: a reference resolves against a
row the database holds or a row the record holds, that is an id of the stream's own
range at or below what the record's last file goes through (`through` in its header;
pruning leaves out only rows at or below it). SQLite cannot express that, so a pruned
database is opened with its foreign keys off (collector/record/store.py) and every
row an export is about to write is checked here first (`check`, from
collector/record/export.py): the record never gains a row pointing at nothing.

Only the references CROSS_STREAM names may point into another stream's range
(a vantage difference names the other vantages' requests, the archive job's
submissions name every collect job's captures): that stream vouches for the row,
as a rebuild of the referring stream alone lets it be (collector/record/rebuild.py);
the merge of every stream checks that it is there. A database that follows a stream
(sync_followed: collector/record/follow.py) knows that stream's record up to the
last id it followed, so there an id above it must be held. Any other reference outside the
stream's own range, or one that is not an integer, must be held. A reference to a
table the record does not export by id (outlet groups, the stored texts and values)
must be held too: pruning keeps those a new row can name.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from typing import Iterator

from collector import settings
from collector.record import schema, shadows, streams
from collector.record.fileformat import ExportError
from collector.record.tables import appended_by_id, key_columns, record_tables

_VIEWS = {storage: view for view, storage in schema.VIEW_ROWS.items()}  # storage table -> the record's name
SHOWN = 5  # unresolved references named in a refusal
# Rows that may point at rows of other streams: a comparison of every stream's answers
# (collector/collect/vantages.py) names requests and articles other jobs recorded, and the archive
# job's submissions (its stream follows every stream: collector/record/follow.py) name the captures
# of every collect job. A rebuild of the referring stream alone lets such a reference be when the row
# it names lies in another stream's range; the merge of every stream checks that it is there.
CROSS_STREAM = {"vantage_differences": {"request_a", "request_b", "article_id"},
                "archive_submissions": {"snapshot_id"}}


def pruned(conn: sqlite3.Connection) -> bool:
    """Return True for a database pruning left rows out of (it has the pruning's state)."""
    return shadows.pruned_at(conn) is not None


@contextmanager
def unchecked(conn: sqlite3.Connection) -> Iterator[None]:
    """Run the block with SQLite's foreign keys off, then put back what was set (on, or off in a pruned database)."""
    was = conn.execute("PRAGMA foreign_keys").fetchone()[0]
    conn.execute("PRAGMA foreign_keys = OFF")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA foreign_keys = {'ON' if was else 'OFF'}")


def unresolved(conn: sqlite3.Connection, through: dict[str, int], own: tuple[int, int],
               changed: dict[str, list[dict]] | None = None) -> list[str]:
    """Return the references (at most SHOWN) of the rows an export would write that resolve against nothing.

    `through`: the last id of each table the record holds (the last file's header); `own`: (low, high], the
    stream's id range. The rows checked are those of the stream's range above `through` in the tables exported
    by id, and the rows of state tables in `changed` (what the export writes of them: rows unlike their shadow).
    """
    low, high = own
    found: list[str] = []
    tables = record_tables(conn)
    by_ids = {t for t in tables if appended_by_id(conn, t)}
    followed = _followed(conn)
    for table in tables:
        storage = schema.VIEW_ROWS.get(table, table)
        by_id = table in by_ids
        if not by_id and not (changed or {}).get(table):
            continue
        for ref in conn.execute(f'PRAGMA foreign_key_list("{storage}")').fetchall():
            column, parent, key = ref[3], ref[2], ref[4] or "id"
            name = _VIEWS.get(parent, parent)
            exported = name in by_ids
            cross = column in CROSS_STREAM.get(table, ())
            params = {"after": max(through.get(table, 0), low), "high": high, "low": low,
                      "parent_through": max(through.get(name, 0), low)}
            test = _unresolved_sql(parent, key, exported, followed.get(name, []) if cross else None)
            if by_id:
                value = f'c."{column}"'
                sql = (f'SELECT c.id, {value} FROM "{storage}" c WHERE c.id > :after AND c.id <= :high '
                       f"AND {test.replace('{v}', value)} LIMIT {SHOWN}")
                rows = [(f"{table} row {i}", v) for i, v in conn.execute(sql, params)]
            else:
                keys = key_columns(conn, table)
                one = f"SELECT {test.replace('{v}', ':v')}"
                rows = [(f"{table} row {', '.join(f'{k} = {row.get(k)!r}' for k in keys)}", row.get(column))
                        for row in changed[table] if conn.execute(one, {**params, "v": row.get(column)}).fetchone()[0]]
            for where, value in rows:
                found.append(f"{where}: {column} = {value!r} is neither held in {parent} nor in the record")
                if len(found) >= SHOWN:
                    return found
    return found


def _unresolved_sql(parent: str, key: str, exported: bool, cross: list | None) -> str:
    """Return the SQL test, over a value `{v}`, of a reference that resolves against nothing.

    `cross`: None, or the reference may point into another stream's range: then the ranges of the streams the
    database follows (none but a follower's), each (low, through, high), in which an id above `through` must
    be held.
    """
    resolved = [f'EXISTS (SELECT 1 FROM "{parent}" p WHERE p."{key}" = {{v}})']
    if exported:  # in the stream's range at or below what the record holds of the parent: in the record
        resolved.append("(typeof({v}) = 'integer' AND {v} > :low AND {v} <= :parent_through)")
    if cross is not None:  # another stream's row: that stream vouches for it, unless a followed one's not followed
        ahead = "".join(f" AND NOT ({{v}} > {int(t)} AND {{v}} <= {int(h)})" for _low, t, h in cross)
        resolved.append(f"(typeof({{v}}) = 'integer' AND {{v}} > 0 AND {{v}} <= {streams.TOP} "
                        f"AND ({{v}} <= :low OR {{v}} > :high){ahead})")
    return f"{{v}} IS NOT NULL AND NOT ({' OR '.join(resolved)})"


def _followed(conn: sqlite3.Connection) -> dict[str, list[tuple[int, int, int]]]:
    """Return, per table, each followed stream's (low, through, high): what a follower holds of each stream
    (collector/record/follow.py): its rows up to `through`, held or in that stream's record."""
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                        (streams.FOLLOWED_TABLE,)).fetchone():
        return {}
    out: dict[str, list[tuple[int, int, int]]] = {}
    for stream, table, through in conn.execute(
            f"SELECT stream, table_name, through FROM {streams.FOLLOWED_TABLE} WHERE table_name != ''"):
        low = streams.base(stream or None)
        out.setdefault(table, []).append((low, max(int(through), low), low + settings.STREAM_ID_RANGE))
    return out


def check(conn: sqlite3.Connection, through: dict[str, int], own: tuple[int, int],
          changed: dict[str, list[dict]] | None = None) -> None:
    """Raise ExportError when a row about to be exported points at a row neither held nor in the record."""
    problems = unresolved(conn, through, own, changed)
    if problems:
        raise ExportError("export refused: rows point at rows neither the database nor the record holds: "
                          + "; ".join(problems) + ". Nothing was written; the rows stay for a fix and a "
                          "later export (a pruned database checks its references here, not as it writes them)")
