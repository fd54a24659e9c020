"""The rollover: each period's export files (a calendar year's) in a record repository of their own.

Git's history keeps every file ever committed, so moving old files out of a
repository does not make it smaller, and one repository for the whole record
would pass GitHub's recommended 5 GB within two years at 40 outlets
(bench/record_years.py). Instead the record of each UTC period of
settings.RECORD_REPOSITORY_MONTHS months is committed to a repository of its
own, `<owner>/<name>-record-YYYY` for a year, `...-record-YYYY-MM` (its first
month) for a shorter period; the code repository holds no record.

The step at the boundary, done by the first writing job of a period: its
repository holds no export file yet, so the last file of the period
before is copied into it byte for byte, beside a CONTINUES.json naming the
repository and file it continues (collector/record/folder.py). The next
export then continues the chain from that copy (its `previous_sha256` is
the copy's SHA-256), so the file format knows nothing of years; the cached
working database, in sync with that file, resumes as ever. `export verify`
given both folders checks the chain across them, and `export rebuild`
reads them in order.
"""

from __future__ import annotations

import glob
import json
import shutil
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from collector import settings
from collector.clock import iso_seconds
from collector.record.fileformat import ExportError, file_sha256, read_header
from collector.record.folder import CONTINUES, PARTIAL, batches, continues, last_batch, record_name
from collector.record.streams import folder as stream_folder, named_streams


@dataclass(frozen=True)
class Repositories:
    """The record repositories a job of one moment deals with."""

    label: str  # this period's: '2027', or '2027-07' for periods shorter than a year
    current: str  # this period's repository: every writing job commits here
    previous: str  # the period before's: the one the current continues
    prepare: tuple[str, ...]  # to exist by now: this period's, and the next one's near this one's end


Period = tuple[int, int]  # (year, first month)


def period_of(moment: datetime, months: int | None = None) -> Period:
    """Return the record period (year, first month) holding a moment, in UTC."""
    months = _months(months)
    moment = moment.astimezone(timezone.utc)
    return moment.year, (moment.month - 1) // months * months + 1


def shift(period: Period, count: int, months: int | None = None) -> Period:
    """Return the period `count` periods after (or, negative, before) the one given."""
    index = period[0] * 12 + period[1] - 1 + count * _months(months)
    return index // 12, index % 12 + 1


def period_label(period: Period, months: int | None = None) -> str:
    """Return a period's name: the year for a year's period, else year and first month ('2027-07')."""
    return str(period[0]) if _months(months) == 12 else f"{period[0]}-{period[1]:02d}"


def repository_name(prefix: str, period: Period, months: int | None = None) -> str:
    """Return the record repository of a period: the code repository's owner/name and the period's suffix."""
    return prefix + settings.RECORD_REPOSITORY_SUFFIX.format(period=period_label(period, months))


def repositories(prefix: str, now: datetime, months: int | None = None) -> Repositories:
    """Return this period's and the last period's record repositories, and those that must exist by now."""
    period = period_of(now, months)
    following = shift(period, 1, months)
    ahead = datetime(*following, 1, tzinfo=timezone.utc) - timedelta(days=settings.RECORD_PREPARE_DAYS)
    current = repository_name(prefix, period, months)
    prepare = (current, repository_name(prefix, following, months)) if now >= ahead else (current,)
    return Repositories(period_label(period, months), current,
                        repository_name(prefix, shift(period, -1, months), months), prepare)


def since(prefix: str, first: str, now: datetime, months: int | None = None) -> list[str]:
    """Return every period's record repository from the one labelled `first` to now's, oldest first."""
    period = period_of(now, months)
    names = [repository_name(prefix, period, months)]
    while period_label(period, months) > first:
        period = shift(period, -1, months)
        names.append(repository_name(prefix, period, months))
    if period_label(period, months) != first:
        raise ExportError(f"{first!r} is not the label of a period up to now's "
                          f"({period_label(period_of(now, months), months)}): YYYY for a year, YYYY-MM otherwise")
    return names[::-1]


def _months(months: int | None) -> int:
    months = settings.RECORD_REPOSITORY_MONTHS if months is None else months
    if months < 1 or 12 % months:
        raise ExportError(f"a record period of {months} months does not divide a year")
    return months


def due(current: str | Path) -> bool:
    """Return True when a record folder holds no export file yet: a new period's repository, to roll over into."""
    return last_batch(current) is None and continues(current) is None


def seed(previous: str | Path, current: str | Path, repository: str, now: datetime) -> Path:
    """Return the file copied after starting a new period's record folder from the last file of the one before.

    `previous` needs to hold only its last file (a sparse checkout does);
    its signature and timestamp tokens beside it are copied with it.
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
    for companion in sorted(last.parent.glob(glob.escape(last.name) + ".*")):  # its signature and tokens
        if not companion.name.endswith(PARTIAL):
            shutil.copyfile(companion, target.parent / companion.name)
    link = {"repository": repository, "file": record_name(last), "batch": header["batch"],
            "sha256": file_sha256(target), "rolled_over_at": iso_seconds(now)}
    (Path(current) / CONTINUES).write_text(json.dumps(link, indent=1) + "\n", encoding="utf-8")
    batches(current)  # the folder now reads as the continuation it claims to be
    return target


def continued_from(record: str | Path) -> str | None:
    """Return the record repository a record folder continues, as its CONTINUES.json or any stream's says.

    A stream that began later, or a default stream no job writes any more, has none of its own:
    any one names the period before (.github/scripts/record_repository.sh history reads it so).
    """
    for name in [None, *named_streams(record)]:
        link = continues(stream_folder(record, name))
        if link is not None:
            return link["repository"]
    return None


def holds_record(record: str | Path) -> bool:
    """Return True when a record folder holds an export file or a CONTINUES.json, in any stream."""
    return any(last_batch(stream_folder(record, name)) is not None or continues(stream_folder(record, name))
               for name in [None, *named_streams(record)])
