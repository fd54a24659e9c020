"""An article page's metadata: headline, byline, dates as stated, canonical address, language.

Each value is read from the page's own markup (meta tags, JSON-LD, itemprop,
<time>, <h1>), in the order below, and kept in the page's characters.
"""

from __future__ import annotations

import email.utils
import json
import re
import unicodedata
from datetime import datetime
from urllib.parse import urljoin

from collector.clock import iso_seconds
from collector.parse.dates import is_date_statement, visible_date
from collector.parse.htmltext import NODE_BREAK, collapse_space, text_content
from collector.parse.textnorm import skeleton, skeleton_text


_ARTICLE_TYPES = {"article", "newsarticle", "reportagenews", "analysisnewsarticle", "opinionnewsarticle",
                  "backgroundnewsarticle", "reviewnewsarticle", "blogposting", "liveblogposting", "report"}
PUBLISHED_META = ("article:published_time", "og:article:published_time", "og:published_time")
MODIFIED_META = ("article:modified_time", "og:article:modified_time", "og:updated_time")
_AUTHOR_META = ("author", "article:author", "dc.creator")


def meta_tags(tree) -> dict[str, str]:
    """Return the first non-blank content of each <meta> by lower-cased property, name or http-equiv."""
    found: dict[str, str] = {}
    for element in tree.iter("meta"):
        content = element.get("content")
        for attribute in ("property", "name", "http-equiv"):
            key = (element.get(attribute) or "").strip().lower()
            if key and content and content.strip():
                found.setdefault(key, content)
    return found


def _itemprop_values(tree, name: str):
    """Yield the values of itemprop=name elements, in page order: content, datetime, or the text."""
    for element in tree.xpath("//*[@itemprop=$name]", name=name):
        # attribute values are kept raw; element text loses only its layout whitespace
        value = element.get("content") or element.get("datetime") or collapse_space(text_content(element))
        if value and value.strip():
            yield value


def _load_json(raw: str):
    """Return the parsed JSON of a JSON-LD block, tolerating wrappers and trailing commas; None if broken."""
    raw = raw.strip().removeprefix("<!--").removesuffix("-->").strip()
    raw = raw.removeprefix("<![CDATA[").removesuffix("]]>")
    for attempt in (raw, re.sub(r",\s*([}\]])", r"\1", raw)):
        try:
            return json.loads(attempt, strict=False)
        except (ValueError, RecursionError):
            continue
    return None


def _flatten(data) -> list[dict]:
    """Return the JSON-LD objects of data: top-level items, @graph members and mainEntity."""
    if isinstance(data, list):
        return [node for item in data for node in _flatten(item)]
    if not isinstance(data, dict):
        return []
    return [data, *_flatten(data.get("@graph")), *_flatten(data.get("mainEntity"))]


def _is_article(node: dict) -> bool:
    """Return True when a JSON-LD object's @type names a kind of article."""
    types = node.get("@type")
    types = types if isinstance(types, list) else [types]
    return any(isinstance(t, str) and t.lower() in _ARTICLE_TYPES for t in types)


def json_ld_nodes(tree) -> list[dict]:
    """Return every JSON-LD object of the page, article objects first; broken blocks are skipped."""
    nodes: list[dict] = []
    for script in tree.iter("script"):
        if (script.get("type") or "").strip().lower() == "application/ld+json":
            nodes.extend(_flatten(_load_json(script.text or "")))
    return sorted(nodes, key=lambda node: not _is_article(node))


def _first_string(value) -> str | None:
    """Return value when it is a non-blank string, or the first such string of a list."""
    if isinstance(value, list):
        return next((s for s in map(_first_string, value) if s), None)
    return value if isinstance(value, str) and value.strip() else None


def _meta_values(tree, key: str):
    """Yield the non-blank contents of every <meta> whose property, name or http-equiv is key."""
    for element in tree.iter("meta"):
        content = element.get("content")
        names = {(element.get(a) or "").strip().lower() for a in ("property", "name", "http-equiv")}
        if key in names and content and content.strip():
            yield content


