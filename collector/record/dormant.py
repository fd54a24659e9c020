"""Dormant articles: one compact row per quiet article in a follower's pruned stream database.

A database that follows every stream (collect/follow_prune.py) prunes each
stream's own database as a working database is pruned, and a stream's next
increment is merged from it (record/merge.py): a new row of an article whose
rows were left out maps to the merged article by that article's rows, and a
resumed row repeating one of them ({"$same": id}) reads it. Of each *quiet*
article (collect/keep.py) such a database keeps one row of TABLE:

* `rows`, compressed, the record's own rows of it, exactly as the record
  holds them: the article, its addresses, its latest check and its latest
  snapshot (format 1).

Before a row of a dormant article is resumed into that database, `wake`
(record/rebuild.py) puts those rows back, ids unchanged (INSERT OR IGNORE:
rows already in the record; the export continues after its last ids, so
nothing is exported twice). Nothing is guessed: a dormant article's rows are
the record's.

A working database no longer holds any: what a revisit reads of a quiet
article is folded in every database (record/fold.py, fold_latest.py,
fold_visit.py) and its rows are only left out. Before migration 22 a working
database packed the article, its addresses and latest check (format 2;
before migration 21, its latest snapshot too, format 1): migrations 21 and 22
fold them in (record/fold_latest.py, fold_visit.py), and 22 drops them. TABLE is a pruning's (its name starts with
fileformat.PRUNE_PREFIX): never exported.
"""

from __future__ import annotations

import json
import zlib
from collections import defaultdict
from collections.abc import Iterable

from collector.parse.inflate import inflate
from collector.record.dormant_table import TABLE
from collector.record.values import decode_value, encode_value

