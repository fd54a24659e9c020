"""A database that follows every record stream: brought in sync with each stream's new files, not rebuilt.

`export rebuild` merges every stream of the record into a new database
(collector/record/merge.py). A job that reads the whole record every few
minutes (the site's figures, the archive job) cannot rebuild it each time, so
`follow(db, record_dirs)` keeps that merged database in sync instead, reading
only the files each stream wrote since the last time:

* beside the database, in `<db>.streams/`, each stream's own database,
  exactly the one a merge builds first (its chain verified, its boundary
  rows checked), brought in sync with the stream's new files by
  `rebuild.resume`, or rebuilt from the stream's folder when it has none;
* into the merged database, each stream's rows after the last id of it the
  database holds (table sync_followed), with the merge's own rules and
  statements (merge.copy_rows): one article for one address several
  streams recorded, their rows listed in sync_merged, a clash refused;
  the state tables are written anew from every stream's, the stream written
  latest kept, as a merge keeps them (run_finishes, append-only, is only
  added to: no two streams hold a row of one run).

The result equals `export rebuild` of the same files in every record row.
Where an increment would change what an earlier one decided (a stream's
late file shows an article seen before the one kept, or an address or a
check slot an earlier stream by range shares with a row already merged), or
the database and the streams' own databases disagree on what was read (a
job that stopped midway), the merged database is written anew from the
streams' databases (merge.combine), which needs no file read again. Rows
are copied without the foreign-key check a full rebuild ends with: every
stream's own database was checked when it was rebuilt, as a resumed working
database is.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from collector import settings
from collector.record import merge, references, schema, shadows, streams, written as own_files
from collector.record.fileformat import ExportError, file_sha256, read_header
from collector.record.folder import batches, chain, last_batch, record_name
from collector.record.rebuild import Progress, rebuild, resume
from collector.record.store import Store
from collector.record.tables import appended_by_id, key_columns, record_tables

StreamProgress = Callable[[str, int, int], None]  # (stream, files read, files to read)
PARTS = ".streams"  # beside the database: <db>.streams/<stream>.db, each stream's own database
DEFAULT_PART = "_default"  # the default stream's database there ('_' is in no stream's name)


@dataclass
class Followed:
    """What one follow did: files read per stream, streams rebuilt whole, and whether it merged anew."""

    files: dict[str, int] = field(default_factory=dict)
    rebuilt: list[str] = field(default_factory=list)
    merged_anew: bool = False
    why: str | None = None  # why the merged database was written anew


def parts_folder(db_path: str | Path) -> Path:
    """Return the folder of the streams' own databases beside a following database."""
    return Path(f"{db_path}{PARTS}")


def _label(name: str | None) -> str:
    return name or ""


def follow(db_path: str | Path, record_dirs: str | Path | list, writes: str | None = None,
           progress: StreamProgress | None = None) -> Followed:
    """Return what was done after bringing the merged database at db_path in sync with every stream.

    record_dirs: the record folder (or the record repositories of successive
    years, oldest first), every stream's folder inside it. A database that
    does not exist is written from the streams' databases, themselves
    rebuilt from their folders the first time.

    With `writes` (a stream's name: the archive job's), the database also
    writes that stream: its rows are that stream's, allocated in its range
    (streams.next_id) and exported to its folder alone (export.export_new),
    every other stream's rows read beside them. Its own rows are never
    copied in (it wrote them); the database must hold every row its folder
    does (it is merged anew otherwise), and may hold more, written after its
    last export, which its next export sends.
    """
    writer = streams.check_name(writes) if writes else None
    folders = [Path(f) for f in (record_dirs if isinstance(record_dirs, (list, tuple)) else [record_dirs])]
    found = merge.stream_folders(folders)
    merge.check_ranges(list(found))
    parts_dir = parts_folder(db_path)
    parts_dir.mkdir(parents=True, exist_ok=True)
    done, parts, before = Followed(), {}, {}
    for name, paths in found.items():
        part = parts_dir / f"{name or DEFAULT_PART}.db"
        try:
            before[name] = tops(part) if part.exists() else None
            _sync_part(paths, part, name, done, _told(progress, name))
        except ExportError as exc:
            raise ExportError(f"stream {name or '(default)'}: {exc}") from exc
        parts[name] = part
    written = _written(found)
    db = Path(db_path)
    why = _increment(db, parts, written, before, writer) if db.exists() else "there was no merged database"
    wrote = _wrote(db) if writer is not None and why else {}  # what the database it replaces wrote, kept
    if why:
        _rebuild_pruned(found, parts, done)
        _merge_anew(db, parts, written)
        done.merged_anew, done.why = True, why
    if writer is not None:
        _write_as(db, writer, found.get(writer), parts.get(writer), wrote)
    return done


