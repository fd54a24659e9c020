"""Full-text search over snapshot headlines and text: whole Bangla words, found however they are typed.

The index is `snapshots_fts` (schema.py), an FTS5 table over snapshots with
the tokenizer below. It holds each distinct headline and text of an article
once, under the first snapshot that showed them: revisits that found the
page as it was are not indexed again.

Whole words: SQLite's default unicode61 treats Unicode categories Mn and Mc,
Bangla's vowel signs and virama, as separators, so a word like "কার্যালয়ে"
would be indexed as the fragments "ক", "র", "য", ..., and a query for a
fragment of it, or for an unrelated word sharing those consonants, would
match. Counting M* as token characters keeps words whole.

However typed: the index holds `fold_for_search` of each headline and text
(collector/parse/textnorm.py: NFC, joiners folded, space/quote/dash variants
unified), and every query is folded the same way, so য় typed as য + ় finds
U+09DF, র্যাব finds র‍্যাব, an NFC query finds an NFD page. The stored text is
untouched; the index keeps no copy of the folded text (it is contentless).
Folding runs in Python: every connection that writes snapshots or searches
registers the functions below (Store does; the Datasette plugin does).
"""

from __future__ import annotations

import sqlite3

from collector.parse.textnorm import fold_for_search

# The tokenizer of snapshots_fts; the migration holds the same text (a
# migration is frozen once released), and tests check that they agree.
TOKENIZE = "unicode61 categories 'L* N* Co M*'"
DEFAULT_TOKENIZE = "unicode61"

# SQL functions: FOLD of a value is what the index holds; MATCH of a query is
# the FTS5 expression that finds its words, folded, each word as written.
FOLD_FUNCTION = "search_fold"
MATCH_FUNCTION = "search_match"


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


def folded(value: str | None) -> str | None:
    """Return a headline or text as the index holds it (None stays None)."""
    return None if value is None else fold_for_search(value)


def match_expression(words: str) -> str:
    """Return an FTS5 query matching every whitespace-separated word, folded, as written (no operators)."""
    return " ".join('"' + word.replace('"', '""') + '"' for word in fold_for_search(words or "").split())


def sql_match(words: str | None) -> str:
    """Return match_expression(words), or an empty phrase (which matches nothing) when there is no word.

    FTS5 rejects an empty query as a syntax error; a canned query asked for
    nothing should answer no rows, not an error.
    """
    return match_expression(words or "") or '""'


def register_functions(conn: sqlite3.Connection) -> None:
    """Give a connection the SQL functions the index and its queries are made with."""
    conn.create_function(FOLD_FUNCTION, 1, folded, deterministic=True)
    conn.create_function(MATCH_FUNCTION, 1, sql_match, deterministic=True)


def search(store, words: str, limit: int = 50) -> list[int]:
    """Return the ids of snapshots whose headline or text holds every word, best match first.

    `store` is a collector.record.store.Store (not imported: the store imports this module).
    """
    expression = match_expression(words)
    if not expression:
        return []
    rows = store.query("SELECT rowid FROM snapshots_fts WHERE snapshots_fts MATCH ? ORDER BY rank LIMIT ?",
                       (expression, limit))
    return [row[0] for row in rows]
