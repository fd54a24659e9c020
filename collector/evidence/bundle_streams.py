"""The evidence bundle over a record written by several jobs: every stream's rows about the article.

A record of several streams (collector/record/streams.py) is read through the
database that merges them (`export rebuild`, collector/record/merge.py). The
merged database holds one article for an address several streams recorded,
and so reads some rows otherwise than their stream's files hold them: another
stream's article_id is read as the kept article's, a second stream's check of
a slot is labelled 'SLOT@STREAM', and an article (or an address of it) a
later stream recorded again is folded into the earlier one. Table
sync_merged lists every row so read, with the stream that wrote it.

A bundle must hold each row exactly as its stream's export file holds it
(verify.py compares them), so the rows are put back as written: the article
id and slot from sync_merged, and a folded row, which the merged database
does not hold, from its line in the stream's files. rows.json keeps what the
merge did beside them ("merged"), so a reader sees which rows are one article.
"""

from __future__ import annotations

import json
from pathlib import Path

from collector.errors import BadArgument
from collector.record import renames, streams
from collector.record.merge import stream_folders


def record_streams(records: list[Path]) -> dict[str | None, list[Path]]:
    """Return each stream's folders in the periods' record folders, oldest first (None: the default stream)."""
    return {name: paths for name, paths in stream_folders(records).items() if paths}


def check_database(conn, found: dict[str | None, Path], record_dir: Path) -> None:
    """Refuse a database that holds one stream's rows for a record of several."""
    if len(found) > 1 and streams.stream_of(conn) != streams.MERGED:
        raise BadArgument(f"{record_dir} holds {len(found)} record streams; give the database that merges them "
                          f"(python -m collector export rebuild --out {record_dir} --db merged.db): a stream's "
                          "working database holds that stream's rows alone", option="--db")


def stream_of_id(names, row_id: int) -> str | None | bool:
    """Return the stream among names whose id range holds row_id (None: the default; False: none of them)."""
    for name in names:
        if streams.in_range(name, row_id):
            return name
    return False


def label(name: str | None) -> str:
    """Return a stream as sync_merged names it."""
    return name or "default"


def as_written(conn, rows: dict[str, list[dict]], names: list[str | None]) -> tuple[list[dict], set]:
    """Put the rows back as their streams wrote them; return (sync_merged entries used, folded rows wanted).

    Rows are changed in place. The folded rows wanted, (table, id), are rows
    of other streams the merged database holds only as the kept row: the
    bundle reads them from their stream's lines (`add_folded`).
    """
    table = renames.name_in(conn, streams.MERGED_TABLE)  # the bundle reads the database without opening it
    merged = [dict(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY table_name, row_id")]
    if not merged:
        return [], set()
    folded_into = {(m["table_name"], m["stream"], m["kept_id"]): m["row_id"] for m in merged if m["how"] == "folded"}
    relabelled = {(m["table_name"], m["row_id"]): json.loads(m["detail"]) for m in merged if m["how"] == "relabelled"}
    used = []
    for table, items in rows.items():
        for row in items:
            name = stream_of_id(names, row["id"])
            if name is False:
                continue  # a stream the record folder given does not hold: its rows are as the database has them
            article = row.get("article_id")
            if table != "articles" and article is not None and not streams.in_range(name, article):
                original = folded_into.get(("articles", label(name), article))
                if original is not None:
                    row["article_id"] = original
            for column, value in relabelled.get((table, row["id"]), {}).items():
                row[column] = value
    ids = {(table, r["id"]) for table, items in rows.items() for r in items}
    wanted = set()
    for entry in merged:
        kept = entry["kept_id"] if entry["how"] == "folded" else entry["row_id"]
        if (entry["table_name"], kept) in ids:
            used.append(entry)
            if entry["how"] == "folded":
                wanted.add((entry["table_name"], entry["row_id"]))
    return used, wanted


def add_folded(rows: dict[str, list[dict]], found: dict[tuple[str, int], dict]) -> None:
    """Add the folded rows read from their lines to the rows, each table's in id order."""
    for (table, _), row in found.items():
        rows.setdefault(table, []).append(row)
    for table in {t for t, _ in found}:
        rows[table].sort(key=lambda r: r["id"])
