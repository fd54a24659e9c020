"""Migrations 4, 5 and 10: listing entries and snapshots stored once per distinct value, read through views.

Feeds list the same entries hour after hour, and most revisits find a page
unchanged. `listing_entries` and `snapshots` keep their ids, columns and
order as views; INSTEAD OF triggers store each distinct value once.
"""

from __future__ import annotations

from collector.record.triggers import append_only_triggers


_LISTING_ENTRY_COLUMNS = ("url", "url_key", "title", "published_raw", "published_utc",
                          "modified_raw", "modified_utc", "queue_reason")
_SAME_VALUES = " AND ".join(f"v.{c} IS NEW.{c}" for c in _LISTING_ENTRY_COLUMNS[2:])
_ENTRY_INSERT = f"""
CREATE TRIGGER listing_entries_insert INSTEAD OF INSERT ON listing_entries BEGIN
    INSERT INTO listing_entry_values ({", ".join(_LISTING_ENTRY_COLUMNS)})
        SELECT {", ".join(f"NEW.{c}" for c in _LISTING_ENTRY_COLUMNS)}
        WHERE NOT EXISTS (SELECT 1 FROM listing_entry_values v
                           WHERE v.url_key = NEW.url_key AND v.url = NEW.url AND {_SAME_VALUES});
    INSERT INTO listing_items (id, listing_id, position, value_id)
        VALUES (NEW.id, NEW.listing_id, NEW.position,
                (SELECT v.id FROM listing_entry_values v
                  WHERE v.url_key = NEW.url_key AND v.url = NEW.url AND {_SAME_VALUES}
                  ORDER BY v.id LIMIT 1));
END;
"""
V4 = f"""
CREATE TABLE listing_entry_values (
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL,
    url_key TEXT NOT NULL,
    title TEXT,
    published_raw TEXT,
    published_utc TEXT,
    modified_raw TEXT,
    modified_utc TEXT,
    queue_reason TEXT
);
CREATE INDEX listing_entry_values_key ON listing_entry_values(url_key);
CREATE TABLE listing_items (
    id INTEGER PRIMARY KEY,
    listing_id INTEGER NOT NULL REFERENCES listings(id),
    position INTEGER NOT NULL,
    value_id INTEGER NOT NULL REFERENCES listing_entry_values(id),
    UNIQUE (listing_id, position)
);
CREATE INDEX listing_items_value ON listing_items(value_id);
INSERT INTO listing_entry_values ({", ".join(_LISTING_ENTRY_COLUMNS)})
    SELECT {", ".join(_LISTING_ENTRY_COLUMNS)} FROM listing_entries
    GROUP BY {", ".join(_LISTING_ENTRY_COLUMNS)} ORDER BY MIN(id);
INSERT INTO listing_items (id, listing_id, position, value_id)
    SELECT e.id, e.listing_id, e.position, (
        SELECT v.id FROM listing_entry_values v WHERE v.url_key = e.url_key AND v.url = e.url AND
            {_SAME_VALUES.replace("NEW.", "e.")} ORDER BY v.id LIMIT 1)
    FROM listing_entries e ORDER BY e.id;
-- capture_queue pointed at listing_entries(id); a foreign key needs a table.
CREATE TABLE capture_queue_v4 (
    url_key TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    outlet_id TEXT NOT NULL,
    article_id INTEGER REFERENCES articles(id),
    reason TEXT NOT NULL,
    listing_entry_id INTEGER REFERENCES listing_items(id),
    sort_time TEXT,                 -- the entry's date, for newest-first
    queued_at TEXT NOT NULL,
    queued_run INTEGER NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',  -- pending, captured, failed
    last_request_id INTEGER,
    done_at TEXT
);
INSERT INTO capture_queue_v4 SELECT * FROM capture_queue;
DROP TABLE capture_queue;
ALTER TABLE capture_queue_v4 RENAME TO capture_queue;
CREATE INDEX capture_queue_state ON capture_queue(state, outlet_id);
DROP TABLE listing_entries;
CREATE VIEW listing_entries AS
    SELECT i.id AS id, i.listing_id AS listing_id, i.position AS position,
           {", ".join(f"v.{c} AS {c}" for c in _LISTING_ENTRY_COLUMNS)}
      FROM listing_items AS i JOIN listing_entry_values AS v ON v.id = i.value_id;
{_ENTRY_INSERT}""" + append_only_triggers("listing_entries", view=True)

