"""The database schema as an ordered list of forward migrations (4 and 5: collector/record/views.py).

Observation tables are append-only: triggers make UPDATE and DELETE fail, so
no code path (ours or an operator's sqlite3 shell) can edit the record.
State tables (the capture queue, the registry mirror, run bookkeeping) are kept apart and may change.
"""

from __future__ import annotations

from collector.record import fold, fold_absence, fold_keys, fold_latest, fold_visit, renames
from collector.record.dormant_table import V15
from collector.record.triggers import append_only_triggers
from collector.record.ledger_schema import V9
from collector.record.streams import V13, V14
from collector.record.unattended import V10 as V11
from collector.record.views import FIRST_SHOWING, V4, V5, V10, V12, snapshots_insert_trigger
from collector.record.written import V16

# Tables whose rows are observations: never updated, never deleted.
APPEND_ONLY_TABLES = (
    "requests",
    "source_probes",
    "sources",
    "listings",
    "listing_entries",
    "articles",
    "article_urls",
    "snapshots",
    "archive_submissions",
    "checks",
    "events",
    "run_finishes",
    "vantage_differences",
    "request_intents",
    "operator_actions",
    "runs",
    "capture_attempts",
    "comparisons",
)

# Tables that store a record table kept as a view (what the record, readers and exports see), append-only too.
STORAGE_TABLES = {
    "listing_entry_values": "listing_entries",
    "listing_items": "listing_entries",
    "snapshot_rows": "snapshots",
    "snapshot_texts": "snapshots",
}
# The storage table that holds each view's ids.
VIEW_ROWS = {"listing_entries": "listing_items", "snapshots": "snapshot_rows"}


