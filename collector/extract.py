"""Extraction of a captured article page: headline, byline, dates, main text.

trafilatura decides WHAT the main text is; the characters stored are the
page's own. trafilatura 2.3.1 NFC-normalises its output (decomposing ড় ঢ় য়)
and deletes ZWJ/ZWNJ, so each paragraph it returns is located in the page's
text content through ``textnorm.skeleton`` and replaced by the page's span.
Dates are the raw strings the page states; parsed UTC values sit beside them.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import metadata as pkg_metadata
from urllib.parse import urljoin

import trafilatura
from lxml import etree, html as lxml_html
from trafilatura.settings import DEFAULT_CONFIG

from collector.decode import decode_html
from collector.textnorm import skeleton, skeleton_text

EXTRACTOR_VERSION = "1"

# deduplicate=False: trafilatura's dedup cache makes results depend on what
# the process extracted before (adbar/trafilatura #778). Comments are readers',
# not the outlet's article. with_metadata only feeds the byline fallback.
TRAFILATURA_OPTIONS = {
    "output_format": "python", "with_metadata": True, "deduplicate": False, "include_comments": False,
    "include_tables": True, "include_images": False, "include_links": False, "include_formatting": False,
    "fast": False, "favor_precision": False, "favor_recall": False,
    "date_extraction_params": {"extensive_search": False, "original_date": True},
}
_CONFIG_KEYS = ("MIN_EXTRACTED_SIZE", "MIN_OUTPUT_SIZE", "MIN_OUTPUT_COMM_SIZE", "MAX_TREE_SIZE")
# What trafilatura is given besides the options: our decoded text, prepared as below, then NFC.
TRAFILATURA_INPUT = "decoded str; CR/CRLF->LF, NUL removed, XML declaration removed; NFC"


@dataclass(frozen=True)
class Extraction:
    """What one snapshot records about a page, besides the raw HTML itself."""

    headline: str | None
    byline: str | None
    published_raw: str | None
    published_source: str | None
    published_utc: str | None
    modified_raw: str | None
    modified_source: str | None
    modified_utc: str | None
    text: str | None
    canonical_url: str | None
    language: str | None
    encoding: str
    encoding_source: str
    html_sha256: str
    extractor: str
    unmapped_paragraphs: int = 0


# ---------------------------------------------------------------- versions

def _version(package: str) -> str | None:
    """Return the installed version of package, or None when it is absent."""
    try:
        return pkg_metadata.version(package)
    except pkg_metadata.PackageNotFoundError:
        return None


def extractor_info() -> dict:
    """Return every version and option that can change what extract() returns."""
    return {
        "extractor_version": EXTRACTOR_VERSION,
        "trafilatura": _version("trafilatura"), "htmldate": _version("htmldate"),
        "lxml": _version("lxml"), "libxml2": ".".join(map(str, etree.LIBXML_VERSION)),
        "charset_normalizer": _version("charset-normalizer"), "cchardet": _version("cchardet"),
        # NFD/NFC, isprintable() and isspace() follow Python's Unicode tables
        "unicodedata": unicodedata.unidata_version,
        "trafilatura_options": TRAFILATURA_OPTIONS, "trafilatura_input": TRAFILATURA_INPUT,
        "trafilatura_config": {k: DEFAULT_CONFIG.get("DEFAULT", k, fallback=None) for k in _CONFIG_KEYS},
    }


def extractor_fingerprint() -> str:
    """Return a short stable string naming the extractor build, e.g. 'x1-t2.3.1-3f9a0c12d4e5'."""
    info = extractor_info()
    digest = hashlib.sha256(json.dumps(info, sort_keys=True).encode()).hexdigest()[:12]
    return f"x{EXTRACTOR_VERSION}-t{info['trafilatura']}-{digest}"


# ---------------------------------------------------------------- parsing

_XML_DECLARATION = re.compile(r"\A\s*<\?xml[^>]*\?>")
# noscript stays: no JavaScript runs here, so its content is what this reader is served
_SKIPPED_TAGS = {"script", "style", "template"}
_HTML_SPACE = re.compile(r"[ \t\n\r\f]+")


def _prepare(text: str) -> str:
    """Return decoded text as an HTML parser sees it: LF newlines, no NUL, no XML declaration.

    Newline normalisation and dropping NUL in text are what the HTML standard's
    parser does; the declaration makes lxml refuse an already decoded str.
    """
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")
    return _XML_DECLARATION.sub("", text, count=1)


def _parse(text: str) -> lxml_html.HtmlElement:
    """Return the lxml tree of a prepared page; an empty document for an unparseable one."""
    parser = lxml_html.HTMLParser(collect_ids=False, default_doctype=False)
    try:
        return lxml_html.document_fromstring(text, parser=parser)
    except (etree.ParserError, ValueError):
        return lxml_html.document_fromstring("<html><body></body></html>", parser=parser)


def _collect_text(element, parts: list[str]) -> None:
    """Append element's text nodes, children and tail in document order, skipping scripts and comments."""
    if isinstance(element.tag, str) and element.tag.lower() not in _SKIPPED_TAGS:
        if element.text:
            parts.append(element.text)
        for child in element:
            _collect_text(child, parts)
    if element.tail:
        parts.append(element.tail)


def text_content(element) -> str:
    """Return the text nodes of element concatenated as the page holds them (entities decoded)."""
    parts: list[str] = []
    _collect_text(element, parts)
    # the element's own tail lies outside it
    if element.tail:
        parts.pop()
    return "".join(parts)


def collapse_space(text: str) -> str:
    """Return text with runs of HTML whitespace (space, tab, LF, CR, FF) as one space, stripped.

    NBSP and other Unicode spaces are characters the page chose; they stay.
    """
    return _HTML_SPACE.sub(" ", text).strip(" ")