def _wrote(db: Path) -> dict[str, tuple[str, str]]:
    """Return the export files a database wrote ({name: (sha256, written_at)}), none when it does not read."""
    if not db.exists():
        return {}
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True)
        try:
            return {r[0]: (r[1], r[2]) for r in conn.execute(f"SELECT * FROM {own_files.TABLE}")}
        finally:
            conn.close()
    except sqlite3.Error:
        return {}


def _write_as(db: Path, writer: str, paths: list[Path] | None, part: Path | None,
              wrote: dict[str, tuple[str, str]]) -> None:
    """Make the merged database the writer's: its stream, in sync with its folder's last file.

    The state tables hold every stream's state: it is taken as exported (the
    shadows hold it), so an export sends only what the writer changes; but
    the writer's append-only state rows its folder lacks (a run finished
    after the last export) are still to be sent.
    """
    low = streams.base(writer)
    last = last_batch(paths[-1]) if paths else None
    store = Store(db)
    try:
        with store.transaction() as conn:
            conn.execute("UPDATE export_stream SET name = ? WHERE id = 1", (writer,))
            for name, (sha, at) in wrote.items():  # merged anew, it still knows what its job wrote (export sign)
                if not conn.execute(f"SELECT 1 FROM {own_files.TABLE} WHERE name = ?", (name,)).fetchone():
                    own_files.note(conn, name, sha, at)
            if last is not None:
                shadows.set_head(conn, record_name(last), file_sha256(last))
            for table in record_tables(conn):
                if not appended_by_id(conn, table):
                    shadows.copy_table(conn, table)
        for table in record_tables(store.conn):
            if not appended_by_id(store.conn, table) and table in schema.APPEND_ONLY_TABLES:
                _unsent(store.conn, table, low, part)
    finally:
        store.close()


def _unsent(conn, table: str, low: int, part: Path | None) -> None:
    """Leave out of an append-only state table's shadow the writer's rows its own folder lacks."""
    (key,) = key_columns(conn, table)
    mine = f'"{key}" > {int(low)} AND "{key}" <= {int(low + settings.STREAM_ID_RANGE)}'
    if part is None:
        conn.execute(f'DELETE FROM "{shadows.shadow_name(table)}" WHERE {mine}')
        return
    conn.execute("ATTACH DATABASE ? AS part", (str(part),))
    try:
        conn.execute(f'DELETE FROM "{shadows.shadow_name(table)}" WHERE {mine} '
                     f'AND "{key}" NOT IN (SELECT "{key}" FROM part."{table}")')
    finally:
        conn.execute("DETACH DATABASE part")


def _told(progress: StreamProgress | None, name: str | None) -> Progress | None:
    return None if progress is None else (lambda done, total: progress(_label(name), done, total))


