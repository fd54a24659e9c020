"""Migration 17: the articles' projection, folded forward from the appended rows in every database.

What a revisit is scheduled by: per article its outlet (its `articles`
row's), its first capture (the earliest
`snapshot_rows` row of purpose 'capture': what its regular slots count from)
and the regular slots it has been checked at (every `checks` slot that is not
a retry, '24h#2', nor a follow-up, 'followup:...'), as a set written
',1h,6h,24h,' in the order the checks arrived. TABLE holds one row an article,
and the triggers below fold each row into it as the row is inserted, whatever
inserts it: a run, `export rebuild` (whole or resumed), a follower's merge,
`export prune` copying the rows it keeps. Each value
is a set, a minimum or the article row's own, so the order rows arrive in (a
stream late, a merge table by table, a capture before its article's row) does
not change it, and a row folded twice changes nothing: the projection equals
the rows by construction (`from_rows` computes it from them;
tests/record/test_fold.py holds the two equal in random orders and on
databases the code before wrote, tests/record/test_follow.py on a follower
after every increment, tests/collect/test_quiet.py on real collections,
pruned, revisited and rebuilt).

A pruned working database leaves rows out (collector/collect/prune.py) and
keeps, of TABLE, every article still owed a check and every article whose
rows it keeps (`keep`): the scheduler (collector/collect/revisits.py) reads
the same schedule whatever database it runs on, and an article owed nothing
more whose rows are gone is read by nothing. TABLE is derived, never an
observation: its name starts with fileformat.DERIVED_PREFIX, it is never
exported, and the record's rows make it again.

Before migration 17 a pruned database held a quiet article's first capture,
slots and outlet in its dormant row (record/dormant.py); `migrate` folds
those in, then drops the three columns. Migration 22 adds the address a
revisit fetches and the article's address keys (record/fold_visit.py).
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Callable, Iterable

from collector.record.dormant_table import V15_TABLE as DORMANT  # its name when migration 17 runs

TABLE = "fold_articles"

# The record's instants are clock.iso's text (2027-02-05T00:00:00.075599Z, 27 bytes); TABLE holds a first capture
# as whole microseconds since 1970 UTC (8 bytes: about 28 MB less at 1.46 million articles in their window), read
# exactly from that text, and any other text an instant is written in by julianday, to the millisecond.
_CANONICAL = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9][0-9][0-9][0-9]Z"


def micros_sql(text: str) -> str:
    """Return the SQL of an instant's text as microseconds since 1970 UTC (exact for the record's own text,
    to the millisecond SQLite's date functions keep for any other)."""
    return (f"(CASE WHEN {text} GLOB '{_CANONICAL}' THEN CAST(strftime('%s', substr({text}, 1, 19)) AS INTEGER) "
            f"* 1000000 + CAST(substr({text}, 21, 6) AS INTEGER) "
            f"ELSE CAST(round((julianday({text}) - 2440587.5) * 86400000000.0) AS INTEGER) END)")


def text_sql(micros: str) -> str:
    """Return the SQL of microseconds since 1970 UTC as the record's instant text (clock.iso's)."""
    return (f"(strftime('%Y-%m-%dT%H:%M:%S', {micros} / 1000000, 'unixepoch') || '.' "
            f"|| printf('%06d', {micros} % 1000000) || 'Z')")


def julian_sql(micros: str) -> str:
    """Return the SQL of microseconds since 1970 UTC as a Julian day number (what julianday() gives)."""
    return f"({micros} / 86400000000.0 + 2440587.5)"


# How each value is folded in, the same for a trigger's one row and a bulk statement's many: the article row's
# outlet; the earlier first capture; a slot added to the set unless it is in it already.
_ON_OUTLET = "ON CONFLICT (article_id) DO UPDATE SET outlet_id = excluded.outlet_id"
_ON_FIRST = (f"ON CONFLICT (article_id) DO UPDATE SET first_capture_us = excluded.first_capture_us "
             f"WHERE {TABLE}.first_capture_us IS NULL OR excluded.first_capture_us < {TABLE}.first_capture_us")
_ON_SLOT = (f"ON CONFLICT (article_id) DO UPDATE SET slots = {TABLE}.slots || substr(excluded.slots, 2) "
            f"WHERE instr({TABLE}.slots, excluded.slots) = 0")