# Snapshot text stored once per article and distinct text. Most revisits find
# the page's text unchanged; kept whole, every revisit's copy made snapshots
# two thirds of the database (bench/storage_growth.py). snapshot_rows holds
# every other column and text_id (snapshot_texts, one row per article per
# distinct text); the view snapshots shows them exactly as the table did, same
# ids, columns and order, so readers, exports and the record are unchanged.
# The search index now holds each distinct headline and text of an article
# once, under the first snapshot that showed them: a search finds where words
# first appeared, not every revisit that repeated them.
_SNAPSHOT_COLUMNS = (
    "article_id", "request_id", "run_id", "purpose", "captured_at", "status_code", "final_url", "headline",
    "byline", "published_raw", "published_source", "published_utc", "modified_raw", "modified_source",
    "modified_utc", "text", "canonical_url", "language", "encoding", "encoding_source", "unmapped_paragraphs",
    "html_sha256", "warc_file", "warc_offset", "warc_length", "payload_digest", "extractor", "extractor_info")
_ROW_COLUMNS = tuple(c for c in _SNAPSHOT_COLUMNS if c != "text")
_ARTICLE_TEXT = ("SELECT MIN(t.id) FROM snapshot_rows AS p JOIN snapshot_texts AS t ON t.id = p.text_id "
                 "WHERE p.article_id = NEW.article_id AND t.text = NEW.text")
FIRST_SHOWING = ("NOT EXISTS (SELECT 1 FROM snapshot_rows AS p WHERE p.article_id = r.article_id "
                 "AND p.id < r.id AND p.text_id IS r.text_id AND p.headline IS r.headline)")


def snapshots_insert_trigger(headline_sql: str, text_sql: str) -> str:
    """Return the INSTEAD OF INSERT trigger of the snapshots view, indexing the given expressions of NEW."""
    return f"""CREATE TRIGGER snapshots_insert INSTEAD OF INSERT ON snapshots BEGIN
    INSERT INTO snapshot_texts (text)
        SELECT NEW.text WHERE NEW.text IS NOT NULL AND ({_ARTICLE_TEXT}) IS NULL;
    INSERT INTO snapshot_rows (id, {", ".join(_ROW_COLUMNS)}, text_id)
        VALUES (NEW.id, {", ".join(f"NEW.{c}" for c in _ROW_COLUMNS)},
                CASE WHEN NEW.text IS NULL THEN NULL
                     ELSE COALESCE(({_ARTICLE_TEXT}), (SELECT MAX(id) FROM snapshot_texts)) END);
    INSERT INTO snapshots_fts (rowid, headline, text)
        SELECT r.id, {headline_sql}, {text_sql} FROM snapshot_rows AS r
         WHERE r.id = last_insert_rowid() AND {FIRST_SHOWING};
END;"""


V5 = f"""
DROP TRIGGER IF EXISTS snapshots_fts_index;
DROP TRIGGER IF EXISTS snapshots_no_update;
DROP TRIGGER IF EXISTS snapshots_no_delete;
ALTER TABLE snapshots RENAME TO snapshot_rows;
CREATE TABLE snapshot_texts (
    id INTEGER PRIMARY KEY,
    text TEXT NOT NULL
);
INSERT INTO snapshot_texts (id, text)
    SELECT MIN(id), text FROM snapshot_rows WHERE text IS NOT NULL GROUP BY article_id, text ORDER BY MIN(id);
ALTER TABLE snapshot_rows ADD COLUMN text_id INTEGER REFERENCES snapshot_texts(id);
UPDATE snapshot_rows SET text_id = (
    SELECT MIN(p.id) FROM snapshot_rows AS p
     WHERE p.article_id = snapshot_rows.article_id AND p.text = snapshot_rows.text)
 WHERE text IS NOT NULL;
ALTER TABLE snapshot_rows DROP COLUMN text;
CREATE VIEW snapshots AS
    SELECT r.id AS id, {", ".join(("t.text AS text" if c == "text" else f"r.{c} AS {c}") for c in _SNAPSHOT_COLUMNS)}
      FROM snapshot_rows AS r LEFT JOIN snapshot_texts AS t ON t.id = r.text_id;
{snapshots_insert_trigger('NEW.headline', 'NEW.text')}
INSERT INTO snapshots_fts (snapshots_fts) VALUES ('delete-all');
INSERT INTO snapshots_fts (rowid, headline, text)
    SELECT r.id, r.headline, t.text FROM snapshot_rows AS r LEFT JOIN snapshot_texts AS t ON t.id = r.text_id
     WHERE {FIRST_SHOWING} ORDER BY r.id;
""" + append_only_triggers("snapshots", view=True)