_V1 = """
CREATE TABLE outlet_groups (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    name_bn TEXT NOT NULL
);
CREATE TABLE outlets (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    name_bn TEXT NOT NULL,
    homepage TEXT NOT NULL,
    language TEXT,
    group_id TEXT REFERENCES outlet_groups(id),
    operator_sources TEXT NOT NULL DEFAULT '[]',  -- JSON list, as in outlets.toml
    active INTEGER NOT NULL DEFAULT 1,            -- 0 once removed from outlets.toml
    first_seen_at TEXT NOT NULL,
    last_synced_at TEXT NOT NULL
);
-- One row per invocation of the collector; finished_at/counts arrive in run_finishes.
CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    command TEXT NOT NULL,
    started_at TEXT NOT NULL,
    vantage TEXT NOT NULL,
    software_version TEXT NOT NULL,
    git_revision TEXT,
    settings TEXT NOT NULL                        -- JSON of the settings in force
);
CREATE TABLE run_finishes (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id),
    finished_at TEXT NOT NULL,
    counts TEXT NOT NULL,                         -- JSON
    warnings TEXT NOT NULL DEFAULT '[]'
);
CREATE TABLE requests (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    outlet_id TEXT,
    purpose TEXT NOT NULL,          -- robots, discovery, listing, capture, recheck, archive
    method TEXT NOT NULL,
    url TEXT NOT NULL,
    host TEXT,
    attempt INTEGER NOT NULL,
    redirected_from INTEGER REFERENCES requests(id),
    sent INTEGER NOT NULL,          -- 0: never sent (robots, limits), 1: sent
    started_at TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    result TEXT NOT NULL,
    status_code INTEGER,
    content_type TEXT,
    bytes INTEGER,
    elapsed_ms REAL,
    remote_ip TEXT,
    vantage TEXT NOT NULL,
    location TEXT,                  -- Location header of a redirect
    detail TEXT,                    -- error text, robots rule, challenge marker ...
    warc_file TEXT,
    warc_offset INTEGER,
    warc_length INTEGER
);
CREATE INDEX requests_run ON requests(run_id);
CREATE INDEX requests_result ON requests(result);
CREATE TABLE source_probes (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    outlet_id TEXT NOT NULL,
    url TEXT NOT NULL,
    found_via TEXT NOT NULL,        -- registry, robots, homepage_link, homepage_anchor, common_path, sitemap_index_child
    request_id INTEGER REFERENCES requests(id),
    probed_at TEXT NOT NULL,
    outcome TEXT NOT NULL,          -- fetch_failed, not_parseable, no_recent_articles, other_site, empty, index, valid
    detail TEXT,
    kind TEXT                       -- rss, atom, urlset, news_sitemap, sitemapindex
);
CREATE INDEX source_probes_outlet ON source_probes(outlet_id);
-- A source is an address shown valid at a time; current status is derived.
CREATE TABLE sources (
    id INTEGER PRIMARY KEY,
    outlet_id TEXT NOT NULL,
    url TEXT NOT NULL,
    kind TEXT NOT NULL,
    found_via TEXT NOT NULL,
    probe_id INTEGER REFERENCES source_probes(id),
    run_id INTEGER NOT NULL REFERENCES runs(id),
    validated_at TEXT NOT NULL
);
CREATE INDEX sources_outlet ON sources(outlet_id);
CREATE TABLE listings (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    outlet_id TEXT NOT NULL,
    url TEXT NOT NULL,
    request_id INTEGER REFERENCES requests(id),
    parent_listing_id INTEGER REFERENCES listings(id),
    fetched_at TEXT NOT NULL,
    kind TEXT NOT NULL,
    entry_count INTEGER NOT NULL
);
CREATE INDEX listings_run ON listings(run_id);
CREATE TABLE listing_entries (
    id INTEGER PRIMARY KEY,
    listing_id INTEGER NOT NULL REFERENCES listings(id),
    position INTEGER NOT NULL,
    url TEXT NOT NULL,
    url_key TEXT NOT NULL,
    title TEXT,
    published_raw TEXT,
    published_utc TEXT,
    modified_raw TEXT,
    modified_utc TEXT,
    queue_reason TEXT,              -- why it was queued at listing time, NULL if not
    UNIQUE (listing_id, position)
);
CREATE INDEX listing_entries_key ON listing_entries(url_key);
CREATE TABLE articles (
    id INTEGER PRIMARY KEY,
    outlet_id TEXT NOT NULL,
    url_key TEXT NOT NULL UNIQUE,
    url TEXT NOT NULL,
    first_seen_at TEXT NOT NULL,
    first_seen_run INTEGER NOT NULL REFERENCES runs(id)
);
CREATE TABLE article_urls (
    id INTEGER PRIMARY KEY,
    article_id INTEGER NOT NULL REFERENCES articles(id),
    url TEXT NOT NULL,
    url_key TEXT NOT NULL,
    how TEXT NOT NULL,              -- listing, canonical, redirect
    recorded_at TEXT NOT NULL,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    snapshot_id INTEGER REFERENCES snapshots(id),
    UNIQUE (article_id, url_key)
);
CREATE INDEX article_urls_key ON article_urls(url_key);
CREATE TABLE snapshots (
    id INTEGER PRIMARY KEY,
    article_id INTEGER NOT NULL REFERENCES articles(id),
    request_id INTEGER NOT NULL UNIQUE REFERENCES requests(id),
    run_id INTEGER NOT NULL REFERENCES runs(id),
    purpose TEXT NOT NULL,          -- capture, recheck
    captured_at TEXT NOT NULL,
    status_code INTEGER NOT NULL,
    final_url TEXT NOT NULL,
    headline TEXT,
    byline TEXT,
    published_raw TEXT,
    published_source TEXT,
    published_utc TEXT,
    modified_raw TEXT,
    modified_source TEXT,
    modified_utc TEXT,
    text TEXT,
    canonical_url TEXT,
    language TEXT,
    encoding TEXT,
    encoding_source TEXT,
    unmapped_paragraphs INTEGER,
    html_sha256 TEXT NOT NULL,
    warc_file TEXT NOT NULL,
    warc_offset INTEGER NOT NULL,
    warc_length INTEGER NOT NULL,
    payload_digest TEXT,
    extractor TEXT NOT NULL,        -- fingerprint of extractor versions and settings
    extractor_info TEXT NOT NULL    -- JSON
);
CREATE INDEX snapshots_article ON snapshots(article_id);
CREATE TABLE archive_submissions (
    id INTEGER PRIMARY KEY,
    snapshot_id INTEGER NOT NULL REFERENCES snapshots(id),
    run_id INTEGER NOT NULL REFERENCES runs(id),
    request_id INTEGER REFERENCES requests(id),
    kind TEXT NOT NULL,             -- submit, status, check
    url TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    job_id TEXT,
    status TEXT NOT NULL,           -- pending, success, error, unknown, rate_limited, failed_request
    status_ext TEXT,
    message TEXT,
    timestamp TEXT,
    original_url TEXT,
    archive_url TEXT
);
CREATE INDEX archive_submissions_snapshot ON archive_submissions(snapshot_id);
-- State, not observation: what the capture stage still has to do.
CREATE TABLE capture_queue (
    url_key TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    outlet_id TEXT NOT NULL,
    article_id INTEGER REFERENCES articles(id),
    reason TEXT NOT NULL,
    listing_entry_id INTEGER REFERENCES listing_entries(id),
    sort_time TEXT,                 -- the entry's date, for newest-first
    queued_at TEXT NOT NULL,
    queued_run INTEGER NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',  -- pending, captured, failed
    last_request_id INTEGER,
    done_at TEXT
);
CREATE INDEX capture_queue_state ON capture_queue(state, outlet_id);
"""

