"""Normalisation of Bangla text, used only to compare texts and to locate them.

Stored text is never normalised: the method promises the text "exactly as
extracted". Two forms live here:

* ``normalise_for_comparison``: the method's comparison form. NFC, every space
  variant becomes one plain space, curly and other quotation marks become
  straight ones, dashes become '-'. ZWJ and ZWNJ are kept, because they change
  how a conjunct is drawn (র‍্যাব with ZWJ is not র্যাব).
* ``fold_for_search``: the comparison form with the joiners folded away, for
  the search index and its queries only. A reader types র্যাব whether the page
  wrote র‍্যাব (with ZWJ), র‌্যাব (with ZWNJ) or neither; the comparison form keeps
  them apart, the search form finds all three.
* ``skeleton``: a looser form with an index map back to the original code
  points, used by the extractor to find where a paragraph of trafilatura's
  (NFC, ZWJ-stripped) output sits in the page's own characters.
"""

from __future__ import annotations

import unicodedata

ZWNJ = "\u200c"
ZWJ = "\u200d"

_SINGLE_QUOTES = "\u2018\u2019\u201a\u201b\u2032\u2035\u2039\u203a\uff07"
_DOUBLE_QUOTES = "\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb\u301d\u301e\u301f\uff02"
_DASHES = (
    "\u2010\u2011\u2012\u2013\u2014\u2015"  # hyphen, non-breaking hyphen, figure, en, em dash, bar
    "\u2212\u2e3a\u2e3b\ufe58\ufe63\uff0d"  # minus sign, two/three-em dash, small and fullwidth forms
)

_TRANSLATE = {ord(c): "'" for c in _SINGLE_QUOTES}
_TRANSLATE.update({ord(c): '"' for c in _DOUBLE_QUOTES})
_TRANSLATE.update({ord(c): "-" for c in _DASHES})


def _is_space(char: str) -> bool:
    """Return True for every character that renders as a blank (tabs, newlines, NBSP, U+2000-200A...)."""
    return char.isspace() or unicodedata.category(char) == "Zs"


def normalise_for_comparison(text: str) -> str:
    """Return text in the method's comparison form; the argument is left untouched.

    NFC decomposes the composition exclusions U+09DC ড়, U+09DD ঢ়, U+09DF য়
    into letter + nukta. That is harmless here: both sides of a comparison get
    the same treatment, so precomposed and decomposed spellings compare equal.
    """
    nfc = unicodedata.normalize("NFC", text).translate(_TRANSLATE)
    # a space is anything isspace() or in category Zs; every run becomes one ' '
    words = "".join(" " if _is_space(c) else c for c in nfc).split(" ")
    return " ".join(w for w in words if w)


# Invisible characters that only shape or hyphenate a word: ZWNJ, ZWJ, soft
# hyphen, word joiner, zero-width no-break space. A word is the same word to a
# reader with or without them, so search drops them (ZWSP stays: it separates words).
_FOLDED_AWAY = {ord(c): None for c in (ZWNJ, ZWJ, "\u00ad", "\u2060", "\ufeff")}
# Khanda ta as Unicode 4.0 spelled it (ta, virama, ZWJ); U+09CE since 4.1. Old
# text and some keyboards still produce the sequence.
_OLD_KHANDA_TA = "\u09a4\u09cd\u200d"
KHANDA_TA = "\u09ce"


def fold_for_search(text: str) -> str:
    """Return text as the search index holds it: the comparison form without joiners.

    Joiners go first, so that marks they kept apart (ে ZWJ া) meet before NFC
    composes them, and the fold of a folded text is itself. For search only:
    comparisons keep the joiners (normalise_for_comparison).
    """
    return normalise_for_comparison(text.replace(_OLD_KHANDA_TA, KHANDA_TA).translate(_FOLDED_AWAY))


def texts_equal(a: str, b: str) -> bool:
    """Return True when two texts are the same after normalise_for_comparison."""
    return normalise_for_comparison(a) == normalise_for_comparison(b)


def _dropped_from_skeleton(char: str) -> bool:
    """Return True for characters trafilatura may delete or merge: blanks and non-printables.

    trafilatura 2.3.1 keeps only ``isprintable()`` characters and collapses
    whitespace, so ZWJ, ZWNJ, soft hyphens and every kind of space are
    invisible to the match and recovered from the page afterwards.
    """
    return _is_space(char) or not char.isprintable()


def _canonical_order(chars: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """Return chars with each run of combining marks stably sorted by combining class (NFD's ordering step)."""
    out: list[tuple[str, int]] = []
    run: list[tuple[str, int]] = []
    for item in chars:
        if unicodedata.combining(item[0]):
            run.append(item)
            continue
        out.extend(sorted(run, key=lambda pair: unicodedata.combining(pair[0])))
        run = []
        out.append(item)
    out.extend(sorted(run, key=lambda pair: unicodedata.combining(pair[0])))
    return out


def skeleton(text: str) -> tuple[str, list[int]]:
    """Return (skeleton, index_map): NFD text without blanks and non-printables, and for
    each skeleton character the index of the code point of ``text`` it came from.

    NFD, not NFC, because NFD is a per-character decomposition followed by a
    reordering of marks, so every skeleton character keeps a single origin.
    Any two spellings that are canonically equivalent share one skeleton.
    """
    pairs: list[tuple[str, int]] = []
    for index, char in enumerate(text):
        if _dropped_from_skeleton(char):
            continue
        pairs.extend((part, index) for part in unicodedata.normalize("NFD", char))
    pairs = _canonical_order(pairs)
    return "".join(c for c, _ in pairs), [i for _, i in pairs]


def skeleton_text(text: str) -> str:
    """Return only the skeleton string of text (see ``skeleton``)."""
    return skeleton(text)[0]
