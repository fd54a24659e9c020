"""Migration 15: the table of a pruned working database's dormant articles (collector/record/dormant.py).

Migration 17 (record/fold.py) drops since, slots and outlet_id: the articles' projection holds them.
"""

TABLE = "export_dormant"
V15 = f"""
CREATE TABLE {TABLE} (
    article_id INTEGER PRIMARY KEY,
    outlet_id TEXT NOT NULL,
    since TEXT NOT NULL,            -- the first capture's captured_at: what the regular slots count from
    slots TEXT NOT NULL,            -- the regular slots checked: ',1h,6h,24h,'
    rows BLOB NOT NULL              -- zlib of JSON: the record's rows a revisit reads (see collector/record/dormant.py)
);
"""