def _regular_sql(slot: str) -> str:
    """Return the SQL test of a regular slot label (`regular`)."""
    return f"instr({slot}, '#') = 0 AND substr({slot}, 1, 9) != 'followup:'"


CREATE = f"""
CREATE TABLE {TABLE} (
    article_id INTEGER PRIMARY KEY,
    outlet_id TEXT,                 -- the articles row's (NULL until it arrives)
    first_capture_us INTEGER,       -- MIN(captured_at) of its capture snapshots, microseconds: what its slots count from
    slots TEXT NOT NULL DEFAULT ',' -- the regular slots checked: ',1h,6h,24h,'
);
CREATE TRIGGER {TABLE}_article AFTER INSERT ON articles
BEGIN
    INSERT INTO {TABLE} (article_id, outlet_id) VALUES (NEW.id, NEW.outlet_id) {_ON_OUTLET};
END;
CREATE TRIGGER {TABLE}_capture AFTER INSERT ON snapshot_rows WHEN NEW.purpose = 'capture'
BEGIN
    INSERT INTO {TABLE} (article_id, first_capture_us) VALUES (NEW.article_id, {micros_sql("NEW.captured_at")})
    {_ON_FIRST};
END;
CREATE TRIGGER {TABLE}_slot AFTER INSERT ON checks WHEN {_regular_sql("NEW.slot")}
BEGIN
    INSERT INTO {TABLE} (article_id, slots) VALUES (NEW.article_id, ',' || NEW.slot || ',') {_ON_SLOT};
END;
"""


def fold_capture(conn: sqlite3.Connection, article_id: int, captured_at: str) -> None:
    """Fold in a capture snapshot a database leaves out as it reads it (record/rebuild.py), as its trigger would."""
    conn.execute(f"INSERT INTO {TABLE} (article_id, first_capture_us) VALUES (:article, {micros_sql(':at')}) "
                 f"{_ON_FIRST}", {"article": article_id, "at": captured_at})


def regular(slot: str | None) -> bool:
    """Return True for a regular slot label ('24h'), not a retry ('24h#2') nor a follow-up: what TABLE's slots hold."""
    return bool(slot) and "#" not in slot and not slot.startswith("followup:")


def slot_set(text: str | None) -> frozenset[str]:
    """Return the slots of a slots text (',1h,6h,' -> {'1h', '6h'})."""
    return frozenset(s for s in (text or "").split(",") if s)


def projection(conn: sqlite3.Connection) -> dict[int, tuple]:
    """Return TABLE as {article_id: (outlet_id, first capture as the record's text, frozenset of slots)}."""
    return {r[0]: (r[1], r[2], slot_set(r[3])) for r in conn.execute(
        f"SELECT article_id, outlet_id, {text_sql('first_capture_us')}, slots FROM {TABLE}")}


def from_rows(conn: sqlite3.Connection) -> dict[int, tuple]:
    """Return the projection computed from the database's rows alone, as `projection` gives it (a full database's
    equals TABLE: the test of the fold)."""
    out: dict[int, list] = defaultdict(lambda: [None, None, set()])
    for article_id, outlet_id in conn.execute("SELECT id, outlet_id FROM articles"):
        out[article_id][0] = outlet_id
    for article_id, first in conn.execute(f"SELECT article_id, {text_sql('MIN(' + micros_sql('captured_at') + ')')} "
                                          "FROM snapshot_rows WHERE purpose = 'capture' GROUP BY article_id"):
        out[article_id][1] = first
    for article_id, slot in conn.execute("SELECT article_id, slot FROM checks"):
        slots = out[article_id][2]  # an article with only retries or follow-ups still has its row
        if regular(slot):
            slots.add(slot)
    return {a: (v[0], v[1], frozenset(v[2])) for a, v in out.items()}


