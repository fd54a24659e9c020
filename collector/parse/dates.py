"""Dates as a page states them: which values are dates at all, and dates in the visible text.

A CMS with nothing to say writes "undefined", "null", an empty string or
"0000-00-00 00:00:00" where the date goes; such a value is no statement, and
the next source is asked (metadata.stated_date). The last source is the text a
reader sees: a date after a label ("প্রকাশ:", "আপডেট:", "Published:") or,
for publication, the first date shortly after the headline. Bangla pages write
these in Bangla digits and month names, in precomposed or decomposed letters,
so the text is searched in a decomposed copy and the page's own characters
are what is kept.
"""

from __future__ import annotations

import re
import unicodedata

from collector.parse.htmltext import collapse_space

PLACEHOLDERS = frozenset({"undefined", "null", "none", "nil", "nan", "false", "true", "n/a", "na", "-", "--",
                          "invalid date", "0"})
# How far after the headline an unlabelled date may stand (characters of text).
AFTER_HEADLINE_CHARS = 300


def is_date_statement(raw: str | None) -> bool:
    """Return True when raw could be a date: not blank, not a placeholder word, some digit not zero."""
    text = (raw or "").strip()
    if not text or text.lower() in PLACEHOLDERS:
        return False
    digits = [c for c in text if c.isdecimal()]
    return any(unicodedata.decimal(c) != 0 for c in digits)


def _nfd(words: str) -> str:
    return unicodedata.normalize("NFD", words)


_D = "[0-9\u09e6-\u09ef]"
_MONTHS = _nfd(
    "জানুয়ারি|জানুয়ারী|ফেব্রুয়ারি|ফেব্রুয়ারী|মার্চ|এপ্রিল|মে|জুন|জুলাই|আগস্ট|আগষ্ট|অগাস্ট|সেপ্টেম্বর|অক্টোবর|"
    "নভেম্বর|ডিসেম্বর|January|February|March|April|May|June|July|August|September|October|November|"
    "December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sept|Sep|Oct|Nov|Dec")
_WEEKDAYS = _nfd("শনিবার|রবিবার|রোববার|সোমবার|মঙ্গলবার|বুধবার|বৃহস্পতিবার|শুক্রবার|Saturday|Sunday|Monday|"
                 "Tuesday|Wednesday|Thursday|Friday|Sat|Sun|Mon|Tue|Wed|Thu|Fri")
_HALF_DAY = _nfd("পূর্বাহ্ণ|অপরাহ্ণ|AM|PM|am|pm|a\\.m\\.|p\\.m\\.")
_PART_OF_DAY = _nfd("সকাল|দুপুর|বিকাল|বিকেল|সন্ধ্যা|রাত|ভোর")
_TIME = rf"(?:(?:{_PART_OF_DAY})\s*)?{_D}{{1,2}}\s*:\s*{_D}{{2}}(?:\s*:\s*{_D}{{2}})?(?:\s*(?:{_HALF_DAY}))?"
_DAY = rf"(?:(?:{_WEEKDAYS})\.?,?\s*)?"
_CALENDAR = (rf"(?:{_D}{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTHS})\.?,?\s+{_D}{{4}}"
             rf"|(?:{_MONTHS})\.?\s+{_D}{{1,2}},?\s+{_D}{{4}}"
             rf"|{_D}{{4}}-{_D}{{2}}-{_D}{{2}}"
             rf"|{_D}{{1,2}}[./-]{_D}{{1,2}}[./-]{_D}{{4}})")
_DATE = rf"(?:{_TIME}\s*[,|]?\s*)?{_DAY}{_CALENDAR}(?:\s*[,|।]?\s*{_TIME})?"
_LABELS = {
    "published": _nfd("প্রকাশিত|প্রকাশকাল|প্রকাশের সময়|প্রকাশ|Published on|Published|Posted on|Posted"),
    "modified": _nfd("সর্বশেষ আপডেট|আপডেটেড|আপডেট|হালনাগাদ|Last updated|Updated on|Updated|Modified"),
}
_LABELLED = {kind: re.compile(rf"(?:{labels})\s*[:ঃ\-]?\s*(?P<date>{_DATE})", re.IGNORECASE)
             for kind, labels in _LABELS.items()}
_ANY_DATE = re.compile(_DATE, re.IGNORECASE)
_TEXT_NODES = "//body//text()[not(ancestor::script) and not(ancestor::style) and not(ancestor::template)]"


def _decomposed(text: str) -> tuple[str, list[int]]:
    """Return (text with each code point decomposed, for each character the index it came from)."""
    chars, origin = [], []
    for index, char in enumerate(text):
        for part in unicodedata.normalize("NFD", char):
            chars.append(part)
            origin.append(index)
    return "".join(chars), origin


def _search(pattern: re.Pattern, text: str, group: str | int = 0) -> str | None:
    """Return the page's own characters of pattern's first match in text, whitespace collapsed."""
    decomposed, origin = _decomposed(text)
    found = pattern.search(decomposed)
    if not found:
        return None
    start, end = found.span(group)
    return collapse_space(text[origin[start]: origin[end - 1] + 1])


def visible_date(tree, kind: str) -> str | None:
    """Return a date the page's visible text states for kind ('published' or 'modified'), as written.

    A labelled date first; for publication, else the first date within
    AFTER_HEADLINE_CHARS after the first <h1>.
    """
    text = "".join(tree.xpath(_TEXT_NODES))
    found = _search(_LABELLED[kind], text, "date")
    if found or kind != "published":
        return found
    after = "".join(tree.xpath("(//h1)[1]/following::text()[not(ancestor::script) and not(ancestor::style)]"))
    return _search(_ANY_DATE, collapse_space(after)[:AFTER_HEADLINE_CHARS])
