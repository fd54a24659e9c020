"""The record as committed to git: append-only JSON-lines files, one per export, by day.

The SQLite database is rebuilt from these files; it is never committed. Each
export writes one new file, `YYYY/MM/DD/NNNNNN.jsonl` (UTC day of writing,
sequence number), holding every row added or changed since the previous file,
and never touches a file written before. Git then only ever adds files, so the
repository grows by what the record grew by, and no file approaches GitHub's
100 MB limit (an hour of a 40-outlet run is a few MB).

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
import hashlib
import json
import os
import re
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import click

from . import schema, settings
from .errors import TakedownWatchError
from .store import Store

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
_BATCH = re.compile(r"^(\d{4})/(\d{2})/(\d{2})/(\d{6})\.jsonl$")
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
             and not any(name.startswith(v + "_") for v in virtual)]
    known = [t for t in ORDER if t in names]
    return known + sorted(set(names) - set(known))


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    """Return a table's column names in their declared order."""
    return [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]


def key_columns(conn: sqlite3.Connection, table: str) -> list[str]:
    """Return a table's primary-key columns (the rowid when it declares none)."""
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
    for path in root.glob("[0-9][0-9][0-9][0-9]/[0-9][0-9]/[0-9][0-9]/*.jsonl"):
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
        names = sorted((f for f in day.iterdir() if re.fullmatch(r"\d{6}\.jsonl", f.name)), reverse=True)
        if names:
            return names[0]
    return None


def read_header(path: Path) -> dict:
    """Return the header (first line) of an export file."""
    with open(path, encoding="utf-8") as fh:
        header = json.loads(fh.readline())
    if header.get("format") != FORMAT:
        raise ExportError(f"{path}: unknown export format {header.get('format')!r}")
    return header


def _lines(path: Path) -> Iterator[dict]:
    with open(path, encoding="utf-8") as fh:
        fh.readline()
        for number, line in enumerate(fh, start=2):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ExportError(f"{path}:{number}: not JSON ({exc})") from exc


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


# -- export ---------------------------------------------------------------------

def export_new(store: Store, out_dir: str | Path, *, warc_dir: str | Path | None = None,
               now: datetime | None = None) -> ExportResult:
    """Return what was written after exporting every row added or changed since the last export.

    Writes one new file, or none when nothing changed; never rewrites one.
    With warc_dir, first records the size and SHA-256 of every WARC file the
    new requests point at (table warc_files), so the file is exported with them.
    """
    out = Path(out_dir)
    now = now or datetime.now(timezone.utc)
    last = last_batch(out)
    header = read_header(last) if last else {"batch": 0, "through": {}, "boundary": {}}
    previous_sha = file_sha256(last) if last else None
    result = ExportResult(None)
    with store.transaction() as conn:
        tables = record_tables(conn)
        _check_continues(conn, header, last)
        if warc_dir is not None:
            _record_warc_files(conn, header["through"].get("requests", 0), Path(warc_dir), now, result)
        if not _level(conn, out, last, previous_sha):
            _shadows_from_files(conn, tables, batches(out))
        changed: dict[str, list[dict]] = {}
        lines, through, boundary = [], {}, {}
        for table in tables:
            if _by_id(conn, table):
                after = header["through"].get(table, 0)
                count, top, top_digest = _append_lines(conn, table, after, lines)
                through[table] = top if count else after
                if through[table]:
                    boundary[table] = top_digest if count else header["boundary"][table]
            else:
                changed[table] = _keyed_lines(conn, table, lines)
                count = len(changed[table])
            if count:
                result.rows[table] = count
        if not lines:
            if last is not None:  # the shadows now hold what the folder holds
                _set_head(conn, last.relative_to(out).as_posix(), previous_sha)
            return result
        seq = header["batch"] + 1
        # A clock behind the last file's day (a replay with --now) must not file a later export earlier.
        day = max(f"{now:%Y/%m/%d}", last.relative_to(out).as_posix()[:10] if last else "")
        relative = f"{day}/{seq:06d}.jsonl"
        head = {"format": FORMAT, "record": "takedownwatch", "batch": seq,
                "written_at": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "software": settings.__version__,
                "schema_version": len(schema.MIGRATIONS), "previous_sha256": previous_sha,
                "after": dict(header["through"]), "through": through, "boundary": boundary,
                "rows": result.rows}
        path = _write_new(out / relative, [_dumps(head)] + lines)
        for table, rows in changed.items():
            _shadow_upsert(conn, table, rows)
        _set_head(conn, relative, file_sha256(path))
        result.path = path
    return result


