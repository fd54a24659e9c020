"""The format of the committed record: append-only JSON-lines files, one per export, by day.

The SQLite database is rebuilt from these files; it is never committed. Each
export writes one new file, `YYYY/MM/DD/NNNNNN.jsonl.bz2` (UTC day of writing,
sequence number), holding every row added or changed since the previous file,
and never touches a file written before. Git then only ever adds files, so the
repository grows by what the record grew by, and no file approaches GitHub's
100 MB limit (an hour of a 40-outlet run is a few MB).

The files are bzip2-compressed JSON lines (`bzcat FILE | head`; uncompressed
`.jsonl` files, as the first exports wrote them, are read too). Git stores
each file zlib-compressed and cannot relate one hour's new rows to another's,
so the record's size in the repository is what each file compresses to:
bzip2 makes the record about a quarter smaller than git's own compression,
and a year at the target load within GitHub's recommended 5 GB
(bench/storage_growth.py). The chain hashes the files as stored.

Line 1 of a file is its header: the sequence number, the previous file's
SHA-256 (a hash chain: a file changed or dropped later breaks it), the
last row id of every append-only table before and after this file, and a
digest of each table's last row, so an export refuses a database that does
not continue this record. Every other line is one of:

  {"t": table, "r": {...}}    a row inserted
  {"t": table, "u": {...}}    a state row (capture queue, outlets) as it now is
  {"t": "listing_entries", "listing_id": L, "first_id": F, "base": B, "parts": [...]}
                              one listing's entries: a part [p, n] repeats n
                              entries of listing B from its position p, a part
                              {...} is an entry written out

A value {"$same": id} repeats the value of that column in row `id` of the same
table (recheck snapshots of unchanged pages, the settings of every run);
{"$b64": "..."} is a BLOB. Feeds list the same entries hour after hour and
most revisits find the page unchanged: written out, those repetitions would
be nine tenths of the record (bench/storage_growth.py measures it).
"""

from __future__ import annotations

import bz2
import hashlib
import io
import json
from pathlib import Path
from typing import IO, Any, Iterator

from collector.errors import TakedownWatchError
from collector.record import schema
from collector.record.values import decode_value, encode_value  # noqa: F401 (the line format's, re-exported)


FORMAT = 1
# Append-only tables whose `id` grows with every insert: exported by id.
APPEND_BY_ID = tuple(t for t in dict.fromkeys(("runs", *schema.APPEND_ONLY_TABLES, "warc_files"))
                     if t != "run_finishes")
# Written in this order, so a reader of one file meets a run before its rows.
ORDER = ("outlet_groups", "outlets", "runs", "request_intents", "requests", "source_probes", "sources",
         "listings", "listing_entries", "articles", "article_urls", "snapshots", "capture_attempts", "checks",
         "comparisons", "events", "archive_submissions", "vantage_differences", "capture_queue", "run_finishes",
         "warc_files")
BOOKKEEPING_PREFIX = "export_"  # export_head, export_shadow_<table>, export_written: the export's own state
DERIVED_PREFIX = "fold_"  # state folded forward from the rows, never an observation: the record's rows make it
# again (record/fold.py, fold_keys.py by triggers; publish/tallies.py by watermark, where figures are read)
SYNC_PREFIX = "sync_"  # how a database came in sync with the record (sync_merged: a merge of every stream)
PRUNE_PREFIX = "prune_"  # what a pruning left out and kept instead (prune_state, prune_dormant, ...)
# Never exported: a table whose name starts with one of these is a database's own, not the record's.
NOT_RECORDED = (BOOKKEEPING_PREFIX, DERIVED_PREFIX, SYNC_PREFIX, PRUNE_PREFIX)
# Long values that repeat an earlier row's are written as {"$same": id}:
# column -> the column whose equal value makes a row "earlier" (None: any row).
REPEATS = {
    "snapshots": {"text": "article_id", "headline": "article_id", "byline": "article_id",
                  "final_url": "article_id", "canonical_url": "article_id", "extractor_info": None},
    "checks": {"url": "article_id"},
    "runs": {"settings": None},
}
REPEAT_MIN_CHARS = 48  # a shorter value costs less written out than as a reference
SUFFIX = ".jsonl.bz2"  # what an export writes; a plain ".jsonl" is read as well
ENTRY_TABLE = "listing_entries"  # written one line per listing, as parts
ENTRY_FIXED = ("id", "listing_id", "position")  # an entry's columns that its line does not repeat


class ExportError(TakedownWatchError):
    """The export folder and the database do not agree, or a file in it is damaged."""


# -- values ---------------------------------------------------------------------

def repeated_id(value: Any) -> int | None:
    """Return the row id a {"$same": id} value repeats, or None for a value written out."""
    if isinstance(value, dict) and "$same" in value:
        return value["$same"]
    return None


