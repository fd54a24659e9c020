"""Stated dates with the time of day in Bangla: the whole expression or nothing (issue 32, item 3).

A real page (khaborerkagoj.com, tests/data/html) writes "প্রকাশ: ১৭ আগস্ট
২০২৬, ০১:১৬ পিএম"; the visible-text fallback read it as "১৭ আগস্ট ২০২৬,
০১:১৬", a string the page never states and twelve hours wrong. The forms
below are those real Bangladeshi pages write (shared corpus: khaborerkagoj
"পিএম"/"এএম", ukbdnews "পূর্বাহ্ণ", samakal "২২ আগস্ট ২০২৬ | ০৭:৩৪", New Age
"Dec 12, 2025 01:27 PM") and their spellings (dental ন, dots, parts of the
day). A visible date has no UTC offset, so it never gets a UTC instant.
"""

from __future__ import annotations

from pathlib import Path

import lxml.html
import pytest

from collector.parse.dates import visible_date
from collector.parse.extract import extract
from tests.parse.test_metadata import URL, dated_page

DATA = Path(__file__).resolve().parents[1] / "data"
KHABORERKAGOJ = DATA / "html" / "khaborerkagoj__section-editorial__2026-08-22__evilgodfahim-kj2.worker-curl.html"
SAMAKAL = DATA / "cloudflare" / "normal-samakal-opinion.html"  # shared corpus: samakal__section-opinion__2026-08-22


def test_a_real_page_that_writes_pm_in_bangla_letters_keeps_it():
    got = extract(KHABORERKAGOJ.read_bytes(), "text/html; charset=utf-8", "https://khaborerkagoj.com/editorial")
    assert (got.published_raw, got.published_source, got.published_utc) == (
        "১৭ আগস্ট ২০২৬, ০১:১৬ পিএম", "visible-text", None)
    assert (got.modified_raw, got.modified_source) == ("১২ আগস্ট ২০২৬, ০২:৫২ পিএম", "visible-text")


def test_every_date_of_the_real_pages_is_read_whole():
    # each listed item of the two pages, its label and date as the page writes them
    for path, ends in ((KHABORERKAGOJ, ("পিএম", "এএম")), (SAMAKAL, None)):
        tree = lxml.html.fromstring(path.read_bytes().decode("utf-8"))
        for block in tree.xpath("//small|//span[@class='publishTime']"):
            text = block.text_content()
            if "প্রকাশ" not in text and "আপডেট" not in text:
                continue
            kind = "published" if "প্রকাশ" in text else "modified"
            got = visible_date(lxml.html.fromstring(f"<div>{lxml.html.tostring(block, encoding='unicode')}</div>"),
                               kind)
            stated = " ".join(text.split()).split(": ", 1)[-1].split("ঃ ", 1)[-1]
            assert got == stated, text
            assert ends is None or got.endswith(ends)


FORMS = [
    "১৭ আগস্ট ২০২৬, ০১:১৬ পিএম",  # khaborerkagoj.com
    "০৭ আগস্ট ২০২৬, ১১:৫০ এএম",  # khaborerkagoj.com
    "১২ আগস্ট ২০২৬, ০৪:১০ পি.এম.",
    "১২ আগস্ট ২০২৬, ০৪:১০ পি. এম.",
    "১২ আগস্ট ২০২৬, ০৪:১০ এ.এম",
    "১২ আগস্ট ২০২৬, ০৪:১০ পি এম",
    "শনিবার, আগস্ট ২৯, ২০২০ | ১০:৪৬ পূর্বাহ্ণ",  # ukbdnews.com
    "শনিবার, আগস্ট ২৯, ২০২০ | ০৪:৪৬ অপরাহ্ণ",
    "শনিবার, আগস্ট ২৯, ২০২০ | ০৪:৪৬ অপরাহ্ন",  # with dental ন, as often written
    "২২ আগস্ট ২০২৬ | ১৯:০৮",  # samakal.com, a 24-hour clock
    "১২ আগস্ট ২০২৬, বিকাল ০৪:১০",
    "১২ আগস্ট ২০২৬, রাত ১০:৩০",
    "১২ আগস্ট ২০২৬, সকাল ০৯:১৫",
    "১২ আগস্ট ২০২৬, দুপুরে ১২:১৫",
    "১২ আগস্ট ২০২৬, সন্ধ্যা ০৭:০৫",
    "১২ আগস্ট ২০২৬, ভোর ০৫:৩০",
    "Dec 12, 2025 01:27 PM",  # newagebd.net
    "12 August 2026, 4:10 p.m.",
    "12 August 2026, 4:10 p.m",
    "10:46 a.m., August 29, 2020",
    "August 29, 2020 10:46 am",
]


@pytest.mark.parametrize("stated", FORMS)
def test_each_form_is_stored_as_the_page_states_it(stated):
    for body in (f"<div>প্রকাশ: {stated}</div>", f"<div>{stated}</div>",  # labelled, and just after the headline
                 f"<div><span>প্রকাশ:</span> <span>{stated}</span><span>শিরোনাম</span></div>"):
        got = extract(dated_page("", body), "text/html", URL)
        assert (got.published_raw, got.published_source, got.published_utc) == (stated, "visible-text", None), body


CUT = [
    "প্রকাশ: ১২ আগস্ট ২০২৬, সকাল ১০টা",  # the time in words: the date alone would drop it
    "প্রকাশ: ১২ আগস্ট ২০২৬, ১০.৩০ পিএম",  # a time with a dot
    "প্রকাশ: ১২ আগস্ট ২০২৬, ১০:৩০ ঘটিকা",
    "প্রকাশ: ১২ আগস্ট ২০২৬, ০৪:৩০পিএমে",  # the marker runs on into a longer word
    "প্রকাশ: 12 August 2026, 4:10 P M",
    "রাত ১০টা, ১২ আগস্ট ২০২৬",  # unlabelled, the time before the date
]


@pytest.mark.parametrize("body", CUT)
def test_a_date_not_read_whole_is_not_stored_cut(body):
    got = extract(dated_page("", f"<div>{body}</div>"), "text/html", URL)
    assert (got.published_raw, got.published_source) == (None, None)


def test_a_part_of_the_day_beginning_the_next_text_is_not_part_of_the_date():
    body = "<div><span>প্রকাশ: ১২ আগস্ট ২০২৬, ০৪:১০ পিএম</span><a>রাতে ঢাকায় বৃষ্টি</a></div>"
    assert extract(dated_page("", body), "text/html", URL).published_raw == "১২ আগস্ট ২০২৬, ০৪:১০ পিএম"
    glued = "<div><span>আপডেটঃ ২২ আগস্ট ২০২৬ | ০৭:৩৪</span><span>মতামত</span></div>"  # minified: no space between
    assert extract(dated_page("", glued), "text/html", URL).modified_raw == "২২ আগস্ট ২০২৬ | ০৭:৩৪"