def _check_continues(conn, header: dict, last: Path | None) -> None:
    """Raise unless the database holds, at each table's last exported id, the row exported there."""
    for table, top in header["through"].items():
        if not top:
            continue
        try:
            row = conn.execute(f'SELECT * FROM "{table}" WHERE rowid = ?', (top,)).fetchone()
        except sqlite3.OperationalError:
            row = None
        if row is None or row_digest(dict(row)) != header["boundary"].get(table):
            raise ExportError(f"the database does not continue this record: its {table} row {top} "
                              f"is not the one exported in {last}")


def _append_lines(conn, table: str, after: int, lines: list[str]) -> tuple[int, int, str | None]:
    """Add the lines of rows with id > after; return (count, last id, digest of the last row)."""
    if table == "listing_entries":
        return _entry_lines(conn, after, lines)
    scopes: dict[str | None, list[str]] = {}
    for column, scope in REPEATS.get(table, {}).items():
        scopes.setdefault(scope, []).append(column)
    latest: dict[tuple, dict] = {}  # (scope, its value) -> {"id": ..., column: value} of the latest row
    count, top, last = 0, after, None
    for row in conn.execute(f'SELECT * FROM "{table}" WHERE id > ? ORDER BY id', (after,)):
        row = last = dict(row)
        out = {k: _encode(v) for k, v in row.items()}
        for scope, cols in scopes.items():
            before = _latest_before(conn, table, row, scope, cols, latest)
            for column in cols:
                value = row[column]
                if (before and isinstance(value, str) and len(value) >= REPEAT_MIN_CHARS
                        and value == before[column]):
                    out[column] = {"$same": before["id"]}
        lines.append(_dumps({"t": table, "r": out}))
        count, top = count + 1, row["id"]
    return count, top, row_digest(last) if last else None


def _latest_before(conn, table: str, row: dict, scope: str | None, cols: list[str], latest: dict):
    """Return the latest earlier row in the scope (its id and cols), and make `row` the latest."""
    key = (scope, row[scope] if scope else None)
    before = latest.get(key)
    if before is None:
        where, params = (f'AND "{scope}" = ?', [row[scope]]) if scope else ("", [])
        names = ", ".join(f'"{c}"' for c in cols)
        found = conn.execute(f'SELECT id, {names} FROM "{table}" WHERE id < ? {where} '
                             "ORDER BY id DESC LIMIT 1", [row["id"], *params]).fetchone()
        before = dict(found) if found else None
    latest[key] = {"id": row["id"], **{c: row[c] for c in cols}}
    return before


def _entry_lines(conn, after: int, lines: list[str]) -> tuple[int, int, str | None]:
    """Add one line per listing of new entries, its repetitions of the listing before written as ranges."""
    content = [c for c in columns(conn, "listing_entries") if c not in ("id", "listing_id", "position")]
    rows = conn.execute("SELECT * FROM listing_entries WHERE id > ? ORDER BY id", (after,)).fetchall()
    count, top, digest = 0, after, None
    bases: dict[tuple, tuple[int, list[tuple]]] = {}
    start = 0
    while start < len(rows):
        end = start
        while end < len(rows) and rows[end]["listing_id"] == rows[start]["listing_id"]:
            end += 1
        group = [dict(r) for r in rows[start:end]]
        lines.extend(_encode_listing(conn, group, content, bases))
        count += len(group)
        top, digest = group[-1]["id"], group[-1]
        start = end
    return count, top, row_digest(digest) if digest else None


