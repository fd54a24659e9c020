"""One writer at a time per database: an advisory lock on a file beside it.

Two runs on one database would each capture every queued article and send a
host requests milliseconds apart. Every command that writes the database
(run, discover, archive, export new, export rebuild) holds this lock for its
whole life, taken before the database is opened, so a second one waits, then
stops with DatabaseBusy before it has sent a request or written a row.

The lock is flock(2) on `<database>.lock`. The kernel releases it when the
holding process ends, however it ends (SIGKILL, a runner's timeout), so a
lock file left behind by a killed run never blocks the next one: only a live
holder does. The file names the holder (process id, command, when) for the
message a refused command prints.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from collector.errors import TakedownWatchError

POLL_SECONDS = 0.2  # between two tries while waiting for the holder to finish


class DatabaseBusy(TakedownWatchError):
    """Another live process holds the database's lock; nothing was sent or written."""


def lock_path(db: str | Path) -> Path:
    """Return the lock file of a database: the database's path with '.lock' added."""
    return Path(f"{db}.lock")


@contextmanager
def exclusive(db: str | Path, command: str, wait_seconds: float) -> Iterator[Path]:
    """Hold the database's lock for the block, waiting at most wait_seconds for a holder to finish."""
    path = lock_path(db)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise TakedownWatchError(f"cannot open database {db}: its lock file {path}: {exc}") from exc
    try:
        _acquire(fd, path, wait_seconds)
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "command": command,
                                  "since": datetime.now(timezone.utc).isoformat(timespec="seconds")}).encode(), 0)
        try:
            yield path
        finally:
            os.ftruncate(fd, 0)  # a finished holder leaves no name behind
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _acquire(fd: int, path: Path, wait_seconds: float) -> None:
    """Take the lock, or raise DatabaseBusy naming the holder once wait_seconds have passed."""
    give_up = time.monotonic() + max(0.0, wait_seconds)
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= give_up:
                raise DatabaseBusy(f"the database is in use by {holder(path)} (lock {path}); "
                                   f"waited {wait_seconds:g} s. Nothing was sent or written; "
                                   "run again when it has finished") from None
            time.sleep(POLL_SECONDS)


def holder(path: Path) -> str:
    """Return a description of the process named in a lock file ('another process' when unreadable)."""
    try:
        named = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        named = {}
    if not named:
        return "another process"
    return f"`{named.get('command')}` (process {named.get('pid')}, since {named.get('since')})"
