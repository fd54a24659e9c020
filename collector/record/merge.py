"""Merges every record stream into one database, deterministically (streams: collector/record/streams.py).

Each stream is rebuilt on its own first, exactly as a one-stream record is
(collector/record/rebuild.py: its chain verified, its references checked,
its last file's boundary rows compared), into a scratch database. The merged
database is then written in an order fixed by the record alone, never by
the order the streams were found or read in: table by table in the record's
order, and within a table, stream by stream in the order of their id ranges,
each stream's rows by id. Since the ranges do not overlap, that is every
table's rows in id order. The same files therefore give the same database,
byte for byte.

Rows that more than one stream holds under one key (the registry's outlets
and groups, which every job mirrors; a capture-queue row two vantages share)
are state, not observations: the merged database keeps the row of the stream
whose last file was written latest (then the stream that sorts first by
range), that is the newest state any job saw.

One article address recorded by several streams (both vantages' jobs of one
shard collect it; two shards do after N changed) is one article: the
earliest seen. Every other stream's rows about it keep their own ids and
values, their article_id read as that article's; an address of it both
recorded is kept once; two streams' checks of one slot are both kept, the
later stream's slot labelled 'SLOT@STREAM'. Table sync_merged lists every
row so read, with the stream that wrote it. Any other row two streams both
claim stops the merge, naming both.
"""

from __future__ import annotations

import sqlite3
import tempfile
from pathlib import Path

from collector.record import fold_latest, streams
from collector.record.articles import IDENTITIES, key_digest
from collector.record.fileformat import ExportError, read_header
from collector.record.folder import chain, continues, last_batch
from collector.record.rebuild import Progress, rebuild
from collector.record.store import Store
from collector.record.tables import appended_by_id, columns, record_tables


def stream_folders(folders: list[str | Path]) -> dict[str | None, list[Path]]:
    """Return each stream's folders, oldest first, in record folders given oldest first (None: the default)."""
    folders = [Path(f) for f in folders]
    found: dict[str | None, list[Path]] = {}
    default = [f for f in folders if last_batch(f) is not None or continues(f) is not None]
    if default or not any(streams.named_streams(f) for f in folders):
        found[None] = default or folders
    for name in sorted({n for f in folders for n in streams.named_streams(f)}):
        found[name] = [streams.folder(f, name) for f in folders if streams.folder(f, name).is_dir()]
    return found


def rebuild_record(out_dir: str | Path | list, db_path: str | Path, progress: Progress | None = None,
                   *, stream: str | None = None) -> dict[str, int]:
    """Return rows per table after rebuilding a new database from every stream of the record.

    A record of the default stream alone is rebuilt as it always was. With
    `stream` (a name, or "." for the default stream), that stream's working
    database is rebuilt instead, from its folders alone.
    """
    folders = list(out_dir) if isinstance(out_dir, (list, tuple)) else [out_dir]
    found = stream_folders(folders)
    if stream is not None:
        name = None if stream == "." else streams.check_name(stream)
        if name is not None and name not in found:
            raise ExportError(f"no stream {name} in {', '.join(str(f) for f in folders)}")
        return rebuild(found.get(name) or folders, db_path, progress)
    if list(found) == [None]:
        return rebuild(found[None], db_path, progress)
    return merge(found, db_path, progress)


def merge(found: dict[str | None, list[Path]], db_path: str | Path,
          progress: Progress | None = None) -> dict[str, int]:
    """Return rows per table after merging the streams (name -> folders, in any order) into a new database."""
    if Path(db_path).exists():
        raise ExportError(f"{db_path} exists: rebuild writes a new database only")
    check_ranges(list(found))
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="record-merge-", dir=Path(db_path).resolve().parent) as scratch:
        parts: dict[str | None, Path] = {}
        for index, (name, paths) in enumerate(found.items()):
            part = Path(scratch) / f"stream-{index}.db"
            try:
                for table, n in rebuild(paths, part).items():
                    counts[table] = counts.get(table, 0) + n
                check_stream(paths, part, name)
            except ExportError as exc:
                raise ExportError(f"stream {_shown(name)}: {exc}") from exc
            parts[name] = part
            if progress:
                progress(index + 1, len(found))
        combine(parts, newest(found), Path(db_path))
    return counts


def _shown(name: str | None) -> str:
    return name or "(default)"


def check_ranges(names: list[str | None]) -> None:
    """Raise for two streams whose names fall to one id range (see settings.STREAM_RANGES)."""
    seen: dict[int, str | None] = {}
    for name in names:
        low = streams.base(name)
        if low in seen:
            raise ExportError(f"streams {_shown(seen[low])} and {_shown(name)} share one id range: "
                              "rename one of them")
        seen[low] = name