def _encode_listing(conn, group: list[dict], content: list[str], bases: dict) -> list[str]:
    listing_id, first = group[0]["listing_id"], group[0]["id"]
    contiguous = all(r["id"] == first + i and r["position"] == i for i, r in enumerate(group))
    if not contiguous:  # not the shape record_listing writes: keep every row as it is
        return [_dumps({"t": "listing_entries", "r": {k: _encode(v) for k, v in r.items()}}) for r in group]
    values = [tuple(r[c] for c in content) for r in group]
    listing = conn.execute("SELECT outlet_id, url FROM listings WHERE id = ?", (listing_id,)).fetchone()
    source = (listing["outlet_id"], listing["url"]) if listing else None
    base_id, base = bases.get(source) or _base_listing(conn, listing_id, source, content)
    if source:
        bases[source] = (listing_id, values)
    parts: list[Any] = []
    where = {}
    for position, value in enumerate(base):
        where.setdefault(value, position)
    i = 0
    while i < len(values):
        j = where.get(values[i])
        if j is None:
            parts.append({c: _encode(v) for c, v in zip(content, values[i])})
            i += 1
            continue
        n = 1
        while i + n < len(values) and j + n < len(base) and values[i + n] == base[j + n]:
            n += 1
        parts.append([j, n])
        i += n
    return [_dumps({"t": "listing_entries", "listing_id": listing_id, "first_id": first,
                    "base": base_id if any(isinstance(p, list) for p in parts) else None,
                    "parts": parts})]


def _base_listing(conn, listing_id: int, source, content: list[str]) -> tuple[int | None, list[tuple]]:
    if source is None:
        return None, []
    row = conn.execute("SELECT id FROM listings WHERE outlet_id = ? AND url = ? AND id < ? "
                       "ORDER BY id DESC LIMIT 1", (*source, listing_id)).fetchone()
    if row is None:
        return None, []
    quoted = ", ".join(f'"{c}"' for c in content)
    entries = conn.execute(f"SELECT {quoted} FROM listing_entries WHERE listing_id = ? "
                           "ORDER BY position", (row[0],)).fetchall()
    return row[0], [tuple(e) for e in entries]


def _shadow(table: str) -> str:
    return f"export_shadow_{table}"


def _key_select(conn, table: str) -> tuple[list[str], str]:
    keys = key_columns(conn, table)
    return keys, ('rowid AS "rowid", *' if keys == ["rowid"] else "*")


def _create_shadow(conn, table: str) -> None:
    """(Re)create the copy of a keyed table that holds its rows as last exported, keeping what it held."""
    keys, select = _key_select(conn, table)
    shadow, old = _shadow(table), _shadow(table) + "_old"
    had = columns(conn, shadow)
    if had:
        conn.execute(f'ALTER TABLE "{shadow}" RENAME TO "{old}"')
        conn.execute(f'DROP INDEX IF EXISTS "{shadow}_key"')
    conn.execute(f'CREATE TABLE "{shadow}" AS SELECT {select} FROM "{table}" WHERE 0')
    names = ", ".join(f'"{k}"' for k in keys)
    conn.execute(f'CREATE UNIQUE INDEX "{shadow}_key" ON "{shadow}" ({names})')
    if had:  # a column added or dropped by a migration: keep the exported values of the others
        common = ", ".join(f'"{c}"' for c in columns(conn, shadow) if c in had)
        conn.execute(f'INSERT INTO "{shadow}" ({common}) SELECT {common} FROM "{old}"')
        conn.execute(f'DROP TABLE "{old}"')


