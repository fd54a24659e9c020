"""The triggers that make an observation table (or view) refuse UPDATE and DELETE."""

from __future__ import annotations


def append_only_triggers(table: str, *, view: bool = False) -> str:
    """Return the SQL that makes one table (or view) refuse UPDATE and DELETE."""
    message = f"{table} is append-only: observations are never updated or deleted"
    when = "INSTEAD OF" if view else "BEFORE"
    return f"""
CREATE TRIGGER IF NOT EXISTS {table}_no_update {when} UPDATE ON {table}
BEGIN SELECT RAISE(ABORT, '{message}'); END;
CREATE TRIGGER IF NOT EXISTS {table}_no_delete {when} DELETE ON {table}
BEGIN SELECT RAISE(ABORT, '{message}'); END;
"""
