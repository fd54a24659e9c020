"""What one site's robots.txt lets TakedownWatch fetch, read as RFC 9309 defines it.

Pure parsing and matching, no HTTP: the fetcher gets /robots.txt and sends a 2xx
body to parse_robots, answers a 4xx with allow_all and a 5xx or a timeout with
disallow_all (RFC 9309 2.3.1), except a 429, which it takes for a server
error as Google does: a deliberate departure from the RFC's "MAY access any
resources" after a 4xx, explained in collector/net/robotscache.py.

protego decides whether one pattern matches one path. Lines, groups, user
agents, percent-encoding and precedence are handled here, because protego 0.7.0
departs from RFC 9309 in each of them; tests/test_robots.py (DEVIATIONS) pins
every departure on protego and shows the answer this module gives instead.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from string import ascii_letters, digits
from urllib.parse import urlsplit

from protego import Protego

from collector import settings

PRODUCT_TOKEN = "TakedownWatch"

_AGENT, _ALLOW, _DISALLOW, _SITEMAP, _DELAY = "User-agent", "Allow", "Disallow", "Sitemap", "Crawl-delay"

# Directive names compare case-insensitively (RFC 9309 2.2). The misspellings are
# the ones both Google's parser and protego accept; a "Dissallow" obeyed only
# ever makes us fetch less.
_DIRECTIVES = {
    "user-agent": _AGENT, "useragent": _AGENT, "user agent": _AGENT, "allow": _ALLOW,
    "disallow": _DISALLOW, "dissallow": _DISALLOW, "dissalow": _DISALLOW,
    "disalow": _DISALLOW, "diasllow": _DISALLOW, "disallaw": _DISALLOW,
    "sitemap": _SITEMAP, "sitemaps": _SITEMAP, "site-map": _SITEMAP,
    "crawl-delay": _DELAY,
}

_LINE_END = re.compile(r"\r\n|\r|\n")  # RFC 9309 2.2: EOL is CR, LF or CRLF
_BLANK = " \t\v\f"  # ASCII whitespace left inside a line, stripped as Google does
_WORD_GAP = re.compile(r"[ \t]+")
_UTF8_BOM = b"\xef\xbb\xbf"
_PRODUCT = re.compile(r"[A-Za-z_-]*")  # RFC 9309 2.2.1: a token has only these
_PIECE = re.compile(r"%[0-9A-Fa-f]{2}|.", re.DOTALL)  # an escape or one character
_UNRESERVED = frozenset(ascii_letters + digits + "-._~")  # RFC 3986 2.3


@dataclass
class _Group:
    """One group of a robots.txt: whom its user-agent lines name, and its lines."""

    ours: bool = False
    star: bool = False
    rules: list[tuple[str, str]] = field(default_factory=list)
    delays: list[str] = field(default_factory=list)


class _Rule:
    """One Allow or Disallow line of the group that applies to TakedownWatch."""

    def __init__(self, directive: str, value: str, line: str | None = None) -> None:
        self.allow = directive == _ALLOW
        self.line = line or f"{directive}: {value}"  # what the ledger shows
        self.pattern = _encode(value, pattern=True)
        self.octets = len(self.pattern)  # the longest match decides (RFC 9309 2.2.2)
        # Every path the pattern matches starts with the text before its first
        # "*" or "$"; checking that first spares protego most of the work.
        self.prefix = re.split(r"[*$]", self.pattern, maxsplit=1)[0]
        self.probe: Protego | None = None

    def matches(self, path: str, coded_path: str) -> bool:
        """Return True when the pattern matches path (given encoded, and coded)."""
        if not path.startswith(self.prefix):
            return False
        if self.probe is None:  # built on first use: most rules never need one
            coded = _code(self.pattern, pattern=True)
            self.probe = Protego.parse(f"User-agent: *\nDisallow: {coded}\n")
        return not self.probe.can_fetch(coded_path, PRODUCT_TOKEN)


class RobotsRules:
    """What one site's robots.txt lets TakedownWatch fetch."""

    def __init__(self, rules: Iterable[_Rule] = (), sitemaps: Iterable[str] = (),
                 crawl_delay: float | None = None) -> None:
        # Longest pattern first and Allow before Disallow of the same length
        # (RFC 9309 2.2.2), so the first rule that matches is the one that decides.
        self._rules = sorted(rules, key=lambda rule: (-rule.octets, not rule.allow))
        self._sitemaps = list(dict.fromkeys(sitemaps))
        self._crawl_delay = crawl_delay

    def allowed(self, url: str) -> bool:
        """Return True when TakedownWatch may fetch url."""
        rule = self._deciding_rule(url)
        return rule is None or rule.allow

    def matching_rule(self, url: str) -> str | None:
        """Return the rule line that decides url, or None when no rule matches it."""
        rule = self._deciding_rule(url)
        return rule.line if rule else None

    @property
    def sitemaps(self) -> list[str]:
        """Return every Sitemap URL of the file, in file order, each once."""
        return list(self._sitemaps)

    @property
    def crawl_delay(self) -> float | None:
        """Return the Crawl-delay in seconds for our group, or None if it sets none."""
        return self._crawl_delay

    def _deciding_rule(self, url: str) -> _Rule | None:
        """Return the rule that decides url, or None when none matches."""
        path = _request_path(url)
        if path == "/robots.txt":  # RFC 9309 2.2.2: implicitly allowed
            return None
        path = _encode(path, pattern=False)
        coded = _code(path, pattern=False)
        return next((rule for rule in self._rules if rule.matches(path, coded)), None)