def _keyed_lines(conn, table: str, lines: list[str]) -> list[dict]:
    """Add a line for every keyed row that is new or (state tables) changed since exported; return them.

    A state row is written as an upsert ("u"); a row of a keyed append-only
    table (run_finishes) is only ever new ("r").
    """
    keys, select = _key_select(conn, table)
    shadow = _shadow(table)
    if columns(conn, shadow) != [*(["rowid"] if keys == ["rowid"] else []), *columns(conn, table)]:
        _create_shadow(conn, table)
    on = " AND ".join(f's."{k}" = t."{k}"' for k in keys)
    where = f's."{keys[0]}" IS NULL'
    append_only = table in schema.APPEND_ONLY_TABLES
    if not append_only:
        where += " OR NOT (" + " AND ".join(f's."{c}" IS t."{c}"' for c in columns(conn, table)) + ")"
    kind = "r" if append_only else "u"
    rows = []
    for record in conn.execute(
            f'SELECT {select.replace("*", "t.*").replace("rowid AS", "t.rowid AS")} FROM "{table}" AS t '
            f"LEFT JOIN \"{shadow}\" AS s ON {on} WHERE {where}"):
        row = dict(record)
        lines.append(_dumps({"t": table, kind: {k: _encode(v) for k, v in row.items()}}))
        rows.append(row)
    return rows


def _shadow_upsert(conn, table: str, rows: list[dict]) -> None:
    if not rows:
        return
    cols = list(rows[0])
    names = ", ".join(f'"{c}"' for c in cols)
    marks = ", ".join("?" for _ in cols)
    conn.executemany(f'INSERT OR REPLACE INTO "{_shadow(table)}" ({names}) VALUES ({marks})',
                     [[r[c] for c in cols] for r in rows])


def _level(conn, out: Path, last: Path | None, last_sha: str | None) -> bool:
    """Return True when the database was last brought level with the folder's last file."""
    head = conn.execute("SELECT batch, sha256 FROM export_head WHERE id = 1").fetchone()
    if last is None:
        return head is None
    return bool(head) and head[0] == last.relative_to(out).as_posix() and head[1] == last_sha


def _shadows_from_files(conn, tables: list[str], files: list[Path]) -> None:
    """Make every shadow hold the keyed rows as the export files hold them (read them all)."""
    keyed = [t for t in tables if not _by_id(conn, t)]
    for table in keyed:
        _create_shadow(conn, table)
    for path in files:
        for line in _lines(path):
            row = line.get("r") if "r" in line else line.get("u")
            if row is not None and line["t"] in keyed:
                _shadow_upsert(conn, line["t"], [{k: _decode(v) for k, v in row.items()}])


def _set_head(conn, batch: str, sha: str) -> None:
    conn.execute("INSERT INTO export_head (id, batch, sha256) VALUES (1, ?, ?) "
                 "ON CONFLICT(id) DO UPDATE SET batch = excluded.batch, sha256 = excluded.sha256",
                 (batch, sha))


def _write_new(path: Path, lines: list[str]) -> Path:
    """Write a file that must not exist yet, atomically (temporary name, fsync, rename)."""
    if path.exists():
        raise ExportError(f"{path} exists: an export file is never rewritten")
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".jsonl.partial")
    with open(temporary, "x", encoding="utf-8", newline="\n") as fh:
        fh.write("\n".join(lines) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.link(temporary, path)  # fails if the name appeared meanwhile; rename would overwrite
    temporary.unlink()
    return path


def _record_warc_files(conn, after: int, warc_dir: Path, now: datetime, result: ExportResult) -> None:
    """Insert a warc_files row for every WARC file new requests point at and not yet recorded as it is."""
    names = [r[0] for r in conn.execute(
        "SELECT DISTINCT warc_file FROM requests WHERE id > ? AND warc_file IS NOT NULL ORDER BY warc_file",
        (after,))]
    for name in names:
        path = warc_dir / name
        if not path.is_file():
            result.missing_warc_files.append(name)
            continue
        sha = file_sha256(path)
        if conn.execute("SELECT 1 FROM warc_files WHERE name = ? AND sha256 = ?", (name, sha)).fetchone():
            continue
        conn.execute(
            "INSERT INTO warc_files (name, bytes, sha256, recorded_at, release_tag, asset_name) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (name, path.stat().st_size, sha, now.strftime("%Y-%m-%dT%H:%M:%SZ"),
             release_tag(name, now), Path(name).name))
        result.warc_files.append(name)


