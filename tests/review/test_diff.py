"""The word-level diff of two snapshots (collector/review/diff.py), compared as the method compares."""

from __future__ import annotations

import unicodedata

import pytest

from collector.collect.events import FIELDS as EVENT_FIELDS
from collector.parse.textnorm import texts_equal
from collector.review.diff import diff_snapshots, diff_values, invisible_change, tokenize


def ops(field) -> list[tuple[str, list[str]]]:
    return [(p.op, [t.text for t in p.tokens]) for p in field.pieces]


def test_a_bangla_word_is_one_token_and_punctuation_its_own():
    words = [t.text for t in tokenize("কার্যালয়ে বৈঠক হয়েছে। র\u200d্যাবের “অভিযান”, ১২–১৩ আগস্ট")]
    assert words == ["কার্যালয়ে", "বৈঠক", "হয়েছে", "।", "র\u200d্যাবের", '"', "অভিযান", '"', ",",
                     "১২", "-", "১৩", "আগস্ট"]  # vowel signs, virama and ZWJ stay inside their word


def test_a_joiner_gained_or_lost_is_a_change_and_is_named():
    diff = diff_values("text", "র\u200d্যাবের অভিযানে দুজন আটক", "র্যাবের অভিযানে দুজন আটক")
    assert diff.changed and ops(diff)[:2] == [("delete", ["র\u200d্যাবের"]), ("insert", ["র্যাবের"])]
    assert diff.pieces[1].note == "ZERO WIDTH JOINER (U+200D) removed"
    back = diff_values("text", "উদ্যাপন", "উদ্\u200cযাপন")
    assert back.pieces[-1].note == "ZERO WIDTH NON-JOINER (U+200C) added"


@pytest.mark.parametrize("before, after", [
    (unicodedata.normalize("NFD", "কোনো ক্ষতি হতো না, চাষাঢ়া"), "কোনো ক্ষতি হতো না, চাষাঢ়া"),
    ("হ\u09df\u09c7ছে", "হ\u09af\u09bc\u09c7ছে"),
    ("\u2018বিগ\u00a0ফিশ\u2019 স্মিথ\u2013ক্যারি", "'বিগ ফিশ' স্মিথ-ক্যারি"),
    ("প্রথম অনুচ্ছেদ\n\nদ্বিতীয় অনুচ্ছেদ", "প্রথম অনুচ্ছেদ দ্বিতীয় অনুচ্ছেদ"),  # re-wrapping
])
def test_an_encoding_difference_is_no_change(before, after):
    diff = diff_values("text", before, after)
    assert before != after and not diff.changed and diff.stored_differently
    assert [p.op for p in diff.pieces] == ["equal"]


def test_a_rewritten_sentence_shows_word_by_word():
    diff = diff_values("text", "ইউএনও বলেন, ভুক্তভোগী লিখিত অভিযোগ দিলে ব্যবস্থা নেওয়া হবে।",
                       "ইউএনও বলেন, অভিযোগ তদন্ত করে দেখা হচ্ছে।")
    assert ops(diff) == [("equal", ["ইউএনও", "বলেন", ","]), ("delete", ["ভুক্তভোগী", "লিখিত"]),
                         ("equal", ["অভিযোগ"]), ("delete", ["দিলে", "ব্যবস্থা", "নেওয়া", "হবে"]),
                         ("insert", ["তদন্ত", "করে", "দেখা", "হচ্ছে"]), ("equal", ["।"])]
    assert (diff.count("delete"), diff.count("insert")) == (6, 4)


def test_paragraph_breaks_are_kept_for_the_layout_only():
    tokens = tokenize("এক দুই\nতিন\n\nচার")
    assert [(t.text, t.space_before, t.paragraph_before) for t in tokens] == [
        ("এক", False, False), ("দুই", True, False), ("তিন", True, True), ("চার", True, True)]


def test_a_field_that_appears_or_goes_is_all_insert_or_all_delete():
    assert ops(diff_values("byline", None, "নিজস্ব প্রতিবেদক")) == [("insert", ["নিজস্ব", "প্রতিবেদক"])]
    assert ops(diff_values("byline", "নিজস্ব প্রতিবেদক", None)) == [("delete", ["নিজস্ব", "প্রতিবেদক"])]
    assert not diff_values("byline", None, None).changed


@pytest.mark.parametrize("before, after", [
    ("র\u200d্যাব", "র্যাব"), ("a ,b", "a, b"), ("কোনো", unicodedata.normalize("NFD", "কোনো")), ("এ  ঘটনা", "এ ঘটনা"),
    ("হয়", "হল"), ("", "x"), ("ক\u00a0খ", "ক খ"),
])
def test_changed_agrees_with_the_comparison_events_are_decided_by(before, after):
    assert diff_values("text", before, after).changed == (not texts_equal(before, after))


def test_the_three_fields_are_those_events_compare_as_text():
    snapshot = {"headline": "শিরোনাম", "byline": None, "text": "লেখা"}
    fields = diff_snapshots(snapshot, {**snapshot, "text": "নতুন লেখা"})
    assert [f.field for f in fields] == ["headline", "byline", "text"] and set(EVENT_FIELDS) >= {"headline", "byline"}
    assert [f.changed for f in fields] == [False, False, True]


def test_an_invisible_change_is_named_only_when_it_is_the_whole_change():
    assert invisible_change("র\u200d্যাব", "র্যাব") == "ZERO WIDTH JOINER (U+200D) removed"
    assert invisible_change("র\u200d্যাব", "র\u200c্যাব") == \
        "ZERO WIDTH JOINER (U+200D) removed; ZERO WIDTH NON-JOINER (U+200C) added"
    assert invisible_change("র্যাব", "র্যাবের") is None
