"""Rebuilds the SQLite database from the committed record (the format: collector/record/fileformat.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from collector.record import dormant, fold, fold_latest, fold_visit, reader, references, shadows
from collector.record.export import check_continues
from collector.record.fileformat import (
    ENTRY_FIXED, ENTRY_TABLE, ExportError, file_sha256, is_listing, listing_entries,
    listing_size, read_header, read_lines, repeated_id, row_of,
)
from collector.record.folder import batches, chain, continues, read_ahead, record_name, verify
from collector.record.store import Store
from collector.record.streams import in_range, in_some_stream, set_stream, stream_of
from collector.record.tables import appended_by_id, columns, key_columns, record_tables


Progress = Callable[[int, int], None]  # (files read, files to read)


def rebuild(out_dir: str | Path | list, db_path: str | Path, progress: Progress | None = None) -> dict[str, int]:
    """Return rows per table after rebuilding a new database from the export folder.

    The result equals the exported database in every record table; the file
    chain is verified first, and the last file's boundary rows after. Given
    several folders (the record repositories of successive years, oldest
    first), reads them in order as one record.
    """
    folders = _folders(out_dir)
    if Path(db_path).exists():
        raise ExportError(f"{db_path} exists: rebuild writes a new database only")
    link = continues(folders[0])
    if link is not None:
        raise ExportError(f"{folders[0]} continues {link['repository']}: a rebuild reads the record from its "
                          "first file, so give every record repository, oldest first (--out repeated)")
    verify(folders)
    return _replay(db_path, chain(folders), check_references=True, progress=progress)


def resume(out_dir: str | Path | list, db_path: str | Path,
           progress: Progress | None = None) -> tuple[int, dict[str, int]]:
    """Return (files loaded, rows per table) after bringing a database in sync with the export folder.

    The database must hold exactly what the folder held at one of its files:
    it was rebuilt from the folder, or exported to it, and nothing was added
    since (every table's last id is that file's, every state table is as that
    file left it). Only the files after that one are read, so the hourly job
    does not replay the whole record each time. Raises ExportError for a
    database that does not continue the folder, which is left untouched.
    A new year's folder starts with the last file of the year before, so a
    database in sync with that file resumes from the new folder alone. One
    folder need hold only the files from the database's on (a sparse
    checkout of its newest days).
    """
    folders = _folders(out_dir)
    if not Path(db_path).is_file():
        raise ExportError(f"{db_path} does not exist: nothing to resume")
    # One folder may be a sparse checkout of its newest days: the files from the database's on are enough.
    files = batches(folders[0], tail=True) if len(folders) == 1 else chain(folders)
    store = Store(db_path)
    try:
        head = shadows.head(store.conn)
        names = [record_name(f) for f in files]
        if head is None or head[0] not in names:
            raise ExportError(f"{db_path} was not brought in sync with a file of {_shown(folders)} "
                              f"(it was last in sync with {head[0] if head else 'no file'})")
        at = names.index(head[0])
        if file_sha256(files[at]) != head[1]:
            raise ExportError(f"{files[at]} is not the file {db_path} was brought in sync with: it was changed")
        later = files[at + 1:]
        previous = head[1]
        for path in later:  # the chain from the database's file on (the rest was checked when it was built)
            if read_header(path).get("previous_sha256") != previous:
                raise ExportError(f"{path}: does not follow the file before it (SHA-256 chain broken)")
            previous = file_sha256(path)
        check_nothing_unexported(store.conn, files[at], db_path)
    finally:
        store.close()
    return len(later), _replay(db_path, later, check_references=False, progress=progress)


def _folders(out_dir) -> list[Path]:
    folders = [Path(f) for f in (out_dir if isinstance(out_dir, (list, tuple)) else [out_dir])]
    if not folders:
        raise ExportError("no record folder given")
    return folders


def _shown(folders: list[Path]) -> str:
    return ", ".join(str(f) for f in folders)


def check_nothing_unexported(conn, path: Path, db_path) -> None:
    """Raise unless the database holds no row, and no state, that the export file at path does not."""
    header = read_header(path)
    check_continues(conn, header, path)  # names the file the database should match
    for table in record_tables(conn):
        if appended_by_id(conn, table):
            top = conn.execute(f'SELECT COALESCE(MAX(id), 0) FROM "{table}"').fetchone()[0]
            if top != header["through"].get(table, 0):
                raise ExportError(f"{db_path} holds {table} rows after the record's last "
                                  f"({top} > {header['through'].get(table, 0)}): rows that were never exported")
        elif shadows.changed_rows(conn, table):
            raise ExportError(f"{db_path} holds {table} rows that differ from the record's")


def _replay(db_path, files: list[Path], *, check_references: bool,
            progress: Progress | None = None) -> dict[str, int]:
    store = Store(db_path)
    conn = store.conn
    conn.execute("PRAGMA foreign_keys = OFF")  # files order rows by table, not by reference
    conn.execute("PRAGMA synchronous = OFF")
    counts: dict[str, int] = {}
    try:
        with store.transaction():
            if files and check_references:  # a new database: its stream is the one its files were written in
                name = read_header(files[0]).get("stream")
                if name:
                    set_stream(conn, name)
            statements: dict = {}
            for done, (path, text) in enumerate(read_ahead(files), start=1):
                if isinstance(text, ExportError):
                    raise text
                _load(conn, path, counts, statements, text)
                if progress:
                    progress(done, len(files))
            header = read_header(files[-1]) if files else None
            if header:
                check_continues(conn, header, files[-1])
            if check_references:  # a full rebuild; a resumed one was checked when it was built
                problems = [p for p in conn.execute("PRAGMA foreign_key_check") if not _other_stream(conn, p)][:5]
                if problems:
                    raise ExportError(f"rebuilt rows point at rows the record lacks: "
                                      f"{[tuple(p) for p in problems]}")
            for table in record_tables(conn):
                if not appended_by_id(conn, table) and (check_references or files):
                    shadows.copy_table(conn, table)  # bookkeeping, made anew
            if files:
                shadows.set_head(conn, record_name(files[-1]), file_sha256(files[-1]))
    finally:
        store.close()
    return counts


def _other_stream(conn, problem) -> bool:
    """Return True for a foreign-key problem that is a permitted reference into another stream's range."""
    table, rowid, _parent, fkid = problem
    if table not in references.CROSS_STREAM or rowid is None:
        return False
    cols = [r[3] for r in conn.execute(f'PRAGMA foreign_key_list("{table}")') if r[0] == fkid]
    if len(cols) != 1 or cols[0] not in references.CROSS_STREAM[table]:
        return False
    value = conn.execute(f'SELECT "{cols[0]}" FROM "{table}" WHERE rowid = ?', (rowid,)).fetchone()[0]
    return isinstance(value, int) and in_some_stream(value) and not in_range(stream_of(conn), value)


