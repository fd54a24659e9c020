"""The yearly rollover: each calendar year's export files in a record repository of their own.

A year of the record at 40 outlets is about 3.8 GiB of git objects
(bench/storage_growth.py); two years in one repository would pass GitHub's
recommended 5 GB, and git's history keeps every file ever committed, so
moving old files out of a repository does not make it smaller. Instead the
record of each UTC year is committed to `<owner>/<name>-record-YYYY`
(settings.RECORD_REPOSITORY_SUFFIX), and the code repository holds no record.

The step at the boundary, done by the first writing job of a year: its
year's repository holds no export file yet, so the last file of the year
before is copied into it byte for byte, beside a CONTINUES.json naming the
repository and file it continues (collector/record/folder.py). The next
export then continues the chain from that copy (its `previous_sha256` is
the copy's SHA-256), so the file format knows nothing of years; the cached
working database, level with that file, resumes as ever. `export verify`
given both folders checks the chain across them, and `export rebuild`
reads them in order.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from collector import settings
from collector.clock import iso_seconds
from collector.record.fileformat import ExportError, file_sha256, read_header
from collector.record.folder import CONTINUES, batches, continues, last_batch, record_name


@dataclass(frozen=True)
class Repositories:
    """The record repositories a job of one moment deals with."""

    current: str  # this UTC year's: every writing job commits here
    previous: str  # last year's: the one the current continues
    prepare: tuple[str, ...]  # to exist by now: this year's, and next year's near the year's end


def repository_name(prefix: str, year: int) -> str:
    """Return the record repository of a year: the code repository's owner/name and the year's suffix."""
    return prefix + settings.RECORD_REPOSITORY_SUFFIX.format(year=year)


def repositories(prefix: str, now: datetime) -> Repositories:
    """Return this year's and last year's record repositories, and those that must exist by now."""
    year = now.astimezone(timezone.utc).year
    current = repository_name(prefix, year)
    ahead = datetime(year + 1, 1, 1, tzinfo=timezone.utc) - timedelta(days=settings.RECORD_PREPARE_DAYS)
    prepare = (current, repository_name(prefix, year + 1)) if now >= ahead else (current,)
    return Repositories(current, repository_name(prefix, year - 1), prepare)


def due(current: str | Path) -> bool:
    """Return True when a record folder holds no export file yet: a new year's repository, to be rolled over."""
    return last_batch(current) is None and continues(current) is None


def seed(previous: str | Path, current: str | Path, repository: str, now: datetime) -> Path:
    """Return the file copied after starting a new year's record folder from the last file of the one before.

    `previous` needs to hold only its last file (a sparse checkout does).
    Raises ExportError when the rollover is not due (the folder holds the
    record already) or there is nothing to continue.
    """
    if not due(current):
        raise ExportError(f"{current} holds export files already: the rollover into it was done")
    last = last_batch(previous)
    if last is None:
        raise ExportError(f"{previous} holds no export file: nothing to continue")
    header = read_header(last)  # refuses a damaged or foreign file
    target = Path(current) / record_name(last)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(last, target)
    if file_sha256(target) != file_sha256(last):
        raise ExportError(f"{target}: the copy of {last} differs from it")
    link = {"repository": repository, "file": record_name(last), "batch": header["batch"],
            "sha256": file_sha256(target), "rolled_over_at": iso_seconds(now)}
    (Path(current) / CONTINUES).write_text(json.dumps(link, indent=1) + "\n", encoding="utf-8")
    batches(current)  # the folder now reads as the continuation it claims to be
    return target
