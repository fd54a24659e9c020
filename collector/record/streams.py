"""Record streams: one record written by many jobs, each with its own folder, hash chain and id range.

Each (vantage, shard) job of the collect workflow writes a stream of its own,
so no two jobs ever write one chain and none waits for another. The default
stream is the record folder itself, exactly as one job has always written it;
stream NAME lives in `<record folder>/streams/NAME/`, a record folder of the
same layout (collector/record/folder.py), with its own chain, signatures,
tokens and yearly CONTINUES.json.

Identifiers stay unique across streams without any coordination: every row
id a stream's database allocates lies in the stream's own range,
(base, base + settings.STREAM_ID_RANGE], where base is derived from the
stream's name alone (a SHA-256 of it; 0 for the default stream, whose ids
are the ones it always had). Integer ranges rather than text ids: every
reference in the record (foreign keys, request chains, evidence JSON, the
$same references of the file format) stays the integer it is, so a stream's
files, a stream's database and today's record are read by the same code, and
an id still says which stream wrote it (`in_range`). The database of a
stream records its name (table export_stream); `next_id` allocates from it.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from pathlib import Path

from collector import settings
from collector.errors import BadArgument, TakedownWatchError

MERGED = "+merged"  # export_stream of a database that merges every stream (never a stream's name)
# Since migration 19 (collector/record/renames.py) the two tables of a database that follows or merges every
# stream are named for how it came in sync with the record: V13 and V14 below made them as export_merged and
# export_followed.
MERGED_TABLE = "sync_merged"  # the rows two streams both recorded, and how each was merged (record/merge.py)
FOLLOWED_TABLE = "sync_followed"  # how far a follower has read each stream (record/follow.py)

STREAMS_DIR = "streams"  # inside a record folder: one folder per stream other than the default
_NAME = re.compile(r"\A[a-z0-9][a-z0-9-]{0,62}\Z")

# The stream a database's rows belong to (no row: the default stream), and in a database that merges
# every stream, the rows two streams both recorded (collector/record/merge.py). Bookkeeping, never exported.
V13 = """
CREATE TABLE export_stream (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    name TEXT NOT NULL
);
CREATE TABLE export_merged (
    table_name TEXT NOT NULL,
    row_id INTEGER NOT NULL,        -- the row as its stream's files hold it
    stream TEXT NOT NULL,
    how TEXT NOT NULL,              -- folded: it is row kept_id of an earlier stream; relabelled: see detail
    kept_id INTEGER,
    detail TEXT,
    PRIMARY KEY (table_name, row_id)
);
"""

# A database that follows every record stream (collector/record/follow.py): for each stream ('' for
# the default one) and each appended table, the last id of it the database holds, and when the stream's
# last file read was written. Bookkeeping, never exported.
V14 = """
CREATE TABLE export_followed (
    stream TEXT NOT NULL,
    table_name TEXT NOT NULL,       -- an appended table; '' for the stream's own line
    through INTEGER NOT NULL,       -- the last id of the stream's rows the database holds
    written_at TEXT,                -- on the stream's own line: its last file's written_at
    PRIMARY KEY (stream, table_name)
);
"""


class StreamError(TakedownWatchError):
    """A database, a folder and a stream name that do not belong together."""


def check_name(name: str) -> str:
    """Return a stream name (lower-case letters, digits, '-'; 1-63 characters); refuse anything else."""
    if not _NAME.match(name or ""):
        raise BadArgument(f"{name!r} is not a stream name (lower-case letters, digits and '-', "
                          "starting with a letter or digit, at most 63)", option="--stream")
    return name


def stream_name(vantage: str, shard: tuple[int, int]) -> str:
    """Return the stream of a (vantage, shard K of N) job, e.g. 'bd-dhaka-2of4'."""
    k, n = shard
    return check_name(re.sub(r"[^a-z0-9]+", "-", vantage.lower()).strip("-") + f"-{k}of{n}")


def base(name: str | None) -> int:
    """Return the id below a stream's range: 0 for the default stream, else one derived from the name."""
    if not name:
        return 0
    digest = int.from_bytes(hashlib.sha256(check_name(name).encode("utf-8")).digest()[:8], "big")
    return (digest % (settings.STREAM_RANGES - 1) + 1) * settings.STREAM_ID_RANGE


TOP = settings.STREAM_RANGES * settings.STREAM_ID_RANGE  # the last id of the last stream's range


def in_some_stream(row_id: int) -> bool:
    """Return True when row_id lies in some stream's range (the default's or a named one's)."""
    return 0 < row_id <= TOP


def in_range(name: str | None, row_id: int) -> bool:
    """Return True when row_id lies in the stream's range."""
    low = base(name)
    return low < row_id <= low + settings.STREAM_ID_RANGE


def stream_of(conn: sqlite3.Connection) -> str | None:
    """Return the stream the database's rows belong to (None: the default stream)."""
    row = conn.execute("SELECT name FROM export_stream WHERE id = 1").fetchone()
    return row[0] if row else None


def set_stream(conn: sqlite3.Connection, name: str | None) -> None:
    """Make the database the given stream's; refuse one that holds another stream's rows.

    A database with no row at all takes any stream; one that holds rows keeps
    the stream they were written in (the default stream's rows cannot become
    another's: their ids lie in the default range).
    """
    current = stream_of(conn)
    if current == (name or None):
        return
    if current is not None:
        raise StreamError(f"the database holds stream {current!r}, not {name or 'the default stream'!r}: "
                          "each stream has a working database of its own")
    if conn.execute("SELECT 1 FROM runs LIMIT 1").fetchone():
        raise StreamError(f"the database holds the default stream's rows, not stream {name!r}'s: "
                          "each stream has a working database of its own")
    conn.execute("INSERT INTO export_stream (id, name) VALUES (1, ?)", (check_name(name),))


def next_id(conn: sqlite3.Connection, table: str) -> int:
    """Return the id the next row of table gets: the next in this database's stream's range.

    For the default stream it is MAX(id) + 1, the id SQLite itself gives. Only
    the stream's own range is looked at: a database that follows every stream
    and writes one (the archive job's, collector/record/follow.py) holds the
    other streams' rows too.
    """
    name = stream_of(conn)
    if name == MERGED:
        raise StreamError("this database merges every stream of the record: it is read, never written")
    low = base(name)
    top = conn.execute(f'SELECT MAX(id) FROM "{table}" WHERE id > ? AND id <= ?',
                       (low, low + settings.STREAM_ID_RANGE)).fetchone()[0] or 0
    following = max(top, low) + 1
    if following > low + settings.STREAM_ID_RANGE:
        raise StreamError(f"stream {name or 'default'} has used every id of its range in {table}")
    return following


def folder(record: str | Path, name: str | None) -> Path:
    """Return the folder of a stream inside a record folder (the default stream: the folder itself)."""
    return Path(record) if not name else Path(record) / STREAMS_DIR / check_name(name)


def named_streams(record: str | Path) -> list[str]:
    """Return the names of the streams a record folder holds besides the default one, sorted."""
    parent = Path(record) / STREAMS_DIR
    if not parent.is_dir():
        return []
    return sorted(d.name for d in parent.iterdir() if d.is_dir() and _NAME.match(d.name))
