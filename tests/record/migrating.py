"""What the migration tests share: a database the code before wrote, damaged, is refused and left as it was."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from collector.record.store import Store, StoreError


def refused_unchanged(path: Path, damage: str, match: str, version: int) -> sqlite3.Connection:
    """Run `damage` (SQL) on the database, open it with Store: assert the migration is refused with an error
    matching `match` and the file rolled back whole (its dump as before, still at `version`). Return a plain
    connection to it, for the caller's own looks (the caller closes it)."""
    raw = sqlite3.connect(path)
    raw.execute(damage)
    raw.commit()
    image = list(raw.iterdump())
    raw.close()
    with pytest.raises(StoreError, match=match):
        Store(path)
    raw = sqlite3.connect(path)
    assert list(raw.iterdump()) == image and raw.execute("PRAGMA user_version").fetchone()[0] == version
    return raw