def _load(conn, path: Path, counts: dict, statements: dict, text: str | None = None) -> None:
    pending: list[tuple[str, list]] = []

    def flush():
        if pending:
            conn.executemany(pending[0][0], [values for _, values in pending])
            pending.clear()

    asleep = dormant.exists(conn) and conn.execute(f"SELECT 1 FROM {dormant.TABLE} LIMIT 1").fetchone() is not None
    woken: set[int] = set()
    boundary = read_header(path).get("through", {}).get("snapshots")
    leave_out = shadows.leaves_out(conn)  # a working database whose rows no merge reads (collect/prune.py)
    left: dict[int, dict] = {}  # the values of the snapshots left out (rebuild.py _snapshot)
    for line in read_lines(path, text):
        if is_listing(line):
            flush()
            _load_listing(conn, line)
            counts[ENTRY_TABLE] = counts.get(ENTRY_TABLE, 0) + listing_size(line)
            continue
        table, upsert, row = row_of(line)
        cols = tuple(row)
        if asleep and isinstance(row.get("article_id"), int) and row["article_id"] not in woken:
            flush()  # a dormant article's rows back first: the line may repeat its latest snapshot's or check's values
            woken.add(row["article_id"])
            dormant.wake(conn, [row["article_id"]])
        if any(repeated_id(v) is not None for v in row.values()):
            flush()
            if table == "snapshots":
                row = _snapshot(conn, row, path, row.get("id") == boundary, leave_out, left)
                if row is None:  # left out, its facts folded in
                    counts[table] = counts.get(table, 0) + 1
                    continue
            else:
                row = {k: _same(conn, table, k, v, row) for k, v in row.items()}
        sql = statements.get((table, cols, upsert)) or statements.setdefault(
            (table, cols, upsert), _insert_sql(conn, table, cols, upsert))
        if pending and (pending[0][0] != sql):
            flush()
        pending.append((sql, [row[c] for c in cols]))
        if len(pending) >= 2000:
            flush()
        counts[table] = counts.get(table, 0) + 1
    flush()