def release_tag(warc_name: str, now: datetime) -> str:
    """Return the GitHub release tag a WARC file is published under: warc-YYYY-MM-DD."""
    match = _WARC_DAY.match(warc_name)
    day = "-".join(match.groups()) if match else f"{now:%Y-%m-%d}"
    return f"warc-{day}"


# -- rebuild --------------------------------------------------------------------

def rebuild(out_dir: str | Path, db_path: str | Path) -> dict[str, int]:
    """Return rows per table after rebuilding a new database from the export folder.

    The result equals the exported database in every record table; the file
    chain is verified first, and the last file's boundary rows after.
    """
    if Path(db_path).exists():
        raise ExportError(f"{db_path} exists: rebuild writes a new database only")
    verify(out_dir)
    files = batches(out_dir)
    store = Store(db_path)
    conn = store.conn
    conn.execute("PRAGMA foreign_keys = OFF")  # files order rows by table, not by reference
    conn.execute("PRAGMA synchronous = OFF")
    counts: dict[str, int] = {}
    try:
        with store.transaction():
            statements: dict = {}
            for path in files:
                _load(conn, path, counts, statements)
            header = read_header(files[-1]) if files else None
            if header:
                _check_continues(conn, header, files[-1])
            problems = conn.execute("PRAGMA foreign_key_check").fetchmany(5)
            if problems:
                raise ExportError(f"rebuilt rows point at rows the record lacks: {[tuple(p) for p in problems]}")
            for table in record_tables(conn):
                if not _by_id(conn, table):
                    _create_shadow(conn, table)
                    _keys, select = _key_select(conn, table)
                    conn.execute(f'INSERT INTO "{_shadow(table)}" SELECT {select} FROM "{table}"')
            if files:
                _set_head(conn, files[-1].relative_to(Path(out_dir)).as_posix(), file_sha256(files[-1]))
    finally:
        store.close()
    return counts


def _load(conn, path: Path, counts: dict, statements: dict) -> None:
    pending: list[tuple[str, tuple, list]] = []

    def flush():
        if pending:
            sql, _cols, _ = pending[0]
            conn.executemany(sql, [values for _, _, values in pending])
            pending.clear()

    for line in _lines(path):
        table = line["t"]
        if "parts" in line:
            flush()
            _load_listing(conn, line)
            counts[table] = counts.get(table, 0) + _listing_size(line)
            continue
        upsert = "u" in line
        row = line["u"] if upsert else line["r"]
        cols = tuple(row)
        if any(isinstance(v, dict) and "$same" in v for v in row.values()):
            flush()
            row = {k: _same(conn, table, k, v) for k, v in row.items()}
        sql = statements.get((table, cols, upsert)) or statements.setdefault(
            (table, cols, upsert), _insert_sql(conn, table, cols, upsert))
        if pending and (pending[0][0] != sql):
            flush()
        pending.append((sql, cols, [_decode(row[c]) for c in cols]))
        if len(pending) >= 2000:
            flush()
        counts[table] = counts.get(table, 0) + 1
    flush()


def _same(conn, table: str, column: str, value: Any) -> Any:
    if isinstance(value, dict) and "$same" in value:
        found = conn.execute(f'SELECT "{column}" FROM "{table}" WHERE id = ?', (value["$same"],)).fetchone()
        if found is None:
            raise ExportError(f"{table}.{column} repeats row {value['$same']}, which the record lacks")
        return found[0]
    return value


def _insert_sql(conn, table: str, cols: tuple, upsert: bool) -> str:
    names = ", ".join(f'"{c}"' for c in cols)
    marks = ", ".join("?" for _ in cols)
    sql = f'INSERT INTO "{table}" ({names}) VALUES ({marks})'
    if upsert:
        pk = key_columns(conn, table)
        rest = [c for c in cols if c not in pk] or cols
        sets = ", ".join(f'"{c}" = excluded."{c}"' for c in rest)
        sql += f" ON CONFLICT ({', '.join(pk)}) DO UPDATE SET {sets}"
    return sql


