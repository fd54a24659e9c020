"""Bylines and dates exactly as the page states them, and trafilatura's markup kept out of the text.

Issue 18, items 13-15: a real page's "নিজস্ব প্রতিবেদক, ঢাকা" came out of
trafilatura's author fallback as "নিজস্ব প্রতিবেদক; ঢাক"; CMS placeholders
("undefined", "null", zeros) were stored as dates; "|---|" table rules and
"- " list markers reached the stored text.
"""

from __future__ import annotations

import pytest
import trafilatura

from collector.parse.dates import is_date_statement
from collector.parse.extract import TRAFILATURA_OPTIONS, extract, map_to_page
from collector.parse.metadata import as_stated
from tests.parse.test_extract import SENTENCE, article

URL = "https://x.invalid/a/1"


def byline_page(markup: str, head: str = "") -> bytes:
    """Return an article page whose byline is only in the visible markup (no meta author, no JSON-LD)."""
    return ("<html><head><meta charset='utf-8'><title>শিরোনাম</title>" + head + "</head><body><article>"
            "<h1>শিরোনাম</h1><div class='byline'><span class='author'>" + markup + "</span></div>"
            f"<p>{SENTENCE}</p><p>{SENTENCE}</p></article></body></html>").encode("utf-8")


# -- item 13: the byline as the page states it ---------------------------------------------------

BYLINES = [
    # (as the page writes it, what is stored)
    ("নিজস্ব প্রতিবেদক, ঢাকা", "নিজস্ব প্রতিবেদক, ঢাকা"),  # trafilatura: "নিজস্ব প্রতিবেদক; ঢাক"
    ("জেলা প্রতিনিধি, কুষ্টিয়া", "জেলা প্রতিনিধি, কুষ্টিয়া"),  # trafilatura cuts both vowel signs
    ("জেলা প্রতিনিধি, কুষ্টি\u09af\u09bc\u09be", "জেলা প্রতিনিধি, কুষ্টি\u09af\u09bc\u09be"),  # decomposed য়, kept so
    ("<a href='/r/1'>নিজস্ব প্রতিবেদক</a>, <b>ঢাকা</b>", "নিজস্ব প্রতিবেদক, ঢাকা"),
    ("satter", "satter"),  # trafilatura title-cases it
    ("By Rahim Uddin and Karim Ali", "Rahim Uddin and Karim Ali"),  # its 'By ' is not a name
    ('Abdul "Babu" Karim', None),  # trafilatura drops the nickname: no span of the page says "Abdul Karim"
]


@pytest.mark.parametrize("markup, stored", BYLINES, ids=[b[0] for b in BYLINES])
def test_trafilaturas_byline_is_stored_as_the_page_states_it_or_not_at_all(markup, stored):
    assert extract(byline_page(markup), "text/html", URL).byline == stored


def test_trafilatura_alone_rewrites_the_byline():
    # why as_stated exists: if trafilatura stops doing this, the mapping is still right, merely unneeded
    document = trafilatura.bare_extraction(byline_page("নিজস্ব প্রতিবেদক, ঢাকা").decode(), **TRAFILATURA_OPTIONS)
    assert document.author == "নিজস্ব প্রতিবেদক; ঢাক"


@pytest.mark.parametrize("names, text, expected", [
    ("Ali", "\x00Khalid\x00", None),  # inside another word
    ("নিজস্ব প্রতিবেদক", "নিজস্ব প্রতিবেদকগণ", None),  # a prefix of a longer word
    ("ক; খ", "\x00ক এবং তারপর খ\x00", None),  # names far apart are not one byline
    ("ক; খ", "\x00ক / খ\x00", "ক / খ"),
    ("", "ক", None),
])
def test_as_stated(names, text, expected):
    assert as_stated(names, text) == expected


# -- item 14: values that are not dates --------------------------------------------------------------

@pytest.mark.parametrize("raw, is_date", [
    ("undefined", False), ("null", False), ("NULL", False), ("", False), ("  ", False), (None, False),
    ("0000-00-00 00:00:00", False), ("0000-00-00T00:00:00Z", False), ("০০০০-০০-০০", False), ("NaN-NaN-NaN", False),
    ("2026-08-13T09:21:58+06:00", True), ("১৩ আগস্ট ২০২৬", True), ("2026", True),
])
def test_is_date_statement(raw, is_date):
    assert is_date_statement(raw) is is_date


LD = '<script type="application/ld+json">{}</script>'


def dated_page(head: str, body: str = "") -> bytes:
    return (f"<html><head><meta charset='utf-8'>{head}</head><body><article><h1>শিরোনাম</h1>{body}"
            f"<p>{SENTENCE}</p><p>{SENTENCE}</p></article></body></html>").encode("utf-8")


