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

import base64
import bz2
import hashlib
import io
import json
import re
import sqlite3
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Iterator

from . import schema
from .errors import TakedownWatchError


FORMAT = 1
# Append-only tables whose `id` grows with every insert: exported by id.
APPEND_BY_ID = tuple(t for t in ("runs", *schema.APPEND_ONLY_TABLES, "warc_files") if t != "run_finishes")
# Written in this order, so a reader of one file meets a run before its rows.
ORDER = ("outlet_groups", "outlets", "runs", "requests", "source_probes", "sources", "listings",
         "listing_entries", "articles", "article_urls", "snapshots", "checks", "events",
         "archive_submissions", "capture_queue", "run_finishes", "warc_files")
BOOKKEEPING_PREFIX = "export_"  # export_head, export_shadow_<table>: the export's own state
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
_BATCH = re.compile(r"^(\d{4})/(\d{2})/(\d{2})/(\d{6})\.jsonl(?:\.bz2)?$")
_NAME = re.compile(r"(\d{6})\.jsonl(?:\.bz2)?")
_WARC_DAY = re.compile(r"^(\d{4})/(\d{2})/(\d{2})/")


class ExportError(TakedownWatchError):
    """The export folder and the database do not agree, or a file in it is damaged."""


@dataclass
class ExportResult:
    """What one export wrote: the file (None when nothing was new) and rows per table."""

    path: Path | None
    rows: dict[str, int] = field(default_factory=dict)
    warc_files: list[str] = field(default_factory=list)
    missing_warc_files: list[str] = field(default_factory=list)


# -- values and digests ---------------------------------------------------------

def _encode(value: Any) -> Any:
    if isinstance(value, bytes):
        return {"$b64": base64.b64encode(value).decode("ascii")}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict) and "$b64" in value:
        return base64.b64decode(value["$b64"])
    return value


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def row_digest(row: dict) -> str:
    """Return a short digest of a row's values, for comparing it with what was exported."""
    text = _dumps({k: _encode(v) for k, v in row.items()})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def file_sha256(path: Path) -> str:
    """Return the hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


# -- the tables -----------------------------------------------------------------

def record_tables(conn: sqlite3.Connection) -> list[str]:
    """Return the tables the record is made of, in export order (no FTS, no bookkeeping)."""
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' "
                        "AND name NOT LIKE 'sqlite_%'").fetchall()
    virtual = [name for name, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL")]
    names = [name for name, _ in rows if name not in virtual and not name.startswith(BOOKKEEPING_PREFIX)
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


def _by_id(conn: sqlite3.Connection, table: str) -> bool:
    """Return True for an append-only table keyed by a growing integer `id`."""
    return table in APPEND_BY_ID and key_columns(conn, table) == ["id"]


# -- reading the export folder --------------------------------------------------

def batches(out_dir: str | Path) -> list[Path]:
    """Return the export files in sequence order; raise if the sequence has a gap or a double."""
    root = Path(out_dir)
    found = []
    for path in root.glob("[0-9][0-9][0-9][0-9]/[0-9][0-9]/[0-9][0-9]/*.jsonl*"):
        match = _BATCH.match(path.relative_to(root).as_posix())
        if match:
            found.append((int(match.group(4)), path))
    found.sort()
    for expected, (seq, path) in enumerate(found, start=1):
        if seq != expected:
            raise ExportError(f"export file {path} has sequence {seq}, expected {expected}: "
                              "a file is missing or two exports forked the record")
    return [path for _, path in found]


def last_batch(out_dir: str | Path) -> Path | None:
    """Return the newest export file, found by descending the date folders (no full scan)."""
    level = [Path(out_dir)]
    for pattern in (r"\d{4}", r"\d{2}", r"\d{2}"):
        level = [d for parent in level if parent.is_dir()
                 for d in sorted(parent.iterdir(), reverse=True) if d.is_dir() and re.fullmatch(pattern, d.name)]
    for day in level:  # newest day first; a day folder may hold only partial files
        names = sorted((f for f in day.iterdir() if _NAME.fullmatch(f.name)),
                       key=lambda f: int(f.name[:6]), reverse=True)
        if names:
            return names[0]
    return None


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


def _lines(path: Path, text: str | None = None) -> Iterator[dict]:
    """Yield the rows of an export file after its header (from text, when it was read already)."""
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


def read_ahead(paths: list[Path]) -> Iterator[tuple[Path, str | ExportError]]:
    """Yield (path, its text) in order, decompressing the next file in a thread meanwhile.

    bzip2 releases the interpreter while it works, so a rebuild's inserts and
    the next file's decompression overlap. An unreadable file yields its error.
    """
    def read(path: Path) -> str | ExportError:
        try:
            return read_text(path)
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            return ExportError(f"{path}: unreadable ({exc})")

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="record-read") as pool:
        ahead = pool.submit(read, paths[0]) if paths else None
        for index, path in enumerate(paths):
            text = ahead.result()
            ahead = pool.submit(read, paths[index + 1]) if index + 1 < len(paths) else None
            yield path, text


def verify(out_dir: str | Path) -> int:
    """Return the number of export files after checking their chain; raise ExportError if broken."""
    previous_sha, through = None, {}
    files = batches(out_dir)
    for path in files:
        header = read_header(path)
        if header.get("previous_sha256") != previous_sha:
            raise ExportError(f"{path}: does not follow the file before it (SHA-256 chain broken)")
        if header.get("after") != through:
            raise ExportError(f"{path}: starts after ids {header.get('after')}, "
                              f"but the file before it ended at {through}")
        previous_sha, through = file_sha256(path), header["through"]
    return len(files)