# The tables a dormant article's rows come from, in the order they are put back.
PACKED = ("articles", "article_urls", "checks")
_FORMAT = FORMAT_2 = 2  # the first byte of every packed row: a new dictionary (below) needs a new format, old rows stay readable
# Format 1 packs the latest snapshot's row too (a follower's stream database), and before migration 21 its text's
# digest row under HELD_V1 (prune_texts' name when format 1 was made), which migration 21 folds and wake ignores.
_FORMAT_1, PACKED_V1, HELD_V1 = 1, ("articles", "article_urls", "snapshot_rows", "checks"), "export_compact_texts"
# zlib's preset dictionary of formats 1 and 2: the column names and the values most rows share, so a row's
# compressed form holds little besides its own values (about 720 bytes a row against 1,230 without it,
# bench/working_db.py). Frozen: rows packed with it are in caches (format 2 no longer packs snapshot_rows).
_SKELETON = {
    "articles": ["id", "outlet_id", "url_key", "url", "first_seen_at", "first_seen_run"],
    "article_urls": ["id", "article_id", "url", "url_key", "how", "listing", "recorded_at", "run_id", "snapshot_id"],
    "snapshot_rows": ["id", "article_id", "request_id", "run_id", "purpose", "recheck", "capture", "captured_at",
                      "status_code", 200, "final_url", "headline", "byline", "published_raw", "published_source",
                      "meta", "published_utc", "modified_raw", "modified_source", "modified_utc", "canonical_url",
                      "language", "bn", "encoding", "utf-8", "encoding_source", "http-header", "unmapped_paragraphs",
                      "html_sha256", "warc_file", "warc_offset", "warc_length", "payload_digest", "sha1:",
                      "extractor", "extractor_info", '{"charset_normalizer": "3.5.2", "extractor": '
                      '"takedownwatch-extract/1", "htmldate": "1.11.0", "lxml": "6.1.3", "options": {"deduplicate": '
                      'false, "favor_recall": true, "include_comments": false}, "trafilatura": "2.3.1"}', "text_id"],
    "checks": ["id", "article_id", "slot", "follows_check_id", "due_at", "performed_at", "run_id", "url", "result",
               "ok", "request_id", "request_chain", "snapshot_id", "outcome", "present", "opens_absence", "detail",
               "try_number", "retry_of"],
    "export_compact_texts": ["text_id", "sha256", "form_sha256", "normaliser"],
    "common": ["https://www.", ".com.bd/", "T00:00:00.000000Z", ".warc.gz", "+0600", ":null,", ":0,", ":1,"],
}
_MAX_BYTES = 16 * 2**20  # a packed article is a few KB; more is a damaged row
_ZDICT = json.dumps(_SKELETON, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def pack(rows: dict[str, list[dict]]) -> bytes:
    """Return the compressed form of an article's rows (table of PACKED -> rows as dicts of column values):
    format 2, or format 1 when they hold a snapshot row."""
    tables = PACKED_V1 if rows.get("snapshot_rows") else PACKED
    data = {t: [{k: encode_value(v) for k, v in r.items()} for r in rows.get(t, [])] for t in tables}
    packer = zlib.compressobj(9, zdict=_ZDICT)
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return bytes([_FORMAT_1 if rows.get("snapshot_rows") else _FORMAT]) + packer.compress(text) + packer.flush()


def unpack(blob: bytes) -> dict[str, list[dict]]:
    """Return the rows pack() was given; of a format 1 row, its snapshot row and text digests too."""
    if not blob or blob[0] not in (_FORMAT, _FORMAT_1):
        raise ValueError(f"a dormant article's rows are in format {blob[:1]!r}, not {_FORMAT} (or {_FORMAT_1})")
    data = json.loads(inflate(blob[1:], _MAX_BYTES, zlib.MAX_WBITS, _ZDICT).decode("utf-8"))
    return {t: [{k: decode_value(v) for k, v in r.items()} for r in data.get(t, [])]
            for t in (*PACKED_V1, HELD_V1)}


def exists(conn, schema: str = "main") -> bool:
    return conn.execute(f"SELECT 1 FROM {schema}.sqlite_master WHERE type = 'table' AND name = ?",
                        (TABLE,)).fetchone() is not None


def wake(conn, article_ids: Iterable[int]) -> int:
    """Put back the rows of those articles that are dormant here; return how many articles were woken.

    The rows point at runs, requests and snapshots the working database left
    out (they are in the record: a pruned database's keys are checked at
    export, record/references.py); the caller holds the transaction.
    Idempotent: a row already here is left as it is.
    """
    ids = sorted(set(article_ids))
    if not ids or not exists(conn):
        return 0
    woken = 0
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ", ".join("?" for _ in chunk)
        for (blob,) in conn.execute(f"SELECT rows FROM {TABLE} WHERE article_id IN ({marks})", chunk).fetchall():
            rows = unpack(blob)
            for table in PACKED_V1:  # a format 2 row packs no snapshot
                for row in rows[table]:
                    _insert(conn, table, row)
            woken += 1
    return woken


def _insert(conn, table: str, row: dict) -> None:
    names = ", ".join(f'"{c}"' for c in row)
    conn.execute(f'INSERT OR IGNORE INTO "{table}" ({names}) VALUES ({", ".join("?" for _ in row)})',
                 list(row.values()))


# -- made by `export prune` -----------------------------------------------------------

def make(conn, article_ids: list[int], chunk: int = 5000) -> int:
    """Write main.TABLE's rows of these articles from src (attached): their rows there, and any row src held.

    An article's rows (its article, addresses, latest check and latest
    snapshot: format 1, no text digests) are the newest of what src holds of
    it (a resumed file woke it and continued it) and what its src row packed
    (what src left out). Only a stream's database a follower keeps packs them;
    what a revisit reads of them is in the projections (record/fold.py,
    fold_visit.py, fold_latest.py, fold_absence.py) in every database.
    Returns how many rows were written.
    """
    written = 0
    has_old = exists(conn, "src")
    for start in range(0, len(article_ids), chunk):
        ids = article_ids[start:start + chunk]
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS dormant_ids (id INTEGER NOT NULL PRIMARY KEY) WITHOUT ROWID")
        conn.execute("DELETE FROM temp.dormant_ids")
        conn.executemany("INSERT INTO temp.dormant_ids VALUES (?)", [(i,) for i in ids])
        old = {}
        if has_old:
            old = {r[0]: unpack(r[1]) for r in conn.execute(
                f"SELECT d.article_id, d.rows FROM src.{TABLE} d JOIN temp.dormant_ids k ON k.id = d.article_id")}
        tables = PACKED_V1
        found: dict[str, dict[int, list[dict]]] = {t: defaultdict(list) for t in tables}
        queries = {
            "articles": "SELECT a.* FROM src.articles a JOIN temp.dormant_ids k ON k.id = a.id",
            "article_urls": "SELECT u.* FROM src.article_urls u JOIN temp.dormant_ids k ON k.id = u.article_id "
                            "ORDER BY u.id",
            "snapshot_rows": "SELECT * FROM (SELECT s.*, ROW_NUMBER() OVER (PARTITION BY s.article_id "
                             "ORDER BY s.captured_at DESC, s.id DESC) AS _n FROM src.snapshot_rows s "
                             "JOIN temp.dormant_ids k ON k.id = s.article_id) WHERE _n = 1",
            "checks": "SELECT * FROM (SELECT c.*, ROW_NUMBER() OVER (PARTITION BY c.article_id "
                      "ORDER BY c.id DESC) AS _n FROM src.checks c JOIN temp.dormant_ids k "
                      "ON k.id = c.article_id) WHERE _n = 1",
        }
        for table in tables:
            for row in conn.execute(queries[table]):
                row = {k: row[k] for k in row.keys() if k != "_n"}
                found[table][row["id"] if table == "articles" else row["article_id"]].append(row)
        batch = []
        for article_id in ids:
            packed = old.get(article_id, {t: [] for t in PACKED_V1})
            rows = {t: _newest(t, packed[t], found[t].get(article_id, [])) for t in tables}
            if not rows["articles"] or not rows["snapshot_rows"]:
                raise ValueError(f"article {article_id} cannot be made dormant: its identity or its latest "
                                 "snapshot is neither in the database nor in its dormant row")
            batch.append((article_id, pack(rows)))
        conn.executemany(f"INSERT INTO main.{TABLE} (article_id, rows) VALUES (?, ?)", batch)
        written += len(batch)
    conn.execute("DROP TABLE IF EXISTS temp.dormant_ids")
    return written


def _newest(table: str, packed: list[dict], here: list[dict]) -> list[dict]:
    """Return an article's rows of one table: what src holds over what its dormant row packed."""
    if table in ("articles", "article_urls"):
        merged = {r["id"]: r for r in packed} | {r["id"]: r for r in here}
        return [merged[i] for i in sorted(merged)]
    if table == "snapshot_rows":
        return sorted(packed + here, key=lambda r: (r["captured_at"], r["id"]))[-1:]
    return sorted(packed + here, key=lambda r: r["id"])[-1:]  # checks: the latest by id, as an export's $same