# Each statement folds a table's rows in as its trigger would, one row at a time, in SQL (a full database
# of two years holds millions of articles: nothing is read into memory). Over what TABLE holds: a set, a
# minimum, the article row's.
_FOLD_ROWS = (
    f"INSERT INTO {TABLE} (article_id, outlet_id) SELECT id, outlet_id FROM articles WHERE true {_ON_OUTLET}",
    f"""INSERT INTO {TABLE} (article_id, first_capture_us)
        SELECT article_id, MIN({micros_sql("captured_at")}) FROM snapshot_rows WHERE purpose = 'capture'
         GROUP BY article_id {_ON_FIRST}""",
    f"""INSERT INTO {TABLE} (article_id, slots)
        SELECT article_id, ',' || slot || ',' FROM checks WHERE {_regular_sql("slot")} ORDER BY id {_ON_SLOT}""",
)
# A dormant row's schedule before migration 17: its outlet where no articles row gave one, its first capture,
# and each of its slots (',1h,6h,' read as a JSON list).
_FOLD_DORMANT = (
    f"""INSERT INTO {TABLE} (article_id, outlet_id) SELECT article_id, outlet_id FROM {DORMANT} WHERE true
        ON CONFLICT (article_id) DO UPDATE SET outlet_id = COALESCE({TABLE}.outlet_id, excluded.outlet_id)""",
    f"""INSERT INTO {TABLE} (article_id, first_capture_us)
        SELECT article_id, {micros_sql("since")} FROM {DORMANT} WHERE true {_ON_FIRST}""",
    f"""INSERT INTO {TABLE} (article_id, slots)
        SELECT d.article_id, ',' || j.value || ',' FROM {DORMANT} d,
               json_each('["' || replace(trim(d.slots, ','), ',', '","') || '"]') j
         WHERE j.value != '' ORDER BY d.article_id, j.key {_ON_SLOT}""",
)


def migrate(conn: sqlite3.Connection, execute: Callable[[str], None]) -> None:
    """Migration 17: create TABLE and its triggers, fold in every row the database holds and its dormant rows'
    schedules (their first capture, slots and outlet), then drop those columns from the dormant table."""
    execute(CREATE)
    for statement in _FOLD_ROWS:
        conn.execute(statement)
    dormant = conn.execute(f"SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '{DORMANT}'").fetchone()
    if dormant and {"since", "slots"} <= {r[1] for r in conn.execute(f"PRAGMA table_info({DORMANT})")}:
        damaged = conn.execute(f"""SELECT article_id, since, slots FROM {DORMANT} WHERE since IS NULL
            OR since NOT GLOB '[0-9][0-9][0-9][0-9]-*' OR slots NOT LIKE ',%' OR slots NOT LIKE '%,'
            OR instr(slots, ' ') > 0 OR instr(slots, '"') > 0 LIMIT 1""").fetchone()
        if damaged:
            raise ValueError(f"dormant article {damaged[0]}'s schedule is damaged: since {damaged[1]!r}, "
                             f"slots {damaged[2]!r}")
        for statement in _FOLD_DORMANT:
            conn.execute(statement)
        for column in ("since", "slots", "outlet_id"):
            execute(f"ALTER TABLE {DORMANT} DROP COLUMN {column}")


def refold(conn: sqlite3.Connection) -> None:
    """Fold every row the database holds into TABLE again, over what it holds. What `export restore-triggers`
    runs after putting back a trigger of TABLE: rows inserted while it was missing were not folded (a pruned
    database's rows left out were, before they left)."""
    for statement in _FOLD_ROWS:
        conn.execute(statement)


def keep(conn: sqlite3.Connection, owed: Iterable[int], source: str = "src") -> int:
    """Copy from an attached database (a pruning's source) the rows of TABLE a pruned database keeps: of the
    articles `owed` a check and of every article whose rows main holds (after they were copied: what their
    triggers folded in is replaced by the whole row). Return how many rows were kept."""
    conn.execute("CREATE TEMP TABLE fold_owed (id INTEGER NOT NULL PRIMARY KEY) WITHOUT ROWID")
    conn.executemany("INSERT OR IGNORE INTO temp.fold_owed VALUES (?)", [(a,) for a in owed])
    conn.execute(f"""INSERT OR REPLACE INTO main.{TABLE} SELECT f.* FROM {source}.{TABLE} f
        WHERE f.article_id IN (SELECT id FROM temp.fold_owed UNION SELECT id FROM main.articles
                               UNION SELECT article_id FROM main.snapshot_rows UNION SELECT article_id FROM main.checks)""")
    conn.execute("DROP TABLE temp.fold_owed")
    return conn.execute(f"SELECT COUNT(*) FROM main.{TABLE}").fetchone()[0]
