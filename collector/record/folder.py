"""The export folder: files by day and sequence number, each chained to the one before.

`YYYY/MM/DD/NNNNNN.jsonl.bz2` (UTC day of writing, sequence number). A file is
written once, atomically, and never rewritten; the folder is read in
sequence order, and a gap or a double in the sequence is an error.
"""

from __future__ import annotations

import glob
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


def batches(out_dir: str | Path) -> list[Path]:
    """Return the export files in sequence order; raise if the sequence has a gap or a double."""
    root = Path(out_dir)
    found = []
    for path in root.glob("[0-9][0-9][0-9][0-9]/[0-9][0-9]/[0-9][0-9]/*.jsonl*"):
        match = _BATCH.match(path.relative_to(root).as_posix())
        if match:
            found.append((int(match.group(4)), path))
    found.sort()
    for expected, (seq, path) in enumerate(found, start=1):
        if seq != expected:
            raise ExportError(f"export file {path} has sequence {seq}, expected {expected}: "
                              "a file is missing or two exports forked the record")
    return [path for _, path in found]


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


def verify(out_dir: str | Path) -> int:
    """Return the number of export files after checking their chain; raise ExportError if broken."""
    previous_sha, through = None, {}
    files = batches(out_dir)
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