# Conditional requests for feeds and sitemaps (issue 18). A source answered
# 304 Not Modified is recorded as a listing like any other, whose complete
# entry list is the one of the listing it names (entries_of): nothing of it is
# stored again, and the view lists those entries under the new listing, with
# no id of their own (they are not rows of the record) and no queue reason
# (nothing is queued from a listing whose entries were all seen before).
# The validators a later request sends come from the response that gave the
# entries: requests now keeps each response's ETag and Last-Modified.
_ENTRY_VALUES = ", ".join(f"v.{c} AS {c}" for c in _LISTING_ENTRY_COLUMNS if c != "queue_reason")
V10 = f"""
ALTER TABLE requests ADD COLUMN etag TEXT;           -- the response's ETag, for a later If-None-Match
ALTER TABLE requests ADD COLUMN last_modified TEXT;  -- its Last-Modified, for a later If-Modified-Since
ALTER TABLE listings ADD COLUMN entries_of INTEGER REFERENCES listings(id);  -- a 304: whose entries it repeats
CREATE INDEX listings_entries_of ON listings(entries_of) WHERE entries_of IS NOT NULL;
DROP VIEW listing_entries;
CREATE VIEW listing_entries AS
    SELECT i.id AS id, i.listing_id AS listing_id, i.position AS position,
           {", ".join(f"v.{c} AS {c}" for c in _LISTING_ENTRY_COLUMNS)}
      FROM listing_items AS i JOIN listing_entry_values AS v ON v.id = i.value_id
    UNION ALL
    SELECT NULL AS id, l.id AS listing_id, i.position AS position, {_ENTRY_VALUES}, NULL AS queue_reason
      FROM listings AS l JOIN listing_items AS i ON i.listing_id = l.entries_of
      JOIN listing_entry_values AS v ON v.id = i.value_id;
{_ENTRY_INSERT}""" + append_only_triggers("listing_entries", view=True)

# The capture delay of every article (issue 20): from the first listing that
# named one of its addresses (as listed, after a redirect, or canonical) to its
# first capture. A view, so nothing is stored twice and no observation is
# touched: each row is one article; captured_at is NULL until it is captured,
# delay_minutes NULL then and when the capture came before any listing named
# it (an address joined through a canonical link later). 304 listings repeat
# an earlier listing's entries and are never the first, so the storage
# tables behind listing_entries are enough. The site's median per group
# (collector/publish/cells.py) is read from here.
V12 = """
CREATE VIEW capture_delays AS
SELECT c.article_id AS article_id, c.outlet_id AS outlet_id,
       c.listing_id AS listing_id, l.fetched_at AS listed_at,
       s.id AS snapshot_id, s.captured_at AS captured_at,
       CASE WHEN julianday(s.captured_at) >= julianday(l.fetched_at)
            THEN (julianday(s.captured_at) - julianday(l.fetched_at)) * 1440.0 END AS delay_minutes
  FROM (SELECT a.id AS article_id, a.outlet_id AS outlet_id,
               (SELECT i.listing_id FROM listing_entry_values AS v
                  JOIN listing_items AS i ON i.value_id = v.id
                  JOIN listings AS f ON f.id = i.listing_id
                 WHERE v.url_key IN (SELECT a.url_key UNION
                                     SELECT u.url_key FROM article_urls AS u WHERE u.article_id = a.id)
                 ORDER BY julianday(f.fetched_at), f.id LIMIT 1) AS listing_id,
               (SELECT r.id FROM snapshot_rows AS r WHERE r.article_id = a.id AND r.purpose = 'capture'
                 ORDER BY julianday(r.captured_at), r.id LIMIT 1) AS snapshot_id
          FROM articles AS a) AS c
  LEFT JOIN listings AS l ON l.id = c.listing_id
  LEFT JOIN snapshot_rows AS s ON s.id = c.snapshot_id;
"""
