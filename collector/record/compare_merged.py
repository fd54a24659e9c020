"""Compares every row of a database that merges the record's streams with the streams that wrote it.

The merge is deterministic (collector/record/merge.py): the same files give
the same rows. So the streams are merged again, from their files, into a
scratch database, and every table of the one given is read beside it in key
order, sync_merged included (it says which stream wrote each row the merge
read otherwise than its file holds it). The first difference is named with
the stream that wrote the row: by the id range its id lies in
(collector/record/streams.py), or, for a row of sync_merged, the stream it
names, and the file of that stream's record that holds the row.

A merged database is read, never written: unlike a working database, no row
may lie beyond the record, and state rows (the registry's outlets and
groups, the capture queue) are compared too, since the merge keeps each from
the stream written latest.
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

from collector.record import renames, streams
from collector.record.compare import Comparison
from collector.record.fileformat import encode_value, read_header
from collector.record.folder import chain
from collector.record.merge import merge
from collector.record.store import open_read_only
from collector.record.tables import columns, key_columns, record_tables

MERGED_TABLE = streams.MERGED_TABLE


def compare_merged(found: dict[str | None, list[Path]], db_path: str | Path) -> Comparison:
    """Return the comparison of every row of a merged database with the streams' files (name -> folders)."""
    with tempfile.TemporaryDirectory(prefix="takedownwatch-compare-",
                                     dir=Path(db_path).resolve().parent) as scratch:
        reference = Path(scratch) / "merged.db"
        merge(found, reference)
        record, mine = open_read_only(reference), open_read_only(db_path)
        try:
            return _compare(record, mine, found)
        finally:
            record.close()
            mine.close()


def _compare(record: sqlite3.Connection, mine: sqlite3.Connection, found) -> Comparison:
    names = sorted(found, key=streams.base)
    spans = {name: [(read_header(f).get("through", {}), f) for f in chain(paths)] for name, paths in found.items()}
    compared = 0
    for table in [*record_tables(record), MERGED_TABLE]:
        cols, named = columns(record, table), renames.name_in(mine, table)
        if columns(mine, named) != cols:
            return Comparison(compared, f"{table}: the database's columns differ from the merged record's", 0)
        keys = key_columns(record, table)
        order = ", ".join(f'"{k}"' for k in keys)
        select = 'rowid AS "rowid", *' if keys == ["rowid"] else "*"
        theirs = record.execute(f'SELECT {select} FROM "{table}" ORDER BY {order}')
        ours = mine.execute(f'SELECT {select} FROM "{named}" ORDER BY {order}')
        while True:
            a, b = theirs.fetchone(), ours.fetchone()
            if a is None and b is None:
                break
            if b is None or (a is not None and _key(a, keys) < _key(b, keys)):
                return Comparison(compared, f"{_stream(a, table, names)}: {table} row {_named(a, keys)} of its "
                                            f"record ({_file_of(a, table, names, spans)}) is missing from the "
                                            "database", 0)
            if a is None or _key(b, keys) < _key(a, keys):
                return Comparison(compared, f"{_stream(b, table, names)}: {table} row {_named(b, keys)} of the "
                                            "database is in no stream's record", 0)
            compared += 1
            for column in cols:
                if encode_value(a[column]) != encode_value(b[column]) or type(a[column]) is not type(b[column]):
                    return Comparison(compared, f"{_stream(a, table, names)}: {table} row {_named(a, keys)}: "
                                                f"{column} is {b[column]!r} in the database, {a[column]!r} in the "
                                                f"stream's record ({_file_of(a, table, names, spans)})", 0)
    return Comparison(compared, None, 0)


def _key(row, keys) -> tuple:
    """Return a row's key as SQLite orders it (NULL, numbers, text, blobs)."""
    def rank(v):
        if v is None:
            return (0, 0)
        if isinstance(v, (int, float)):
            return (1, v)
        return (2, v) if isinstance(v, str) else (3, bytes(v))
    return tuple(rank(row[k]) for k in keys)


def _named(row, keys) -> str:
    return ", ".join(f"{k}={row[k]!r}" for k in keys)


def _owner(row, table: str, names) -> str | None | bool:
    """Return the stream that wrote a row (None: the default stream; False: none can be told)."""
    if table == MERGED_TABLE:
        return None if row["stream"] == "default" else row["stream"]
    if "id" in row.keys() and isinstance(row["id"], int):
        for name in names:
            if streams.in_range(name, row["id"]):
                return name
    return False


def _stream(row, table: str, names) -> str:
    owner = _owner(row, table, names)
    if owner is False:
        return "a state row kept from the stream written latest"
    return f"stream {owner or '(default)'}"


def _file_of(row, table: str, names, spans) -> str:
    owner = _owner(row, table, names)
    if owner is False or table == MERGED_TABLE or owner not in spans:
        return "its files"
    for through, path in spans[owner]:
        if row["id"] <= through.get(table, 0):
            return str(path)
    return "its files"