# ---------------------------------------------------------------- metadata

_ARTICLE_TYPES = {"article", "newsarticle", "reportagenews", "analysisnewsarticle", "opinionnewsarticle",
                  "backgroundnewsarticle", "reviewnewsarticle", "blogposting", "liveblogposting", "report"}
_PUBLISHED_META = ("article:published_time", "og:article:published_time", "og:published_time")
_MODIFIED_META = ("article:modified_time", "og:article:modified_time", "og:updated_time")
_AUTHOR_META = ("author", "article:author", "dc.creator")


def _meta(tree) -> dict[str, str]:
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


def _json_ld(tree) -> list[dict]:
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


def _date(tree, meta, nodes, metas: tuple[str, ...], prop: str, use_time: bool) -> tuple[str | None, str | None]:
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
        return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except OverflowError:  # year 1 or 9999 pushed past the calendar by its offset
        return None


def _headline(tree, meta, nodes) -> str | None:
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


def _byline(meta, nodes, trafilatura_author: str | None) -> str | None:
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


def _canonical(tree, url: str) -> str | None:
    """Return <link rel=canonical> resolved against <base href> and the page address."""
    base = next((b.get("href") for b in tree.iter("base") if b.get("href")), None)
    base_url = urljoin(url, base.strip()) if base else url
    for link in tree.iter("link"):
        if "canonical" in (link.get("rel") or "").lower().split() and (link.get("href") or "").strip():
            return urljoin(base_url, link.get("href").strip())
    return None


def _language(tree, meta) -> str | None:
    """Return the page's declared language: <html lang>, else meta content-language."""
    declared = (tree.get("lang") or "").strip() or meta.get("content-language", "").strip()
    return declared or None


# ---------------------------------------------------------------- main text

# markers trafilatura adds in plain text: '- ' before list items, '|' between table cells
_LIST_MARKER = re.compile(r"\A\s*-\s+")
_CELL_SEPARATOR = re.compile(r"\s*\|\s*")


def _find(needle: str, haystack: str, cursor: int) -> int:
    """Return where needle occurs in haystack, preferring at or after cursor; -1 when absent."""
    position = haystack.find(needle, cursor)
    return position if position >= 0 else haystack.find(needle)


def _line_spans(line: str, page_skeleton: str, cursor: int) -> list[tuple[int, int]] | None:
    """Return skeleton spans of the page that make up line, or None when it cannot be located.

    A line that is not found whole is tried without trafilatura's list marker
    and split at its table-cell separators; each piece then maps on its own.
    """
    whole = skeleton_text(line)
    position = _find(whole, page_skeleton, cursor) if whole else -1
    if position >= 0:
        return [(position, position + len(whole))]
    spans = []
    for piece in _CELL_SEPARATOR.split(_LIST_MARKER.sub("", line)):
        piece_skeleton = skeleton_text(piece)
        if not piece_skeleton:
            continue
        position = _find(piece_skeleton, page_skeleton, cursor)
        if position < 0:
            return None
        spans.append((position, position + len(piece_skeleton)))
        cursor = position + len(piece_skeleton)
    return spans or None


def map_to_page(extracted: str, page: str) -> tuple[list[str], int]:
    """Return (paragraphs in the page's own characters, number of lines that could not be located).

    An unlocated line is kept as trafilatura gave it and counted, never dropped or faked.
    """
    page_skeleton, origin = skeleton(page)
    paragraphs: list[str] = []
    unmapped, cursor = 0, 0
    for line in filter(str.strip, extracted.split("\n")):
        spans = _line_spans(line, page_skeleton, cursor)
        if spans is None:
            paragraphs.append(line.strip())
            unmapped += 1
            continue
        for start, end in spans:
            paragraphs.append(collapse_space(page[origin[start]: origin[end - 1] + 1]))
        cursor = spans[-1][1]
    return paragraphs, unmapped


def _main_text(prepared: str, page: str, url: str) -> tuple[str | None, int, str | None]:
    """Return (main text in the page's characters, unmapped line count, trafilatura's author)."""
    # NFC input: trafilatura's length thresholds then see the same text however the page spelled it
    document = trafilatura.bare_extraction(unicodedata.normalize("NFC", prepared), url=url, **TRAFILATURA_OPTIONS)
    if document is None or not (document.text or "").strip():
        return None, 0, getattr(document, "author", None)
    paragraphs, unmapped = map_to_page(document.text, page)
    return "\n".join(paragraphs), unmapped, document.author


def extract(body: bytes, content_type: str | None, url: str) -> Extraction:
    """Return the Extraction of one captured HTML response body."""
    decoded, encoding, decided_by = decode_html(body, content_type)
    prepared = _prepare(decoded)
    tree = _parse(prepared)
    meta, nodes = _meta(tree), _json_ld(tree)
    text, unmapped, author = _main_text(prepared, text_content(tree), url)
    published, published_source = _date(tree, meta, nodes, _PUBLISHED_META, "datePublished", True)
    modified, modified_source = _date(tree, meta, nodes, _MODIFIED_META, "dateModified", False)
    return Extraction(
        headline=_headline(tree, meta, nodes), byline=_byline(meta, nodes, author),
        published_raw=published, published_source=published_source, published_utc=to_utc(published),
        modified_raw=modified, modified_source=modified_source, modified_utc=to_utc(modified),
        text=text, canonical_url=_canonical(tree, url), language=_language(tree, meta),
        encoding=encoding, encoding_source=decided_by, html_sha256=hashlib.sha256(body).hexdigest(),
        extractor=extractor_fingerprint(), unmapped_paragraphs=unmapped,
    )