def check_stream(paths: list[Path], part: Path, name: str | None, files: list[Path] | None = None) -> None:
    """Raise unless every file (or those given) says it is this stream's and every id lies in its range."""
    for path in chain(paths) if files is None else files:
        if read_header(path).get("stream") != name:
            raise ExportError(f"{path} says it belongs to stream {_shown(read_header(path).get('stream'))}")
    conn = sqlite3.connect(part)
    try:
        for table in record_tables(conn):
            if appended_by_id(conn, table):
                low, high = conn.execute(f'SELECT MIN(id), MAX(id) FROM "{table}"').fetchone()
                if low is not None and not (streams.in_range(name, low) and streams.in_range(name, high)):
                    raise ExportError(f"its {table} ids ({low}..{high}) are not all in its range")
    finally:
        conn.close()


def newest(found: dict[str | None, list[Path]]) -> dict[str | None, str]:
    """Return when each stream's last file was written (its header's written_at)."""
    written = {}
    for name, paths in found.items():
        files = chain(paths)
        written[name] = read_header(files[-1]).get("written_at", "") if files else ""
    return written


# One article recorded by several streams (two vantages' jobs of one shard, or two shards after N
# changed) is one article in the merged database: its rows are the earliest seen (then the lowest id),
# every other stream's article_id is read as that one's, and sync_merged lists each row so read.
# Then, with article_id, these tables' unique keys may repeat across streams:
FOLDED = {"article_urls": ("url_key",)}  # the same address of the same article: one fact, kept once
RELABELLED = {"checks": "slot"}  # two streams' checks of one slot: both kept, the later's slot reads 'SLOT@STREAM'