def _snapshot(conn, row: dict, path: Path, boundary: bool, leave_out: bool, left: dict) -> dict | None:
    """Return a snapshot line's row, its repeated values resolved; None when it was stored or left out here.

    A value repeats an earlier row's ({"$same": id}). Held here with its text,
    it is read from there. A pruned database may hold the earlier row without
    its text: the row is stored sharing its text id, as the full database
    shares the text, and its facts folded in with that text's digests
    (record/fold_latest.py). It may not hold the earlier row at all: in a
    working database that left out rows before (`leave_out`) the row is left
    out too, its facts folded in likewise, and its values kept in `left` for the
    rows after it that repeat one (any row's, extractor_info). The file's last row, the boundary
    an export checks whole, is read back from the record folder instead.
    Raises ExportError when none of these can be done:
    .github/scripts/sync_database.sh then checks out the whole record folder
    and resumes again, or rebuilds the database.
    """
    values, shared, missing, earlier = {}, None, {}, {}
    for column, value in row.items():
        same = repeated_id(value)
        if same is None:
            values[column] = value
            continue
        if same not in earlier:  # the columns of one line mostly repeat one row: read once
            earlier[same] = conn.execute("SELECT s.*, r.text_id AS _text_id FROM snapshots s "
                                         "JOIN snapshot_rows r ON r.id = s.id WHERE s.id = ?", (same,)).fetchone()
        held = earlier[same]
        if held is None and column in left.get(same, {}):
            values[column] = left[same][column]  # a row of these files left out before it
        elif held is None:
            missing[column] = same
        elif column == "text" and held["text"] is None and held["_text_id"] is not None:
            shared, missing[column] = held["_text_id"], same
        else:
            values[column] = held[column]
    if not missing:
        return values
    if boundary:
        files = reader.record_files(path.parents[3])  # <folder>/YYYY/MM/DD/file
        for column, same in missing.items():
            values[column] = reader.value(files, "snapshots", same, column)
            if values[column] is reader.MISSING:
                raise ExportError(f"{path}: snapshot {row.get('id')} repeats the {column} of snapshot {same}, "
                                  "which this database does not hold whole and the record folder here lacks")
        return values
    inherited = {c: fold_latest.of(conn, row["article_id"], same) for c, same in missing.items()
                 if c in fold_latest.COLUMNS}  # what its facts need: the repeated rows' digests
    lacking = [(c, same) for c, same in missing.items() if inherited.get(c, True) is None]
    if shared is not None and set(missing) == {"text"} and not lacking:  # only its text left out here: shared
        stored = {**values, "text_id": shared}
        names = ", ".join(f'"{c}"' for c in stored)
        conn.execute(f"INSERT INTO snapshot_rows ({names}) VALUES ({', '.join('?' for _ in stored)})",
                     list(stored.values()))
    elif leave_out and not lacking:  # left out: its first capture folded in as its row's would be
        left[row["id"]] = values
        if row.get("purpose") == "capture":
            fold.fold_capture(conn, row["article_id"], row["captured_at"])
    else:
        column, same = (lacking or [(c, s) for c, s in missing.items() if c != "text"] or list(missing.items()))[0]
        raise ExportError(f"snapshots.{column} repeats row {same}, which this database lacks")
    fold_latest.fold_values(conn, row["article_id"], row["captured_at"], row["id"], values,
                            {column: found.facts for column, found in inherited.items()})
    return None


def _same(conn, table: str, column: str, value: Any, row: dict) -> Any:
    """Return a value, what it repeats when it is {"$same": id}: the row's, or of a check a pruned database left
    out, its article's address when the check's digest says it was that (record/fold_visit.py)."""
    same = repeated_id(value)
    if same is None:
        return value
    found = conn.execute(f'SELECT "{column}" FROM "{table}" WHERE id = ?', (same,)).fetchone()
    if found is None and table == "checks" and column == "url" and isinstance(row.get("article_id"), int):
        found = (fold_visit.repeated_url(conn, row["article_id"], same),)
    if found is None or found[0] is None:
        raise ExportError(f"{table}.{column} repeats row {same}, which the record lacks")
    return found[0]


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


def _load_listing(conn, line: dict) -> None:
    """Insert one listing's entries: repeated ones straight into listing_items, new ones through the view.

    An entry repeated from the base listing has the values of the base's entry,
    and listing_entry_values holds each distinct set of values once (schema
    migration 4), so its storage row is the base entry's: no lookup by value is
    needed. A third of a rebuild's time went to those lookups.
    """
    content = [c for c in columns(conn, ENTRY_TABLE) if c not in ENTRY_FIXED]
    base: list[int] = []
    if line.get("base") is not None:
        base = [r[0] for r in conn.execute("SELECT value_id FROM listing_items WHERE listing_id = ? "
                                           "ORDER BY position", (line["base"],))]
    repeated, written = [], []
    for entry_id, position, what in listing_entries(line, len(base), content):
        if isinstance(what, int):
            repeated.append((entry_id, line["listing_id"], position, base[what]))
        else:
            written.append((entry_id, line["listing_id"], position, *what))
    names = ", ".join([*ENTRY_FIXED, *(f'"{c}"' for c in content)])
    marks = ", ".join("?" for _ in range(len(ENTRY_FIXED) + len(content)))
    conn.executemany(f"INSERT INTO {ENTRY_TABLE} ({names}) VALUES ({marks})", written)
    conn.executemany("INSERT INTO listing_items (id, listing_id, position, value_id) VALUES (?, ?, ?, ?)", repeated)
