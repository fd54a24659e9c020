"""Reading back a response record from a WARC file the collector wrote (net/warc.py writes them)."""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from collector import settings
from collector.errors import TakedownWatchError
from collector.net.onwire import dechunk
from collector.net.warc import INTENT_HEADER, WarcPointer
from collector.net.wire import undo_content_encoding


class WarcReadError(TakedownWatchError):
    """A snapshot's HTML could not be read back from its WARC record."""


@dataclass(frozen=True)
class ReadResponse:
    """A response record read back: its body (Content-Encoding undone), Content-Type, and its own header facts."""

    body: bytes
    content_type: str | None
    warc_date: str | None  # the record's WARC-Date: when the exchange began, the time a replay indexes it at
    target_uri: str | None  # its WARC-Target-URI


def read_response_body(warc_root: str | Path, warc_file: str, offset: int) -> tuple[bytes, str | None]:
    """Return (body with Content-Encoding undone, Content-Type) of the response record at offset."""
    got = read_response(warc_root, warc_file, offset)
    return got.body, got.content_type


def read_response(warc_root: str | Path, warc_file: str, offset: int) -> ReadResponse:
    """Return the response record at offset in a WARC file, read back."""
    path = Path(warc_root) / warc_file
    try:
        with open(path, "rb") as handle:
            handle.seek(offset)
            return _response(handle, f"{path}:{offset}")
    except OSError as exc:
        raise WarcReadError(f"cannot read {path}:{offset}: {exc}") from exc


def response_body_of(record: bytes, where: str) -> tuple[bytes, str | None]:
    """Return (body, Content-Type) of a response record given as its own bytes (one gzip member).

    For a record read out of a published file by its offset and length
    (collector/net/assets.py); `where` names it in errors.
    """
    got = response_of(record, where)
    return got.body, got.content_type


def response_of(record: bytes, where: str) -> ReadResponse:
    """Return a response record given as its own bytes (one gzip member), read back."""
    return _response(io.BytesIO(record), where)


def record_body(record, where: str) -> tuple[bytes, str | None]:
    """Return (body with Content-Encoding undone, Content-Type) of a response record being iterated over."""
    if record.rec_type != "response" or record.http_headers is None:
        raise WarcReadError(f"{where} is a {record.rec_type} record, not a response")
    headers = {k.lower(): v for k, v in record.http_headers.headers}
    try:
        raw = _entity(record.raw_stream.read(), headers)
    except (OSError, ValueError, zlib.error) as exc:
        raise WarcReadError(f"cannot read {where}: {exc}") from exc
    body, problem = undo_content_encoding(raw, headers, settings.MAX_RESPONSE_BYTES)
    if problem:
        raise WarcReadError(f"{where}: {problem[1]}")
    return body, headers.get("content-type")


def _response(handle, where: str) -> ReadResponse:
    try:
        record = next(iter(ArchiveIterator(handle)))
    except (OSError, StopIteration, ValueError, zlib.error) as exc:
        raise WarcReadError(f"cannot read {where}: {exc}") from exc
    body, content_type = record_body(record, where)
    return ReadResponse(body, content_type, record.rec_headers.get_header("WARC-Date"),
                        record.rec_headers.get_header("WARC-Target-URI"))


@dataclass(frozen=True)
class FoundResponse:
    """A response record as the next run finds it: where it sits and what it says."""

    pointer: WarcPointer
    status: int | None
    content_type: str | None
    ip: str | None
    date: str | None
    payload_bytes: int | None


def responses_by_intent(warc_root: str | Path, warc_file: str) -> dict[int, FoundResponse]:
    """Return the whole response records of a WARC file by intent id, reading up to a torn end.

    A run killed while writing leaves its last record cut short. The request
    record of an exchange is written after its response, so a response counts
    as whole once its request record has begun; a torn response never does.
    """
    pending: dict[int, FoundResponse] = {}
    found: dict[int, FoundResponse] = {}
    try:
        with open(Path(warc_root) / warc_file, "rb") as handle:
            records = ArchiveIterator(handle)
            for record in records:
                intent = record.rec_headers.get_header(INTENT_HEADER) or ""
                if not intent.isdigit():
                    continue
                if record.rec_type == "request" and int(intent) in pending:
                    found[int(intent)] = pending.pop(int(intent))
                elif record.rec_type == "response":
                    pending[int(intent)] = _found(records, record, warc_file)
    except (OSError, EOFError, ValueError, zlib.error):
        pass  # a torn tail: the records before it were kept
    return found


def _entity(body: bytes, headers: dict[str, str]) -> bytes:
    """Return a record's entity: a chunked body as it came off the wire de-chunked (net/onwire.py).

    Records written before the framing was kept hold the entity under the
    chunked header; their body is no whole chunked message and is the entity.
    """
    if "chunked" not in headers.get("transfer-encoding", "").lower():
        return body
    entity = dechunk(body)
    return body if entity is None else entity


def _found(records: ArchiveIterator, record, warc_file: str) -> FoundResponse:
    http = record.http_headers
    headers = {k.lower(): v for k, v in http.headers} if http else {}
    payload = len(_entity(record.raw_stream.read(), headers))
    records.read_to_end(record)
    pointer = WarcPointer(warc_file, records.get_record_offset(), records.get_record_length(),
                          record.rec_headers.get_header("WARC-Payload-Digest"))
    status = http.get_statuscode() if http else None
    return FoundResponse(pointer, int(status) if status and status.isdigit() else None,
                         http.get_header("Content-Type") if http else None,
                         record.rec_headers.get_header("WARC-IP-Address"),
                         record.rec_headers.get_header("WARC-Date"), payload)