def combine(parts: dict[str | None, Path], written: dict[str | None, str], db_path: Path) -> None:
    """Write a new merged database from each stream's database (name -> path) and its last file's time."""
    by_range = sorted(parts, key=streams.base)
    by_age = by_written(parts, written)
    store = Store(db_path)
    conn = store.conn
    conn.execute("PRAGMA foreign_keys = OFF")  # tables in record order, as a rebuild loads them
    conn.execute("PRAGMA synchronous = OFF")
    try:
        article_map(conn, parts, by_range)
        for table in record_tables(conn):
            appended = appended_by_id(conn, table)
            for name in by_range if appended else by_age:
                copy_rows(conn, table, appended, name, parts[name])
        problems = conn.execute("PRAGMA foreign_key_check").fetchmany(5)
        if problems:
            raise ExportError(f"merged rows point at rows no stream holds: {[tuple(p) for p in problems]}")
        conn.execute("INSERT INTO export_stream (id, name) VALUES (1, ?)", (streams.MERGED,))
    except BaseException:
        store.close()
        for path in (db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")):
            path.unlink(missing_ok=True)
        raise
    store.close()


def by_written(names, written: dict[str | None, str]) -> list[str | None]:
    """Return the streams in the order their state rows are written: the one written latest last (kept)."""
    return sorted(names, key=lambda n: (written[n], -streams.base(n)))  # then the first by range


def _attached(conn, part: Path, sql: list[str]) -> None:
    """Run statements in one transaction with a stream's database attached (SQLite attaches outside one)."""
    conn.execute("ATTACH DATABASE ? AS part", (str(part),))
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in sql:
                conn.execute(statement)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    finally:
        conn.execute("DETACH DATABASE part")


def article_map(conn, parts: dict[str | None, Path], by_range: list[str | None]) -> None:
    """Fill temp.article_map: every article id of a stream whose address an earlier-seen article has.

    Addresses are compared by their keys' digests (record/articles.py key_digest): a pruned stream's
    database holds those alone of the articles it left out (prune_identities). Every part was opened, and so
    migrated, by follow.py's _sync_part or made by merge's rebuild before it is read here.
    """
    conn.create_function("tw_key_digest", 1, key_digest, deterministic=True)
    conn.execute("CREATE TEMP TABLE seen (id INTEGER PRIMARY KEY, digest BLOB NOT NULL, first_seen_at TEXT)")
    conn.execute("CREATE TEMP TABLE article_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL)")
    for name in by_range:
        sql = ["INSERT INTO temp.seen SELECT id, tw_key_digest(url_key), first_seen_at FROM part.articles"]
        if _has(parts[name], IDENTITIES):
            sql.append(f"INSERT OR IGNORE INTO temp.seen SELECT article_id, digest, first_seen_at "
                       f"FROM part.{IDENTITIES}")
        _attached(conn, parts[name], sql)
    conn.execute("""INSERT INTO temp.article_map SELECT s.id, k.id FROM temp.seen AS s JOIN (
                      SELECT digest, id FROM (SELECT digest, id, ROW_NUMBER() OVER (
                          PARTITION BY digest ORDER BY first_seen_at, id) AS n FROM temp.seen) WHERE n = 1
                    ) AS k ON k.digest = s.digest WHERE s.id != k.id ORDER BY s.id""")


def _has(db: Path, table: str) -> bool:
    conn = sqlite3.connect(db)
    try:
        found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()
        return found is not None
    finally:
        conn.close()


def copy_rows(conn, table: str, appended: bool, name: str | None, part: Path, after: int = 0,
              also: tuple[str, ...] = (), verb: str | None = None) -> None:
    """Copy one stream's rows of one table, in id order (state rows: replacing an earlier stream's).

    With `after`, only the rows with a greater id (an appended table's rows the
    database does not hold yet: collector/record/follow.py); `also` are more
    statements run in the same transaction; `verb` replaces the INSERT's.
    """
    cols = columns(conn, table)
    label = (name or "default").replace("'", "")
    mapped = "article_id" in cols and table != "articles"
    select = [f't."{c}"' for c in cols]
    source = f'part."{table}" AS t'
    if mapped:
        select = ['COALESCE(m.new, t."article_id")' if c == "article_id" else v for c, v in zip(cols, select)]
        source += ' LEFT JOIN temp.article_map AS m ON m.old = t."article_id"'
    order = "t.id" if appended else "t.rowid"
    new = f"t.id > {int(after)}" if appended else "1"
    where, sql = f" WHERE {new}", []
    if table == "articles":
        where += " AND t.id NOT IN (SELECT old FROM temp.article_map)"
        sql.append(f"INSERT INTO main.{streams.MERGED_TABLE} SELECT 'articles', t.id, '{label}', 'folded', m.new, NULL "
                   f"FROM part.articles AS t JOIN temp.article_map AS m ON m.old = t.id WHERE {new} ORDER BY t.id")
    elif table in FOLDED or table in RELABELLED:
        match = matching(table)
        if table in FOLDED:
            where += f" AND NOT EXISTS (SELECT 1 FROM {match})"
            sql.append(f"INSERT INTO main.{streams.MERGED_TABLE} SELECT '{table}', t.id, '{label}', 'folded', "
                       f"(SELECT MIN(k.id) FROM {match}), NULL FROM {source} "
                       f"WHERE {new} AND EXISTS (SELECT 1 FROM {match}) ORDER BY t.id")
        else:
            col = RELABELLED[table]
            sql.append(f"INSERT INTO main.{streams.MERGED_TABLE} SELECT '{table}', t.id, '{label}', "
                       f"'relabelled', NULL, json_object('{col}', t.\"{col}\") FROM {source} "
                       f"WHERE {new} AND EXISTS (SELECT 1 FROM {match}) ORDER BY t.id")
            select = [f"CASE WHEN EXISTS (SELECT 1 FROM {match}) THEN t.\"{col}\" || '@{label}' "
                      f"ELSE t.\"{col}\" END" if c == col else v for c, v in zip(cols, select)]
    names = ", ".join(f'"{c}"' for c in cols)
    verb = verb or ("INSERT" if appended else "INSERT OR REPLACE")
    sql.append(f'{verb} INTO main."{table}" ({names}) SELECT {", ".join(select)} FROM {source}{where} ORDER BY {order}')
    if table == "snapshots":  # each copied row's facts as the stream's database folded them (its text may be left out)
        sql.append(f"INSERT OR REPLACE INTO main.{fold_latest.TABLE} SELECT COALESCE(m.new, f.article_id), "
                   f"f.captured_us, f.snapshot_id, f.facts FROM part.{fold_latest.TABLE} AS f "
                   f"LEFT JOIN temp.article_map AS m ON m.old = f.article_id WHERE f.snapshot_id > {int(after)} "
                   f"AND f.snapshot_id IN (SELECT id FROM main.snapshot_rows WHERE id > {int(after)})")
    try:
        _attached(conn, part, [*sql, *also])
    except sqlite3.IntegrityError as exc:
        raise ExportError(_conflict(table, name, exc)) from exc


def matching(table: str) -> str:
    """Return the FROM and WHERE of the merged rows a stream's row t (a FOLDED or RELABELLED table's) meets."""
    keys = FOLDED.get(table) or (RELABELLED[table],)
    return (f'main."{table}" AS k WHERE k.article_id = COALESCE(m.new, t.article_id) AND '
            + " AND ".join(f'k."{c}" IS t."{c}"' for c in keys))


def _conflict(table: str, name: str | None, exc: Exception) -> str:
    return (f"stream {_shown(name)} holds a {table} row that another stream holds too ({exc}): "
            "two streams recorded one observation, and the merged database keeps each once")
