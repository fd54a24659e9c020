"""Issue 19, item 5: what changed between two snapshots, word by word, reached from the review order.

The record (tests/browse/record.py) has three snapshots of one Jago News
article: the capture, a revisit served in NFD (no change as the method
compares), and one where the first র‍্যাবের lost its ZWJ and a sentence was
rewritten (a change event between snapshots 2 and 3).
"""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest

from tests.browse import record

JAGO = "https://www.jagonews24.com/country/news/1146758"


@pytest.fixture(scope="module")
def browser(recorded):
    from tests.browse.conftest import Browser
    b = Browser([recorded[0]])
    yield b
    b.close()


def section(html: str, field: str) -> str:
    """Return the part of the diff page about one field."""
    start = html.index(f"<h2>{field}</h2>")
    end = html.find("<h2>", start + 1)
    return html[start:end if end > 0 else len(html)]


def test_a_lost_joiner_and_a_rewritten_sentence_show_as_changes(browser):
    page = browser.get("/takedownwatch/-/diff?before=1&after=3")
    assert page.status_code == 200 and "What changed: snapshot 1 &rarr; 3" in page.text
    text = section(page.text, "Text")
    assert "<del>র\u200d্যাবের</del>" in text and "<ins>র্যাবের</ins>" in text
    assert '<span class="invisible-change">[ZERO WIDTH JOINER (U+200D) removed]</span>' in text
    assert "<ins>তদন্ত করে দেখা হচ্ছে</ins>" in text  # the new sentence (its অভিযোগ was there before)
    assert re.search(r"<del>[^<]*লিখিত[^<]*</del>", text)  # the old sentence, struck
    assert "Changed:" in text
    assert "Unchanged." in section(page.text, "Headline") and "Unchanged." in section(page.text, "Byline")
    assert "2026-08-13T04:30:00Z" in page.text and "2026-08-13T16:30:00Z" in page.text  # both capture times
    assert 'href="/takedownwatch/-/captured/1"' in page.text and 'href="/takedownwatch/-/captured/3"' in page.text


def test_a_page_served_in_nfd_is_no_change(browser):
    page = browser.get("/takedownwatch/-/diff?before=1&after=2")
    assert page.status_code == 200
    for field in ("Headline", "Text"):
        part = section(page.text, field)
        assert "No change as the method compares" in part and "<del>" not in part and "<ins>" not in part


def test_any_two_snapshots_can_be_chosen_and_neighbouring_pairs_are_linked(browser, recorded):
    _path, found = recorded
    page = browser.get("/takedownwatch/-/diff?before=1&after=2")
    for n in found["snapshots"][JAGO]:
        assert f'<option value="{n}"' in page.text  # every snapshot of the article, in both choices
    assert 'href="/takedownwatch/-/diff?before=2&amp;after=3">the pair after' in page.text
    assert "no pair before" in page.text
    article = found["articles"][JAGO]
    latest = browser.get(f"/takedownwatch/-/diff?article={article}")  # first and latest snapshot
    assert "What changed: snapshot 1 &rarr; 3" in latest.text
    assert f"/takedownwatch/article_snapshots?url={quote(JAGO, safe='')}" in latest.text


def test_snapshots_of_different_articles_are_not_compared(browser, recorded):
    refused = browser.get("/takedownwatch/-/diff?before=1&after=4")
    assert refused.status_code == 400 and "different articles" in refused.text
    assert browser.get("/takedownwatch/-/diff?before=1&after=999").status_code == 404
    assert browser.get("/takedownwatch/-/diff?before=x&after=2").status_code == 400
    assert browser.get("/takedownwatch/-/diff").status_code == 400


def test_the_review_order_and_an_articles_snapshots_link_to_it(browser):
    review = browser.get("/takedownwatch/events_review_order")
    assert '<a href="/takedownwatch/-/diff?before=2&amp;after=3">what changed</a>' in review.text
    rows = browser.get("/takedownwatch/events_review_order.json?_shape=array").json()
    assert rows[0]["diff"] == "-/diff?before=2&after=3"  # relative to the database, in the JSON too
    over_time = browser.get(f"/takedownwatch/article_snapshots?url={quote(JAGO)}")
    assert '<a href="/takedownwatch/-/diff?before=1&amp;after=2">what changed</a>' in over_time.text
    assert '<a href="/takedownwatch/-/diff?before=2&amp;after=3">what changed</a>' in over_time.text


def test_the_diff_page_is_served_for_a_copy_under_another_name(copy_named, browse):
    browser = browse(copy_named("demo.db"))
    page = browser.get("/demo/-/diff?before=2&after=3")
    assert page.status_code == 200 and "<ins>র্যাবের</ins>" in page.text
    assert record.NEW_SENTENCE.rstrip("।").split()[-1] in page.text
