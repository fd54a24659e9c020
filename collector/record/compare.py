"""Compares every row of a working database with the committed record, and names the first difference.

The record is rebuilt into a scratch database and read beside the one given,
table by table in id order. Every row the record holds must be in the
database exactly as exported (an UPDATE or DELETE made with the sqlite3 shell
shows here); a row the database holds beyond the record is one not exported
yet, which is allowed only while its run has not finished in the record (a
row inserted by hand into a finished run's observations is not).
"""

from __future__ import annotations

import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path

from collector.record import schema
from collector.record.fileformat import encode_value
from collector.record.folder import chain
from collector.record.fileformat import read_header
from collector.record.rebuild import rebuild
from collector.record.store import open_read_only
from collector.record.tables import appended_by_id, columns, key_columns, record_tables


@dataclass
class Comparison:
    """What comparing a database with the record found: rows compared, and the first difference."""

    rows: int
    difference: str | None
    unexported: int  # rows after the record, not yet exported (allowed)


def compare_database(out_dir: str | Path | list, db_path: str | Path) -> Comparison:
    """Return the comparison of every observation row of the database with the record (folders oldest first)."""
    files = chain([Path(f) for f in out_dir] if isinstance(out_dir, (list, tuple)) else [Path(out_dir)])
    spans = [(read_header(f)["through"], f) for f in files]
    with tempfile.TemporaryDirectory(prefix="takedownwatch-compare-") as scratch:
        rebuilt = Path(scratch) / "record.db"
        rebuild(out_dir, rebuilt)
        record = open_read_only(rebuilt)
        mine = open_read_only(db_path)
        try:
            return _compare(record, mine, spans)
        finally:
            record.close()
            mine.close()


def _compare(record: sqlite3.Connection, mine: sqlite3.Connection, spans) -> Comparison:
    through = spans[-1][0] if spans else {}
    finished = {r[0] for r in record.execute("SELECT run_id FROM run_finishes")}
    compared = unexported = 0
    for table in record_tables(record):
        if table not in schema.APPEND_ONLY_TABLES and table not in ("runs", "warc_files"):
            continue  # state tables (queue, outlets) change in place by design
        keys = key_columns(record, table)
        cols = columns(record, table)
        if columns(mine, table) != cols:
            return Comparison(compared, f"{table}: the database's columns differ from the record's", unexported)
        order = ", ".join(f'"{k}"' for k in keys)
        top = through.get(table, 0) if appended_by_id(record, table) else None
        where = f'WHERE "id" <= {int(top)}' if top is not None else ""
        theirs = record.execute(f'SELECT * FROM "{table}" {where} ORDER BY {order}')
        if top is None:  # keyed otherwise: each of the record's rows looked up in the database
            difference, count = _keyed_difference(table, keys, theirs, mine, spans)
        else:
            ours = mine.execute(f'SELECT * FROM "{table}" {where} ORDER BY {order}')
            difference, count = _first_difference(table, keys, theirs, ours, spans)
        compared += count
        if difference:
            return Comparison(compared, difference, unexported)
        extra = _beyond_record(record, mine, table, keys, cols, top, finished)
        if isinstance(extra, str):
            return Comparison(compared, extra, unexported)
        unexported += extra
    return Comparison(compared, None, unexported)


def _first_difference(table, keys, theirs, ours, spans) -> tuple[str | None, int]:
    count = 0
    while True:
        a, b = theirs.fetchone(), ours.fetchone()
        if a is None and b is None:
            return None, count
        if b is None or (a is not None and _key(a, keys) < _key(b, keys)):
            return f"{table} row {_named(a, keys)} of the record ({_file_of(table, a, spans)}) " \
                   "is missing from the database", count
        if a is None or _key(b, keys) < _key(a, keys):
            return f"{table} row {_named(b, keys)} of the database is not in the record", count
        count += 1
        difference = _row_difference(table, keys, a, b, spans)
        if difference:
            return difference, count


def _keyed_difference(table, keys, theirs, mine, spans) -> tuple[str | None, int]:
    count = 0
    match = " AND ".join(f'"{k}" IS ?' for k in keys)
    for row in theirs:
        found = mine.execute(f'SELECT * FROM "{table}" WHERE {match}', [row[k] for k in keys]).fetchone()
        if found is None:
            return f"{table} row {_named(row, keys)} of the record is missing from the database", count
        difference = _row_difference(table, keys, row, found, spans)
        if difference:
            return difference, count
        count += 1
    return None, count


def _row_difference(table, keys, a, b, spans) -> str | None:
    for column in a.keys():
        if encode_value(a[column]) != encode_value(b[column]) or type(a[column]) is not type(b[column]):
            return (f"{table} row {_named(a, keys)}: {column} is {b[column]!r} in the database, "
                    f"{a[column]!r} in the record ({_file_of(table, a, spans)})")
    return None


def _beyond_record(record, mine, table, keys, cols, top, finished) -> int | str:
    """Return how many rows the database holds after the record, or the first that cannot be new."""
    if top is not None:
        rows = mine.execute(f'SELECT * FROM "{table}" WHERE "id" > {int(top)} ORDER BY "id"').fetchall()
    else:
        have = {_key(r, keys) for r in record.execute(f'SELECT * FROM "{table}"')}
        rows = [r for r in mine.execute(f'SELECT * FROM "{table}"') if _key(r, keys) not in have]
    for row in rows:
        if "run_id" in cols and table != "run_finishes" and row["run_id"] in finished:
            return (f"{table} row {_named(row, keys)} of the database is not in the record, yet its run "
                    f"{row['run_id']} finished in the record: it was added after its run ended")
    return len(rows)


def _key(row, keys) -> tuple:
    return tuple((0, v) if isinstance(v, (int, float)) else (1, str(v)) for v in (row[k] for k in keys))


def _named(row, keys) -> str:
    return ", ".join(f"{k}={row[k]!r}" for k in keys)


def _file_of(table: str, row, spans) -> str:
    if "id" not in row.keys() or not isinstance(row["id"], int):
        return "the record"
    for through, path in spans:
        if row["id"] <= through.get(table, 0):
            return str(path)
    return "the record"
