"""Each article's absence streak, folded (collector/record/fold_absence.py): the same whatever order checks arrive
in, folded twice or restored, and made by migration 23 from the checks a database of the code before holds."""

from __future__ import annotations

import json
import random
import sqlite3
from datetime import timedelta

import pytest

from collector.clock import iso
from collector.collect import events
from collector.record import dormant, fold_absence, schema
from collector.record.articles import CREATE_IDENTITIES
from collector.record.fold import micros_sql
from collector.record.store import Store
from collector.record.tables import record_tables
from tests.record.test_fold import START, in_two_orders, insert, restored_after
from tests.record.test_fold_visit import DATA, _fixture

OUTCOMES = ("present", "absent", "inconclusive")


def checks(seed: int, articles: int = 30) -> list[tuple[str, dict]]:
    """Return checks of each article, outcomes at random, some at one instant (their order then by id)."""
    rng = random.Random(seed)
    rows, check = [], 0
    for article in range(1, articles + 1):
        for n in range(rng.randrange(0, 9)):
            check += 1
            at = START + timedelta(hours=rng.choice((n, n, n + 1)), microseconds=rng.randrange(3) * 7)
            rows.append(("checks", {"id": check, "article_id": article, "slot": f"{n}h#{check}", "due_at": iso(at),
                                    "performed_at": iso(at), "run_id": 1, "url": f"https://o.test/{article}",
                                    "result": "ok", "request_chain": "[]", "outcome": rng.choice(OUTCOMES),
                                    "opens_absence": 0, "try_number": 1}))
    return rows


def streak_from_rows(store: Store, article_id: int) -> list[int]:
    """Return the ids of the absent checks since the last present one, as events.py read them from the rows."""
    found = []
    for row in store.conn.execute("SELECT id, outcome FROM checks WHERE article_id = ? AND outcome != 'inconclusive' "
                                  "ORDER BY performed_at DESC, id DESC", (article_id,)):
        if row["outcome"] != "absent":
            break
        found.append(row["id"])
    return found[::-1]


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_streak_is_the_checks_folded_whatever_order_they_arrive_in(tmp_path, seed):
    flat = checks(seed)
    in_order, other = in_two_orders(tmp_path, flat, seed)
    want = fold_absence.from_rows(in_order.conn)
    assert fold_absence.projection(in_order.conn) == want == fold_absence.projection(other.conn)
    with other.transaction() as conn:
        fold_absence.refold(conn)
    assert fold_absence.projection(other.conn) == want
    for article in range(1, 31):  # what the gone rule reads: the rows' streak, and its last absent check
        assert [r["id"] for r in events.absence_streak(other.conn, article)] == streak_from_rows(in_order, article)
        assert fold_absence.last_absent(other.conn, article) == in_order.one(
            "SELECT MAX(performed_at) FROM checks WHERE article_id = ? AND outcome = 'absent'", (article,))[0]
    assert fold_absence.STREAK not in record_tables(other.conn)


def test_restoring_its_dropped_triggers_folds_the_checks_inserted_without_them(tmp_path):
    flat = checks(5)
    store = insert(tmp_path / "db.db", flat[: len(flat) // 2])
    for name in ("present", "absent", "check"):
        store.conn.execute(f"DROP TRIGGER {fold_absence.STREAK}_{name}")
    restored_after(store, flat[len(flat) // 2:], fold_absence, fold_absence.STREAK)


def test_restoring_its_altered_triggers_makes_what_they_folded_from_the_rows_again(tmp_path):
    flat = checks(6)
    store = insert(tmp_path / "db.db", flat[: len(flat) // 2])
    altered = {  # an absence an hour late; an inconclusive check taken for absent
        "absent": f"""AFTER INSERT ON checks WHEN NEW.outcome = 'absent' BEGIN INSERT INTO fold_articles
            (article_id, absent_us, absent_id) VALUES (NEW.article_id, 3600000000 + {micros_sql('NEW.performed_at')},
            NEW.id) ON CONFLICT (article_id) DO UPDATE SET absent_us = excluded.absent_us, absent_id = excluded.absent_id;
            END""",
        "check": f"""AFTER INSERT ON checks WHEN NEW.outcome IN ('absent', 'inconclusive') BEGIN INSERT INTO
            {fold_absence.STREAK} VALUES (NEW.article_id, {micros_sql('NEW.performed_at')}, NEW.id, 1)
            ON CONFLICT DO NOTHING; END"""}
    for name, body in altered.items():
        store.conn.execute(f"DROP TRIGGER {fold_absence.STREAK}_{name}")
        store.conn.execute(f"CREATE TRIGGER {fold_absence.STREAK}_{name} {body}")
    restored_after(store, flat[len(flat) // 2:], fold_absence, fold_absence.STREAK)


def test_migration_23_folds_the_checks_a_database_of_the_code_before_holds(tmp_path):
    """Of a working database, the checks it holds and the latest check each dormant row packed (then dropped)."""
    ids = json.loads((DATA / "v21-ids.json").read_text())
    working, full = Store(_fixture(tmp_path, "working-v21")), Store(_fixture(tmp_path, "full-v21"))
    assert working.schema_version() == full.schema_version() == len(schema.MIGRATIONS)
    assert fold_absence.projection(full.conn) == fold_absence.from_rows(full.conn)
    whole, kept = fold_absence.projection(full.conn), fold_absence.projection(working.conn)
    for article in (ids["same"], ids["edited"], ids["gone"]):  # quiet: only their latest check was packed
        assert kept[0][article] == whole[0][article] and article not in kept[1] and article not in whole[1]
    assert working.one(f"SELECT COUNT(*) FROM {dormant.TABLE}")[0] == 0
    working.close()
    full.close()


def test_a_followers_stream_database_keeps_its_dormant_rows(tmp_path):
    """Migration 23 drops a working database's dormant rows, never those of a follower's stream database (it has
    prune_identities), whatever their format: its merge reads them."""
    path = _fixture(tmp_path, "working-v21")
    raw = sqlite3.connect(path)
    raw.execute(CREATE_IDENTITIES)
    raw.commit()
    count = raw.execute(f"SELECT COUNT(*) FROM {dormant.TABLE}").fetchone()[0]
    raw.close()
    part = Store(path)
    assert count == 3 and part.one(f"SELECT COUNT(*) FROM {dormant.TABLE}")[0] == count
    part.close()
