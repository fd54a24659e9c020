"""Tests for collector/textnorm.py: the comparison form and the locating skeleton."""

from __future__ import annotations

import unicodedata

import pytest

from collector.parse.textnorm import (fold_for_search, normalise_for_comparison, skeleton, skeleton_text,
                                      texts_equal)

ZWJ, ZWNJ = "\u200d", "\u200c"

# (name, input, comparison form)
NORMALISED = [
    ("nbsp", "ক\u00a0খ", "ক খ"),
    ("en quad .. hair space", "a" + "".join(map(chr, range(0x2000, 0x200B))) + "b", "a b"),
    ("narrow nbsp, math space, ideographic", "a\u202fb\u205fc\u3000d", "a b c d"),
    ("tabs and newlines collapse and strip", "\t a\r\n\n b \u2028", "a b"),
    ("single curly quotes", "\u2018ক\u2019 \u201aখ\u201b", "'ক' 'খ'"),
    ("double curly quotes", "\u201cক\u201d \u201eখ\u201f", '"ক" "খ"'),
    ("guillemets and primes", "\u00abক\u00bb \u2039খ\u203a 5\u2032 6\u2033", "\"ক\" 'খ' 5' 6\""),
    ("dashes", "a\u2010b\u2011c\u2012d\u2013e\u2014f\u2015g\u2212h", "a-b-c-d-e-f-g-h"),
    ("ZWJ kept", "র\u200d্যাব", "র\u200d্যাব"),
    ("ZWNJ kept", "উদ্\u200cযাপন", "উদ্\u200cযাপন"),
    ("NFC composes e + aa", "ক\u09c7\u09be", "ক\u09cb"),
    ("NFC composes e + au length mark", "ক\u09c7\u09d7", "ক\u09cc"),
    ("NFC decomposes U+09DF (composition exclusion)", "\u09df", "\u09af\u09bc"),
    ("NFC decomposes U+09DC", "\u09dc", "\u09a1\u09bc"),
    ("NFC decomposes U+09DD", "\u09dd", "\u09a2\u09bc"),
    ("ZWSP is not a space", "a\u200bb", "a\u200bb"),
]


@pytest.mark.parametrize("name, text, expected", NORMALISED, ids=[c[0] for c in NORMALISED])
def test_normalise_for_comparison(name, text, expected):
    assert normalise_for_comparison(text) == expected


# pairs that must compare equal: same text, different encodings of it
EQUAL = [
    ("precomposed vs decomposed ya", "হ\u09df", "হ\u09af\u09bc"),
    ("precomposed vs decomposed rra", "প\u09dcে", "প\u09a1\u09bcে"),
    ("precomposed vs decomposed rha", "চাষা\u09dd\u09be", "চাষা\u09a2\u09bc\u09be"),
    ("o sign vs e + aa", "ক\u09cbনো", "ক\u09c7\u09beনো"),
    ("nbsp vs space", "১২\u00a0আগস্ট", "১২ আগস্ট"),
    ("curly vs straight", "\u2018বিগ ফিশ\u2019", "'বিগ ফিশ'"),
    ("en dash vs hyphen", "স্মিথ\u2013ক্যারি", "স্মিথ-ক্যারি"),
    ("whitespace runs", "এ  ঘটনা\nঘটে", "এ ঘটনা ঘটে"),
]

# pairs that must stay different: ZWJ and ZWNJ change how a conjunct is drawn
DIFFERENT = [
    ("ZWJ vs none", "র\u200d্যাব", "র্যাব"),
    ("ZWNJ vs none", "উদ্\u200cযাপন", "উদ্যাপন"),
    ("ZWJ vs ZWNJ (Jago News writes র‍্যাব both ways)", "র\u200d্যাব", "র\u200c্যাব"),
    ("different letters", "হয়", "হল"),
]


@pytest.mark.parametrize("name, a, b", EQUAL, ids=[c[0] for c in EQUAL])
def test_texts_equal_across_encodings(name, a, b):
    assert a != b
    assert texts_equal(a, b)


@pytest.mark.parametrize("name, a, b", DIFFERENT, ids=[c[0] for c in DIFFERENT])
def test_zero_width_joiners_are_a_difference(name, a, b):
    assert not texts_equal(a, b)


@pytest.mark.parametrize("name, text, expected", NORMALISED, ids=[c[0] for c in NORMALISED])
def test_normalise(name, text, expected):
    assert normalise_for_comparison(text) == expected