def _sync_part(paths: list[Path], part: Path, name: str | None, done: Followed,
               progress: Progress | None = None) -> None:
    """Bring one stream's own database in sync with its folders (rebuilding it when it cannot be)."""
    if part.exists():
        try:
            loaded, _ = resume(paths, part, progress)
        except ExportError:
            loaded = None
        if loaded is not None:
            files = batches(paths[0], tail=True) if len(paths) == 1 else chain(paths)
            merge.check_stream(paths, part, name, files[len(files) - loaded:] if loaded else [])
            done.files[_label(name)] = loaded
            return
        _remove(part)
    try:
        rebuild(paths, part, progress)
        merge.check_stream(paths, part, name)
    except BaseException:
        _remove(part)  # a later follow rebuilds it again, from the folder whole
        raise
    done.rebuilt.append(_label(name))
    done.files[_label(name)] = len(chain(paths))


def pruned(part: Path) -> bool:
    """Return True when a stream's own database was pruned (collect/follow_prune.py): it lacks rows."""
    conn = sqlite3.connect(part)
    try:
        return references.pruned(conn)
    finally:
        conn.close()


def _rebuild_pruned(found: dict[str | None, list[Path]], parts: dict[str | None, Path], done: Followed) -> None:
    """Rebuild whole, from their folders, the pruned streams' databases a merge anew is to read.

    A pruned stream's database lacks rows that another stream's decide
    what a merge keeps (a capture the archive stream has not confirmed is
    left out of its collect stream's database), so a merge from them would
    not be the record's.
    """
    for name, part in parts.items():
        if part.exists() and pruned(part):
            _remove(part)
            _sync_part(found[name], part, name, done)


def _written(found: dict[str | None, list[Path]]) -> dict[str | None, str]:
    """Return when each stream's last file was written, as merge.newest does, from its newest folder alone.

    A sparse checkout of the newest days holds that file (a merge reads the chain whole).
    """
    written = {}
    for name, paths in found.items():
        last = last_batch(paths[-1]) if paths else None
        written[name] = read_header(last).get("written_at", "") if last else ""
    return written


def _remove(db: Path) -> None:
    for path in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        path.unlink(missing_ok=True)


def tops(part: Path) -> dict[str, int]:
    """Return a stream's database's last id of each appended table (0: none)."""
    conn = sqlite3.connect(part)
    try:
        return {t: conn.execute(f'SELECT COALESCE(MAX(id), 0) FROM "{t}"').fetchone()[0]
                for t in record_tables(conn) if appended_by_id(conn, t)}
    finally:
        conn.close()


def _increment(db: Path, parts: dict[str | None, Path], written: dict[str | None, str],
               before: dict[str | None, dict | None], writer: str | None = None) -> str | None:
    """Copy every stream's new rows into the merged database; return why it must be merged anew, or None."""
    store = Store(db)
    conn = store.conn
    try:
        if streams.stream_of(conn) != (writer or streams.MERGED):
            return f"the database at that path is not one that follows every stream{' and writes ' + writer if writer else ''}"
        unsent = _writers_rows(conn, writer, parts.get(writer))
        if unsent:
            return unsent
        marks = {(s, t): n for s, t, n in conn.execute(
            f"SELECT stream, table_name, through FROM {streams.FOLLOWED_TABLE}")}
        followed = {s for s, t in marks if t == ""}
        if followed - {_label(n) for n in parts}:
            return f"it follows streams the record no longer has ({', '.join(sorted(followed))})"
        for name in parts:
            if _label(name) not in followed:
                continue  # a stream new to it: every row is new
            if before[name] is None:
                return f"stream {name or '(default)'}'s own database was rebuilt"
            changed = any(marks.get((_label(name), t), 0) != n for t, n in before[name].items())
            if changed and not _writes(name, writer):
                return f"it did not hold what stream {name or '(default)'}'s own database held"
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        by_range = sorted(parts, key=streams.base)
        merge.article_map(conn, parts, by_range)
        if conn.execute("SELECT 1 FROM temp.article_map AS m JOIN main.articles AS a ON a.id = m.old").fetchone():
            return "a stream's new file shows an article seen before the one kept for its address"
        for table in record_tables(conn):
            if appended_by_id(conn, table):
                for name in by_range:
                    if _writes(name, writer):
                        continue  # its rows are the ones it wrote (checked above)
                    after = marks.get((_label(name), table), 0)
                    if _decided_otherwise(conn, table, name, parts[name], after):
                        return f"a {table} row of stream {name or '(default)'} meets one of a later stream"
                    mark = (f"INSERT OR REPLACE INTO main.{streams.FOLLOWED_TABLE} "
                            f"VALUES ('{_label(name)}', '{table}', "
                            f'(SELECT COALESCE(MAX(id), 0) FROM part."{table}"), NULL)')
                    merge.copy_rows(conn, table, True, name, parts[name], after, also=(mark,))
            else:
                kept = table in schema.APPEND_ONLY_TABLES  # run_finishes: a stream's rows never change
                if not kept:
                    conn.execute(f'DELETE FROM "{table}"')
                for name in merge.by_written(parts, written):
                    merge.copy_rows(conn, table, False, name, parts[name], verb="INSERT OR IGNORE" if kept else None)
        _mark_streams(conn, written)
    finally:
        store.close()
    return None


