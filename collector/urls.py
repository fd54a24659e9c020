"""Comparison keys for addresses, the site an address belongs to, and junk filters.

A comparison key is only ever stored beside the raw address, never instead of
it: the raw address is the evidence, the key says which raw addresses name the
same page. Normalisation here is purely syntactic (RFC 3986 section 6.2.2)
plus the removal of tracking parameters. Nothing is Unicode-normalised: a
Bangla slug's bytes are the address, and NFC would change them (U+09DF is a
composition exclusion).
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from collector import settings

# Parameters that only say how a reader arrived, never which page they asked
# for. Matched case-insensitively on the decoded name; every utm_* is included.
TRACKING_PARAMETERS = frozenset({
    "fbclid", "gclid", "gclsrc", "dclid", "gbraid", "wbraid", "msclkid",
    "mc_cid", "mc_eid", "igshid", "igsh", "_ga", "_gl", "ref_src", "ref_url",
    "yclid", "twclid", "ttclid", "li_fat_id", "mkt_tok", "_hsenc", "_hsmi",
    "__hssc", "__hstc", "__hsfp", "hsctatracking", "oly_anon_id", "oly_enc_id",
    "vero_id", "wickedid", "rb_clickid", "s_cid", "fb_action_ids",
    "fb_action_types", "fb_ref", "fb_source", "action_object_map",
    "action_type_map", "action_ref_map", "spm", "scid",
})

# Multi-label public suffixes the registry needs, copied from the Public Suffix
# List (2026-03-06, section "bd": every one of these is a registry-operated
# second level). Any other host falls under the PSL's default rule "*": its
# last label is the suffix. A small table rather than the `tld` package
# because that package is only a transitive, unpinned dependency here.
PUBLIC_SUFFIXES = frozenset({
    "ac.bd", "ai.bd", "co.bd", "com.bd", "edu.bd", "gov.bd", "id.bd",
    "info.bd", "it.bd", "mil.bd", "net.bd", "org.bd", "sch.bd", "tv.bd",
})

_DEFAULT_PORTS = {"http": "80", "https": "443"}
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
# Printable ASCII that may stand literally in a path or query; everything else
# (space, quotes, angle brackets, control bytes, non-ASCII) gets percent-encoded.
_LITERAL = _UNRESERVED | frozenset(b"!$&'()*+,;=:@/?")
_PERCENT = re.compile(rb"%([0-9A-Fa-f]{2})")
# Only ASCII whitespace is trimmed: str.strip() would also eat a trailing
# U+00A0, which real slugs end with (Bangla Tribune writes %C2%A0).
ASCII_WHITESPACE = " \t\r\n\f\v"


def comparison_key(url: str) -> str:
    """Return the address in the form used to decide whether two addresses are one page."""
    parts = urlsplit(url.strip(ASCII_WHITESPACE))
    scheme = parts.scheme.lower()
    netloc = _normalise_netloc(parts.netloc, scheme)
    path = _normalise_encoding(parts.path)
    if netloc and scheme in _DEFAULT_PORTS:
        path = _remove_dot_segments(path) or "/"
    query = _strip_tracking(parts.query)
    authority = f"//{netloc}" if netloc or parts.netloc else ""
    key = f"{scheme}:{authority}{path}" if scheme else f"{authority}{path}"
    return f"{key}?{query}" if query else key


def _normalise_netloc(netloc: str, scheme: str) -> str:
    """Return userinfo@host:port with host lower-cased (IDNA) and default port dropped."""
    userinfo, _, hostport = netloc.rpartition("@")
    host, port = _split_port(hostport)
    host = _canonical_host(host)
    if port == _DEFAULT_PORTS.get(scheme) or port == "":
        port = None
    text = f"{host}:{port}" if port is not None else host
    return f"{userinfo}@{text}" if userinfo else text


def _split_port(hostport: str) -> tuple[str, str | None]:
    """Return (host, port or None); IPv6 literals keep their brackets."""
    if hostport.startswith("["):
        end = hostport.find("]")
        rest = hostport[end + 1:]
        return hostport[: end + 1], rest[1:] if rest.startswith(":") else None
    host, colon, port = hostport.rpartition(":")
    return (host, port) if colon else (hostport, None)


def _canonical_host(host: str) -> str:
    """Return host lower-cased, without a trailing dot, non-ASCII names in IDNA form."""
    host = host.rstrip(".").lower()
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host  # not a valid IDN: keep it as written rather than guess


def _normalise_encoding(text: str) -> str:
    """Return text with one percent-encoding: unreserved decoded, the rest upper-case %XX."""
    raw = text.encode("utf-8")
    out = []
    i = 0
    while i < len(raw):
        match = _PERCENT.match(raw, i)
        if match:
            byte = int(match.group(1), 16)
            out.append(chr(byte) if byte in _UNRESERVED else f"%{byte:02X}")
            i += 3
            continue
        byte = raw[i]
        # A '%' that does not start an escape is a literal percent sign.
        out.append(chr(byte) if byte in _LITERAL else f"%{byte:02X}")
        i += 1
    return "".join(out)


def _remove_dot_segments(path: str) -> str:
    """Return path with '.' and '..' segments resolved (RFC 3986 section 5.2.4)."""
    if "." not in path:
        return path
    output: list[str] = []
    segments = path.split("/")
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == ".":
            if last:
                output.append("")
        elif segment == "..":
            if len(output) > 1:
                output.pop()
            if last:
                output.append("")
        else:
            output.append(segment)
    result = "/".join(output)
    return result if result.startswith("/") or not path.startswith("/") else "/" + result


def _strip_tracking(query: str) -> str:
    """Return the query without tracking parameters or empty pieces, order kept."""
    kept = []
    for piece in query.split("&"):
        if not piece:
            continue
        name = _normalise_encoding(piece.partition("=")[0])
        if not _is_tracking(_percent_decode(name).lower()):
            kept.append(_normalise_encoding(piece))
    return "&".join(kept)


def _is_tracking(name: str) -> bool:
    """Return True when a decoded, lower-cased parameter name is a tracking parameter."""
    return name.startswith("utm_") or name in TRACKING_PARAMETERS


def _percent_decode(text: str) -> str:
    """Return text with %XX escapes decoded as UTF-8 (invalid bytes replaced)."""
    raw = _PERCENT.sub(lambda m: bytes([int(m.group(1), 16)]), text.encode("utf-8"))
    return raw.decode("utf-8", "replace")


# RFC 3986 gen-delims and sub-delims, unreserved and "%": what may stand in a URI as it is.
_URI_ASCII = frozenset(map(chr, _LITERAL | frozenset(b"%#[]")))
_AUTHORITY = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*:)?(//[^/?#]*)?(.*)$", re.DOTALL)


def to_uri(iri: str) -> str:
    """Return the URI an IRI maps to (RFC 3987 section 3.1); an address that is a URI comes back as it is.

    Each character of the path, query and fragment that a URI cannot hold is
    written as its UTF-8 octets percent-encoded: every non-ASCII character
    (step 2 of 3.1) and the ASCII ones 3.1 allows systems to treat the same
    way (space, '"', '<', '>', '\\', '^', '`', '{', '|', '}', controls).
    Existing escapes are left alone, so a URI is unchanged and nothing is
    encoded twice. A non-ASCII host name becomes its IDNA (punycode) form, as
    3.1 says a host name resolved by DNS must. Raises ValueError for a host
    IDNA cannot write or a character UTF-8 cannot (a lone surrogate).
    """
    scheme, authority, rest = _AUTHORITY.match(iri).groups()
    if authority:
        userinfo, at, hostport = authority[2:].rpartition("@")
        host, port = _split_port(hostport)
        if not host.isascii():
            try:
                host = ".".join(label if label.isascii() else label.encode("idna").decode("ascii")
                                for label in host.split("."))
            except UnicodeError as exc:
                raise ValueError(f"host {host!r} has no IDNA form: {exc}") from None
        authority = "//" + _percent_encode(userinfo) + at + host + (f":{port}" if port is not None else "")
    return (scheme or "") + (authority or "") + _percent_encode(rest)


def _percent_encode(text: str) -> str:
    """Return text with every character a URI cannot hold written as percent-encoded UTF-8."""
    if all(c in _URI_ASCII for c in text):
        return text
    try:
        return "".join(c if c in _URI_ASCII else "".join(f"%{b:02X}" for b in c.encode("utf-8"))
                       for c in text)
    except UnicodeEncodeError as exc:
        raise ValueError(f"not writable as UTF-8: {exc}") from None


def host_of(url: str) -> str:
    """Return the canonical host of an address ('' when it has none)."""
    netloc = urlsplit(url.strip(ASCII_WHITESPACE)).netloc
    host, _ = _split_port(netloc.rpartition("@")[2])
    return _canonical_host(host)


def registrable_domain(host: str) -> str:
    """Return the registrable domain of host: its public suffix plus one label."""
    host = _canonical_host(host.strip())
    if not host or host.startswith("[") or _is_ipv4(host):
        return host  # an address literal is its own site
    labels = host.split(".")
    suffix_length = 2 if ".".join(labels[-2:]) in PUBLIC_SUFFIXES else 1
    return ".".join(labels[-(suffix_length + 1):])


def _is_ipv4(host: str) -> bool:
    """Return True when host is a dotted-quad IPv4 literal."""
    parts = host.split(".")
    return len(parts) == 4 and all(p.isdigit() and int(p) < 256 for p in parts)


def same_site(url: str, homepage: str) -> bool:
    """Return True when url and homepage share a registrable domain."""
    host = host_of(url)
    return bool(host) and registrable_domain(host) == registrable_domain(host_of(homepage))


def is_acceptable_url(url: str) -> tuple[bool, str]:
    """Return (True, 'ok') for an address worth requesting, else (False, why not)."""
    if not url or not url.strip(ASCII_WHITESPACE):
        return False, "empty"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        return False, "control characters"
    try:
        parts = urlsplit(url.strip(ASCII_WHITESPACE))
        parts.port  # raises ValueError for a port that is not a number
    except ValueError as error:
        return False, f"unparseable: {error}"
    if parts.scheme.lower() not in settings.ALLOWED_SCHEMES:
        return False, f"scheme {parts.scheme.lower() or '(none)'} not allowed"
    if not parts.hostname:
        return False, "no host"
    if _wire_length(url.strip(ASCII_WHITESPACE)) > settings.MAX_URL_LENGTH:
        return False, f"longer than {settings.MAX_URL_LENGTH} characters"
    if _has_repeating_segments(parts.path):
        return False, "spider trap: path segments repeat"
    return True, "ok"


def _wire_length(url: str) -> int:
    """Return the address's length once non-ASCII is percent-encoded, as it is sent."""
    return sum(1 if ord(c) < 0x80 else 3 * len(c.encode("utf-8")) for c in url)


def _has_repeating_segments(path: str) -> bool:
    """Return True when some run of path segments occurs 3+ times in a row (/a/b/a/b/a/b)."""
    segments = [s for s in path.split("/") if s]
    count = len(segments)
    for width in range(1, count // 3 + 1):
        # A run of 2*width consecutive matches segments[i] == segments[i+width]
        # means the width-long pattern starting there occurs three times.
        run = 0
        for i in range(count - width):
            run = run + 1 if segments[i] == segments[i + width] else 0
            if run >= 2 * width:
                return True
    return False


def is_loopback_host(host: str) -> bool:
    """Return True when host is a loopback name or address (127.0.0.0/8, ::1)."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
