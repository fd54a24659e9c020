"""Reads one value of one row back from the record's export files: what a pruned database no longer holds.

A pruned working database (collector/collect/prune.py) leaves out rows the record
holds. When a job needs a value of one of them (a changed field's older value,
its digests in collector/record/fold_latest.py), it is read from the export file holding
the row, found by the files' id ranges: each header's `after` and `through` per
table, so a binary search reads only headers besides that one file. A value
written as {"$same": id} (collector/record/fileformat.py REPEATS: the latest
earlier row of the same article, or of the table) is the same column of that
row, read the same way; a chain is followed to its end.

Nothing here guesses: a row in no file checked out, or a chain that does not end,
is "not found", and the caller says why it cannot compare (and tries again).
Only the tables exported by id are read (their rows are "r" lines, and each
header gives their id range), and of those not the listings' entries, which
are written as parts of their listing's line (ENTRY_TABLE). A state table's
rows (the capture queue, outlets: "u" lines, keyed otherwise) are not here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from collector.record.fileformat import ENTRY_TABLE, ExportError, read_header, read_lines, repeated_id, row_of
from collector.record.folder import batches

MAX_CHAIN = 64  # {"$same"} references followed before giving up (each names an earlier row: a chain ends)
MISSING = object()  # what `value` returns for a row or column the record checked out here does not hold


def record_files(folder: str | Path) -> list[Path]:
    """Return the folder's export files in order (the files a job's checkout holds: the period's tail)."""
    return batches(folder, tail=True)


def file_holding(files: list[Path], table: str, row_id: int) -> Path | None:
    """Return the file whose `table` id range holds row_id (a binary search on headers), or None."""
    low, high = 0, len(files) - 1
    while low <= high:
        middle = (low + high) // 2
        header = read_header(files[middle])
        after = header.get("after", {}).get(table, 0)
        through = header.get("through", {}).get(table, 0)
        if row_id <= after:
            high = middle - 1
        elif row_id > through:
            low = middle + 1
        else:
            return files[middle]
    return None


def row(files: list[Path], table: str, row_id: int) -> dict | None:
    """Return the row as its line holds it ({"$same"} references left as they are), or None when not found."""
    if table == ENTRY_TABLE:
        raise ExportError(f"{ENTRY_TABLE} rows are written as parts of their listing's line, not read one by one")
    path = file_holding(files, table, row_id)
    if path is None:
        return None
    for line in read_lines(path):
        if line.get("t") == table and "r" in line and line["r"].get("id") == row_id:
            return row_of(line)[2]
    return None


def values(files: list[Path], table: str, row_id: int, columns) -> dict[str, Any]:
    """Return these columns' values of the row (each as `value` gives it), its line read once."""
    found = row(files, table, row_id)
    out = {}
    for column in columns:
        same = repeated_id(found.get(column)) if found is not None else None
        out[column] = (MISSING if found is None or column not in found else found[column] if same is None
                       else value(files, table, same, column))
    return out


def value(files: list[Path], table: str, row_id: int, column: str) -> Any:
    """Return the column's value of the row, a {"$same"} reference followed to the value; MISSING when not found."""
    for _ in range(MAX_CHAIN + 1):
        found = row(files, table, row_id)
        if found is None or column not in found:
            return MISSING
        same = repeated_id(found[column])
        if same is None:
            return found[column]
        row_id = same
    return MISSING