def _listing_size(line: dict) -> int:
    return sum(p[1] if isinstance(p, list) else 1 for p in line["parts"])


def _load_listing(conn, line: dict) -> None:
    content = [c for c in columns(conn, "listing_entries") if c not in ("id", "listing_id", "position")]
    quoted = ", ".join(f'"{c}"' for c in content)
    base = []
    if line.get("base") is not None:
        base = conn.execute(f"SELECT {quoted} FROM listing_entries WHERE listing_id = ? ORDER BY position",
                            (line["base"],)).fetchall()
    rows = []
    for part in line["parts"]:
        if isinstance(part, list):
            start, n = part
            if start + n > len(base):
                raise ExportError(f"listing {line['listing_id']} repeats entries listing {line['base']} lacks")
            rows.extend(tuple(e) for e in base[start:start + n])
        else:
            rows.append(tuple(_decode(part.get(c)) for c in content))
    names = ", ".join(["id", "listing_id", "position", *(f'"{c}"' for c in content)])
    marks = ", ".join("?" for _ in range(3 + len(content)))
    conn.executemany(f"INSERT INTO listing_entries ({names}) VALUES ({marks})",
                     [(line["first_id"] + i, line["listing_id"], i, *values) for i, values in enumerate(rows)])


# -- command line ---------------------------------------------------------------

DEFAULT_OUT = "data/record"


@click.group()
def export():
    """The committed record: write new rows to data/record/, rebuild the database from it.

    \b
    Example:
        python -m collector export new --warc-dir data/warc
    """


@export.command("new")
@click.option("--db", default="data/takedownwatch.db", show_default=True, help="SQLite database of the record.")
@click.option("--out", "out_dir", default=DEFAULT_OUT, show_default=True, help="Export folder (committed to git).")
@click.option("--warc-dir", default=None, help="Record size and SHA-256 of the WARC files new rows point at.")
def export_new_command(db, out_dir, warc_dir):
    """Write every row added or changed since the last export to one new file.

    \b
    Example:
        python -m collector export new --db data/takedownwatch.db --out data/record --warc-dir data/warc
    """
    try:
        store = Store(db)
        result = export_new(store, out_dir, warc_dir=warc_dir)
        store.close()
    except TakedownWatchError as exc:
        raise click.ClickException(str(exc)) from exc
    if result.path is None:
        click.echo("nothing new to export")
    else:
        click.echo(f"wrote {result.path}: " + ", ".join(f"{t} {n}" for t, n in result.rows.items()))
    for name in result.missing_warc_files:
        click.echo(f"warning: WARC file {name} is not in {warc_dir}; its digest was not recorded", err=True)


@export.command("rebuild")
@click.option("--out", "out_dir", default=DEFAULT_OUT, show_default=True, help="Export folder to read.")
@click.option("--db", default="data/takedownwatch.db", show_default=True, help="New database to write.")
def rebuild_command(out_dir, db):
    """Rebuild the database from the export folder (the database must not exist).

    \b
    Example:
        python -m collector export rebuild --out data/record --db data/takedownwatch.db
    """
    try:
        counts = rebuild(out_dir, db)
    except TakedownWatchError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"rebuilt {db}: " + (", ".join(f"{t} {n}" for t, n in counts.items()) or "empty record"))


@export.command("verify")
@click.option("--out", "out_dir", default=DEFAULT_OUT, show_default=True, help="Export folder to check.")
def verify_command(out_dir):
    """Check that the export files form one unbroken chain (no gap, fork or edit).

    \b
    Example:
        python -m collector export verify --out data/record
    """
    try:
        count = verify(out_dir)
    except TakedownWatchError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"{count} export files, chain intact")


if __name__ == "__main__":  # python -m collector.export verify: usable before the command is registered
    export(prog_name="python -m collector.export")