def _date_statements(tree, nodes, metas: tuple[str, ...], prop: str, use_time: bool):
    """Yield (raw, source) for every machine-readable date statement, in the order they are believed."""
    for key in metas:
        for value in _meta_values(tree, key):
            yield value, f"meta:{key}"
    for value in _itemprop_values(tree, prop):
        yield value, f"itemprop:{prop}"
    for node in nodes:
        values = node.get(prop)
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, str) and value.strip():
                yield value, f"json-ld:{prop}"
    if use_time:
        for element in tree.xpath("//time[@datetime]"):
            yield element.get("datetime"), "time[datetime]"


def stated_date(tree, meta, nodes, metas: tuple[str, ...], prop: str, use_time: bool) -> tuple[str | None, str | None]:
    """Return (raw, source) of the first date statement: meta, itemprop, JSON-LD, <time>, then the visible text.

    A value that is not a date ("undefined", "null", blank, all zeros) is no
    statement: the next source is asked. `meta` is kept for the callers' sake;
    every <meta> of a key is read, not only the first.
    """
    for raw, source in _date_statements(tree, nodes, metas, prop, use_time):
        if is_date_statement(raw):
            return raw, source
    kind = "published" if prop == "datePublished" else "modified"
    found = visible_date(tree, kind)
    return (found, "visible-text") if found and is_date_statement(found) else (None, None)


def to_utc(raw: str | None) -> str | None:
    """Return raw as 'YYYY-MM-DDTHH:MM:SSZ', or None when it is not an instant with a UTC offset."""
    if not raw:
        return None
    # Bangla pages state dates in Bangla digits too (২০২০-০৮-২৯T১০:৪৬:০৬+০১:০০)
    ascii_raw = "".join(str(unicodedata.decimal(c)) if c.isdecimal() else c for c in raw.strip())
    try:
        moment = datetime.fromisoformat(ascii_raw)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(ascii_raw)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    # a date without an offset is local time somewhere; converting it would invent a zone
    if moment.tzinfo is None:
        return None
    try:
        return iso_seconds(moment)
    except OverflowError:  # year 1 or 9999 pushed past the calendar by its offset
        return None


def headline(tree, meta, nodes) -> str | None:
    """Return the headline: an <h1> confirmed by a metadata title, else JSON-LD headline, og:title, <title>.

    The <h1> is what readers saw. It counts only when it makes up most of a
    metadata title, which keeps logo and section <h1>s ("সংবাদ" inside
    "ঘটনা ঘটে | সংবাদ") out. og:title and <title> often carry the site's name,
    so they come last and are stored as stated, suffix and all.
    """
    json_headline = next((s for s in (_first_string(n.get("headline")) for n in nodes) if s), None)
    title = tree.find(".//title")
    titles = [json_headline, meta.get("og:title"), meta.get("twitter:title"),
              text_content(title) if title is not None else None]
    h1s = [collapse_space(text_content(h)) for h in tree.iter("h1")]
    h1s = [h for h in h1s if skeleton_text(h)]
    title_skeletons = [skeleton_text(t) for t in titles if t]
    confirmed = [h for h in h1s if any(_covers(skeleton_text(h), t) for t in title_skeletons)]
    for candidate in (max(confirmed, key=len, default=None), *titles, *h1s[:1]):
        if candidate and collapse_space(candidate):
            return collapse_space(candidate)
    return None


def _covers(part: str, whole: str) -> bool:
    """Return True when part occurs in whole and is more than half of it."""
    return part in whole and 2 * len(part) > len(whole)


def _author_names(value, by_id: dict[str, dict]) -> list[str]:
    """Return author names from a JSON-LD author value: string, object, @id reference or list."""
    if isinstance(value, list):
        return [name for item in value for name in _author_names(item, by_id)]
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        reference = value.get("@id")
        node = by_id.get(reference, value) if "name" not in value and isinstance(reference, str) else value
        name = _first_string(node.get("name"))
        return [name] if name else []
    return []