def parse_robots(body: bytes) -> RobotsRules:
    """Return the rules that a robots.txt body (a 2xx response) sets for us."""
    groups, sitemaps = _read_groups(_decode(_limit(body)))
    # The groups naming us, merged; failing that the "*" groups; failing that
    # none, and everything is allowed (RFC 9309 2.2.1).
    chosen = [g for g in groups if g.ours] or [g for g in groups if g.star]
    # Each line once; an empty value ("Disallow:") matches nothing that counts (2.2.2).
    lines = dict.fromkeys(line for group in chosen for line in group.rules)
    rules = [_Rule(directive, value) for directive, value in lines if value]
    delays = [delay for group in chosen for delay in group.delays]
    return RobotsRules(rules, sitemaps, _crawl_delay(delays))


def allow_all() -> RobotsRules:
    """Return rules that allow everything, for a robots.txt answered with a 4xx."""
    return RobotsRules()


def disallow_all() -> RobotsRules:
    """Return rules that disallow everything, for an unreachable robots.txt."""
    # The site wrote no such line, so the ledger says where it comes from.
    line = "Disallow: / (assumed: robots.txt unreachable, RFC 9309 2.3.1.4)"
    return RobotsRules([_Rule(_DISALLOW, "/", line)])


def _limit(body: bytes) -> bytes:
    """Return the part of body that is parsed: up to the first line end at or after MAX_ROBOTS_BYTES.

    RFC 9309 2.5 sets a minimum ("The parsing limit MUST be at least 500
    kibibytes"), so the line the limit falls in is read whole rather than cut
    (a rule cut short, "Allow: /news/archive" read as "Allow: /news/a",
    would allow more than the site wrote). A line whose end does not come
    within MAX_ROBOTS_LINE_BYTES past the limit is dropped instead.
    """
    limit = settings.MAX_ROBOTS_BYTES
    if len(body) <= limit:
        return body
    window = body[limit - 1: limit + settings.MAX_ROBOTS_LINE_BYTES]
    ends = [i for i in (window.find(b"\n"), window.find(b"\r")) if i >= 0]
    if ends:
        return body[: limit + min(ends)]
    if len(body) <= limit + settings.MAX_ROBOTS_LINE_BYTES:
        return body  # the last line, unended, within reach
    head = body[:limit]
    return head[: max(head.rfind(b"\n"), head.rfind(b"\r")) + 1]


def _decode(body: bytes) -> str:
    """Return body as text, without a leading UTF-8 byte-order mark."""
    # protego reads "\ufeffUser-agent" as an unknown directive and drops the
    # line. Like Google's parser we also drop a partial mark.
    for size in (3, 2, 1):
        if body.startswith(_UTF8_BOM[:size]):
            body = body[size:]
            break
    return body.decode("utf-8", errors="replace")


def _read_groups(text: str) -> tuple[list[_Group], list[str]]:
    """Return the groups of a robots.txt and its Sitemap values, in file order."""
    groups: list[_Group] = []
    sitemaps: list[str] = []
    reading_agents = False
    for directive, value in _records(text):
        if directive == _SITEMAP:
            # Not a group member, and must not end a group (RFC 9309 2.2.4).
            if value:
                sitemaps.append(value)
        elif directive == _AGENT:
            if not reading_agents:
                groups.append(_Group())
            reading_agents = True
            _add_agent(groups[-1], value)
        elif not groups:
            continue  # before any user-agent line: in no group (RFC 9309 2.2.2)
        elif directive == _DELAY:
            # Not an RFC 9309 record either, so it does not end the group.
            groups[-1].delays.append(value)
        else:
            reading_agents = False
            groups[-1].rules.append((directive, value))
    return groups, sitemaps