DATES = [
    ("a placeholder in meta: JSON-LD is next",
     dated_page('<meta property="article:published_time" content="undefined">'
                + LD.format('{"@type":"NewsArticle","datePublished":"2026-08-13T09:21:58+06:00"}')),
     {"published_raw": "2026-08-13T09:21:58+06:00", "published_source": "json-ld:datePublished",
      "published_utc": "2026-08-13T03:21:58Z"}),
    ("a second meta of the same name after a placeholder",
     dated_page('<meta property="article:published_time" content="null">'
                '<meta property="article:published_time" content="2026-08-13T09:21:58+06:00">'),
     {"published_raw": "2026-08-13T09:21:58+06:00", "published_source": "meta:article:published_time"}),
    ("every machine-readable value broken: the visible, labelled date",
     dated_page('<meta property="article:published_time" content="undefined">'
                '<meta property="article:modified_time" content="0000-00-00 00:00:00">'
                + LD.format('{"@type":"NewsArticle","datePublished":"null","dateModified":""}'),
                '<span itemprop="datePublished" content="0000-00-00"></span><time datetime="">আজ</time>'
                '<div class="time">প্রকাশ: ১২ আগস্ট ২০২৬, ০৯:২১ | আপডেট: ১২ আগস্ট ২০২৬, ১১:০৫</div>'),
     {"published_raw": "১২ আগস্ট ২০২৬, ০৯:২১", "published_source": "visible-text", "published_utc": None,
      "modified_raw": "১২ আগস্ট ২০২৬, ১১:০৫", "modified_source": "visible-text", "modified_utc": None}),
    ("an unlabelled date just after the headline, weekday and decomposed letters as served",
     dated_page("", "<div>শনিবার, আগস্ট ২৯, ২০২০ | ১০:৪৬ পূর্বাহ্ণ</div>"),
     {"published_raw": "শনিবার, আগস্ট ২৯, ২০২০ | ১০:৪৬ পূর্বাহ্ণ", "published_source": "visible-text",
      "modified_raw": None}),
    ("English labels",
     dated_page('<meta property="article:published_time" content="">',
                "<p class='meta'>Published: 10:46 AM, August 29, 2020</p><p>Last updated: 30 Aug 2020</p>"),
     {"published_raw": "10:46 AM, August 29, 2020", "modified_raw": "30 Aug 2020"}),
    ("nothing stated anywhere",
     dated_page('<meta property="article:published_time" content="undefined">'),
     {"published_raw": None, "published_source": None, "modified_raw": None}),
]


@pytest.mark.parametrize("name, body, expected", DATES, ids=[d[0] for d in DATES])
def test_dates_that_are_not_dates_are_skipped_down_to_the_visible_text(name, body, expected):
    got = extract(body, "text/html", URL)
    assert {key: getattr(got, key) for key in expected} == expected


def test_a_visible_date_keeps_the_pages_own_code_points():
    decomposed = "১২ আগস্ট ২০২৬, বিকা\u09b2 ০৪:১০"  # a part of the day before the time
    got = extract(dated_page("", f"<div>প্রকাশিত: {decomposed}</div>"), "text/html", URL)
    assert got.published_raw == decomposed


# -- item 15: trafilatura's markup never stored ---------------------------------------------------------------

def test_a_table_with_a_header_row_stores_no_rule():
    page = article(f"{SENTENCE}</p><table><tr><th>বোলার</th><th>ফিগার</th></tr>"
                   "<tr><td>তাসকিন</td><td>৮-১-২৬-১</td></tr></table><p>" + SENTENCE)
    raw = trafilatura.bare_extraction(page.decode(), **TRAFILATURA_OPTIONS).text
    assert "|---|---|" in raw  # what trafilatura gives
    got = extract(page, "text/html", URL)
    assert "|" not in got.text and "---" not in got.text
    assert {"বোলার", "ফিগার", "তাসকিন", "৮-১-২৬-১"} <= set(got.text.split("\n")) and got.unmapped_paragraphs == 0


def test_lines_not_on_the_page_keep_no_markup_either():
    paragraphs, unmapped = map_to_page("| ক | খ |\n|---|---|\n| গ \\| ঘ | নেই |\n- পাতায় নেই\n  - ১",
                                       "ক খ গ | ঘ ৮-১-২৬-১ ১")
    assert paragraphs == ["ক", "খ", "গ | ঘ", "নেই", "পাতায় নেই", "১"]
    assert unmapped == 2  # 'নেই' and 'পাতায় নেই' are not on the page: kept, counted, without markup


def test_a_list_item_and_a_literal_pipe_on_the_page_stay_whole():
    page = article(f"{SENTENCE}</p><ul><li>দ্বিতীয় | তৃতীয়</li><li>১</li></ul><p>৮-১-২৬-১</p><p>" + SENTENCE)
    lines = extract(page, "text/html", URL).text.split("\n")
    assert "দ্বিতীয় | তৃতীয়" in lines and "১" in lines and "-১" not in lines
