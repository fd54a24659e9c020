"""The record: one SQLite database, migrated forward, written in transactions.

Threads share one connection behind a lock, so every write is serialised and
each logical step is one transaction: a run killed at any moment leaves the
database as it was after the last complete step.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import sqlite_utils

from collector.record import fold_keys, fold_latest, fold_visit, references, schema, search
from collector.record.fileformat import APPEND_BY_ID
from collector.record.streams import next_id
from collector.errors import RecordWriteError, TakedownWatchError

# SQLite primary result codes that say the database itself cannot be used (the
# disk is full, the file cannot be read or written, it is damaged), not that a
# statement is wrong: https://www.sqlite.org/rescode.html.
UNUSABLE = {3: "SQLITE_PERM", 7: "SQLITE_NOMEM", 8: "SQLITE_READONLY", 10: "SQLITE_IOERR",
            11: "SQLITE_CORRUPT", 13: "SQLITE_FULL", 14: "SQLITE_CANTOPEN", 26: "SQLITE_NOTADB"}


class StoreError(TakedownWatchError):
    """The database could not be opened or migrated."""


class StoreWriteError(RecordWriteError):
    """The database cannot be written or read any more (a full disk, an I/O error): the run stops."""


class Store:
    """Gives access to the database; every write goes through `transaction()`."""

    def __init__(self, path: str | Path, *, wal: bool = True):
        self.path = str(path)
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self.conn = sqlite3.connect(
                self.path, check_same_thread=False, isolation_level=None, timeout=30
            )
            self.conn.execute("PRAGMA foreign_keys = ON")
            self.conn.execute("PRAGMA busy_timeout = 30000")
            if wal and self.path != ":memory:":
                self.conn.execute("PRAGMA journal_mode = WAL")
                self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.row_factory = sqlite3.Row
            search.register_functions(self.conn)  # the search index's folding (migration 8 and after)
            fold_keys.register(self.conn)  # the address keys' digests (migration 18 and after)
            fold_latest.register(self.conn)  # the snapshots' facts (migration 21 and after)
            fold_visit.register(self.conn)  # the revisits' keys and addresses (migration 22 and after)
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(f"cannot open database {self.path}: {exc}") from exc
        self.db = sqlite_utils.Database(self.conn)
        self._lock = threading.RLock()
        self.migrate()
        if references.pruned(self.conn):  # its rows point at rows left out: checked at export (record/references.py)
            self.conn.execute("PRAGMA foreign_keys = OFF")

    # -- schema -------------------------------------------------------------

    def schema_version(self) -> int:
        """Return the number of migrations applied."""
        row = self.conn.execute("PRAGMA user_version").fetchone()
        return int(row[0])

    def migrate(self) -> None:
        """Apply every migration newer than the database, then the triggers."""
        if sqlite3.sqlite_version_info < (3, 35, 0):  # migration 5 uses ALTER TABLE DROP COLUMN
            raise StoreError(f"SQLite {sqlite3.sqlite_version} is too old: the record needs 3.35 or newer")
        try:
            with self.transaction():
                current = self.schema_version()
                if current > len(schema.MIGRATIONS):  # newer code wrote it: its tables may be named otherwise
                    raise StoreError(f"database {self.path} has schema {current}, newer than this code's "
                                     f"{len(schema.MIGRATIONS)}: open it with the code that wrote it, or rebuild it "
                                     "from the record (`export rebuild`)")
                had = set(self.db.table_names()) if current else set()
                for number, script in enumerate(schema.MIGRATIONS, start=1):
                    if number > current:
                        run(self.conn, script, self._executescript_in_tx)
                        self.conn.execute(f"PRAGMA user_version = {number}")
                # Only a table a migration just created gets its triggers here: a
                # trigger missing from an older table is tampering, never recreated.
                for table in (*schema.APPEND_ONLY_TABLES, *schema.STORAGE_TABLES):
                    if table not in had and self.db[table].exists():  # a view has its own triggers
                        self._executescript_in_tx(schema.append_only_triggers(table))
        except (sqlite3.Error, ValueError) as exc:  # ValueError: a row a migration reads is damaged (record/fold.py)
            raise StoreError(f"cannot migrate database {self.path}: {exc}") from exc
        self.tampering = trigger_problems(self.conn)

    def _executescript_in_tx(self, script: str) -> None:
        # executescript() would COMMIT first; run statement by statement so the
        # migration stays inside the caller's transaction.
        for statement in _split_sql(script):
            self.conn.execute(statement)

    # -- transactions -------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Yield the connection inside one IMMEDIATE transaction (re-entrant).

        An error that makes the database unusable (disk full, I/O error)
        raises StoreWriteError, so the run stops with a clear message instead
        of recording every later step as a failure of the site it was about.
        """
        with self._lock, self._unusable():
            if self.conn.in_transaction:
                yield self.conn
                return
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                # SQLite rolls a transaction back itself after some errors
                # (SQLITE_FULL among them): a second ROLLBACK would fail and hide the first error.
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    @contextmanager
    def _unusable(self) -> Iterator[None]:
        """Turn an error that makes the database unusable into StoreWriteError, naming the file."""
        try:
            yield
        except sqlite3.Error as exc:
            code = getattr(exc, "sqlite_errorcode", None)
            if code is None or (code & 0xFF) not in UNUSABLE:
                raise
            raise StoreWriteError(f"cannot write the database {self.path}: {exc} "
                                  f"({UNUSABLE[code & 0xFF]}); the run stops, unfinished") from exc

    def insert(self, table: str, row: dict[str, Any]) -> int:
        """Insert one row and return its rowid (its id, for a view that stores rows elsewhere)."""
        with self.transaction() as conn:
            return insert_row(conn, table, row)

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        """Run one statement inside a transaction and return its cursor."""
        with self.transaction() as conn:
            return conn.execute(sql, params)

    def query(self, sql: str, params: Any = ()) -> list[sqlite3.Row]:
        """Return every row of a read-only query."""
        with self._lock, self._unusable():
            return self.conn.execute(sql, params).fetchall()

    def one(self, sql: str, params: Any = ()) -> sqlite3.Row | None:
        """Return the first row of a query, or None."""
        with self._lock, self._unusable():
            return self.conn.execute(sql, params).fetchone()

    def reader(self) -> "Reader":
        """Return a stand-in for the connection that only reads, each statement under the lock alone.

        For the reads that go before a write (a page's comparison with the one
        before it): they hold the store's lock one statement at a time, never
        for the work between them.
        """
        return Reader(self)

    def checkpoint(self) -> None:
        """Fold the WAL into the main file so the database is one file at rest."""
        with self._lock:
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def close(self) -> None:
        """Checkpoint and close the connection."""
        with self._lock:
            try:
                self.checkpoint()
            finally:
                self.conn.close()


