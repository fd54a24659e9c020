"""Writes the committed record: each export one new file of the rows added since the last.

The line format is collector/record/fileformat.py, the folder and its chain
collector/record/folder.py, what was last exported collector/record/shadows.py;
rebuilding a database from the files is collector/record/rebuild.py.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from collector import settings
from collector.clock import Clock, iso_seconds
from collector.record import fold_latest, fold_visit, references, schema, shadows, streams, written
from collector.record.fileformat import (
    ENTRY_FIXED, ENTRY_TABLE, FORMAT, REPEAT_MIN_CHARS, REPEATS, SUFFIX, ExportError,
    file_sha256, file_text, listing_line, listing_parts, read_header, row_digest, row_line,
)
from collector.record.folder import batches, day_of, last_batch, write_new
from collector.record.store import Store
from collector.record.tables import appended_by_id, columns, record_tables
from collector.record.streams import next_id


@dataclass
class ExportResult:
    """What one export wrote: the file (None when nothing was new) and rows per table."""

    path: Path | None
    rows: dict[str, int] = field(default_factory=dict)
    warc_files: list[str] = field(default_factory=list)
    missing_warc_files: list[str] = field(default_factory=list)


def export_new(store: Store, out_dir: str | Path, *, warc_dir: str | Path | None = None,
               now: datetime | None = None) -> ExportResult:
    """Return what was written after exporting every row added or changed since the last export.

    Writes one new file, or none when nothing changed; never rewrites one.
    With warc_dir, first records the size and SHA-256 of every WARC file the
    new requests point at (table warc_files), so the file is exported with them.
    """
    if getattr(store, "tampering", None):
        raise ExportError(f"export refused: the database was tampered with ({'; '.join(store.tampering)}). "
                          "Compare it with the record (export verify --db), then rebuild it from the record "
                          "or restore its triggers (export restore-triggers --operator NAME --reason TEXT)")
    out = Path(out_dir)
    now = now or Clock().now()
    last = last_batch(out)
    header = read_header(last) if last else {"batch": 0, "through": {}, "boundary": {}}
    previous_sha = file_sha256(last) if last else None
    result = ExportResult(None)
    with store.transaction() as conn:
        tables = record_tables(conn)
        stream = check_stream(conn, header, last)
        check_continues(conn, header, last)
        check_not_elsewhere(conn, out, last)
        own = _own_range(stream)
        if warc_dir is not None:
            _record_warc_files(conn, max(header["through"].get("requests", 0), own[0]), own[1], Path(warc_dir),
                               now, result)
        if not _in_sync(conn, out, last, previous_sha):
            shadows.fill_from_files(conn, [t for t in tables if not appended_by_id(conn, t)], batches(out))
        changed: dict[str, list[dict]] = {}
        lines, through, boundary = [], {}, {}
        for table in tables:
            if appended_by_id(conn, table):
                after = header["through"].get(table, 0)
                count, top, top_digest = _append_lines(conn, table, after, lines, own)
                through[table] = top if count else after
                if through[table]:
                    boundary[table] = top_digest if count else header["boundary"][table]
            else:
                changed[table] = shadows.changed_rows(conn, table)
                lines.extend(shadows.changed_lines(conn, table, changed[table]))
                count = len(changed[table])
            if count:
                result.rows[table] = count
        if not lines:
            if last is not None:  # the shadows now hold what the folder holds
                shadows.set_head(conn, last.relative_to(out).as_posix(), previous_sha)
            return result
        references.check(conn, header["through"], own, changed)  # what a pruned database cannot check as it writes
        seq = header["batch"] + 1
        # A clock behind the last file's day (a replay with --now) must not file a later export earlier.
        day = max(f"{now:%Y/%m/%d}", last.relative_to(out).as_posix()[:10] if last else "")
        relative = f"{day}/{seq:06d}{SUFFIX}"
        head = {"format": FORMAT, "record": "takedownwatch", "batch": seq,
                "written_at": iso_seconds(now), "software": settings.__version__,
                "schema_version": len(schema.MIGRATIONS), "previous_sha256": previous_sha,
                "after": dict(header["through"]), "through": through, "boundary": boundary,
                "rows": result.rows}
        if stream:  # the default stream's header is as it always was
            head["stream"] = stream
        path = write_new(out / relative, file_text(head, lines))
        for table, rows in changed.items():
            shadows.upsert(conn, table, rows)
        sha = file_sha256(path)
        shadows.set_head(conn, relative, sha)
        written.note(conn, relative, sha, head["written_at"])  # what its job may sign (evidence/signing.py)
        result.path = path
    return result


def check_stream(conn, header: dict, last: Path | None) -> str | None:
    """Return the database's stream; raise unless the folder's last file is that stream's (or there is none)."""
    stream = streams.stream_of(conn)
    if stream == streams.MERGED:
        raise ExportError("this database merges every stream of the record: it is read, never exported; "
                          "each stream exports from its own working database")
    if last is not None and header.get("stream") != stream:
        raise ExportError(f"{last} belongs to stream {header.get('stream') or '(default)'}, the database to "
                          f"stream {stream or '(default)'}: each stream exports to its own folder "
                          f"(streams/NAME inside the record folder)")
    return stream


