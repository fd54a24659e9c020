"""The registry of monitored outlets and their groups, read from data/outlets.toml.

Operators change the monitored set by editing that file, so a mistake in it
must stop the collector with a message that names the file, the line and what
is wrong, rather than silently dropping an outlet from the record.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from collector import settings
from collector.errors import TakedownWatchError
from collector.urls import comparison_key, is_acceptable_url

GROUP_KEYS = {"name": True, "name_bn": True}  # key -> required
OUTLET_KEYS = {"name": True, "name_bn": True, "homepage": True, "language": True,
               "group": True, "sources": False}
PLACEHOLDERS = ("{date}", "{today}")  # both mean the outlet's local date, YYYY-MM-DD
_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_LANGUAGE = re.compile(r"^[a-z]{2,3}$")  # ISO 639 code: "bn", "en"
_OUTLET_TZ = timezone(timedelta(hours=settings.OUTLET_UTC_OFFSET_HOURS))


class RegistryError(TakedownWatchError):
    """The registry file cannot be used; the message names the file and line."""

    def __init__(self, path: Path | str, line: int | None, problem: str):
        self.path, self.line, self.problem = str(path), line, problem
        where = f"{path}, line {line}" if line else str(path)
        super().__init__(f"{where}: {problem}")


@dataclass(frozen=True)
class Group:
    id: str
    name: str
    name_bn: str


@dataclass(frozen=True)
class Outlet:
    id: str
    name: str
    name_bn: str
    homepage: str
    language: str
    group: str
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class Registry:
    path: str
    groups: dict[str, Group]
    outlets: dict[str, Outlet]

    def outlets_in(self, group_id: str) -> list[Outlet]:
        """Return the outlets of one group, in registry order."""
        return [o for o in self.outlets.values() if o.group == group_id]


def load_registry(path: Path | str) -> Registry:
    """Return the registry in path; raise RegistryError naming file and line if it is malformed."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # editors on Windows add a BOM
    except (OSError, UnicodeDecodeError) as error:
        raise RegistryError(path, None, f"cannot be read: {error}") from None
    return parse_registry(text, path)


def parse_registry(text: str, path: Path | str = "<registry>") -> Registry:
    """Return the registry written in text (path is only used in messages)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise _syntax_error(error, path) from None
    checker = _Checker(text, path)
    checker.unknown_keys(data, {"groups": False, "outlets": False}, ())
    groups = {gid: checker.group(gid, body) for gid, body in checker.tables(data, "groups")}
    outlets = {oid: checker.outlet(oid, body, groups) for oid, body in checker.tables(data, "outlets")}
    if not outlets:
        raise RegistryError(path, None, "no outlets: the monitored set cannot be empty")
    checker.unique_homepages(outlets)
    return Registry(str(path), groups, outlets)


def _syntax_error(error: tomllib.TOMLDecodeError, path: Path | str) -> RegistryError:
    """Return a RegistryError carrying tomllib's line number in the common format."""
    message = str(error)
    found = re.search(r"\(at line (\d+), column (\d+)\)", message)
    if not found:
        return RegistryError(path, None, f"TOML syntax error: {message}")
    problem = message[: found.start()].strip()
    return RegistryError(path, int(found.group(1)), f"TOML syntax error at column {found.group(2)}: {problem}")