class Reader:
    """A connection's execute() for reads: the rows fetched at once, under the store's lock (Store.reader)."""

    def __init__(self, store: Store):
        self._store = store

    def execute(self, sql: str, params: Any = ()) -> "_Rows":
        return _Rows(self._store.query(sql, params))


class _Rows(list):
    """Rows already fetched, read as a cursor is: fetchone(), fetchall(), iteration."""

    def fetchone(self):
        return self[0] if self else None

    def fetchall(self):
        return list(self)


def _sql_value(value: Any) -> Any:
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


def run(conn: sqlite3.Connection, script, execute) -> None:
    """Run one migration: a script, statement by statement, or a function given the connection and `execute`."""
    if callable(script):
        script(conn, execute)
    else:
        execute(script)


def _split_sql(script: str) -> list[str]:
    """Return the statements of a script, keeping trigger bodies whole."""
    statements: list[str] = []
    for complete in _complete_statements(script):
        if complete.strip():
            statements.append(complete)
    return statements


def _complete_statements(script: str) -> Iterator[str]:
    buffer = ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer
            buffer = ""
    if buffer.strip():
        yield buffer


def expected_triggers() -> dict[str, str]:
    """Return name -> SQL of every trigger a database of the latest schema has (from a fresh one)."""
    if not _EXPECTED:
        conn = sqlite3.connect(":memory:")
        search.register_functions(conn)
        fold_keys.register(conn)
        fold_latest.register(conn)
        fold_visit.register(conn)
        try:
            for script in schema.MIGRATIONS:
                run(conn, script, lambda text: [conn.execute(s) for s in _split_sql(text)])
            for table in (*schema.APPEND_ONLY_TABLES, *schema.STORAGE_TABLES):
                if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                                (table,)).fetchone():
                    for statement in _split_sql(schema.append_only_triggers(table)):
                        conn.execute(statement)
            _EXPECTED.update(_triggers(conn))
        finally:
            conn.close()
    return dict(_EXPECTED)


_EXPECTED: dict[str, str] = {}


def _triggers(conn: sqlite3.Connection) -> dict[str, str]:
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall()
    return {name: " ".join((sql or "").replace("IF NOT EXISTS ", "").split()) for name, sql in rows}


def trigger_problems(conn: sqlite3.Connection) -> list[str]:
    """Return what is wrong with the database's triggers: missing, altered or added ones (empty: none)."""
    expected, found = expected_triggers(), _triggers(conn)
    problems = [f"trigger {name} is missing" for name in sorted(set(expected) - set(found))]
    problems += [f"trigger {name} is not as the schema defines it" for name in sorted(set(expected) & set(found))
                 if expected[name] != found[name]]
    problems += [f"trigger {name} is not part of the schema" for name in sorted(set(found) - set(expected))]
    return problems


def open_read_only(db: str | Path) -> sqlite3.Connection:
    """Return a read-only connection to the record (reading can never change it)."""
    path = Path(db)
    if not path.exists():
        raise TakedownWatchError(f"no database at {db}")
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    return conn


def insert_row(conn: sqlite3.Connection, table: str, row: dict[str, Any]) -> int:
    """Insert one row inside the caller's transaction; return its id (for a view too).

    An INSERT through a view's trigger leaves lastrowid as it was, so a view's
    row is given its id first: the next id of the storage table that holds them.
    """
    given = "id" in row
    if not given and (table in schema.VIEW_ROWS or table in APPEND_BY_ID):
        # The next id of this database's stream (collector/record/streams.py); a view's, of its storage table.
        row = {"id": next_id(conn, schema.VIEW_ROWS.get(table, table)), **row}
    columns = ", ".join(f'"{c}"' for c in row)
    marks = ", ".join("?" for _ in row)
    values = [_sql_value(v) for v in row.values()]
    cursor = conn.execute(f'INSERT INTO "{table}" ({columns}) VALUES ({marks})', values)
    allocated = "id" in row and not given
    return int(row["id"]) if table in schema.VIEW_ROWS or allocated else int(cursor.lastrowid)
