"""WARC/1.1 records of every HTTP exchange, bytes as received."""

from __future__ import annotations

import io
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from collector.clock import iso
from collector.errors import RecordWriteError
from collector.settings import USER_AGENT, __version__


# A WARC extension field (WARC/1.1 section 4: named fields may be added):
# the request_intents row of the exchange.
INTENT_HEADER = "TakedownWatch-Intent-ID"


@dataclass(frozen=True)
class WarcPointer:
    """Where one response record sits: file (relative to the WARC folder), offset, length."""

    file: str
    offset: int
    length: int
    payload_digest: str | None


class _HeadersAsSent(StatusAndHeaders):
    """An HTTP header block written as the octets that crossed the wire.

    warcio writes header blocks as ASCII and, failing that, percent-encodes
    every non-ASCII value (StatusAndHeaders.to_ascii_bytes), which would
    change a raw UTF-8 Location in a response record, or raise when the
    request line is not ASCII. http.client writes headers as Latin-1 and
    reads them back the same way, so Latin-1 gives back the octets exactly.
    """

    def compute_headers_buffer(self, header_filter=None):
        try:
            self.headers_buff = self.to_str(header_filter).encode("latin-1") + b"\r\n"
        except UnicodeEncodeError:  # text that never crossed the wire as such
            super().compute_headers_buffer(header_filter)


class WarcLog:
    """Appends request/response pairs to one gzip WARC file per run.

    The file is created exclusively and never reopened for appending: a run
    killed mid-record leaves at most one torn record at the end of its own
    file, and the next run writes a new file.
    """

    def __init__(self, warc_dir: str | Path, run_id: int, started: datetime):
        self.root = Path(warc_dir)
        name = f"{started:%Y/%m/%d}/run-{run_id:06d}-{started:%H%M%S}-{uuid.uuid4().hex[:8]}.warc.gz"
        self.relative = name
        self.path = self.root / name
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = open(self.path, "xb")
        self._writer = WARCWriter(self._file, gzip=True, warc_version="WARC/1.1")
        self._lock = threading.Lock()
        self._write_info(started)

    def _write_info(self, started: datetime) -> None:
        info = {
            "software": f"TakedownWatch/{__version__}",
            "http-header-user-agent": USER_AGENT,
            "format": "WARC File Format 1.1",
        }
        record = self._writer.create_warcinfo_record(self.path.name, info)
        record.rec_headers.replace_header("WARC-Date", iso(started))
        with self._lock:
            self._writer.write_record(record)
            self._file.flush()

    def write_exchange(
        self,
        *,
        url: str,
        method: str,
        request_headers: list[tuple[str, str]],
        request_target: str,
        request_body: bytes | None,
        status_line: str,
        protocol: str,
        response_headers: list[tuple[str, str]],
        body: bytes,
        ip: str | None,
        when: datetime,
        truncated: str | None = None,
        intent: int | None = None,
        payload_digest: str | None = None,
    ) -> WarcPointer:
        """Write the request and response records and return where the response sits.

        `intent` (the ledger's intent row) is written into both records, so a
        response whose ledger row a kill prevented is found by the next run.
        `payload_digest`, when given, is the entity's (a chunked body,
        net/onwire.py); otherwise warcio takes it over `body`, which is then
        the entity itself.
        """
        date = iso(when)
        tags = {INTENT_HEADER: str(intent)} if intent is not None else {}
        req_http = _HeadersAsSent(f"{method} {request_target} {protocol}", request_headers,
                                  is_http_request=True)
        request = self._writer.create_warc_record(
            url, "request", payload=io.BytesIO(request_body or b""), http_headers=req_http,
            warc_headers_dict={"WARC-Date": date, **tags})
        resp_http = _HeadersAsSent(status_line, response_headers, protocol=protocol)
        warc_headers = {"WARC-Date": date, **tags}
        if ip:
            warc_headers["WARC-IP-Address"] = ip
        if truncated:
            warc_headers["WARC-Truncated"] = truncated
        known = {}
        if payload_digest:
            warc_headers["WARC-Payload-Digest"] = payload_digest
            known["length"] = len(body)  # a record of unknown length has its digests taken again by warcio
        response = self._writer.create_warc_record(
            url, "response", payload=io.BytesIO(body), http_headers=resp_http,
            warc_headers_dict=warc_headers, **known)
        request.rec_headers.add_header("WARC-Concurrent-To", response.rec_headers.get_header("WARC-Record-ID"))
        with self._lock:
            try:
                offset = self._file.tell()
                self._writer.write_record(response)
                length = self._file.tell() - offset
                self._writer.write_record(request)
                self._file.flush()
            except OSError as exc:  # a full disk: the collector cannot keep its evidence
                raise RecordWriteError(f"cannot write the WARC file {self.path}: {exc}; "
                                       "the run stops, unfinished") from exc
        return WarcPointer(self.relative, offset, length,
                           response.rec_headers.get_header("WARC-Payload-Digest"))

    def close(self) -> None:
        """Flush and close the file."""
        with self._lock:
            if not self._file.closed:
                self._file.close()