_V2 = """
-- One row per revisit of an article. A regular slot is due its number of hours
-- after the article's first capture snapshot; a follow-up is due its hours
-- after the absent check that opened an absence (see collector/recheck.py).
CREATE TABLE checks (
    id INTEGER PRIMARY KEY,
    article_id INTEGER NOT NULL REFERENCES articles(id),
    slot TEXT NOT NULL,             -- '1h' ... '8760h', or 'followup:<check id>+1h'
    follows_check_id INTEGER REFERENCES checks(id),  -- a follow-up's opening absent check
    due_at TEXT NOT NULL,
    performed_at TEXT NOT NULL,
    run_id INTEGER NOT NULL REFERENCES runs(id),
    url TEXT NOT NULL,              -- the address requested
    result TEXT NOT NULL,           -- the fetcher's result for the last request
    request_id INTEGER REFERENCES requests(id),   -- that last request
    request_chain TEXT NOT NULL,    -- JSON list: every request of the check (hops, retries)
    snapshot_id INTEGER REFERENCES snapshots(id),
    outcome TEXT NOT NULL,          -- present, absent, inconclusive
    opens_absence INTEGER NOT NULL DEFAULT 0,  -- 1: first absent since the last present
    detail TEXT,
    UNIQUE (article_id, slot)
);
CREATE INDEX checks_opens_absence ON checks(opens_absence) WHERE opens_absence = 1;
CREATE INDEX snapshots_first_capture ON snapshots(purpose, article_id, captured_at);
CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    article_id INTEGER NOT NULL REFERENCES articles(id),
    kind TEXT NOT NULL,             -- gone, reappeared, changed
    field TEXT,                     -- changed: headline, byline, text, published_raw, modified_raw, final_url, canonical_url
    before TEXT,                    -- as extracted (never normalised); NULL when the page had none
    after TEXT,
    detected_at TEXT NOT NULL,      -- when the deciding check was performed
    article_age_hours REAL NOT NULL,  -- first capture to the change's first sighting; orders review only
    check_id INTEGER NOT NULL REFERENCES checks(id),  -- the check that decided
    evidence TEXT NOT NULL,         -- JSON: check and snapshot ids
    extractor_before TEXT,
    extractor_after TEXT,
    run_id INTEGER NOT NULL REFERENCES runs(id)
);
CREATE INDEX events_article ON events(article_id);
CREATE INDEX events_review ON events(article_age_hours DESC, id);
"""

# Full-text search that keeps Bangla words whole, the WARC manifest, and the
# bookkeeping of the day-partitioned export (collector/export.py).
_V3 = """
-- unicode61's default treats Mn/Mc (Bangla vowel signs, virama) as separators,
-- so 'কার্যালয়ে' would be indexed as fragments and a fragment would match.
-- Counting M* (with L*, N*, Co) as token characters keeps each word whole.
-- External content: the text lives once, in snapshots; snapshots is
-- append-only, so an AFTER INSERT trigger is all the index needs.
CREATE VIRTUAL TABLE snapshots_fts USING fts5(
    headline, text, content='snapshots', content_rowid='id',
    tokenize="unicode61 categories 'L* N* Co M*'"
);
CREATE TRIGGER snapshots_fts_index AFTER INSERT ON snapshots BEGIN
    INSERT INTO snapshots_fts (rowid, headline, text) VALUES (new.id, new.headline, new.text);
END;
INSERT INTO snapshots_fts (rowid, headline, text) SELECT id, headline, text FROM snapshots;
-- Every WARC file the record points at, as published: the files live outside
-- git, as assets of one GitHub release per day; this row is how a reader
-- checks that the file they downloaded is the one the record was made with.
CREATE TABLE warc_files (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,             -- relative to the WARC folder, as requests.warc_file and snapshots.warc_file
    bytes INTEGER NOT NULL,
    sha256 TEXT NOT NULL,           -- of the whole file, hex
    recorded_at TEXT NOT NULL,
    release_tag TEXT NOT NULL,      -- the release holding the file: warc-YYYY-MM-DD (the file's UTC day)
    asset_name TEXT NOT NULL,       -- the file's name among that release's assets
    UNIQUE (name, sha256)
);
CREATE INDEX listings_source ON listings(outlet_id, url, id);
-- State, not observation: the export file the database was last brought in sync
-- with. (collector/export.py also keeps export_shadow_<table>: its copy of each
-- keyed table as last exported, to find changed rows in SQL.)
CREATE TABLE export_head (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    batch TEXT NOT NULL,            -- path of the last export file, relative to the export folder
    sha256 TEXT NOT NULL
);
""" + append_only_triggers("warc_files")

