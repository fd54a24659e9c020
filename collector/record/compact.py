"""The compact revisit state: a working database's older snapshot texts held as digests, read from the record.

Most of a pruned working database was the latest text of each article still
inside its revisit window (8.9 GiB of 35.6 at day 730, 40 outlets), kept only
so that the next revisit can compare with it. `export prune` keeps instead,
for each such text, a row of TABLE: the SHA-256 of the text as stored and of
its comparison form (collector/parse/textnorm.py normalise_for_comparison,
the method's), and the fingerprint of the normalisation that made it. The
snapshot's row stays (snapshot_rows: its id, capture time, extractor,
html_sha256, final_url, headline and every other compared field, which are
short); only the text is left out, so the `snapshots` view shows it NULL and
`held(conn, text_id)` says why.

Rules that keep it exact:

* a revisit compares the comparison forms' digests; only when they differ
  does it need the older text, read from the export file that holds the
  snapshot's row (`from_record`, found by the files' id ranges, following a
  {"$same": id} to the row it repeats), checked against the digest of the
  text as stored. Nothing here guesses: a text that cannot be had, or does not
  match its digest, is None;
* a digest made by another normalisation never passes for "unchanged"
  (`unchanged` compares the fingerprint too);
* snapshot_texts ids are assigned as MAX(id) + 1: the working database always
  keeps its highest text whole, so a new text never takes a held text's id.

TABLE is a pruning's (its name starts with fileformat.PRUNE_PREFIX): it is
never exported, and `export rebuild` makes the full database with every text.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from pathlib import Path

from collector.parse import textnorm
from collector.record import reader
from collector.record.fileformat import ExportError, repeated_id

TABLE = "prune_texts"  # export_compact_texts before migration 19
CREATE = (f"CREATE TABLE IF NOT EXISTS {TABLE} (text_id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL, "
          "form_sha256 TEXT NOT NULL, normaliser TEXT NOT NULL)")


@functools.lru_cache(maxsize=1)
def normaliser() -> str:
    """Return the fingerprint of the comparison form this process computes (its module's source)."""
    return hashlib.sha256(inspect.getsource(textnorm).encode("utf-8")).hexdigest()[:16]


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def form_sha256(text: str | None) -> str:
    """Return the SHA-256 of a text's comparison form (None counts as empty, as events.differs does)."""
    return text_sha256(textnorm.normalise_for_comparison(text or ""))


def exists(conn, schema: str = "main") -> bool:
    return conn.execute(f"SELECT 1 FROM {schema}.sqlite_master WHERE type = 'table' AND name = ?",
                        (TABLE,)).fetchone() is not None


def held(conn, snapshot_id: int):
    """Return the digest row of a snapshot whose text this database holds only as digests, or None."""
    if not exists(conn):
        return None
    return conn.execute(f"SELECT c.* FROM snapshot_rows r JOIN {TABLE} c ON c.text_id = r.text_id "
                        "WHERE r.id = ?", (snapshot_id,)).fetchone()


def unchanged(digests, text: str | None) -> bool:
    """Return True when `text` is, in the comparison form, the text the digests were made of."""
    return digests["normaliser"] == normaliser() and digests["form_sha256"] == form_sha256(text)


def matches(digests, text: str | None) -> bool:
    """Return True when `text` is exactly the text the digests were made of."""
    return text is not None and digests["sha256"] == text_sha256(text)


def compact(conn, text_ids: list[int]) -> None:
    """Write main.TABLE's rows for these texts of src (attached): copied when src held them so, else made."""
    conn.execute(CREATE)
    conn.execute("CREATE TEMP TABLE compact_ids (id INTEGER NOT NULL PRIMARY KEY) WITHOUT ROWID")
    conn.executemany("INSERT OR IGNORE INTO compact_ids VALUES (?)", [(i,) for i in text_ids])
    if exists(conn, "src"):
        conn.execute(f"INSERT INTO main.{TABLE} SELECT c.* FROM src.{TABLE} c JOIN compact_ids k ON k.id = c.text_id")
    made = conn.execute(f"SELECT t.id, t.text FROM src.snapshot_texts t JOIN compact_ids k ON k.id = t.id "
                        f"WHERE t.id NOT IN (SELECT text_id FROM main.{TABLE})")
    fingerprint = normaliser()
    batch = []
    for text_id, text in made:
        batch.append((text_id, text_sha256(text), form_sha256(text), fingerprint))
        if len(batch) >= 5000:
            conn.executemany(f"INSERT INTO main.{TABLE} VALUES (?, ?, ?, ?)", batch)
            batch.clear()
    conn.executemany(f"INSERT INTO main.{TABLE} VALUES (?, ?, ?, ?)", batch)
    conn.execute("DROP TABLE temp.compact_ids")


# -- reading a held text back from the record -----------------------------------------

def from_record(folder: str | Path | None, snapshot_id: int, digests) -> tuple[str | None, str | None]:
    """Return (the snapshot's text as the record holds it, None), or (None, why not).

    The export file holding the row is found by the files' id ranges
    (collector/record/reader.py), so only headers are read besides it.
    """
    if folder is None or not Path(folder).is_dir():
        return None, "no record folder to read the text from"
    try:
        text = reader.value(reader.record_files(folder), "snapshots", snapshot_id, "text")
    except ExportError as exc:
        return None, str(exc)
    if text is reader.MISSING:
        return None, f"snapshot {snapshot_id} is in no export file of {folder} checked out here"
    if not matches(digests, text):
        return None, f"the record's text of snapshot {snapshot_id} is not the text its digest was made of"
    return text, None


def resolve_held(conn, row: dict, path: Path) -> dict:
    """Return a resumed file's last snapshot row, its text read from the record if it repeats a held one.

    The export's boundary check reads every column of the last row, so that
    row is stored whole: its text is read back from the export file holding
    the row it repeats (the folder `path` is in). Raises ExportError when it
    cannot be had (the job then rebuilds the database).
    """
    same = repeated_id(row.get("text"))
    digests = None if same is None else held(conn, same)
    if digests is None:
        return row
    text, problem = from_record(path.parents[3], same, digests)  # <folder>/YYYY/MM/DD/file
    if text is None:
        raise ExportError(f"{path}: snapshot {row.get('id')} repeats the text of snapshot {same}, which this "
                          f"database holds as digests only, and it cannot be read back: {problem}")
    return {**row, "text": text}


def insert_sharing(conn, row: dict, resolve) -> bool:
    """Insert a resumed snapshot whose text repeats a held one's, sharing its text id; False when not held.

    `export rebuild --resume` on a pruned database: the file says the text
    is that of an earlier row ({"$same": id}) whose text this database holds
    as digests only. The row goes straight into snapshot_rows with the earlier
    row's text id, held likewise (the full database shares the text too), and
    nothing is read from the record. `resolve(conn, table, column, value)`
    reads any other repeated value.
    """
    same = repeated_id(row.get("text"))
    digests = None if same is None else held(conn, same)
    if digests is None:
        return False
    values = {k: resolve(conn, "snapshots", k, v) for k, v in row.items() if k != "text"}
    values["text_id"] = digests["text_id"]
    names = ", ".join(f'"{c}"' for c in values)
    conn.execute(f"INSERT INTO snapshot_rows ({names}) VALUES ({', '.join('?' for _ in values)})",
                 list(values.values()))
    return True
