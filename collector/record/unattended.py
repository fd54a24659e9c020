"""Migration 10: what a year of unattended runs needs the record to say.

* capture_attempts: every run's try at capturing a queued article, so a failed
  capture can be tried again by later runs and each try is on the record
  (capture_queue.attempts counts them).
* checks.try_number, checks.retry_of: a revisit that failed for a passing
  reason (5xx, timeout) is tried again, in its own row, rather than using up
  its slot.
* comparisons: a revisit whose snapshot and the one before were made by
  different extraction software is compared only when the older page's HTML
  can be read again (from a WARC file, here or in its release asset); until
  then the check is recorded as not comparable, and tried again.
* events.last_unchanged_at, events.first_changed_at, events.age_min_hours: a
  change happened somewhere between the last time the article was seen as
  before and the first time it was seen changed; review order uses the
  article's age at the earliest possible moment (collector/review/order.py).
* runs becomes append-only like every other observation.

References to snapshots point at snapshot_rows, which holds the ids of the
snapshots view (migration 5).
"""

from __future__ import annotations

from collector.record.triggers import append_only_triggers

V10 = """
ALTER TABLE capture_queue ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;  -- runs that tried its capture
CREATE TABLE capture_attempts (
    id INTEGER PRIMARY KEY,
    article_id INTEGER NOT NULL REFERENCES articles(id),
    url_key TEXT NOT NULL,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    attempted_at TEXT NOT NULL,
    request_id INTEGER REFERENCES requests(id),  -- the fetch's last request
    request_chain TEXT NOT NULL,    -- JSON list: every request of the fetch (hops, retries)
    result TEXT NOT NULL,           -- the fetcher's result for that request
    snapshot_id INTEGER REFERENCES snapshot_rows(id),
    try_number INTEGER NOT NULL,    -- runs that had tried it, this one included (a deferral counts none)
    outcome TEXT NOT NULL           -- captured, retry (a later run tries again), failed (given up), deferred
);
CREATE INDEX capture_attempts_article ON capture_attempts(article_id);
ALTER TABLE checks ADD COLUMN try_number INTEGER NOT NULL DEFAULT 1;  -- 2, 3 ...: the slot tried again
ALTER TABLE checks ADD COLUMN retry_of INTEGER REFERENCES checks(id);  -- the failed try this one repeats
CREATE INDEX checks_inconclusive ON checks(id) WHERE outcome = 'inconclusive';
CREATE TABLE comparisons (
    id INTEGER PRIMARY KEY,
    check_id INTEGER NOT NULL REFERENCES checks(id),  -- the check whose snapshot is the later side
    article_id INTEGER NOT NULL REFERENCES articles(id),
    snapshot_before INTEGER NOT NULL REFERENCES snapshot_rows(id),
    snapshot_after INTEGER NOT NULL REFERENCES snapshot_rows(id),
    run_id INTEGER NOT NULL REFERENCES runs(id),
    attempted_at TEXT NOT NULL,
    outcome TEXT NOT NULL,          -- compared, not_comparable
    how TEXT,                       -- same_html, warc_file, release_asset: where the older HTML was read
    request_ids TEXT NOT NULL DEFAULT '[]',  -- JSON list: the requests that downloaded WARC records
    detail TEXT                     -- why not comparable; what was compared
);
CREATE INDEX comparisons_pair ON comparisons(snapshot_before, snapshot_after);
CREATE INDEX comparisons_open ON comparisons(id) WHERE outcome = 'not_comparable';
ALTER TABLE events ADD COLUMN last_unchanged_at TEXT;  -- last seen as before (present, for a gone)
ALTER TABLE events ADD COLUMN first_changed_at TEXT;   -- first seen changed (absent, for a gone)
ALTER TABLE events ADD COLUMN age_min_hours REAL;      -- first capture to last_unchanged_at: orders review
""" + append_only_triggers("runs")