def _writes(name: str | None, writer: str | None) -> bool:
    """Return True for the stream the database writes (None, the default stream, is never written by one)."""
    return writer is not None and name == writer


def _writers_rows(conn, writer: str | None, part: Path | None) -> str | None:
    """Return why the database lacks rows of the writer's folder, or None when it holds them all.

    It may hold more: rows written after its last export (the time-stamping
    run's ledger rows), which its next export sends.
    """
    if writer is None:
        return None
    low = streams.base(writer)
    held = tops(part) if part else {}
    for table in record_tables(conn):
        if appended_by_id(conn, table):
            top = conn.execute(f'SELECT COALESCE(MAX(id), 0) FROM "{table}" WHERE id > ? AND id <= ?',
                               (low, low + settings.STREAM_ID_RANGE)).fetchone()[0]
            if top < held.get(table, 0):
                return f"it lacks {table} rows of stream {writer}'s folder ({top} < {held.get(table, 0)})"
    return None


def _decided_otherwise(conn, table: str, name: str | None, part: Path, after: int) -> bool:
    """Return True when a new row meets a merged row of a stream later by range (a merge decides otherwise)."""
    if table not in merge.FOLDED and table not in merge.RELABELLED:
        return False
    later = streams.base(name) + settings.STREAM_ID_RANGE
    conn.execute("ATTACH DATABASE ? AS part", (str(part),))
    try:
        return conn.execute(
            f'SELECT 1 FROM part."{table}" AS t LEFT JOIN temp.article_map AS m ON m.old = t.article_id '
            f"WHERE t.id > ? AND EXISTS (SELECT 1 FROM {merge.matching(table)} AND k.id > ?) LIMIT 1",
            (after, later)).fetchone() is not None
    finally:
        conn.execute("DETACH DATABASE part")


def _mark_streams(conn, written: dict[str | None, str]) -> None:
    with conn:
        for name, at in written.items():
            conn.execute(f"INSERT OR REPLACE INTO {streams.FOLLOWED_TABLE} VALUES (?, '', 0, ?)", (_label(name), at))


def _merge_anew(db: Path, parts: dict[str | None, Path], written: dict[str | None, str]) -> None:
    """Write the merged database anew from the streams' own databases, then put it in place."""
    new = db.with_name(db.name + ".new")
    _remove(new)
    merge.combine(parts, written, new)
    store = Store(new)
    try:
        with store.conn as conn:
            for name, part in parts.items():
                for table, top in tops(part).items():
                    conn.execute(f"INSERT INTO {streams.FOLLOWED_TABLE} VALUES (?, ?, ?, NULL)",
                                 (_label(name), table, top))
        _mark_streams(store.conn, written)
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        store.close()
    for path in (Path(f"{db}-wal"), Path(f"{db}-shm"), Path(f"{new}-wal"), Path(f"{new}-shm")):
        path.unlink(missing_ok=True)
    os.replace(new, db)
