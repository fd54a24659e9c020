"""Migration 15: the table of a pruned working database's dormant articles (collector/record/dormant.py).

Migration 17 (record/fold.py) drops since, slots and outlet_id: the articles' projection holds them.
Migration 19 (record/renames.py) renames it from V15_TABLE to TABLE.
"""

V15_TABLE = "export_dormant"  # its name from migration 15 to 18 (what migration 17 reads)
TABLE = "prune_dormant"
V15 = f"""
CREATE TABLE {V15_TABLE} (
    article_id INTEGER PRIMARY KEY,
    outlet_id TEXT NOT NULL,
    since TEXT NOT NULL,            -- the first capture's captured_at: what the regular slots count from
    slots TEXT NOT NULL,            -- the regular slots checked: ',1h,6h,24h,'
    rows BLOB NOT NULL              -- zlib of JSON: the record's rows a revisit reads (see collector/record/dormant.py)
);
"""