def byline(meta, nodes, trafilatura_author: str | None, page_text: str = "") -> str | None:
    """Return the byline: meta author, then JSON-LD author names, then trafilatura's guess as the page states it.

    `page_text` is the page's text nodes (htmltext.text_nodes), where the guess is looked for.
    """
    for key in _AUTHOR_META:
        value = meta.get(key, "")
        # article:author is often the author's profile URL, not a name
        if value.strip() and not value.strip().startswith(("http://", "https://")):
            return collapse_space(value)
    by_id = {node["@id"]: node for node in nodes if isinstance(node.get("@id"), str)}
    for node in nodes:
        names = [collapse_space(n) for n in _author_names(node.get("author"), by_id) if n.strip()]
        if names:
            return ", ".join(names)
    if not trafilatura_author:
        return None
    # trafilatura rewrites what it finds ('; ' between names, title case, a
    # trailing vowel sign cut as punctuation): only the page's own span is kept.
    for text in (page_text, *meta.values()):
        found = as_stated(trafilatura_author, text)
        if found:
            return found
    return None


# trafilatura's AUTHOR_SPLIT separators, as they appear between two names in a skeleton
_NAME_GAP = re.compile(r"(?:[/;,|&]|and|und)+")


def _fold(text: str) -> str:
    """Return text lower-cased character by character, keeping its length (for index maps)."""
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def _is_word(char: str) -> bool:
    return unicodedata.category(char)[0] in "LM" or char in "\u200c\u200d"


def _after_marks(text: str, index: int) -> int:
    """Return the index past any combining marks (and joiners) at index."""
    while index < len(text) and (unicodedata.category(text[index])[0] == "M" or text[index] in "\u200c\u200d"):
        index += 1
    return index


def as_stated(names: str, text: str) -> str | None:
    """Return the span of text that trafilatura's author string `names` was made from, or None.

    Each ';'-separated name must occur in text's skeleton (any case), the next
    name after only separators, each on word boundaries; a name may end short
    of its word by combining marks, which trafilatura strips as punctuation.
    """
    parts = [_fold(skeleton_text(part)) for part in names.split(";")]
    parts = [re.compile("[._+]?".join(map(re.escape, part))) for part in parts if part]
    skel, origin = skeleton(text)
    folded = _fold(skel)
    if not parts or not skel:
        return None
    for first in parts[0].finditer(folded):
        start = origin[first.start()]
        if start > 0 and _is_word(text[start - 1]):
            continue
        end = _chain(parts[1:], folded, skel, _after_marks(skel, first.end()))
        if end is None:
            continue
        stop = _after_marks(text, origin[end - 1] + 1)
        if stop < len(text) and unicodedata.category(text[stop])[0] == "L":
            continue
        return collapse_space(text[start:stop].replace(NODE_BREAK, ""))
    return None


def _chain(parts: list, folded: str, skel: str, end: int) -> int | None:
    """Return where the names after the first end, each after separators only; None when they do not follow."""
    for part in parts:
        gap = _NAME_GAP.match(folded, end)
        found = part.match(folded, gap.end()) if gap else None
        if found is None:
            return None
        end = _after_marks(skel, found.end())
    return end


def canonical(tree, url: str) -> str | None:
    """Return <link rel=canonical> resolved against <base href> and the page address."""
    base = next((b.get("href") for b in tree.iter("base") if b.get("href")), None)
    base_url = urljoin(url, base.strip()) if base else url
    for link in tree.iter("link"):
        if "canonical" in (link.get("rel") or "").lower().split() and (link.get("href") or "").strip():
            return urljoin(base_url, link.get("href").strip())
    return None


def language(tree, meta) -> str | None:
    """Return the page's declared language: <html lang>, else meta content-language."""
    declared = (tree.get("lang") or "").strip() or meta.get("content-language", "").strip()
    return declared or None