def check_continues(conn, header: dict, last: Path | None) -> None:
    """Raise unless the database holds, at each table's last exported id, the row exported there."""
    for table, top in header["through"].items():
        if not top:
            continue
        try:
            row = conn.execute(f'SELECT * FROM "{table}" WHERE id = ?', (top,)).fetchone()
        except sqlite3.OperationalError:
            row = None
        if row is None or row_digest(dict(row)) != header["boundary"].get(table):
            raise ExportError(f"the database does not continue this record: its {table} row {top} "
                              f"is not the one exported in {last}")


def check_not_elsewhere(conn, out: Path, last: Path | None) -> None:
    """Raise for an empty folder when the database was last in sync with a file of another one.

    Exported there, the whole database would become a second record with
    its own chain from file 1: the sign of a new year's record repository
    that was not rolled over (collector/record/rollover.py).
    """
    head = shadows.head(conn)
    if last is None and head is not None:
        raise ExportError(f"{out} holds no export file, but the database continues the record up to {head[0]}: "
                          "a new record repository starts from the last file of the one before "
                          "(`python -m collector export rollover`), never from nothing")


def _own_range(stream: str | None) -> tuple[int, int]:
    """Return (low, high): the stream's ids are above low, up to high.

    A database holds one stream's rows, or (the archive job's, which follows
    every stream: collector/record/follow.py) every stream's and writes one:
    only that one's rows are exported, and repeat only that one's.
    """
    low = streams.base(stream)
    return low, low + settings.STREAM_ID_RANGE


def _append_lines(conn, table: str, after: int, lines: list[str],
                  own: tuple[int, int] = (0, settings.STREAM_ID_RANGE)) -> tuple[int, int, str | None]:
    """Add the lines of the stream's rows with id > after; return (count, last id, digest of the last row)."""
    low, high = own
    if table == ENTRY_TABLE:
        return _entry_lines(conn, after, lines, own)
    scopes: dict[str | None, list[str]] = {}
    for column, scope in REPEATS.get(table, {}).items():
        scopes.setdefault(scope, []).append(column)
    latest: dict[tuple, dict] = {}  # (scope, its value) -> {"id": ..., column: value} of the latest row
    count, top, last = 0, after, None
    for row in conn.execute(f'SELECT * FROM "{table}" WHERE id > ? AND id <= ? ORDER BY id',
                            (max(after, low), high)):
        row = last = dict(row)
        same = {}
        for scope, cols in scopes.items():
            before = _latest_before(conn, table, row, scope, cols, latest, low)
            for column in cols:
                value = row[column]
                if before and isinstance(value, str) and len(value) >= REPEAT_MIN_CHARS and _repeats(before, column,
                                                                                                     value):
                    same[column] = before["id"]
        lines.append(row_line(table, row, same=same))
        count, top = count + 1, row["id"]
    return count, top, row_digest(last) if last else None


def _repeats(before: dict, column: str, value: str) -> bool:
    """Return True when `value` is the earlier row's: as held, or by its digest (record/fold_latest.py, fold_visit)."""
    if "facts" in before:
        return before["facts"].same(column, value)
    if "url_sha256" in before:  # a check's address (record/fold_visit.py)
        return fold_visit.url_digest(value) == before["url_sha256"]
    return value == before[column]


def _latest_before(conn, table: str, row: dict, scope: str | None, cols: list[str], latest: dict, low: int = 0):
    """Return the latest earlier row of the stream in the scope (its id and cols, or the facts of an article's
    snapshot: record/fold_latest.py, whether or not the row is held), and make `row` the latest."""
    key = (scope, row[scope] if scope else None)
    before = latest.get(key)
    if before is None and table == "snapshots" and scope == "article_id":
        found = fold_latest.before_id(conn, row["article_id"], row["id"], low)
        before = None if found is None else {"id": found.snapshot_id, "facts": found.facts}
    elif before is None and table == "checks" and scope == "article_id":
        found = fold_visit.check_before(conn, row["article_id"], row["id"], low)
        before = None if found is None else {"id": found[0], "url_sha256": found[1]}
    elif before is None:
        where, params = (f'AND "{scope}" = ?', [row[scope]]) if scope else ("", [])
        names = ", ".join(f'"{c}"' for c in cols)
        found = conn.execute(f'SELECT id, {names} FROM "{table}" WHERE id < ? AND id > ? {where} '
                             "ORDER BY id DESC LIMIT 1", [row["id"], low, *params]).fetchone()
        before = dict(found) if found else None
    latest[key] = {"id": row["id"], **{c: row[c] for c in cols}}
    return before


