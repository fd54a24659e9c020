"""Migration 9: request intents (every request in the ledger before it is sent) and operator actions.

Kept apart from collector/record/schema.py, which holds the earlier
migrations, as views.py holds migrations 4 and 5.
"""

from __future__ import annotations

# Every request is in the ledger before its first byte goes out: an intent row
# is committed first, and the request's row (requests.intent_id) completes it.
# A run killed in between leaves an intent with no request row; the next run
# closes it as interrupted, from the response its WARC file holds when there
# is one (collector/net/ledger.py, close_interrupted).
V9 = """
CREATE TABLE request_intents (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    outlet_id TEXT,
    purpose TEXT NOT NULL,
    method TEXT NOT NULL,
    url TEXT NOT NULL,
    host TEXT,
    attempt INTEGER NOT NULL,
    redirected_from INTEGER REFERENCES requests(id),
    vantage TEXT NOT NULL,
    intended_at TEXT NOT NULL       -- committed before the request was handed to the wire
);
CREATE INDEX request_intents_run ON request_intents(run_id);
ALTER TABLE requests ADD COLUMN intent_id INTEGER REFERENCES request_intents(id);
CREATE UNIQUE INDEX requests_intent ON requests(intent_id) WHERE intent_id IS NOT NULL;
-- What an operator did about a database found tampered with (a trigger missing,
-- altered or added): who, when, why, and what had been found. Exported with
-- the record, so the finding outlives the repair.
CREATE TABLE operator_actions (
    id INTEGER PRIMARY KEY,
    acted_at TEXT NOT NULL,
    operator TEXT NOT NULL,
    action TEXT NOT NULL,           -- restore_triggers
    reason TEXT NOT NULL,
    findings TEXT NOT NULL          -- JSON list of what was found
);
"""