def _records(text: str) -> Iterator[tuple[str, str]]:
    """Yield (directive, value) for each line that reads as a known directive."""
    for line in _LINE_END.split(text):
        record = _record(line.partition("#")[0].strip(_BLANK))
        if record:
            yield record


def _record(line: str) -> tuple[str, str] | None:
    """Return (directive, value) of a line without comment, or None if unknown."""
    name, colon, value = line.partition(":")
    directive = _DIRECTIVES.get(name.strip(_BLANK).lower())
    if colon and directive:
        return directive, value.strip(_BLANK)
    # Google reads a space as a forgotten colon ("Disallow /x") when the line
    # is exactly two words; longer lines are too ambiguous to obey.
    words = _WORD_GAP.split(line)
    if len(words) == 2 and words[0].lower() in _DIRECTIVES:
        return _DIRECTIVES[words[0].lower()], words[1]
    return None


def _add_agent(group: _Group, value: str) -> None:
    """Mark group as naming us or as the "*" group when a user-agent value says so."""
    # Google's parser takes "* anything" for "*" too.
    if value == "*" or (value.startswith("*") and value[1:2] in (" ", "\t")):
        group.star = True
    # The token is the leading run of [A-Za-z_-], compared case-insensitively:
    # "TakedownWatch/1.0" names us; "Takedown" and "TakedownWatchBot" do not.
    elif _PRODUCT.match(value).group().lower() == PRODUCT_TOKEN.lower():
        group.ours = True


def _request_path(url: str) -> str:
    """Return the path and query of url: the part that rules are matched against."""
    url = url.partition("#")[0]  # a fragment never reaches the server
    parts = urlsplit(url)
    path = parts.path if parts.path.startswith("/") else f"/{parts.path}"
    # A "?" with nothing after it is still sent, so it is still matched.
    return f"{path}?{parts.query}" if "?" in url else path


def _encode(text: str, *, pattern: bool) -> str:
    """Return text as the octets RFC 9309 2.2.2 compares (a trailing "$" kept)."""
    anchor = "$" if pattern and text.endswith("$") else ""
    body = text[: len(text) - len(anchor)]
    return "".join(_encode_piece(p, pattern) for p in _PIECE.findall(body)) + anchor


def _encode_piece(piece: str, pattern: bool) -> str:
    """Return one escape or character of a path or pattern, encoded for comparison."""
    if len(piece) == 3:
        # An escaped unreserved character is decoded ("%62" matches "b", RFC
        # 9309 Figure 4); any other escape compares as written, hex upper-cased.
        char = chr(int(piece[1:], 16))
        return char if char in _UNRESERVED else piece.upper()
    if piece == "*" and pattern:
        return piece  # the wildcard
    if piece in "*$":
        # A literal "*" or "$" is matched by "%2A" or "%24" (RFC 9309 Figure 6);
        # in a pattern only "$" gets here, one not at the end, which Google
        # reads as a literal.
        return f"%{ord(piece):02X}"
    if piece.isascii():
        return piece
    return "".join(f"%{octet:02X}" for octet in piece.encode("utf-8", "surrogatepass"))


def _code(encoded: str, *, pattern: bool) -> str:
    """Return an encoded path or pattern spelled so protego compares its octets."""
    # protego re-encodes both sides before comparing, which merges "%3D" with
    # "=" and lets "/*26" match inside the "%26" it made of "&". Every octet is
    # spelled "%25" plus its hex instead: protego leaves that alone, no two
    # octets look alike, and a "%" only ever starts an octet, so matches stay
    # aligned. The leading "/" makes protego read the string as a path.
    wild = "*$" if pattern else ""
    return "/" + "".join(c if c in wild else f"%25{ord(c):02X}" for c in encoded)


def _crawl_delay(values: list[str]) -> float | None:
    """Return the largest valid Crawl-delay among values, in seconds, or None."""
    # Crawl-delay is not in RFC 9309; when merged groups give several, the
    # politest one is kept.
    delays = []
    for value in values:
        try:
            delay = float(value)
        except ValueError:
            continue
        if math.isfinite(delay) and delay >= 0:
            delays.append(delay)
    return max(delays, default=None)
