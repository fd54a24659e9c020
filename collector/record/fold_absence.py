"""Migration 23: each article's absence streak, folded forward from its checks in every database.

The gone rule (collect/events.py) reads an article's checks since its last
present one: the absent checks of the streak (does an absent check open an
absence; are three over six hours met), the inconclusive ones between them
(the gone event's evidence), and when it was last absent (a reappearance's
interval). None of that needs the checks' rows:

* the articles' projection (record/fold.py, TABLE there) gains the last
  present check (`present_us`, its performance in microseconds as fold.py
  holds instants, and `present_id`: the latest by time, then id) and the
  last absent one (`absent_us`, `absent_id`);
* STREAK holds each absent or inconclusive check performed after the last
  present one: its article, performance, id and whether it was absent.

The triggers below fold each checks row in as it is inserted, whatever
inserts it: a present check later than the last one moves it and drops the
streak's checks at or before it; an absent or inconclusive check later than
the last present one joins the streak. So the order checks arrive in does not
change it, and a check folded twice changes nothing (`from_rows` computes it
from the rows; tests/record/test_fold_absence.py holds the two equal). A
pruning keeps it for every article it keeps the schedule of (`keep`): an
article with an open absence no longer keeps its checks in the working
database for the gone rule's sake.

Derived, never an observation: the names start with fileformat.DERIVED_PREFIX,
nothing here is exported, and the record's rows make it again.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict

from collector.record import dormant
from collector.record.fold import TABLE as ARTICLES, micros_sql, text_sql

STREAK = "fold_streak"
_US = micros_sql("NEW.performed_at")
# The last present check is later than (us, id) when its (present_us, present_id) is greater.
_AFTER_PRESENT = (f"NOT EXISTS (SELECT 1 FROM {ARTICLES} a WHERE a.article_id = NEW.article_id "
                  f"AND a.present_us IS NOT NULL AND (a.present_us, a.present_id) >= ({_US}, NEW.id))")

_ON_PRESENT = (f"ON CONFLICT (article_id) DO UPDATE SET present_us = excluded.present_us, present_id = excluded.present_id "
               f"WHERE {ARTICLES}.present_us IS NULL OR (excluded.present_us, excluded.present_id) > "
               f"({ARTICLES}.present_us, {ARTICLES}.present_id)")
_ON_ABSENT = (f"ON CONFLICT (article_id) DO UPDATE SET absent_us = excluded.absent_us, absent_id = excluded.absent_id "
              f"WHERE {ARTICLES}.absent_us IS NULL OR (excluded.absent_us, excluded.absent_id) > "
              f"({ARTICLES}.absent_us, {ARTICLES}.absent_id)")

CREATE = f"""
ALTER TABLE {ARTICLES} ADD COLUMN present_us INTEGER;  -- its last present check's performance (microseconds)
ALTER TABLE {ARTICLES} ADD COLUMN present_id INTEGER;  -- that check's id
ALTER TABLE {ARTICLES} ADD COLUMN absent_us INTEGER;   -- its last absent check's performance
ALTER TABLE {ARTICLES} ADD COLUMN absent_id INTEGER;   -- that check's id
CREATE TABLE {STREAK} (
    article_id INTEGER NOT NULL,
    performed_us INTEGER NOT NULL,
    check_id INTEGER NOT NULL,
    absent INTEGER NOT NULL,        -- 1: absent; 0: inconclusive
    PRIMARY KEY (article_id, performed_us, check_id)
) WITHOUT ROWID;
CREATE TRIGGER {STREAK}_present AFTER INSERT ON checks WHEN NEW.outcome = 'present'
BEGIN
    INSERT INTO {ARTICLES} (article_id, present_us, present_id) VALUES (NEW.article_id, {_US}, NEW.id) {_ON_PRESENT};
    DELETE FROM {STREAK} WHERE article_id = NEW.article_id AND (performed_us, check_id) <= ({_US}, NEW.id);
END;
CREATE TRIGGER {STREAK}_absent AFTER INSERT ON checks WHEN NEW.outcome = 'absent'
BEGIN
    INSERT INTO {ARTICLES} (article_id, absent_us, absent_id) VALUES (NEW.article_id, {_US}, NEW.id) {_ON_ABSENT};
