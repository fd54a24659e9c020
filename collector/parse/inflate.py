"""Compressed bytes inflated within a cap: the one bounded inflate of the project.

Used for a response's Content-Encoding (collector/net/wire.py), for a
gzipped sitemap (collector/parse/listings.py) and for a dormant article's rows. Output is produced a chunk at a
time and never allowed past the cap, so a gzip bomb costs at most the cap in
memory. Concatenated gzip members are one stream (RFC 1952 2.2) and zero
padding after the last is ignored; a stream that ends early is an error.
"""

from __future__ import annotations

import zlib

from collector.errors import TakedownWatchError

GZIP = 16 + zlib.MAX_WBITS  # gzip only
GZIP_OR_ZLIB = 32 + zlib.MAX_WBITS  # whichever header the stream has
RAW_DEFLATE = -zlib.MAX_WBITS  # what some servers send for "deflate"
INPUT_CHUNK = 64 * 1024  # compressed bytes handed to zlib at a time


class InflateError(TakedownWatchError):
    """The bytes are not a whole compressed stream; the message says why."""


class TooLarge(InflateError):
    """The inflated bytes would pass the cap."""


def inflate(data: bytes, max_bytes: int, wbits: int = GZIP, zdict: bytes | None = None) -> bytes:
    """Return data inflated; raise TooLarge past max_bytes, InflateError for a damaged or cut stream.

    `zdict`: the preset dictionary a zlib stream was compressed with (a dormant
    article's rows: collector/record/dormant.py).
    """
    out = bytearray()
    pending = data
    while pending:
        inflater = zlib.decompressobj(wbits, zdict=zdict) if zdict else zlib.decompressobj(wbits)
        fed = 0
        try:
            while fed < len(pending) and not inflater.eof:
                _drain(inflater, pending[fed:fed + INPUT_CHUNK], out, max_bytes)
                fed += INPUT_CHUNK
            _drain(inflater, b"", out, max_bytes)  # output zlib still holds back
        except zlib.error as error:
            raise InflateError(str(error)) from None
        if not inflater.eof:
            raise InflateError("compressed stream truncated (it ends early)")
        rest = inflater.unused_data + pending[fed:]
        # Only gzip has members: after a zlib or raw stream, trailing bytes are ignored as zlib does.
        pending = rest.lstrip(b"\x00") if wbits in (GZIP, GZIP_OR_ZLIB) else b""
    return bytes(out)


def _drain(inflater, chunk: bytes, out: bytearray, max_bytes: int) -> None:
    """Append chunk's output to out, never letting out grow past max_bytes + 1."""
    while True:
        piece = inflater.decompress(chunk, max_bytes + 1 - len(out))
        out += piece
        if len(out) > max_bytes:
            raise TooLarge(f"more than {max_bytes} bytes once decompressed")
        chunk = inflater.unconsumed_tail
        if not chunk and (not piece or inflater.eof):
            return
