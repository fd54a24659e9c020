"""Is a response an HTML page, and what characters do its bytes spell.

Used by capture (only an HTML response makes a snapshot) and by extraction.
The decision order and which step decided are recorded with each snapshot.
"""

from __future__ import annotations

import codecs
import re

from collector import settings


# ---------------------------------------------------------------- is it HTML

_HTML_TYPES = {"text/html", "application/xhtml+xml"}
_GENERIC_TYPES = {"", "application/octet-stream", "binary/octet-stream", "text/plain",
                  "application/unknown", "unknown/unknown", "application/x-unknown-content-type"}
_BINARY_MAGIC = (b"%PDF-", b"\x89PNG", b"GIF87a", b"GIF89a", b"\xff\xd8\xff", b"PK\x03\x04", b"\x1f\x8b")
# WHATWG MIME sniffing's "HTML" patterns. WHATWG ends them with a space or ">" only;
# "<html\n lang=..." is as much a tag, so any ASCII whitespace ends one here.
_SNIFF_TAGS = (b"<!doctype html", b"<html", b"<head", b"<script", b"<iframe", b"<h1", b"<div", b"<font",
               b"<table", b"<a", b"<style", b"<title", b"<b", b"<body", b"<br", b"<p")
_TAG_END = (b" ", b">", b"\t", b"\n", b"\r", b"\f")


def _media_type(content_type: str | None) -> str:
    """Return the lower-cased type/subtype of a Content-Type header, '' when absent."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def _sniffs_as_html(body: bytes) -> bool:
    """Return True when the body opens like an HTML document (WHATWG patterns)."""
    head = body[: settings.EXTRACT_SNIFF_BYTES]
    for bom, codec in ((codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be")):
        if head.startswith(bom):
            head = head[2:].decode(codec, "ignore").encode("ascii", "ignore")
    head = head.removeprefix(codecs.BOM_UTF8).lstrip(b" \t\n\r\f").lower()
    if head.startswith(b"<?xml") and b"?>" in head:
        head = head.split(b"?>", 1)[1].lstrip(b" \t\n\r\f")
    if head.startswith(b"<!--"):
        return True
    return any(head.startswith(tag) and head[len(tag):len(tag) + 1] in _TAG_END for tag in _SNIFF_TAGS)


def is_html(content_type: str | None, body: bytes) -> bool:
    """Return True when a response is an HTML page: declared so, or generic and sniffed as HTML.

    Binary signatures win over the header: a PDF served as text/html is a PDF.
    """
    if body.startswith(_BINARY_MAGIC):
        return False
    media_type = _media_type(content_type)
    if media_type in _HTML_TYPES:
        return True
    return media_type in _GENERIC_TYPES and _sniffs_as_html(body)


# ---------------------------------------------------------------- decoding

_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
_CHARSET_RE = re.compile(r"""charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.I)
_META_CHARSET_RE = re.compile(r"""<meta\b[^>]*?charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.I)
# WHATWG Encoding: these labels mean windows-1252 on the web
_WEB_ALIASES = {"ascii": "cp1252", "latin-1": "cp1252", "iso8859-1": "cp1252"}


def _codec(label: str | None) -> str | None:
    """Return Python's codec name for a charset label, or None when unknown."""
    if not label:
        return None
    try:
        name = codecs.lookup(label.strip()).name
    except LookupError:
        return None
    return _WEB_ALIASES.get(name, name)


def _meta_charset(body: bytes) -> str | None:
    """Return the charset a <meta> declares near the top of body, or None."""
    match = _META_CHARSET_RE.search(body[: settings.EXTRACT_META_PRESCAN_BYTES].decode("latin-1"))
    codec = _codec(match.group(1)) if match else None
    # a meta tag readable as ASCII cannot be in UTF-16 (WHATWG prescan rule)
    return "utf-8" if codec and codec.startswith("utf-16") else codec


def decode_html(body: bytes, content_type: str | None) -> tuple[str, str, str]:
    """Return (text, encoding, decided_by); decided_by is bom, http-header, meta, detected or utf-8-fallback.

    A declaration the bytes contradict (strict decoding fails) is passed over
    rather than trusted: the raw body is kept, so the choice stays checkable.
    "detected" covers both a strictly valid UTF-8 body and charset_normalizer;
    "utf-8-fallback" means bytes were replaced by U+FFFD, either because the
    body is damaged UTF-8 (checked before detection) or nothing else fitted.
    """
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return body[len(bom):].decode(codec, errors="replace"), codec, "bom"
    header = _CHARSET_RE.search(content_type or "")
    declared = (("http-header", _codec(header.group(1)) if header else None), ("meta", _meta_charset(body)))
    for decided_by, codec in (*declared, ("detected", "utf-8")):
        if codec:
            try:
                return body.decode(codec), codec, decided_by
            except UnicodeDecodeError:
                continue
    damaged = body.decode("utf-8", errors="replace")
    if _mostly_utf8(damaged):
        return damaged, "utf-8", "utf-8-fallback"
    return _detect(body) or (damaged, "utf-8", "utf-8-fallback")


def _mostly_utf8(decoded: str) -> bool:
    """Return True when a replacement-decoded body is overwhelmingly valid multi-byte UTF-8."""
    invalid = decoded.count("\ufffd")
    valid = sum(1 for c in decoded if c > "\x7f") - invalid
    return valid > 0 and valid >= invalid * settings.EXTRACT_UTF8_VALID_PER_INVALID


def _detect(body: bytes) -> tuple[str, str, str] | None:
    """Return (text, encoding, 'detected') from charset_normalizer, or None when it has no answer."""
    import charset_normalizer

    match = charset_normalizer.from_bytes(body).best()
    codec = _codec(match.encoding) if match else None
    if not codec:
        return None
    try:
        return body.decode(codec), codec, "detected"
    except UnicodeDecodeError:
        return None