def dumps(obj: Any) -> str:
    """Return the one-line JSON the record writes (UTF-8 kept, no spaces)."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def row_digest(row: dict) -> str:
    """Return a short digest of a row's values, for comparing it with what was exported."""
    text = dumps({k: encode_value(v) for k, v in row.items()})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


# -- lines ----------------------------------------------------------------------

def row_line(table: str, row: dict, *, state: bool = False, same: dict[str, int] | None = None) -> str:
    """Return the line of one row: "r" inserted, "u" (state) as it now is; `same` columns as references."""
    values = {k: ({"$same": same[k]} if same and k in same else encode_value(v)) for k, v in row.items()}
    return dumps({"t": table, "u" if state else "r": values})


def listing_line(listing_id: int, first_id: int, base_id: int | None, parts: list) -> str:
    """Return the line of one listing's entries (see the module docstring for parts)."""
    return dumps({"t": ENTRY_TABLE, "listing_id": listing_id, "first_id": first_id,
                  "base": base_id, "parts": parts})


def listing_parts(values: list[tuple], base: list[tuple], content: list[str]) -> list:
    """Return the parts that write `values` (entries' content) as runs of `base` where they repeat it."""
    where: dict[tuple, int] = {}
    for position, value in enumerate(base):
        where.setdefault(value, position)
    parts: list[Any] = []
    i = 0
    while i < len(values):
        j = where.get(values[i])
        if j is None:
            parts.append({c: encode_value(v) for c, v in zip(content, values[i])})
            i += 1
            continue
        n = 1
        while i + n < len(values) and j + n < len(base) and values[i + n] == base[j + n]:
            n += 1
        parts.append([j, n])
        i += n
    return parts


def is_listing(line: dict) -> bool:
    """Return True for a line of one listing's entries written as parts."""
    return "parts" in line


def listing_size(line: dict) -> int:
    """Return how many entries a listing line stands for."""
    return sum(p[1] if isinstance(p, list) else 1 for p in line["parts"])


def listing_entries(line: dict, base_size: int, content: list[str]) -> Iterator[tuple[int, int, int | tuple]]:
    """Yield (id, position, base position or content values) for every entry of a listing line.

    Raises ExportError for a part that repeats entries the base listing lacks.
    """
    position = 0
    for part in line["parts"]:
        if isinstance(part, list):
            start, n = part
            if start < 0 or n < 1 or start + n > base_size:
                raise ExportError(f"listing {line['listing_id']} repeats entries listing {line['base']} lacks")
            for offset in range(n):
                yield line["first_id"] + position, position, start + offset
                position += 1
        else:
            yield line["first_id"] + position, position, tuple(decode_value(part.get(c)) for c in content)
            position += 1


def row_of(line: dict) -> tuple[str, bool, dict]:
    """Return (table, is a state row, values) of a row line; values still hold any {"$same"} references."""
    state = "u" in line
    row = line["u"] if state else line["r"]
    return line["t"], state, {k: (v if repeated_id(v) is not None else decode_value(v)) for k, v in row.items()}


# -- files ----------------------------------------------------------------------

def file_sha256(path: Path) -> str:
    """Return the hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def open_text(path: Path) -> IO[str]:
    """Return an export file opened for reading its lines (bzip2 undone)."""
    if path.name.endswith(".bz2"):
        return bz2.open(path, "rt", encoding="utf-8", newline="\n")
    return open(path, encoding="utf-8", newline="\n")


def read_text(path: Path) -> str:
    """Return the whole text of an export file."""
    with open_text(path) as fh:
        return fh.read()


def file_bytes(text: str, path: Path) -> bytes:
    """Return what an export file named path holds for the text (bzip2, level 9, deterministic)."""
    data = text.encode("utf-8")
    return bz2.compress(data, 9) if path.name.endswith(".bz2") else data


def file_text(header: dict, lines: list[str]) -> str:
    """Return the text of an export file: its header line, then its row lines."""
    return "\n".join([dumps(header), *lines]) + "\n"


def read_header(path: Path) -> dict:
    """Return the header (first line) of an export file."""
    try:
        with open_text(path) as fh:
            header = json.loads(fh.readline())
    except (OSError, EOFError, ValueError) as exc:
        raise ExportError(f"{path}: cannot read its header ({exc})") from exc
    if header.get("format") != FORMAT:
        raise ExportError(f"{path}: unknown export format {header.get('format')!r}")
    return header


def read_lines(path: Path, text: str | None = None) -> Iterator[dict]:
    """Yield the lines of an export file after its header (from text, when it was read already)."""
    number = 1
    try:
        with (io.StringIO(text, newline="\n") if text is not None else open_text(path)) as fh:
            fh.readline()
            for number, line in enumerate(fh, start=2):
                if line.strip():
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise ExportError(f"{path}:{number}: not JSON ({exc})") from exc
    except (OSError, EOFError, UnicodeDecodeError) as exc:  # a truncated or damaged bzip2 stream
        raise ExportError(f"{path}: unreadable after line {number} ({exc})") from exc

