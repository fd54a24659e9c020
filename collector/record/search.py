"""Full-text search over snapshot headlines and text that keeps Bangla words whole.

The index is `snapshots_fts` (migration _V3 in schema.py), an FTS5 table over
snapshots with the tokenizer below. Since migration 5 it holds each distinct
headline and text of an article once, under the first snapshot that showed
them: revisits that found the page as it was are not indexed again. SQLite's default unicode61 treats Unicode
categories Mn and Mc, Bangla's vowel signs and virama, as separators, so a
word like "কার্যালয়ে" would be indexed as the fragments "ক", "র", "য", ...,
and a query for a fragment of it, or for an unrelated word sharing those
consonants, would match. Counting M* as token characters keeps words whole.
"""

from __future__ import annotations

import sqlite3

from collector.record.store import Store

# The tokenizer of snapshots_fts; the migration holds the same text (a
# migration is frozen once released), and tests check that they agree.
TOKENIZE = "unicode61 categories 'L* N* Co M*'"
DEFAULT_TOKENIZE = "unicode61"


def tokens(text: str, tokenize: str = TOKENIZE) -> list[str]:
    """Return the tokens FTS5 makes of text with the given tokenizer, in order."""
    conn = sqlite3.connect(":memory:")
    try:
        quoted = tokenize.replace('"', '""')
        conn.execute(f'CREATE VIRTUAL TABLE t USING fts5(x, tokenize="{quoted}")')
        conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        conn.execute("INSERT INTO t (x) VALUES (?)", (text,))
        return [row[0] for row in conn.execute("SELECT term FROM v ORDER BY offset")]
    finally:
        conn.close()


def match_expression(words: str) -> str:
    """Return an FTS5 query matching every whitespace-separated word as written (no operators)."""
    return " ".join('"' + word.replace('"', '""') + '"' for word in words.split())


def search(store: Store, words: str, limit: int = 50) -> list[int]:
    """Return the ids of snapshots whose headline or text holds every word, best match first."""
    if not words.split():
        return []
    rows = store.query("SELECT rowid FROM snapshots_fts WHERE snapshots_fts MATCH ? ORDER BY rank LIMIT ?",
                       (match_expression(words), limit))
    return [row[0] for row in rows]
