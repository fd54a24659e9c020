"""What an operator does about a database whose triggers were found missing, altered or added.

Nothing repairs a trigger by itself: the store reports the problem at every
open (Store.tampering) and exports refuse. Once the operator has compared the
database with the record (`export verify --db`) and found every row the
record's, `restore_triggers` puts the schema's triggers back and records who
did it, when, why, and what had been found, in operator_actions: a row the
next export writes into the record, so the finding outlives the repair.
"""

from __future__ import annotations

import json

from collector.errors import BadUsage
from collector.record import fold, fold_absence, fold_keys, fold_latest, fold_visit
from collector.record.store import Store, expected_triggers, trigger_problems
from collector.record.streams import next_id


def restore_triggers(store: Store, operator: str, reason: str, now: str) -> list[str]:
    """Return what was found, after restoring the schema's triggers and recording the operator's act."""
    findings = trigger_problems(store.conn)
    if not findings:
        raise BadUsage("the database's triggers are whole: there is nothing to restore")
    if not operator.strip() or not reason.strip():
        raise BadUsage("an operator's name and a reason are both required")
    expected = expected_triggers()
    with store.transaction() as conn:
        found = {r[0]: r[1] for r in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'")}
        for name in found:
            if name not in expected:
                conn.execute(f'DROP TRIGGER "{name}"')
        for name, sql in expected.items():
            if name in found and " ".join(found[name].replace("IF NOT EXISTS ", "").split()) == sql:
                continue
            conn.execute(f'DROP TRIGGER IF EXISTS "{name}"')
            conn.execute(sql)
        if any(fold.TABLE in finding for finding in findings):
            fold.refold(conn)  # rows inserted while a trigger of the projection was missing: folded now
        if any(fold_keys.TABLE in finding for finding in findings):
            fold_keys.refold(conn)
        if any(fold_latest.TABLE in finding for finding in findings):
            fold_latest.refold(conn)
        if any(name in finding for finding in findings for name in (fold.TABLE, fold_visit.CHECKS)):
            fold_visit.refold(conn)
        if any(fold_absence.STREAK in finding for finding in findings):
            fold_absence.refold(conn)
        conn.execute("INSERT INTO operator_actions (id, acted_at, operator, action, reason, findings) "
                     "VALUES (?, ?, ?, 'restore_triggers', ?, ?)",
                     (next_id(conn, "operator_actions"), now, operator, reason,
                      json.dumps(findings, ensure_ascii=False)))
    store.tampering = trigger_problems(store.conn)
    return findings
