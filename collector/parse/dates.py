"""Dates as a page states them: which values are dates at all, and dates in the visible text.

A CMS with nothing to say writes "undefined", "null", an empty string or
"0000-00-00 00:00:00" where the date goes; such a value is no statement, and
the next source is asked (metadata.stated_date). The last source is the text a
reader sees: a date after a label ("প্রকাশ:", "আপডেট:", "Published:") or,
for publication, the first date shortly after the headline. Bangla pages write
these in Bangla digits and month names, in precomposed or decomposed letters,
so the text is searched in a decomposed copy and the page's own characters
are what is kept.

A stated date is kept whole or not at all. The time of day is written in
many ways on Bangladeshi pages (as served: "১৭ আগস্ট ২০২৬, ০১:১৬ পিএম",
"১০:৪৬ পূর্বাহ্ণ", "২২ আগস্ট ২০২৬ | ০৭:৩৪", "Dec 12, 2025 01:27 PM",
"১২ আগস্ট ২০২৬, বিকাল ০৪:১০"); a date read without the words of its time
that stand next to it ("পিএম" dropped, or "সকাল ১০টা" left behind) would be
a string the page never states, twelve hours wrong for a reader. So a date
whose expression goes on past what is read (_continues) is not stored.
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
# The half of the day after a time: Bangla words (and their spelling with
# dental ন, common on Bangla pages), the English abbreviations in Bangla letters
# (এএম, পিএম: khaborerkagoj.com writes "০১:১৬ পিএম"), and in Latin letters, with
# or without dots. None may run on into a longer word.
_BN_LETTER = "\u0980-\u09ff"
_HALF_DAY = (_nfd("(?:পূর্বাহ্ণ|পূর্বাহ্ন|অপরাহ্ণ|অপরাহ্ন|এ\\.?\\s?এম\\.?|পি\\.?\\s?এম\\.?)") + rf"(?![{_BN_LETTER}])"
             r"|(?:[AaPp]\.\s?[Mm]\.?|[AaPp][Mm])(?![A-Za-z])")
# Parts of the day written before a time ("বিকাল ০৪:১০"), with the locative ending some pages add.
_PART_OF_DAY = _nfd("(?:সকাল|দুপুর|বিকাল|বিকেল|সন্ধ্যা|রাত|ভোর)(?:ে|য়)?") + rf"(?![{_BN_LETTER}])"
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
# What, standing next to a date read, says its expression goes on: a half-day
# word in any spelling (read or not: "অপরাহ্ন", "পি. এম"), a part of the day
# before a number ("সকাল ১০টা"), or a time in a form not read ("১০টা",
# "১০.৩০"). A part of the day alone may begin the next headline ("রাতে ...").
_BN_WORD = "\u0980-\u09e5\u09f0-\u09ff"  # Bangla letters and signs, not digits
_HALF_DAY_LIKE = (rf"(?<![A-Za-z])[AaPp]\.?\s?[Mm](?![A-Za-z])|(?<![{_BN_WORD}])"
                  + _nfd("(?:(?:এ|পি)\\s?\\.?\\s?এম|পূর্বাহ্|অপরাহ্|ঘটিকা)"))
_CLOCK = rf"{_D}{{1,2}}(?:\s*[.:]\s*{_D}{{2}}|\s*{_nfd('(?:টা|ঘটিকা)')})"
_GOES_ON = re.compile(rf"\s*[,|।]?\s*(?:{_HALF_DAY_LIKE}|(?:{_PART_OF_DAY})\s*{_D}|{_CLOCK})", re.IGNORECASE)
_CAME_BEFORE = re.compile(rf"(?:{_HALF_DAY_LIKE}|{_CLOCK})\S*\s*[,|।]?\s*$", re.IGNORECASE)
_TEXT_NODES = "//body//text()[not(ancestor::script) and not(ancestor::style) and not(ancestor::template)]"


# Put between text nodes in the searched copy: whitespace to the patterns (str.isspace),
# so a word that ends a node is not taken to run on into the next node's first letter.
_NODE_BREAK = "\x1f"


def _decomposed(nodes: list[str]) -> tuple[str, list[int]]:
    """Return (the nodes' text, each code point decomposed, _NODE_BREAK between nodes; for each character
    the index in "".join(nodes) it came from, a break that of the character before it)."""
    chars, origin, index = [], [], 0
    for number, node in enumerate(nodes):
        if number:
            chars.append(_NODE_BREAK)
            origin.append(index - 1)
        for char in node:
            for part in unicodedata.normalize("NFD", char):
                chars.append(part)
                origin.append(index)
            index += 1
    return "".join(chars), origin


def _search(pattern: re.Pattern, nodes: list[str], group: str | int = 0, within: int | None = None) -> str | None:
    """Return the page's own characters of pattern's first match in the text nodes, whitespace collapsed.

    None when there is no match, when the match begins more than `within`
    characters (of collapsed text) in, or when it is not the whole expression (_continues).
    """
    if within is not None:  # a match may begin within the limit and end after it
        nodes = _first_chars(nodes, within + 200)
    text = "".join(nodes)
    decomposed, origin = _decomposed(nodes)
    found = pattern.search(decomposed)
    if not found:
        return None
    start, end = found.span(group)
    first = origin[start]
    if within is not None and len(collapse_space(text[:first] + ".")) - 1 > within:
        return None
    if _continues(decomposed, start, end):
        return None
    return collapse_space(text[first: origin[end - 1] + 1])


def _first_chars(nodes: list[str], count: int) -> list[str]:
    """Return the first text nodes, enough of them to hold `count` characters of collapsed text."""
    kept, seen = [], 0
    for node in nodes:
        kept.append(node)
        seen += len(collapse_space(node)) + 1
        if seen > count:
            break
    return kept


def _continues(decomposed: str, start: int, end: int) -> bool:
    """Return True when the date read at decomposed[start:end] is only part of what the page states.

    It goes on when words of the time of day or a time not read stand next to
    it (_GOES_ON, _CAME_BEFORE), or when a letter, mark or digit runs on from it
    inside one text node (across two, "০৭:৩৪</span><span>আপডেট" is two statements).
    """
    if _GOES_ON.match(decomposed, end) or _CAME_BEFORE.search(decomposed, max(0, start - 40), start):
        return True
    return end < len(decomposed) and unicodedata.category(decomposed[end])[0] in "LMN"


def visible_date(tree, kind: str) -> str | None:
    """Return a date the page's visible text states for kind ('published' or 'modified'), as written.

    A labelled date first; for publication, else the first date within
    AFTER_HEADLINE_CHARS after the first <h1>.
    """
    found = _search(_LABELLED[kind], tree.xpath(_TEXT_NODES), "date")
    if found or kind != "published":
        return found
    after = tree.xpath("(//h1)[1]/following::text()[not(ancestor::script) and not(ancestor::style)]")
    return _search(_ANY_DATE, after, within=AFTER_HEADLINE_CHARS)
