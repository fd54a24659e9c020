"""Extraction of a captured article page: headline, byline, dates, main text.

trafilatura decides WHAT the main text is; the characters stored are the
page's own. trafilatura 2.3.1 NFC-normalises its output (decomposing ড় ঢ় য়)
and deletes ZWJ/ZWNJ, so each paragraph it returns is located in the page's
text content through ``textnorm.skeleton`` and replaced by the page's span.
Dates are the raw strings the page states; parsed UTC values sit beside them.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import unicodedata
from dataclasses import dataclass
from importlib import metadata as pkg_metadata

import trafilatura
from lxml import etree
from trafilatura.settings import DEFAULT_CONFIG

from collector.parse.decoding import decode_html
from collector.parse.htmltext import collapse_space, parse_tree, prepare, text_content, text_nodes
from collector.parse.metadata import (
    MODIFIED_META, PUBLISHED_META, byline, canonical, headline, json_ld_nodes, language, meta_tags,
    stated_date, to_utc,
)
from collector.parse.textnorm import skeleton, skeleton_text

# 2: bylines from trafilatura's guess kept only as the page's own span; date
# values that are not dates skipped, down to the visible text; trafilatura's
# list and table markup never stored.
# 3: a visible date kept whole with its time of day in Bangla (এএম, পিএম,
# অপরাহ্ন, parts of the day) or not at all (issue 32, item 3). Snapshots of
# extractor 2 are compared by reading their HTML again (collect/changes.py),
# so the longer dates are no change by the outlet.
EXTRACTOR_VERSION = "3"

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

def page_headline(body: bytes, content_type: str | None) -> str | None:
    """Return a page's headline as extract() states it, without extracting the main text (WACZ page titles)."""
    tree = parse_tree(prepare(decode_html(body, content_type)[0]))
    return headline(tree, meta_tags(tree), json_ld_nodes(tree))


@functools.cache
def _version(package: str) -> str | None:
    """Return the installed version of package, or None when it is absent.

    Asked once per package and process: importlib.metadata finds and parses
    the package's METADATA file on every call (about 3.5 ms for the five
    packages), and every snapshot names the versions (bench/shards.py: a
    fifth of a shard's CPU time before this was cached).
    """
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


# ---------------------------------------------------------------- main text

# trafilatura's plain-text markup (xml.py, with include_formatting off): '- '
# (indented for nested lists) before a list item, '| ' and ' | ' around table
# cells with a literal '|' in a cell escaped as '\\|', and a '|---|---|' rule
# under a header row. None of it is the page's text.
_LIST_MARKER = re.compile(r"\A\s*-\s+")
_TABLE_RULE = re.compile(r"\A\s*\|(?:-{3}\|)+\s*\Z")
_CELL_SEPARATOR = re.compile(r"\s*(?<!\\)\|\s*")


def _find(needle: str, haystack: str, cursor: int) -> int:
    """Return where needle occurs in haystack, preferring at or after cursor; -1 when absent."""
    position = haystack.find(needle, cursor)
    return position if position >= 0 else haystack.find(needle)


def _pieces(line: str) -> list[str]:
    """Return the texts trafilatura put on one line, its markup removed: one, or one per table cell."""
    if _TABLE_RULE.match(line):
        return []
    body = _LIST_MARKER.sub("", line, count=1).strip()
    if not body.startswith("|"):
        return [body]
    cells = _CELL_SEPARATOR.split(body)
    return [cell.replace("\\|", "|").strip() for cell in cells if cell.strip()]


def _locate(text: str, page_skeleton: str, cursor: int) -> tuple[int, int] | None:
    """Return the skeleton span of the page that text is, or None when it is not on the page."""
    wanted = skeleton_text(text)
    position = _find(wanted, page_skeleton, cursor) if wanted else -1
    return (position, position + len(wanted)) if position >= 0 else None


def map_to_page(extracted: str, page: str) -> tuple[list[str], int]:
    """Return (paragraphs in the page's own characters, number of pieces that could not be located).

    trafilatura's markup is removed first and each remaining piece located on
    its own (so "- ১" is the item "১", not the "-১" of "৮-১-২৬-১"); a line
    whose pieces are not all on the page is tried whole, as a page may itself
    write "- " or "|". An unlocated piece is kept as trafilatura gave it,
    without markup, and counted: never dropped or faked.
    """
    page_skeleton, origin = skeleton(page)
    paragraphs: list[str] = []
    unmapped, cursor = 0, 0
    for line in filter(str.strip, extracted.split("\n")):
        pieces = _pieces(line)
        spans = [_locate(piece, page_skeleton, cursor) for piece in pieces]
        if None in spans and pieces != [line.strip()] and (whole := _locate(line, page_skeleton, cursor)):
            pieces, spans = [line], [whole]
        for piece, span in zip(pieces, spans):
            if span is None:
                paragraphs.append(collapse_space(piece))
                unmapped += 1
                continue
            start, end = span
            paragraphs.append(collapse_space(page[origin[start]: origin[end - 1] + 1]))
            cursor = end
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
    prepared = prepare(decoded)
    tree = parse_tree(prepared)
    meta, nodes = meta_tags(tree), json_ld_nodes(tree)
    text, unmapped, author = _main_text(prepared, text_content(tree), url)
    published, published_source = stated_date(tree, meta, nodes, PUBLISHED_META, "datePublished", True)
    modified, modified_source = stated_date(tree, meta, nodes, MODIFIED_META, "dateModified", False)
    return Extraction(
        headline=headline(tree, meta, nodes), byline=byline(meta, nodes, author, text_nodes(tree)),
        published_raw=published, published_source=published_source, published_utc=to_utc(published),
        modified_raw=modified, modified_source=modified_source, modified_utc=to_utc(modified),
        text=text, canonical_url=canonical(tree, url), language=language(tree, meta),
        encoding=encoding, encoding_source=decided_by, html_sha256=hashlib.sha256(body).hexdigest(),
        extractor=extractor_fingerprint(), unmapped_paragraphs=unmapped,
    )