SKELETON_EQUIVALENT = [
    ("precomposed vs decomposed ya", ["হ\u09df\u09c7", "হ\u09af\u09bc\u09c7"]),
    ("with and without ZWJ", ["র\u200d্যাব", "র্যাব"]),
    ("with and without ZWNJ", ["উদ্\u200cযাপন", "উদ্যাপন"]),
    ("NFC vs NFD of a sentence", [unicodedata.normalize(f, "কোনো ক্ষতি হতো না, চাষাঢ়া") for f in ("NFC", "NFD")]),
    ("marks in either order (nukta ccc 7, virama ccc 9)", ["ক\u09bc\u09cd", "ক\u09cd\u09bc"]),
    ("spaces of every kind or none", ["এ ঘটনা", "এ\u00a0ঘটনা", "এঘটনা", "এ\n\tঘটনা"]),
    ("soft hyphen", ["ক\u00adখ", "কখ"]),
]


@pytest.mark.parametrize("name, forms", SKELETON_EQUIVALENT, ids=[c[0] for c in SKELETON_EQUIVALENT])
def test_skeleton_is_shared_by_equivalent_spellings(name, forms):
    assert len({skeleton_text(form) for form in forms}) == 1


MAPPED = ["র\u200d্যাবের সদস্য", "হ\u09df\u09c7 \u09a2\u09bc", "ক\u09c7\u09be\u00a0খ", "ক\u09bc\u09cd"]


@pytest.mark.parametrize("text", MAPPED)
def test_skeleton_index_map_points_at_the_source_code_point(text):
    chars, origin = skeleton(text)
    assert len(chars) == len(origin)
    for char, index in zip(chars, origin):
        assert char in unicodedata.normalize("NFD", text[index])
    # every kept source code point is represented, dropped ones (spaces, joiners) are not
    kept = {i for i, c in enumerate(text) if not (c.isspace() or not c.isprintable())}
    assert set(origin) == kept


# -- the search form: the comparison form with the joiners folded away -----------------------

# (name, spellings a reader may type or a page may serve; all must fold to one form)
SEARCH_SAME = [
    ("ZWJ, ZWNJ or neither in র‍্যাব", ["র\u200d্যাব", "র\u200c্যাব", "র্যাব"]),
    ("ZWNJ or not in উদ্‌যাপন", ["উদ্\u200cযাপন", "উদ্যাপন"]),
    ("য় as U+09DF or য + ়", ["হ\u09df\u09c7ছে", "হ\u09af\u09bc\u09c7ছে"]),
    ("ড় and ঢ় either way", ["প\u09dc\u09c7 চাষা\u09dd\u09be", "প\u09a1\u09bc\u09c7 চাষা\u09a2\u09bc\u09be"]),
    ("NFC or NFD", [unicodedata.normalize(f, "কোনো ক্ষতি হতো না") for f in ("NFC", "NFD")]),
    ("a joiner between e and aa still composes o", ["ক\u09c7\u200d\u09be", "ক\u09cb"]),
    ("khanda ta as U+09CE or ta + virama + ZWJ (Unicode 4.0)", ["উৎসব", "উত\u09cd\u200dসব"]),
    ("soft hyphen, word joiner, zero-width no-break space", ["কথা", "ক\u00adথা", "ক\u2060থা", "ক\ufeffথা"]),
    ("space, quote and dash variants", ["\u2018বিগ\u00a0ফিশ\u2019 স্মিথ\u2013ক্যারি", "'বিগ ফিশ' স্মিথ-ক্যারি"]),
]


@pytest.mark.parametrize("name, forms", SEARCH_SAME, ids=[c[0] for c in SEARCH_SAME])
def test_every_spelling_folds_to_one_search_form(name, forms):
    assert len({fold_for_search(form) for form in forms}) == 1


@pytest.mark.parametrize("name, forms", SEARCH_SAME, ids=[c[0] for c in SEARCH_SAME])
def test_folding_a_folded_text_changes_nothing(name, forms):
    for form in forms:
        assert fold_for_search(fold_for_search(form)) == fold_for_search(form)


def test_the_comparison_form_still_keeps_the_joiners():
    """Search folds them; comparison (events, diffs) does not: র‍্যাব with and without ZWJ stay different."""
    assert normalise_for_comparison("র\u200d্যাব") == "র\u200d্যাব"
    assert not texts_equal("র\u200d্যাব", "র্যাব") and fold_for_search("র\u200d্যাব") == fold_for_search("র্যাব")


def test_search_folding_keeps_different_words_apart_and_zwsp_a_break():
    assert fold_for_search("হয়") != fold_for_search("হল")
    assert fold_for_search("a\u200bb") == "a\u200bb"  # ZWSP separates words: it is not folded away
