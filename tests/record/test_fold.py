"""The articles' projection (collector/record/fold.py): the rows folded, whatever order they arrive in, in every database."""

from __future__ import annotations

import gzip
import random
import shutil
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from collector.clock import iso
from collector.collect.revisits import due_checks
from collector.record import dormant, fold, fold_visit, schema
from collector.record.dormant_table import V15_TABLE  # the table's name in a database the code before wrote
from collector.record.store import Store, trigger_problems
from tests.record.migrating import refused_unchanged

DATA = Path(__file__).resolve().parent.parent / "data" / "fold"
START = datetime(2027, 1, 1, tzinfo=timezone.utc)
SLOTS = ("1h", "6h", "24h", "72h", "168h", "720h", "2160h", "8760h")


def synthetic(seed: int, articles: int = 60) -> dict[str, list[dict]]:
    """Return rows of three appended tables as a collection writes them: articles, their captures and
    rechecks (several captures of one article among them), checks of every kind of slot a record holds."""
    rng = random.Random(seed)
    rows: dict[str, list[dict]] = {"articles": [], "snapshot_rows": [], "checks": []}
    snapshot = check = 0
    for article in range(1, articles + 1):
        url = f"https://o{article % 4}.test/news/{article}-{'ক' * (article % 3)}"
        rows["articles"].append({"id": article, "outlet_id": f"o{article % 4}", "url_key": url, "url": url,
                                 "first_seen_at": iso(START), "first_seen_run": 1})
        captured = START + timedelta(minutes=rng.randrange(60 * 24 * 30))
        for n in range(rng.choice((0, 1, 1, 1, 2))):  # none yet, one, or a second capture (two streams)
            snapshot += 1
            rows["snapshot_rows"].append(_snapshot(snapshot, article, "capture",
                                                   captured + timedelta(minutes=rng.randrange(-90, 90) * n)))
        for slot in rng.sample(SLOTS, rng.randrange(len(SLOTS) + 1)):
            check += 1
            performed = captured + timedelta(hours=float(slot[:-1]))
            rows["checks"].append(_check(check, article, slot, performed))
            if rng.random() < 0.3:
                snapshot += 1
                rows["snapshot_rows"].append(_snapshot(snapshot, article, "recheck", performed))
            if rng.random() < 0.2:  # a retry, a follow-up, a relabelled slot of a merge: none is a regular slot
                for label in (f"{slot}#2", f"followup:{check}+1h", f"{slot}@bd-1of2"):
                    check += 1
                    rows["checks"].append(_check(check, article, label, performed + timedelta(hours=1)))
    return rows


def _snapshot(id_: int, article: int, purpose: str, at: datetime) -> dict:
    return {"id": id_, "article_id": article, "request_id": id_, "run_id": 1, "purpose": purpose,
            "captured_at": iso(at), "status_code": 200, "final_url": f"https://o.test/{article}",
            "html_sha256": "0" * 64, "warc_file": "w.warc.gz", "warc_offset": id_, "warc_length": 1,
            "extractor": "x", "extractor_info": "{}"}


def _check(id_: int, article: int, slot: str, at: datetime) -> dict:
    return {"id": id_, "article_id": article, "slot": slot, "due_at": iso(at), "performed_at": iso(at),
            "run_id": 1, "url": f"https://o.test/{article}", "result": "ok", "request_chain": "[]",
            "outcome": "present", "opens_absence": 0, "try_number": 1}


def insert(db: Path, rows: list[tuple[str, dict]]) -> Store:
    store = Store(db)
    store.conn.execute("PRAGMA foreign_keys = OFF")  # rows arrive before the rows they point at, as in a merge
    with store.transaction() as conn:
        for table, row in rows:
            names = ", ".join(row)
            conn.execute(f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({', '.join('?' for _ in row)})",
                         list(row.values()))
    return store