class _Checker:
    """Validates parsed tables and finds the line each problem sits on."""

    def __init__(self, text: str, path: Path | str):
        self.lines = text.splitlines()
        self.path = path

    def fail(self, table: tuple[str, ...], key: str | None, problem: str) -> RegistryError:
        """Return a RegistryError located at the key (or table header) in the text."""
        return RegistryError(self.path, _find_line(self.lines, table, key), problem)

    def tables(self, data: dict, section: str) -> list[tuple[str, dict]]:
        """Return (id, table) pairs of one section, checking ids and shapes."""
        body = data.get(section, {})
        if not isinstance(body, dict):
            raise self.fail((section,), None, f"'{section}' must be a table of tables")
        for item_id, table in body.items():
            if not _ID.match(item_id):
                raise self.fail((section, item_id), None,
                                f"id '{item_id}' must be lower-case letters, digits, '-' or '_'")
            if not isinstance(table, dict):
                raise self.fail((section, item_id), None, f"[{section}.{item_id}] must be a table")
        return list(body.items())

    def unknown_keys(self, table: dict, allowed: dict[str, bool], where: tuple[str, ...]) -> None:
        """Raise for a key not in allowed, or a required key that is missing."""
        label = f"[{'.'.join(where)}]" if where else "the top level"
        for key in table:
            if key not in allowed:
                raise self.fail(where, key, f"unknown key '{key}' in {label} "
                                f"(allowed: {', '.join(allowed)})")
        for key, required in allowed.items():
            if required and key not in table:
                raise self.fail(where, None, f"{label} is missing '{key}'")

    def text_field(self, table: dict, key: str, where: tuple[str, ...]) -> str:
        """Return a required non-empty string field."""
        value = table[key]
        if not isinstance(value, str) or not value.strip():
            raise self.fail(where, key, f"'{key}' in [{'.'.join(where)}] must be a non-empty string")
        return value

    def group(self, group_id: str, table: dict) -> Group:
        """Return a checked Group."""
        where = ("groups", group_id)
        self.unknown_keys(table, GROUP_KEYS, where)
        return Group(group_id, self.text_field(table, "name", where), self.text_field(table, "name_bn", where))

    def outlet(self, outlet_id: str, table: dict, groups: dict[str, Group]) -> Outlet:
        """Return a checked Outlet."""
        where = ("outlets", outlet_id)
        self.unknown_keys(table, OUTLET_KEYS, where)
        fields = {k: self.text_field(table, k, where) for k in OUTLET_KEYS if k != "sources"}
        if fields["group"] not in groups:
            raise self.fail(where, "group", f"outlet '{outlet_id}' names unknown group "
                            f"'{fields['group']}' (known: {', '.join(groups) or 'none'})")
        if not _LANGUAGE.match(fields["language"]):
            raise self.fail(where, "language", f"language '{fields['language']}' is not an ISO 639 code like 'bn'")
        self.address(fields["homepage"], where, "homepage")
        sources = table.get("sources", [])
        if not isinstance(sources, list) or not all(isinstance(s, str) for s in sources):
            raise self.fail(where, "sources", "'sources' must be a list of address strings")
        for source in sources:
            self.address(source, where, "sources")
        return Outlet(outlet_id, sources=tuple(sources), **fields)

    def address(self, url: str, where: tuple[str, ...], key: str) -> None:
        """Raise unless url (templates expanded) is an acceptable http(s) address."""
        leftover = _strip_placeholders(url)
        if "{" in leftover or "}" in leftover:
            raise self.fail(where, key, f"'{url}' has an unknown placeholder (allowed: {', '.join(PLACEHOLDERS)})")
        ok, reason = is_acceptable_url(leftover)
        if not ok:
            raise self.fail(where, key, f"bad address in '{key}': '{url}' ({reason})")

    def unique_homepages(self, outlets: dict[str, Outlet]) -> None:
        """Raise when two outlets share a homepage (compared by comparison key)."""
        seen: dict[str, str] = {}
        for outlet in outlets.values():
            key = comparison_key(outlet.homepage)
            if key in seen:
                raise self.fail(("outlets", outlet.id), "homepage",
                                f"outlet '{outlet.id}' has the same homepage as '{seen[key]}': {outlet.homepage}")
            seen[key] = outlet.id


def _strip_placeholders(url: str) -> str:
    """Return url with every allowed placeholder replaced by a sample date."""
    for placeholder in PLACEHOLDERS:
        url = url.replace(placeholder, "2000-01-01")
    return url


def _find_line(lines: list[str], table: tuple[str, ...], key: str | None) -> int | None:
    """Return the 1-based line of key inside [table] (or of the header), None if not found."""
    header = _header_line(lines, table) if table else 0
    if header is None:
        return _mention_line(lines, table[-1])
    if key is None:
        return header or None
    key_pattern = re.compile(rf'^\s*("?){re.escape(key)}\1\s*=')
    for index in range(header, len(lines)):  # the lines after the header, up to the next one
        if lines[index].lstrip().startswith("["):
            break
        if key_pattern.match(lines[index]):
            return index + 1
    return header or None


def _header_line(lines: list[str], table: tuple[str, ...]) -> int | None:
    """Return the 1-based line of the [a.b] header of table, None when absent."""
    parts = r"\s*\.\s*".join(rf'("?){re.escape(part)}\{i + 1}' for i, part in enumerate(table))
    pattern = re.compile(rf"^\s*\[\s*{parts}\s*\]")
    for number, line in enumerate(lines, start=1):
        if pattern.match(line):
            return number
    return None


def _mention_line(lines: list[str], word: str) -> int | None:
    """Return the first line naming word, for tables written as dotted keys or inline."""
    pattern = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])")
    for number, line in enumerate(lines, start=1):
        if pattern.search(line):
            return number
    return None


def expand_source_template(url: str, when: datetime) -> str:
    """Return url with {date}/{today} replaced by the outlet-local date of when (YYYY-MM-DD).

    Outlets name dated sitemaps by the Dhaka calendar day, so the instant is
    converted to UTC+06:00 first; a naive datetime is taken to be UTC.
    """
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    day = when.astimezone(_OUTLET_TZ).strftime("%Y-%m-%d")
    for placeholder in PLACEHOLDERS:
        url = url.replace(placeholder, day)
    if "{" in url or "}" in url:
        raise RegistryError("<source template>", None, f"'{url}' has an unknown placeholder")
    return url
