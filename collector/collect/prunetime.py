"""Whether a pruning fits before a job's deadline: estimated from what the last pruning of this database cost.

`export prune` copies what the jobs read into a new file, so its time grows
with the working database. .github/scripts/sync_database.sh runs it in
collect (deadline 8 minutes after the start, 18-minute timeout) as well as in
archive and pages: given the job's deadline, a pruning that might run past it is
left for a later job, the database used as it is (it is in sync with the
record, only larger).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from collector import settings
from collector.record import shadows
from collector.record.store import Store


def estimate(db_path: str | Path) -> float:
    """Return the seconds a pruning of the database is expected to take (settings.PRUNE_TIME_SAFETY included)."""
    path = Path(db_path)
    size = sum(p.stat().st_size for p in (path, Path(f"{path}-wal")) if p.exists())
    store = Store(path)
    try:
        cost = _last_cost(store.conn)
    finally:
        store.close()
    if cost is None:
        return settings.PRUNE_TIME_SAFETY * size / settings.PRUNE_BYTES_PER_SECOND
    pruned, seconds = cost
    return settings.PRUNE_TIME_SAFETY * seconds * max(1.0, size / max(pruned, 1))


def fits(db_path: str | Path, deadline: datetime, now: datetime) -> tuple[bool, float]:
    """Return (whether a pruning started at `now` is expected to end before `deadline`, the seconds expected)."""
    seconds = estimate(db_path)
    return (deadline - now).total_seconds() >= seconds, seconds


def _last_cost(conn) -> tuple[int, float] | None:
    """Return (bytes of the database last pruned, seconds it took), or None (never, or not recorded)."""
    table = shadows.PRUNE_TABLE
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone():
        return None
    names = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
    if not {"source_bytes", "seconds"} <= names:
        return None
    row = conn.execute(f"SELECT source_bytes, seconds FROM {table} WHERE id = 1").fetchone()
    return None if row is None or row[0] is None or row[1] is None else (row[0], row[1])
