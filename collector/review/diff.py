"""What changed between two snapshots of an article: a word-level diff of headline, byline and text.

Compared as the method compares (collector/parse/textnorm.normalise_for_comparison,
the form events are decided in): an NFC/NFD spelling, a space, quote or
dash variant is no change; a gained or lost ZWJ or ZWNJ is one, and since
it cannot be seen, the change is named ("ZERO WIDTH JOINER (U+200D)
removed"). Paragraph breaks are spaces in that form, so re-wrapping is no
change either; they are kept only to lay the result out.

Done as the anchors do it. diffengine (DocNow/diffengine) renders a
word-level <ins>/<del> diff of an entry's title and readability text
(htmldiff2.render_html_diff) under the entry's address and the two capture
times; NewsDiffs (ecprice/newsdiffs, diffview) diffs two versions of one
article, refusing versions of different articles, with "Pink: archived
date1 / Green: archived date2" and links to the previous and next revisions.
For Bangla a word is a run of letters, marks (vowel signs, virama, nukta),
digits and joiners: a word is never cut at a vowel sign (Python's \\w does not
count categories Mn and Mc as word characters), and a joiner belongs to the
word it shapes. Punctuation (danda, commas, quotes) is a token of its own.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections import Counter
from dataclasses import dataclass

from collector.parse.textnorm import ZWJ, ZWNJ, normalise_for_comparison

FIELDS = ("headline", "byline", "text")


@dataclass(frozen=True)
class Token:
    """A word or a punctuation mark of a value in comparison form, and what stood before it."""

    text: str
    space_before: bool = False
    paragraph_before: bool = False

    def key(self) -> tuple[str, bool]:
        """Return what the comparison sees: the token and whether a space preceded it."""
        return self.text, self.space_before


@dataclass(frozen=True)
class Piece:
    """A run of tokens the same on both sides (equal), only before (delete) or only after (insert)."""

    op: str
    tokens: tuple[Token, ...]
    note: str | None = None  # on an insert that replaced words: the invisible characters that changed


@dataclass(frozen=True)
class FieldDiff:
    """The diff of one field between two snapshots."""

    field: str
    before: str | None
    after: str | None
    pieces: tuple[Piece, ...]

    @property
    def changed(self) -> bool:
        """Return True when the field differs in comparison form (as an event would record it)."""
        return any(p.op != "equal" for p in self.pieces)

    @property
    def stored_differently(self) -> bool:
        """Return True when the stored values differ although the comparison form does not."""
        return not self.changed and (self.before or "") != (self.after or "")

    def count(self, op: str) -> int:
        """Return how many words (not punctuation marks) the pieces of this kind hold."""
        return sum(1 for p in self.pieces if p.op == op for t in p.tokens if _is_word(t.text))


def _word_char(char: str) -> bool:
    return unicodedata.category(char)[0] in "LMN" or char in (ZWJ, ZWNJ, "_")


def _is_word(token: str) -> bool:
    return any(_word_char(c) for c in token)


def _split_word(word: str) -> list[str]:
    """Return a blank-free word cut into runs of word characters and single other characters."""
    parts: list[str] = []
    for char in word:
        if parts and _word_char(char) and _word_char(parts[-1][-1]):
            parts[-1] += char
        else:
            parts.append(char)
    return parts


def tokenize(value: str | None) -> list[Token]:
    """Return the tokens of a value in comparison form, each marked with the blank or paragraph before it."""
    out: list[Token] = []
    for paragraph in (value or "").splitlines():
        words = normalise_for_comparison(paragraph).split(" ")
        for w, word in enumerate(w for w in words if w):
            for p, part in enumerate(_split_word(word)):
                starts_word = p == 0 and bool(out)
                out.append(Token(part, space_before=starts_word, paragraph_before=starts_word and w == 0))
    return out


def invisible_change(old: str, new: str) -> str | None:
    """Return the invisible characters (format controls: ZWJ, ZWNJ, ...) one token gained or lost, named.

    None unless the two tokens are the same once those characters are taken out.
    """
    def visible(text: str) -> str:
        return "".join(c for c in text if unicodedata.category(c) != "Cf")

    if old == new or visible(old) != visible(new):
        return None
    before, after = (Counter(c for c in t if unicodedata.category(c) == "Cf") for t in (old, new))
    named = [f"{unicodedata.name(c, 'U+%04X' % ord(c))} (U+{ord(c):04X}) {what}"
             for counts, what in ((before - after, "removed"), (after - before, "added")) for c in sorted(counts)]
    return "; ".join(named) if named else f"the invisible characters moved ({_codes(old)} → {_codes(new)})"


def _codes(text: str) -> str:
    return " ".join(f"U+{ord(c):04X}" for c in text)


def _replaced_note(old: list[Token], new: list[Token]) -> str | None:
    if len(old) != len(new):
        return None
    notes = [invisible_change(a.text, b.text) for a, b in zip(old, new) if a.text != b.text]
    return "; ".join(n for n in notes if n) or None


def diff_values(field: str, before: str | None, after: str | None) -> FieldDiff:
    """Return the word-level diff of one field's two stored values, in comparison form."""
    old, new = tokenize(before), tokenize(after)
    matcher = difflib.SequenceMatcher(None, [t.key() for t in old], [t.key() for t in new], autojunk=False)
    pieces: list[Piece] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            pieces.append(Piece("equal", tuple(new[j1:j2])))
            continue
        if i2 > i1:
            pieces.append(Piece("delete", tuple(old[i1:i2])))
        if j2 > j1:
            pieces.append(Piece("insert", tuple(new[j1:j2]), _replaced_note(old[i1:i2], new[j1:j2])))
    return FieldDiff(field, before, after, tuple(pieces))


def diff_snapshots(before, after) -> list[FieldDiff]:
    """Return the diffs of headline, byline and text between two snapshot rows (mappings)."""
    return [diff_values(field, before[field], after[field]) for field in FIELDS]
