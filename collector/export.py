"""Writes the committed record: each export one new file of the rows added since the last.

The file format, the hash chain and the reading side are in collector/recordfile.py;
rebuilding a database from the files is collector/rebuild.py.
"""

from __future__ import annotations

import os
import sqlite3
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click

from . import schema, settings
from .errors import TakedownWatchError
from .store import Store
from .recordfile import (  # the format, used below and re-exported
    ExportError, ExportResult, FORMAT, REPEATS, REPEAT_MIN_CHARS, SUFFIX,
    _WARC_DAY, _by_id, _decode, _dumps, _encode, _lines,
    batches, columns, file_bytes, file_sha256, key_columns, last_batch, read_header, read_text,
    record_tables, row_digest, verify,
)




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
        relative = f"{day}/{seq:06d}{SUFFIX}"
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
            row = conn.execute(f'SELECT * FROM "{table}" WHERE id = ?', (top,)).fetchone()
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
    temporary = path.with_name(path.name + ".partial")
    with open(temporary, "xb") as fh:
        fh.write(file_bytes("\n".join(lines) + "\n", path))
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


def rebuild(out_dir, db_path, progress=None):
    """Return rows per table after rebuilding a new database from the export folder."""
    from .rebuild import rebuild as _rebuild

    return _rebuild(out_dir, db_path, progress)


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
@click.option("--resume", is_flag=True,
              help="The database exists and holds the record up to one of its files: read only the later "
                   "files. Refused, and the database left as it was, when it holds anything else.")
def rebuild_command(out_dir, db, resume):
    """Rebuild the database from the export folder (the database must not exist).

    With --resume, bring an existing database level with the folder instead
    (the collect workflow keeps its database in the Actions cache between runs).

    \b
    Example:
        python -m collector export rebuild --out data/record --db data/takedownwatch.db
        python -m collector export rebuild --resume --out data/record --db data/takedownwatch.db
    """
    from .rebuild import resume as _resume

    shown = [time.monotonic()]

    def progress(done: int, total: int) -> None:  # a rebuild of months of record takes minutes
        if time.monotonic() - shown[0] >= 5 or done == total:
            shown[0] = time.monotonic()
            click.echo(f"  read {done}/{total} export files ({done / total:.0%})", err=True)

    try:
        if resume:
            files, counts = _resume(out_dir, db, progress)
        else:
            counts = rebuild(out_dir, db, progress)
    except TakedownWatchError as exc:
        raise click.ClickException(str(exc)) from exc
    rows = ", ".join(f"{t} {n}" for t, n in counts.items())
    if resume:
        click.echo(f"resumed {db}: {files} newer export file(s)" + (f": {rows}" if rows else ", already level"))
    else:
        click.echo(f"rebuilt {db}: " + (rows or "empty record"))


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
