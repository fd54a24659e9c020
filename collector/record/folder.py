"""The export folder: files by day and sequence number, each chained to the one before.

`YYYY/MM/DD/NNNNNN.jsonl.bz2` (UTC day of writing, sequence number). A file is
written once, atomically, and never rewritten; the folder is read in
sequence order, and a gap or a double in the sequence is an error.

The record rolls over: each calendar year's files live in a record
repository of their own (collector/record/rollover.py). A folder that
continues another holds `CONTINUES.json`, naming the repository it continues
and the file it starts from: a byte-for-byte copy of that repository's last
file, so its sequence starts there and its chain continues from it.
`chain` joins such folders, oldest first, into one sequence of files.
"""

from __future__ import annotations

import glob
import json
import os
import re
import secrets
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Iterator

from collector.record.fileformat import ExportError, file_bytes, file_sha256, read_header, read_text

_BATCH = re.compile(r"^(\d{4})/(\d{2})/(\d{2})/(\d{6})\.jsonl(?:\.bz2)?$")
_NAME = re.compile(r"(\d{6})\.jsonl(?:\.bz2)?")
PARTIAL = ".partial"  # a file being written; never part of the record
CONTINUES = "CONTINUES.json"  # in a folder that continues another's chain: which repository, from which file


def continues(out_dir: str | Path) -> dict | None:
    """Return what a folder's CONTINUES.json says (repository, file, batch, sha256), or None for a first folder."""
    path = Path(out_dir) / CONTINUES
    if not path.is_file():
        return None
    try:
        link = json.loads(path.read_text(encoding="utf-8"))
        if not all(isinstance(link.get(k), t) for k, t in (("repository", str), ("file", str),
                                                             ("batch", int), ("sha256", str))):
            raise ValueError("repository, file, batch and sha256 are required")
    except ValueError as exc:
        raise ExportError(f"{path}: not a CONTINUES.json ({exc})") from exc
    return link


def record_name(path: Path) -> str:
    """Return an export file's name inside its record folder ('YYYY/MM/DD/NNNNNN.jsonl.bz2'), whichever folder."""
    return "/".join(Path(path).parts[-4:])


def batches(out_dir: str | Path, *, tail: bool = False) -> list[Path]:
    """Return the export files in sequence order; raise if the sequence has a gap or a double.

    A folder that continues another starts at the file its CONTINUES.json
    names, which must be there, unchanged. With `tail`, the files present
    may start anywhere (a sparse checkout of the newest days holds no more),
    but must follow each other from there.
    """
    root = Path(out_dir)
    found = []
    for path in root.glob("[0-9][0-9][0-9][0-9]/[0-9][0-9]/[0-9][0-9]/*.jsonl*"):
        match = _BATCH.match(path.relative_to(root).as_posix())
        if match:
            found.append((int(match.group(4)), path))
    found.sort()
    link = continues(root)
    if tail:
        link, start = None, found[0][0] if found else 1
    elif link is not None:
        if not found or record_name(found[0][1]) != link["file"] or file_sha256(found[0][1]) != link["sha256"]:
            raise ExportError(f"{root} continues {link['repository']} from {link['file']}, but does not start "
                              "with that file unchanged")
    else:
        start = 1
    start = link["batch"] if link else start
    for expected, (seq, path) in enumerate(found, start=start):
        if seq != expected:
            raise ExportError(f"export file {path} has sequence {seq}, expected {expected}: "
                              "a file is missing or two exports forked the record")
    return [path for _, path in found]


def chain(folders: list[str | Path]) -> list[Path]:
    """Return the export files of record folders given oldest first, as one sequence.

    Each folder after the first must continue the one before it: it starts
    with a copy of that folder's last file, which is left out here. Raises
    ExportError where two folders do not join.
    """
    files: list[Path] = []
    for index, folder in enumerate(folders):
        found = batches(folder)
        if index == 0:
            files.extend(found)
            continue
        link, before = continues(folder), folders[index - 1]
        if link is None:
            raise ExportError(f"{folder} has no {CONTINUES}: it does not continue {before}")
        if not files or record_name(files[-1]) != link["file"] or file_sha256(files[-1]) != link["sha256"]:
            last = record_name(files[-1]) if files else "no file"
            raise ExportError(f"{folder} continues from {link['file']}, but the last file of {before} is "
                              f"{last}: the record forked at the boundary, or the folders are out of order")
        files.extend(found[1:])
    return files