END;
CREATE TRIGGER {STREAK}_check AFTER INSERT ON checks WHEN NEW.outcome IN ('absent', 'inconclusive')
BEGIN
    INSERT INTO {STREAK} (article_id, performed_us, check_id, absent)
    SELECT NEW.article_id, {_US}, NEW.id, NEW.outcome = 'absent' WHERE {_AFTER_PRESENT}
    ON CONFLICT DO NOTHING;
END;
"""


def refold(conn: sqlite3.Connection) -> None:
    """Fold every checks row in again (what `export restore-triggers` runs after putting back one of these
    triggers), replacing what a trigger altered, not only dropped, folded from the rows held: what came from a
    check the database holds is made again from the rows; what came from one it left out (a pruning keeps the
    projection, not the checks) stays unless a held check is later."""
    us = micros_sql("performed_at")
    for outcome, when, which, on in (("present", "present_us", "present_id", _ON_PRESENT),
                                     ("absent", "absent_us", "absent_id", _ON_ABSENT)):
        conn.execute(f"UPDATE {ARTICLES} SET {when} = NULL, {which} = NULL WHERE {which} IN (SELECT id FROM checks)")
        conn.execute(f"""INSERT INTO {ARTICLES} (article_id, {when}, {which})
            SELECT article_id, us, id FROM (SELECT article_id, {us} AS us, id, ROW_NUMBER() OVER (
                PARTITION BY article_id ORDER BY {us} DESC, id DESC) AS n FROM checks WHERE outcome = '{outcome}')
             WHERE n = 1 {on}""")
    conn.execute(f"DELETE FROM {STREAK} WHERE check_id IN (SELECT id FROM checks)")
    conn.execute(f"""DELETE FROM {STREAK} WHERE EXISTS (SELECT 1 FROM {ARTICLES} a WHERE a.article_id =
        {STREAK}.article_id AND (a.present_us, a.present_id) >= ({STREAK}.performed_us, {STREAK}.check_id))""")
    conn.execute(f"""INSERT INTO {STREAK} (article_id, performed_us, check_id, absent)
        SELECT c.article_id, {micros_sql("c.performed_at")}, c.id, c.outcome = 'absent' FROM checks c
         WHERE c.outcome IN ('absent', 'inconclusive') AND NOT EXISTS (SELECT 1 FROM {ARTICLES} a
               WHERE a.article_id = c.article_id AND a.present_us IS NOT NULL
                 AND (a.present_us, a.present_id) >= ({micros_sql("c.performed_at")}, c.id))
        ON CONFLICT DO NOTHING""")


def migrate(conn: sqlite3.Connection, execute) -> None:
    """Migration 23: add the columns, STREAK and the triggers, fold in every check the database holds and the
    latest check each dormant row packed, then drop a working database's dormant rows (format 2): nothing reads
    them any more; a follower's stream database's (format 1, beside prune_identities) stay, for its merge.

    A working database pruned before kept every check of an article with an open absence: its streak is whole.
    Of a quiet one (its last telling check present) only its latest check was packed: its streak after the
    migration holds that check if inconclusive, not any inconclusive one before it, and no last present check
    if that one is not it (what matters only to a check arriving later with an earlier time)."""
    execute(CREATE)
    refold(conn)
    if not dormant.exists(conn):
        return
    for (blob,) in conn.execute(f"SELECT rows FROM {dormant.TABLE}").fetchall():  # 22 refused a damaged one
        for check in dormant.unpack(blob)["checks"]:
            _fold_check(conn, check)
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'prune_identities'").fetchone():  # not a follower's
        conn.execute(f"DELETE FROM {dormant.TABLE} WHERE substr(rows, 1, 1) = ?", (bytes([dormant.FORMAT_2]),))


def _fold_check(conn: sqlite3.Connection, check: dict) -> None:
    """Fold in one check a dormant row packed, as its trigger would have."""
    values = {"article": check["article_id"], "id": check["id"], "at": check["performed_at"]}
    us = micros_sql(":at")
    if check["outcome"] == "present":
        conn.execute(f"INSERT INTO {ARTICLES} (article_id, present_us, present_id) VALUES (:article, {us}, :id) "
                     f"{_ON_PRESENT}", values)
        conn.execute(f"DELETE FROM {STREAK} WHERE article_id = :article AND (performed_us, check_id) <= ({us}, :id)",
                     values)
        return
    if check["outcome"] == "absent":
        conn.execute(f"INSERT INTO {ARTICLES} (article_id, absent_us, absent_id) VALUES (:article, {us}, :id) "
                     f"{_ON_ABSENT}", values)
    if check["outcome"] in ("absent", "inconclusive"):
        conn.execute(f"""INSERT INTO {STREAK} SELECT :article, {us}, :id, :absent WHERE NOT EXISTS (SELECT 1 FROM
            {ARTICLES} a WHERE a.article_id = :article AND a.present_us IS NOT NULL
               AND (a.present_us, a.present_id) >= ({us}, :id)) ON CONFLICT DO NOTHING""",
                     {**values, "absent": int(check["outcome"] == "absent")})


# -- reading -----------------------------------------------------------------------

def streak(conn: sqlite3.Connection, article_id: int, absent: bool = True) -> list[sqlite3.Row]:
    """Return the absent (or, with absent False, inconclusive) checks since the article's last present one, oldest
    first, as rows of id, outcome and performed_at (the record's instant text)."""
    outcome = "absent" if absent else "inconclusive"
    return conn.execute(f"SELECT check_id AS id, '{outcome}' AS outcome, {text_sql('performed_us')} AS performed_at "
                        f"FROM {STREAK} WHERE article_id = ? AND absent = ? ORDER BY performed_us, check_id",
                        (article_id, int(absent))).fetchall()


def last_absent(conn: sqlite3.Connection, article_id: int) -> str | None:
    """Return when the article was last found absent (the record's instant text), or None."""
    row = conn.execute(f"SELECT {text_sql('absent_us')} FROM {ARTICLES} WHERE article_id = ? AND absent_us IS NOT NULL",
                       (article_id,)).fetchone()
    return row[0] if row else None


def projection(conn: sqlite3.Connection) -> tuple[dict, dict]:
    """Return ({article_id: (present_us, present_id, absent_us, absent_id)} of the articles with any,
    {article_id: [(us, id, absent)]} of the streaks)."""
    last = {r[0]: tuple(r[1:]) for r in conn.execute(
        f"SELECT article_id, present_us, present_id, absent_us, absent_id FROM {ARTICLES} "
        "WHERE present_us IS NOT NULL OR absent_us IS NOT NULL")}
    streaks: dict[int, list] = defaultdict(list)
    for article_id, us, check_id, absent in conn.execute(
            f"SELECT article_id, performed_us, check_id, absent FROM {STREAK} ORDER BY 1, 2, 3"):
        streaks[article_id].append((us, check_id, absent))
    return last, dict(streaks)


def from_rows(conn: sqlite3.Connection) -> tuple[dict, dict]:
    """Return the projection computed from the checks alone, as `projection` gives it."""
    us = micros_sql("performed_at")
    rows = conn.execute(f"SELECT article_id, {us}, id, outcome FROM checks ORDER BY 1, 2, 3").fetchall()
    last: dict[int, list] = {}
    for article_id, when, check_id, outcome in rows:
        entry = last.setdefault(article_id, [None, None, None, None])
        if outcome == "present":  # rows are in (us, id) order: the last is the latest
            entry[0], entry[1] = when, check_id
        elif outcome == "absent":
            entry[2], entry[3] = when, check_id
    last = {a: v for a, v in last.items() if v[0] is not None or v[2] is not None}
    streaks: dict[int, list] = defaultdict(list)
    for article_id, when, check_id, outcome in rows:
        present = last.get(article_id, [None, None])
        if outcome in ("absent", "inconclusive") and (present[0] is None or (when, check_id) > (present[0], present[1])):
            streaks[article_id].append((when, check_id, int(outcome == "absent")))
    return {a: tuple(v) for a, v in last.items()}, dict(streaks)


def keep(conn: sqlite3.Connection, source: str = "src") -> int:
    """Copy from an attached database (a pruning's source) the streaks of the articles the articles' projection
    keeps (record/fold.py keep copies their last present and absent checks), over what main's triggers folded
    from the checks it copied (a boundary row alone may fold a streak the source's later checks ended).
    Return how many rows."""
    conn.execute(f"DELETE FROM main.{STREAK}")
    conn.execute(f"""INSERT INTO main.{STREAK} SELECT s.* FROM {source}.{STREAK} s
        WHERE s.article_id IN (SELECT article_id FROM main.{ARTICLES})""")
    return conn.execute(f"SELECT COUNT(*) FROM main.{STREAK}").fetchone()[0]
