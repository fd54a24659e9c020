"""An entry's values as the listing wrote them, where feedparser reads them otherwise: titles and dates.

feedparser strips every title with str.strip(), which removes a trailing
U+00A0 the outlet wrote (Bangla Tribune, Ittefaq and Ekattor feeds end titles
with one); `raw_titles` reads each item's <title> again from the XML, and a
title differing from feedparser's only by that stripping is kept as written.

feedparser parses the date formats it knows and gives up on the rest: a feed
writing "Sunday, January 08, 2023, 18:06  +0530" had its entries counted as
undated and queued. `parse_feed_date` reads a date that has one reading (a
month by name, a year, a time and an explicit zone; a weekday, when stated,
agrees), and anything else stays unreadable.
"""

from __future__ import annotations

import email.utils
import re
from datetime import datetime, timezone

from lxml import etree

from collector.clock import iso_seconds

XML_SPACE = " \t\r\n"
_ITEM_PARENTS = frozenset({"channel", "RDF", "feed", "rss"})
_TITLE_NAMESPACES = frozenset({None, "http://purl.org/rss/1.0/", "http://www.w3.org/2005/Atom",
                               "http://my.netscape.com/rdf/simple/0.9/", "http://backend.userland.com/rss2"})
_WEEKDAY = re.compile(r"\A\s*(mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?\s*,?", re.IGNORECASE)
_YEAR_MONTH = re.compile(r"^(\d{4})(?:-(\d{2}))?$")  # W3C-DTF's coarse forms


def raw_titles(data: bytes) -> list[str | None] | None:
    """Return each item's or entry's <title> text in document order (None for one with markup), or None.

    The prolog was checked before (listings.root_element_name refuses DTD
    subsets); entities are never resolved and nothing is loaded.
    """
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                             recover=True, remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(data, parser)
    except (etree.XMLSyntaxError, ValueError):
        return None
    if root is None:
        return None
    titles: list[str | None] = []
    for item in root.iter("{*}item", "{*}entry"):
        parent = item.getparent()
        if parent is None or etree.QName(parent).localname not in _ITEM_PARENTS:
            continue
        title = next((child for child in item if isinstance(child.tag, str)
                      and etree.QName(child).localname == "title"
                      and etree.QName(child).namespace in _TITLE_NAMESPACES), None)
        titles.append(title.text or "" if title is not None and len(title) == 0 else None)
    return titles


def title_as_written(raw: str | None, parsed: str | None) -> str | None:
    """Return the raw title, XML whitespace stripped, when feedparser's differs from it only by stripping."""
    if raw is not None and raw.strip() == (parsed or "").strip():
        return raw.strip(XML_SPACE) or None
    return parsed


def struct_to_iso(parsed) -> str | None:
    """Return feedparser's UTC struct_time as ISO-8601 UTC."""
    if not parsed:
        return None
    return iso_seconds(datetime(*parsed[:6], tzinfo=timezone.utc))


def parse_feed_date(raw: str | None) -> str | None:
    """Return a feed date feedparser could not read as ISO-8601 UTC, when it has one reading; else None."""
    text = (raw or "").strip(XML_SPACE)
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    if moment.tzinfo is None:
        return None  # no zone stated: local time somewhere, more than one instant
    weekday = _WEEKDAY.match(text)
    if weekday and moment.strftime("%a").lower() != weekday.group(1).lower():
        return None  # the weekday and the date disagree: two readings
    try:
        return iso_seconds(moment)
    except (OverflowError, ValueError):
        return None


def parse_w3c_date(raw: str | None) -> str | None:
    """Return a sitemap date (W3C-DTF, or RFC 822 as some CMSs write) as ISO-8601 UTC, else None.

    A date without a time, or a time without a zone, is taken as UTC: the
    sitemap protocol gives no other reading, and the outlet's own string is
    kept beside it.
    """
    text = (raw or "").strip(XML_SPACE) if isinstance(raw, str) else ""
    if not text:
        return None
    coarse = _YEAR_MONTH.match(text)
    if coarse:
        return iso_seconds(datetime(int(coarse.group(1)), int(coarse.group(2) or 1), 1, tzinfo=timezone.utc))
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        try:
            moment = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
    return iso_seconds(moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc))