def restored_after(store: Store, rows: list[tuple[str, dict]], projection, table: str) -> None:
    """Insert rows while a projection's triggers are missing or altered, then restore them: assert the
    projection (a module with projection and from_rows) was wrong, then equals its rows, the finding naming
    `table`."""
    from collector.record.integrity import restore_triggers

    with store.transaction() as conn:
        for name, row in rows:
            conn.execute(f"INSERT INTO {name} ({', '.join(row)}) VALUES ({', '.join('?' for _ in row)})",
                         list(row.values()))
    assert projection.projection(store.conn) != projection.from_rows(store.conn)
    found = restore_triggers(store, "A. Rahman", "triggers dropped or altered by hand", iso(START))
    assert any(table in f for f in found)
    assert projection.projection(store.conn) == projection.from_rows(store.conn)


def in_two_orders(tmp_path: Path, flat: list[tuple[str, dict]], seed: int) -> tuple[Store, Store]:
    """Return two databases of the rows: inserted in order, and shuffled with a third of them met twice (a row
    before the rows it points at, tables interleaved, as a merge or a late stream brings them)."""
    in_order = insert(tmp_path / "in-order.db", flat)
    shuffled = flat[:]
    random.Random(seed).shuffle(shuffled)
    again = shuffled + random.Random(seed + 1).sample(flat, len(flat) // 3)  # rows met twice fold in once
    return in_order, insert(tmp_path / "shuffled.db", again)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_projection_is_the_rows_folded_whatever_order_they_arrive_in(tmp_path, seed):
    rows = synthetic(seed)
    flat = [(t, r) for t, table in rows.items() for r in table]
    in_order, other = in_two_orders(tmp_path, flat, seed)
    want = fold.from_rows(in_order.conn)
    assert fold.projection(in_order.conn) == want == fold.projection(other.conn) == fold.from_rows(other.conn)
    # What it holds: each article's outlet, earliest capture and regular slots, nothing else.
    first = min((r for r in rows["snapshot_rows"] if r["purpose"] == "capture" and r["article_id"] == 1),
                key=lambda r: r["captured_at"], default=None)
    outlet, since, slots = want[1]
    assert outlet == rows["articles"][0]["outlet_id"]
    assert since == (first["captured_at"] if first else None)
    assert slots == {r["slot"] for r in rows["checks"] if r["article_id"] == 1 and fold.regular(r["slot"])}
    assert all(not any(c in s for c in "#@:") for *_, done in want.values() for s in done if s in SLOTS)
    assert any("@" in s for *_, done in want.values() for s in done) == any(
        "@" in r["slot"] for r in rows["checks"])  # a merge's relabelled slot is kept as the rows say it
    assert trigger_problems(other.conn) == []


def test_the_projection_is_never_exported_and_never_an_observation(tmp_path):
    from collector.record.tables import record_tables

    store = insert(tmp_path / "db.db", [(t, r) for t, table in synthetic(4, 5).items() for r in table])
    assert fold.TABLE not in record_tables(store.conn)
    # The projection beside it changes the record in nothing: its tables stay append-only.
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.conn.execute("UPDATE checks SET slot = '6h' WHERE id = 1")


def _fixture(tmp_path: Path, name: str) -> Path:
    """Return a copy of a database written by the code before migration 17 (tests/data/fold/: a pruned working
    database holding three quiet articles as dormant rows, and the full database it was pruned from)."""
    out = tmp_path / f"{name}.db"
    with gzip.open(DATA / f"{name}-v16.db.gz") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def test_a_working_database_of_the_code_before_migrates_to_the_full_databases_schedule(tmp_path):
    full_path, working_path = _fixture(tmp_path, "full"), _fixture(tmp_path, "working")
    raw = sqlite3.connect(working_path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == 16
    before = raw.execute(f"SELECT article_id, outlet_id, since, slots, rows FROM {V15_TABLE} ORDER BY 1").fetchall()
    assert len(before) == 3 and raw.execute("SELECT COUNT(*) FROM articles").fetchone()[0] < 4  # rows left out
    raw.close()
    full, working = Store(full_path), Store(working_path)
    assert working.schema_version() == full.schema_version() == len(schema.MIGRATIONS)
    assert working.tampering == [] and full.tampering == []
    # Every article's schedule, the dormant ones' from their rows' since, slots and outlet.
    assert fold.projection(working.conn) == fold.projection(full.conn) == fold.from_rows(full.conn)
    for article_id, outlet_id, since, slots, _blob in before:
        assert fold.projection(working.conn)[article_id] == (outlet_id, since, fold.slot_set(slots))
    # The three columns are gone; the packed rows, repacked by migration 21 without the latest snapshot
    # (record/fold_latest.py holds what comparing with it needs), were folded by migration 22 (their address,
    # keys and latest check: record/fold_visit.py, as the full database's) and dropped.
    assert [r[1] for r in working.conn.execute(f"PRAGMA table_info({dormant.TABLE})")] == ["article_id", "rows"]
    assert working.one(f"SELECT COUNT(*) FROM {dormant.TABLE}")[0] == 0
    whole, kept = fold_visit.projection(full.conn), fold_visit.projection(working.conn)
    for article_id, *_, blob in before:
        was = dormant.unpack(blob)
        assert blob[0] == 1 and was["snapshot_rows"] and was["checks"]
        assert kept[0][article_id] == whole[0][article_id] and kept[0][article_id][0] == was["articles"][0]["url"]
        assert kept[1][was["checks"][-1]["id"]] == whole[1][was["checks"][-1]["id"]]
    # And the scheduler reads the same checks from either, every slot still owed.
    since = min(s for _, _, s, _, _ in before)
    start = datetime.fromisoformat(since.replace("Z", "+00:00"))
    for hours in (0, 2, 30, 80, 200, 800, 9000):
        at = start + timedelta(hours=hours)
        got = [(d.article_id, d.outlet_id, d.url, d.slot, d.due_at) for d in due_checks(working, at)]
        assert got == [(d.article_id, d.outlet_id, d.url, d.slot, d.due_at) for d in due_checks(full, at)]
    assert {d.article_id for d in due_checks(working, start + timedelta(hours=9000))} == {a for a, *_ in before}


def test_a_migration_that_fails_halfway_leaves_the_database_as_it_was(tmp_path):
    damage = f"UPDATE {V15_TABLE} SET slots = '1h 6h' WHERE article_id = 3"
    raw = refused_unchanged(_fixture(tmp_path, "working"), damage, "dormant article 3's schedule is damaged",
                            16)  # rolled back whole: no projection, the dormant table's columns kept
    assert raw.execute(f"SELECT COUNT(*) FROM sqlite_master WHERE name LIKE '{fold.TABLE}%'").fetchone()[0] == 0
    assert [r[1] for r in raw.execute(f"PRAGMA table_info({V15_TABLE})")] == [
        "article_id", "outlet_id", "since", "slots", "rows"]
    raw.close()


def test_a_pruning_keeps_the_schedules_of_articles_owed_a_check_or_whose_rows_it_keeps(tmp_path):
    rows = synthetic(5)
    whole = insert(tmp_path / "full.db", [(t, r) for t, table in rows.items() for r in table])
    whole.checkpoint()
    held = {3, 4, 5}  # the rows a pruning copies (some of an article's only: its triggers fold part of it)
    copied = [(t, r) for t, table in rows.items() for r in table
              if (r["id"] if t == "articles" else r["article_id"]) in held and (t != "checks" or r["id"] % 2)]
    working = insert(tmp_path / "working.db", copied)
    owed = {d.article_id for d in due_checks(whole, datetime(2031, 1, 1, tzinfo=timezone.utc))} - held
    assert owed and len(owed | held) < len(fold.projection(whole.conn))
    with working.transaction() as conn:
        conn.execute("ATTACH DATABASE ? AS src", (str(tmp_path / "full.db"),))
        assert fold.keep(conn, owed) == len(owed | held)
    conn.execute("DETACH DATABASE src")
    everything = fold.projection(whole.conn)
    assert fold.projection(working.conn) == {a: everything[a] for a in owed | held}


def test_restoring_a_dropped_trigger_of_the_projection_folds_the_rows_inserted_without_it(tmp_path):
    from collector.record.integrity import restore_triggers

    rows = synthetic(6, 10)
    store = insert(tmp_path / "db.db", [(t, r) for t, table in rows.items() for r in table])
    store.conn.execute(f"DROP TRIGGER {fold.TABLE}_slot")  # an operator's shell, or a damaged migration
    article = min(a for a, (_o, _f, done) in fold.projection(store.conn).items() if "8760h" not in done)
    late = _check(10_000, article, "8760h", START + timedelta(days=400))
    with store.transaction() as conn:
        conn.execute(f"INSERT INTO checks ({', '.join(late)}) VALUES ({', '.join('?' for _ in late)})",
                     list(late.values()))
    store.tampering = trigger_problems(store.conn)
    assert "8760h" not in fold.projection(store.conn)[article][2] and store.tampering
    found = restore_triggers(store, "A. Rahman", "trigger dropped by hand", iso(START))
    assert found == [f"trigger {fold.TABLE}_slot is missing"] and store.tampering == []
    assert fold.projection(store.conn) == fold.from_rows(store.conn) and "8760h" in fold.projection(store.conn)[article][2]


def test_a_dormant_article_woken_and_revisited_before_the_migration_keeps_both_schedules(tmp_path):
    working_path = _fixture(tmp_path, "working")
    raw = sqlite3.connect(working_path)
    article, outlet, since, slots = raw.execute(
        f"SELECT article_id, outlet_id, since, slots FROM {V15_TABLE} ORDER BY 1 LIMIT 1").fetchone()
    performed = iso(datetime.fromisoformat(since.replace("Z", "+00:00")) + timedelta(hours=72))
    raw.execute("INSERT INTO checks (id, article_id, slot, due_at, performed_at, run_id, url, result, request_chain, "
                "outcome, opens_absence, try_number) VALUES (9999, ?, '72h', ?, ?, 1, 'u', 'ok', '[]', 'present', "
                "0, 1)", (article, performed, performed))  # its rows woken (record/dormant.py wake), then checked
    raw.commit()
    raw.close()
    store = Store(working_path)
    assert fold.projection(store.conn)[article] == (outlet, since, fold.slot_set(slots) | {"72h"})
    assert "72h" not in slots and store.tampering == []


@pytest.mark.parametrize("text", ["2027-02-05T00:00:00.075599Z", "2027-12-31T23:59:59.999999Z",
                                  "2026-01-01T00:00:00.000000Z", "2027-02-05T06:00:00.000001+06:00",
                                  "2027-02-05T00:00:00Z"])
def test_a_first_capture_is_held_to_the_microsecond_and_read_back_as_the_records_text(text):
    conn = sqlite3.connect(":memory:")
    micros = conn.execute(f"SELECT {fold.micros_sql(':t')}", {"t": text}).fetchone()[0]
    instant = datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)
    exact = (instant - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(microseconds=1)
    if text == iso(instant):  # the record's own text: exact, and read back as it was written
        assert micros == exact and conn.execute(f"SELECT {fold.text_sql(':m')}", {"m": micros}).fetchone()[0] == text
    else:  # any other: as SQLite's date functions read it, to the millisecond
        assert abs(micros - exact) < 1000
    julian = conn.execute(f"SELECT {fold.julian_sql(':m')}, julianday(:t)", {"m": micros, "t": iso(instant)}).fetchone()
    assert abs(julian[0] - julian[1]) < 1.2e-8  # julianday() keeps milliseconds
