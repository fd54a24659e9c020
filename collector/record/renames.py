"""Migration 19: a database's own tables named for what they are, never `export_` unless the export's.

A table whose name starts with `export_` was any table the export leaves
out, and most were not the export's at all: the running aggregates, what a
follower merged and how far it read, what a pruning left out. Since this
migration each prefix has one meaning (collector/record/fileformat.py
NOT_RECORDED), and a table the record is not made of starts with one of them
(besides the search index and the storage tables behind the record's views):

* `export_`: the export's own state (export_head, export_shadow_*,
  export_stream, export_written);
* `fold_`: state folded forward from the rows, never an observation, that the
  record's rows make again (record/fold.py, fold_keys.py, by triggers; the
  running aggregates, publish/tallies.py, `fold_tally_*`, by watermark);
* `sync_`: how a database that follows or merges every stream came in sync
  with the record (`sync_followed`, `sync_merged`: record/follow.py, merge.py);
* `prune_`: what a pruning left out and kept instead (`prune_state`,
  `prune_identities`: collect/prune.py; `prune_dormant`: record/dormant.py;
  `prune_texts`, until migration 21 folded it into record/fold_latest.py).

Each table is renamed in place (ALTER TABLE ... RENAME TO: rows, keys and
rowids unchanged); a table the database never had is left so. The index of
the aggregates' first captures is made again under its table's new name.
A dormant row (record/dormant.py) packed before still names its text's
digests by export_compact_texts inside it: that key is its format's, frozen.
What reads a database without opening it (record/store.py open_read_only:
the evidence bundle, `export verify`, the health checks) finds the follower's
two tables by either name (`name_in`). A database newer code
wrote is refused (Store.migrate): this code would not find its tables.

Migration 20 (`migrate_columns`): a column's name likewise, where it said
"level" for "pruned" (RENAMED_COLUMNS; ALTER TABLE ... RENAME COLUMN). A
reader of a database not opened by Store finds it by either name
(`column_in`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

_TALLIES = ("marks", "counts", "listed", "queued", "first_listed", "articles", "archived", "snapshots", "keys")
RENAMED = {
    **{f"export_tally_{name}": f"fold_tally_{name}" for name in _TALLIES},
    "export_merged": "sync_merged",
    "export_followed": "sync_followed",
    "export_level": "prune_state",
    "export_identities": "prune_identities",
    "export_dormant": "prune_dormant",
    "export_compact_texts": "prune_texts",
}
_FORMER = {new: old for old, new in RENAMED.items()}
RENAMED_COLUMNS = {("prune_state", "levelled_at"): "pruned_at"}  # the pruning's instant (collect/prune.py)
# Indexes keep their names through a rename: this one is made again under the new name (tallies.CREATE's).
_INDEXES = {"export_tally_articles_j": "CREATE INDEX fold_tally_articles_j ON fold_tally_articles(captured_j)"}


def migrate(conn: sqlite3.Connection, execute: Callable[[str], None]) -> None:
    """Migration 19: rename each table of RENAMED the database has."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    for old, new in RENAMED.items():
        if old in tables:
            if new in tables:
                raise ValueError(f"both {old} and {new} are in the database: which one holds its state is unknown")
            execute(f'ALTER TABLE "{old}" RENAME TO "{new}"')
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    for old, create in _INDEXES.items():
        if old in indexes:
            execute(f'DROP INDEX "{old}"')
            execute(create)


def name_in(conn: sqlite3.Connection, table: str) -> str:
    """Return the name `table` has in a database: its own, or its name of RENAMED in one read without being
    opened by Store since it was written before this migration (open_read_only: the evidence bundle,
    `export verify`, the health checks)."""
    old = _FORMER.get(table)
    if old is None:
        return table
    found = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN (?, ?)",
                                        (table, old))}
    return old if found == {old} else table


def migrate_columns(conn: sqlite3.Connection, execute: Callable[[str], None]) -> None:
    """Migration 20: rename each column of RENAMED_COLUMNS the database has."""
    for (table, old), new in RENAMED_COLUMNS.items():
        names = {r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')}
        if old in names:
            if new in names:
                raise ValueError(f"both {old} and {new} are columns of {table}: which one holds its value is unknown")
            execute(f'ALTER TABLE "{table}" RENAME COLUMN "{old}" TO "{new}"')


def column_in(conn: sqlite3.Connection, table: str, column: str) -> str | None:
    """Return the name `column` of `table` has in a database (its own or its former one), or None when it has
    neither (a column added after the database was written)."""
    names = {r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')}
    if column in names:
        return column
    former = next((old for (t, old), new in RENAMED_COLUMNS.items() if (t, new) == (table, column)), None)
    return former if former in names else None
