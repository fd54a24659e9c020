"""Reading back a response record from a WARC file the collector wrote (net/warc.py writes them)."""

from __future__ import annotations

import io
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from collector import settings
from collector.errors import TakedownWatchError
from collector.net.wire import undo_content_encoding


class WarcReadError(TakedownWatchError):
    """A snapshot's HTML could not be read back from its WARC record."""


def read_response_body(warc_root: str | Path, warc_file: str, offset: int) -> tuple[bytes, str | None]:
    """Return (body with Content-Encoding undone, Content-Type) of the response record at offset."""
    path = Path(warc_root) / warc_file
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            return _response_body(handle, f"{path}:{offset}")
    except OSError as exc:
        raise WarcReadError(f"cannot read {path}:{offset}: {exc}") from exc


def response_body_of(record: bytes, where: str) -> tuple[bytes, str | None]:
    """Return (body, Content-Type) of a response record given as its own bytes (one gzip member).

    For a record read out of a published file by its offset and length
    (collector/net/assets.py); `where` names it in errors.
    """
    return _response_body(io.BytesIO(record), where)


def _response_body(handle, where: str) -> tuple[bytes, str | None]:
    try:
        record = next(iter(ArchiveIterator(handle)))
        if record.rec_type != "response" or record.http_headers is None:
            raise WarcReadError(f"{where} is a {record.rec_type} record, not a response")
        headers = {k.lower(): v for k, v in record.http_headers.headers}
        raw = record.raw_stream.read()
    except (OSError, StopIteration, ValueError) as exc:
        raise WarcReadError(f"cannot read {where}: {exc}") from exc
    body, problem = undo_content_encoding(raw, headers, settings.MAX_RESPONSE_BYTES)
    if problem:
        raise WarcReadError(f"{where}: {problem[1]}")
    return body, headers.get("content-type")