def _entry_lines(conn, after: int, lines: list[str], own: tuple[int, int]) -> tuple[int, int, str | None]:
    """Add one line per listing of new entries, its repetitions of the listing before written as ranges."""
    content = [c for c in columns(conn, ENTRY_TABLE) if c not in ENTRY_FIXED]
    rows = conn.execute(f"SELECT * FROM {ENTRY_TABLE} WHERE id > ? AND id <= ? ORDER BY id",
                        (max(after, own[0]), own[1])).fetchall()
    count, top, digest = 0, after, None
    bases: dict[tuple, tuple[int, list[tuple]]] = {}
    start = 0
    while start < len(rows):
        end = start
        while end < len(rows) and rows[end]["listing_id"] == rows[start]["listing_id"]:
            end += 1
        group = [dict(r) for r in rows[start:end]]
        lines.extend(_encode_listing(conn, group, content, bases, own[0]))
        count += len(group)
        top, digest = group[-1]["id"], group[-1]
        start = end
    return count, top, row_digest(digest) if digest else None


def _encode_listing(conn, group: list[dict], content: list[str], bases: dict, low: int) -> list[str]:
    listing_id, first = group[0]["listing_id"], group[0]["id"]
    contiguous = all(r["id"] == first + i and r["position"] == i for i, r in enumerate(group))
    if not contiguous:  # not the shape record_listing writes: keep every row as it is
        return [row_line(ENTRY_TABLE, r) for r in group]
    values = [tuple(r[c] for c in content) for r in group]
    listing = conn.execute("SELECT outlet_id, url FROM listings WHERE id = ?", (listing_id,)).fetchone()
    source = (listing["outlet_id"], listing["url"]) if listing else None
    base_id, base = bases.get(source) or _base_listing(conn, listing_id, source, content, low)
    if source:
        bases[source] = (listing_id, values)
    parts = listing_parts(values, base, content)
    return [listing_line(listing_id, first, base_id if any(isinstance(p, list) for p in parts) else None,
                         parts)]


def _base_listing(conn, listing_id: int, source, content: list[str], low: int) -> tuple[int | None, list[tuple]]:
    if source is None:
        return None, []
    # A listing answered 304 holds no entry rows: the listing it repeats is the base.
    row = conn.execute("SELECT COALESCE(entries_of, id) FROM listings WHERE outlet_id = ? AND url = ? "
                       "AND id < ? AND id > ? ORDER BY id DESC LIMIT 1", (*source, listing_id, low)).fetchone()
    if row is None:
        return None, []
    quoted = ", ".join(f'"{c}"' for c in content)
    entries = conn.execute(f"SELECT {quoted} FROM {ENTRY_TABLE} WHERE listing_id = ? AND id IS NOT NULL "
                           "ORDER BY position", (row[0],)).fetchall()
    return row[0], [tuple(e) for e in entries]


def _in_sync(conn, out: Path, last: Path | None, last_sha: str | None) -> bool:
    """Return True when the database was last brought in sync with the folder's last file."""
    head = shadows.head(conn)
    if last is None:
        return head is None
    return head == (last.relative_to(out).as_posix(), last_sha)


def _record_warc_files(conn, after: int, high: int, warc_dir: Path, now: datetime, result: ExportResult) -> None:
    """Insert a warc_files row for every WARC file the stream's new requests point at, not yet recorded as it is."""
    names = [r[0] for r in conn.execute(
        "SELECT DISTINCT warc_file FROM requests WHERE id > ? AND id <= ? AND warc_file IS NOT NULL "
        "ORDER BY warc_file", (after, high))]
    for name in names:
        path = warc_dir / name
        if not path.is_file():
            result.missing_warc_files.append(name)
            continue
        sha = file_sha256(path)
        if conn.execute("SELECT 1 FROM warc_files WHERE name = ? AND sha256 = ?", (name, sha)).fetchone():
            continue
        conn.execute(
            "INSERT INTO warc_files (id, name, bytes, sha256, recorded_at, release_tag, asset_name) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (next_id(conn, "warc_files"), name, path.stat().st_size, sha, iso_seconds(now), release_tag(name, now),
             Path(name).name))
        result.warc_files.append(name)


def release_tag(warc_name: str, now: datetime) -> str:
    """Return the GitHub release tag a WARC file is published under: warc-YYYY-MM-DD."""
    day = day_of(warc_name)
    return f"warc-{'-'.join(day) if day else f'{now:%Y-%m-%d}'}"
