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
from collector.parse.htmltext import collapse_space, text_content
from collector.parse.textnorm import skeleton_text


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


def _itemprop(tree, name: str) -> str | None:
    """Return the first value of an itemprop=name element: content, datetime, or its text."""
    for element in tree.xpath("//*[@itemprop=$name]", name=name):
        # attribute values are kept raw; element text loses only its layout whitespace
        value = element.get("content") or element.get("datetime") or collapse_space(text_content(element))
        if value and value.strip():
            return value
    return None


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


def stated_date(tree, meta, nodes, metas: tuple[str, ...], prop: str, use_time: bool) -> tuple[str | None, str | None]:
    """Return (raw, source) of the first date statement found: meta, itemprop, JSON-LD, then <time>."""
    for key in metas:
        if key in meta:
            return meta[key], f"meta:{key}"
    if value := _itemprop(tree, prop):
        return value, f"itemprop:{prop}"
    for node in nodes:
        if value := _first_string(node.get(prop)):
            return value, f"json-ld:{prop}"
    if use_time:
        for element in tree.xpath("//time[@datetime]"):
            if element.get("datetime").strip():
                return element.get("datetime"), "time[datetime]"
    return None, None


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


def byline(meta, nodes, trafilatura_author: str | None) -> str | None:
    """Return the byline: meta author, then JSON-LD author names, then trafilatura's guess."""
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
    return collapse_space(trafilatura_author) if trafilatura_author else None


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