def last_batch(out_dir: str | Path) -> Path | None:
    """Return the newest export file, found by descending the date folders (no full scan)."""
    level = [Path(out_dir)]
    for pattern in (r"\d{4}", r"\d{2}", r"\d{2}"):
        level = [d for parent in level if parent.is_dir()
                 for d in sorted(parent.iterdir(), reverse=True) if d.is_dir() and re.fullmatch(pattern, d.name)]
    for day in level:  # newest day first; a day folder may hold only partial files
        names = sorted((f for f in day.iterdir() if _NAME.fullmatch(f.name)),
                       key=lambda f: int(f.name[:6]), reverse=True)
        if names:
            return names[0]
    return None


def day_of(relative: str) -> tuple[str, str, str] | None:
    """Return (year, month, day) of a record-relative name such as '2026/09/01/...', or None."""
    match = re.match(r"^(\d{4})/(\d{2})/(\d{2})/", relative)
    return match.groups() if match else None


def read_ahead(paths: list[Path]) -> Iterator[tuple[Path, str | ExportError]]:
    """Yield (path, its text) in order, decompressing the next file in a thread meanwhile.

    bzip2 releases the interpreter while it works, so a rebuild's inserts and
    the next file's decompression overlap. An unreadable file yields its error.
    """
    def read(path: Path) -> str | ExportError:
        try:
            return read_text(path)
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            return ExportError(f"{path}: unreadable ({exc})")

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="record-read") as pool:
        ahead = pool.submit(read, paths[0]) if paths else None
        for index, path in enumerate(paths):
            text = ahead.result()
            ahead = pool.submit(read, paths[index + 1]) if index + 1 < len(paths) else None
            yield path, text


def verify(out_dir: str | Path | list, *, tail: bool = False) -> int:
    """Return the number of export files after checking their chain; raise ExportError if broken.

    Given several folders (record repositories, oldest first), checks the
    chain across them. A first folder that continues another is checked from
    the file it starts with, whose own link back is then taken as given; so
    is the oldest file present of a folder checked as a `tail` (one folder).
    """
    folders = out_dir if isinstance(out_dir, list) else [out_dir]
    if tail and len(folders) != 1:
        raise ExportError("the tail of one record folder is checked at a time")
    files = batches(folders[0], tail=True) if tail else chain(folders)
    previous_sha, through = None, {}
    if files and (tail or continues(folders[0]) is not None):
        start = read_header(files[0])
        previous_sha, through = start.get("previous_sha256"), start.get("after")
    for path in files:
        header = read_header(path)
        if header.get("previous_sha256") != previous_sha:
            raise ExportError(f"{path}: does not follow the file before it (SHA-256 chain broken)")
        if header.get("after") != through:
            raise ExportError(f"{path}: starts after ids {header.get('after')}, "
                              f"but the file before it ended at {through}")
        previous_sha, through = file_sha256(path), header["through"]
    return len(files)


def write_new(path: Path, text: str) -> Path:
    """Write a file that must not exist yet, atomically (temporary name, fsync, link).

    A `.partial` left beside it by an export that was killed is never part of
    the record (.gitignore keeps partials out of every commit): it is removed.
    This write's own temporary file has a name no other writer uses, and is
    removed whether the write succeeds or fails.
    """
    if path.exists():
        raise ExportError(f"{path} exists: an export file is never rewritten")
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob(glob.escape(path.name) + "*" + PARTIAL):
        stale.unlink(missing_ok=True)
    temporary = path.with_name(f"{path.name}.{os.getpid()}-{secrets.token_hex(4)}{PARTIAL}")
    try:
        with open(temporary, "xb") as fh:
            fh.write(file_bytes(text, path))
            fh.flush()
            os.fsync(fh.fileno())
        os.link(temporary, path)  # fails if the name appeared meanwhile; rename would overwrite
    finally:
        temporary.unlink(missing_ok=True)
    return path
