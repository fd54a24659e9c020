"""Checks every export file's whole content, not only its header: the newest as much as the oldest.

A file's SHA-256 is vouched for by the next file's `previous_sha256`; the
newest has no next file, so its content is checked here line by line (every
line JSON, the rows it holds those its header counts, its ids inside the range
its header claims) and its hash against the head the database was last in sync
with. Signatures and timestamps (collector/evidence/) vouch for it from outside.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from collector.record.fileformat import (
    ENTRY_TABLE, ExportError, file_sha256, is_listing, listing_size, read_text,
)
from collector.record.folder import batches, chain, continues


@dataclass
class FileFacts:
    """One export file as checked: its path, header, SHA-256, and rows per table."""

    path: Path
    header: dict
    sha256: str
    rows: dict[str, int] = field(default_factory=dict)


def check_folder(out_dir: str | Path | list, *, tail: bool = False) -> list[FileFacts]:
    """Return every export file's facts after checking its content and its place in the chain.

    Given several folders (the record repositories of successive periods,
    oldest first), checks the chain across them (folder.chain). A first
    folder that continues another, and the files present of a folder checked
    as a `tail` (a sparse checkout of its newest days), are checked from
    their first file, whose own link back is taken as given. Raises
    ExportError naming the first file (and line) that is wrong.
    """
    folders = [Path(f) for f in (out_dir if isinstance(out_dir, (list, tuple)) else [out_dir])]
    if tail and len(folders) != 1:
        raise ExportError("the tail of one record folder is checked at a time")
    files = batches(folders[0], tail=True) if tail else chain(folders)
    facts: list[FileFacts] = []
    previous: FileFacts | None = None
    first = tail or continues(folders[0]) is not None
    for index, path in enumerate(files):
        current = check_file(path)
        header = current.header
        seq = int(path.name[:6])
        if header.get("batch") != seq:
            raise ExportError(f"{path}: its header says batch {header.get('batch')}, its name {seq}")
        if index == 0 and first:  # what comes before it is in another repository, or not checked out
            facts.append(current)
            previous = current
            continue
        if header.get("previous_sha256") != (previous.sha256 if previous else None):
            raise ExportError(f"{path}: does not follow the file before it (SHA-256 chain broken)")
        if header.get("after") != (previous.header["through"] if previous else {}):
            raise ExportError(f"{path}: starts after ids {header.get('after')}, but the file before it "
                              f"ended at {previous.header['through'] if previous else {}}")
        facts.append(current)
        previous = current
    return facts


def check_file(path: Path) -> FileFacts:
    """Return one file's facts; raise ExportError unless every line agrees with its header."""
    try:
        text = read_text(path)
    except (OSError, EOFError, UnicodeDecodeError, ValueError) as exc:
        raise ExportError(f"{path}: unreadable ({exc})") from exc
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        raise ExportError(f"{path}: empty")
    header = _json(path, 1, lines[0])
    for key in ("format", "batch", "after", "through", "rows", "written_at"):
        if key not in header:
            raise ExportError(f"{path}: its header has no {key!r}")
    facts = FileFacts(path, header, file_sha256(path))
    last: dict[str, int] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        table, ids, count = _line_ids(path, number, _json(path, number, line))
        facts.rows[table] = facts.rows.get(table, 0) + count
        if table in header["through"] and ids:
            low = last.get(table, header["after"].get(table, 0))
            if ids[0] <= low or ids[-1] > header["through"][table]:
                raise ExportError(f"{path}:{number}: {table} id {ids[0]} is outside the file's range "
                                  f"({low}, {header['through'][table]}]")
            last[table] = ids[-1]
    if facts.rows != header["rows"]:
        raise ExportError(f"{path}: holds rows {facts.rows}, its header says {header['rows']}")
    for table, top in header["through"].items():
        if table in facts.rows and last.get(table) != top:
            raise ExportError(f"{path}: its last {table} row is {last.get(table)}, its header says {top}")
    return facts


def _json(path: Path, number: int, line: str) -> dict:
    try:
        value = json.loads(line)
    except ValueError as exc:
        raise ExportError(f"{path}:{number}: not JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise ExportError(f"{path}:{number}: not a JSON object")
    return value


def _line_ids(path: Path, number: int, line: dict) -> tuple[str, list[int], int]:
    """Return (table, the ids the line holds in order, rows it stands for)."""
    try:
        if is_listing(line):
            size = listing_size(line)
            return ENTRY_TABLE, [line["first_id"], line["first_id"] + size - 1], size
        row = line["r"] if "r" in line else line["u"]
        ident = row.get("id")
        return line["t"], [ident] if isinstance(ident, int) and "r" in line else [], 1
    except (KeyError, TypeError, IndexError, AttributeError) as exc:
        raise ExportError(f"{path}:{number}: not a record line ({type(exc).__name__}: {exc})") from exc
