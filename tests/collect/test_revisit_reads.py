"""What a revisit reads, as docs/how-it-works.md says: each function its table names reads exactly the tables
it names, and a whole revisit asks no other, of a pruned working database and of a full one alike, reading
every one of them.

Reads are SQLite's own account: the authorizer (sqlite3.Connection.set_authorizer) is told, as each
statement is prepared, every table or view it reads (SQLITE_READ; a view's or a trigger's inner tables
carry its name, and only the names a statement itself reads, in a WITH clause too, are counted here). A whole revisit's
statements are told apart with the trace callback (it runs as each statement starts, in the calling
thread): a SELECT's reads are the revisit's questions; the reads an INSERT's foreign keys make, and
the stream's next id (collector/record/streams.py next_id), are not, as the page says. The store runs
each statement, prepared and started, under its lock (collector/record/store.py), so the revisit's
threads (an outlet's, its fetches') never interleave one statement's reads with another's.
"""

from __future__ import annotations

import re
import sqlite3
import traceback
from pathlib import Path

import pytest

from collector.clock import iso
from collector.collect import changes, events, outcomes, revisits
from collector.collect.revisits import run_rechecks
from collector.record.store import Store
from collector.record.streams import next_id
from testing.farm import Reply
from tests.collect.test_left_out import LATE, PARAGRAPHS_ONE_CHAR, context
from tests.collect.test_quiet import quiet  # noqa: F401  (the fixture)
from tests.collect.test_prune import news, record  # noqa: F401  (the fixture quiet uses)
from tests.collect.test_revisits import HEADLINE_NEW, page

DOC = Path(__file__).resolve().parents[2] / "docs" / "how-it-works.md"
SECTION = "### The record, the fold, and what a revisit reads"
# SQLite's own tables and table-valued functions: not the record's.
INTERNAL = re.compile(r"sqlite_\w+|json_each|json_tree|\w+_fts(_\w+)?")


def documented() -> dict[str, set[str]]:
    """Return the page's table: code name -> the tables it reads."""
    text = DOC.read_text(encoding="utf-8")
    assert SECTION in text, f"{DOC.name} lost its section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
    rows: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 3 and re.fullmatch(r"`[\w.]+`", cells[1]):
            rows[cells[1].strip("`")] = set(re.findall(r"`([^`]+)`", cells[2]))
    return rows


class Reads:
    """Record the tables the statements run on a connection read (top level, SQLite's internals left out)."""

    def __init__(self, conn: sqlite3.Connection, by_statement: bool = False):
        self.tables: set[str] = set()
        self.asked: set[str] = set()  # by SELECT statements that are not a next id's
        self._pending: list[str] = []
        # Inner names that are a view or a trigger: their reads are the view's or the trigger's. Any other
        # inner name is a WITH clause's, read by the statement itself.
        self._within = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('view', 'trigger')")}
        conn.set_authorizer(self._authorize)
        if by_statement:
            conn.set_trace_callback(self._started)

    def _authorize(self, action, first, _second, _db, inner):
        if (action == sqlite3.SQLITE_READ and inner not in self._within and first
                and not INTERNAL.fullmatch(first)):
            self.tables.add(first)
            self._pending.append(first)
        return sqlite3.SQLITE_OK

    def _started(self, sql: str) -> None:
        if sql.lstrip().startswith("--"):  # a trigger's statements: already prepared with its statement
            return
        pending, self._pending = self._pending, []
        word = sql.lstrip().split(None, 1)[0].upper() if sql.strip() else ""
        if word in ("SELECT", "WITH") and not any(f.name == "next_id" and f.filename.endswith("streams.py")
                                                  for f in traceback.extract_stack()):
            self.asked.update(pending)


# How the test calls each function the page names, on a pruned database (conn) and the fixture's articles.
CALLS = {
    "revisits.pending_articles": lambda conn, ids: revisits.pending_articles(conn),
    "outcomes.known_keys": lambda conn, ids: outcomes.known_keys(conn, ids["edited"]),
    "events.absence_streak": lambda conn, ids: events.absence_streak(conn, ids["gone"]),
    "events.is_gone": lambda conn, ids: events.is_gone(conn, ids["gone"]),
    "changes.previous_snapshot": lambda conn, ids: changes.previous_snapshot(
        conn, {"article_id": ids["edited"], "id": 0, "captured_at": iso(LATE)}),
    "events.article_age_hours": lambda conn, ids: events.article_age_hours(conn, ids["same"], iso(LATE)),
    "changes.open_comparisons": lambda conn, ids: changes.open_comparisons(conn, LATE, 10),
}


def test_the_page_names_each_function_the_test_calls():
    assert set(documented()) == set(CALLS), "the page's table and CALLS name different functions"


@pytest.mark.parametrize("name", sorted(CALLS))
def test_each_function_reads_what_the_page_says(quiet, name):
    _host, _full, _folder, ids, working = quiet
    store = Store(working)
    try:
        reads = Reads(store.conn)
        CALLS[name](store.conn, ids)
        store.conn.set_authorizer(None)
    finally:
        store.conn.close()
    assert reads.tables == documented()[name], f"{name} reads {sorted(reads.tables)}"


@pytest.mark.parametrize("which", ["pruned", "full"])
def test_a_whole_revisit_asks_only_what_the_page_says(quiet, tmp_path, which):
    host, full, folder, ids, working = quiet
    # A change of text (in the pruned database the older text left out, its digests held), of headline, and an
    # absence: every question asked.
    host.routes.update({news("edited"): page(headline=HEADLINE_NEW), news("same"): page(paragraphs=PARAGRAPHS_ONE_CHAR),
                        news("gone"): Reply(404)})
    ctx = context(working if which == "pruned" else full, tmp_path, LATE, f"warc-{which}")
    ctx.record_dir = folder
    reads = Reads(ctx.store.conn, by_statement=True)
    try:
        summary = run_rechecks(ctx)
    finally:
        ctx.store.conn.set_authorizer(None)
        ctx.store.conn.set_trace_callback(None)
    ctx.finish()
    ctx.store.conn.close()
    assert summary["performed"] == 6 and summary["events"] == {"changed": 2}
    named = set().union(*documented().values())
    assert reads.asked - named == set(), f"a revisit asks {sorted(reads.asked - named)}, which the page does not name"
    assert named - reads.tables == set(), f"the page names {sorted(named - reads.tables)}, which a revisit never reads"


def test_the_reads_are_seen(quiet):
    """The instrument itself: a table read is seen, a view's columns by the view's name, a next id's not asked."""
    _host, _full, _folder, _ids, working = quiet
    store = Store(working)
    try:
        reads = Reads(store.conn, by_statement=True)
        store.conn.execute("SELECT captured_at, text FROM snapshots WHERE id = 1").fetchone()
        store.conn.execute("WITH c AS (SELECT id FROM checks) SELECT COUNT(*) FROM c").fetchone()
        next_id(store.conn, "events")
        store.conn.execute("SELECT 1").fetchone()  # the trace of the statement after attributes the one before
    finally:
        store.conn.close()
    assert reads.tables == {"snapshots", "checks", "events", "export_stream"}
    assert reads.asked == {"snapshots", "checks"}