# Listing entries stored once per distinct value. Feeds list the same entries
# hour after hour: kept whole, every listing's rows were three fifths of the
# database after a few days (bench/storage_growth.py). Each listing position
# is now a small row (listing_items) pointing at the entry's values
# (listing_entry_values, one row per distinct set of values); the view
# listing_entries shows them exactly as the table did, same ids, same columns
# in the same order, so readers, exports and the record are unchanged, and an
# INSERT into the view stores a new value row only when no equal one exists.
# Answers that differ by vantage: the same address asked from two network
# locations within a window, answered differently (collector/collect/vantages.py).
_V6 = """
CREATE TABLE vantage_differences (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL REFERENCES runs(id),  -- the run whose answer found the difference
    found_at TEXT NOT NULL,
    url_key TEXT NOT NULL,          -- comparison key of the address both asked for
    article_id INTEGER REFERENCES articles(id),
    kind TEXT NOT NULL,             -- reach, status, final_address, text
    request_a INTEGER NOT NULL REFERENCES requests(id),  -- this run's final answer
    request_b INTEGER NOT NULL REFERENCES requests(id),  -- the other vantage's final answer
    vantage_a TEXT NOT NULL,
    vantage_b TEXT NOT NULL,
    detail TEXT NOT NULL,           -- JSON: each side's result, status, final address, text digest
    UNIQUE (request_a, request_b, kind)
);
CREATE INDEX vantage_differences_article ON vantage_differences(article_id);
""" + append_only_triggers("vantage_differences")

# The service's own words beside our summary. For an answer that is not a
# JSON answer (an HTTP 401 "You need to be logged in to use Save Page Now.",
# a 429 or 502 HTML page), `message` holds the project's summary and this
# column what the service said, so a reader can tell the two apart.
_V7 = """
ALTER TABLE archive_submissions ADD COLUMN service_message TEXT;
"""

# Search finds a word however it is typed (collector/record/search.py): the
# index holds each headline and text as search_fold() gives it (NFC, joiners
# folded, space/quote/dash variants unified), and queries are folded the same
# way. search_fold is a Python function: every connection that writes
# snapshots registers it (Store does). The index is contentless: what it holds
# is not the record's text, so it keeps no copy and points at none; the text
# stays as extracted, in snapshot_texts.
_V8 = f"""
DROP TRIGGER snapshots_insert;
DROP TABLE snapshots_fts;
CREATE VIRTUAL TABLE snapshots_fts USING fts5(
    headline, text, content='',
    tokenize="unicode61 categories 'L* N* Co M*'"
);
{snapshots_insert_trigger("search_fold(NEW.headline)", "search_fold(NEW.text)")}
INSERT INTO snapshots_fts (rowid, headline, text)
    SELECT r.id, search_fold(r.headline), search_fold(t.text)
      FROM snapshot_rows AS r LEFT JOIN snapshot_texts AS t ON t.id = r.text_id
     WHERE {FIRST_SHOWING} ORDER BY r.id;
"""

# Conditional requests for feeds and sitemaps: a 304 is a listing naming the one whose entries it repeats
# (collector/record/views.py). 11: a year unattended (unattended.py). 12: every article's capture delay (views.py).
# 13: record streams, one per (vantage, shard) writer (collector/record/streams.py). 14: a database that follows
# every stream, how far it has read each (record/follow.py). 15: dormant articles (record/dormant.py). 16: files
# it exported (record/written.py). 17, 18, 21-23: projections (record/fold*.py). 19, 20: names (renames.py).
MIGRATIONS: tuple = (_V1, _V2, _V3, V4, V5, _V6, _V7, _V8, V9, V10, V11, V12, V13, V14, V15, V16, fold.migrate,
                     fold_keys.migrate, renames.migrate, renames.migrate_columns, fold_latest.migrate,
                     fold_visit.migrate, fold_absence.migrate)
