"""Migration 21: what comparing with a snapshot and repeating its values needs, folded forward in every database.

A revisit compares the page it reads with the article's snapshot before it,
and the export writes a long value of a snapshot that repeats the one before
as {"$same": id}. Neither needs that snapshot's row: TABLE holds, for each
snapshot folded in, its *facts*, keyed by its article, capture time (whole
microseconds, as record/fold.py holds instants) and id, so that an
article's snapshots are in capture order:

* the SHA-256 of each value an export may repeat (REPEATED, as stored):
  equal digests, equal values, so {"$same": id} is written as from the row;
* the first 16 bytes of the SHA-256 of each compared field's comparison form
  (FORMS, collector/parse/textnorm.py, the method's), with the first 4 bytes
  of the normalisation's fingerprint: equal digests made by this
  normalisation, no change (a digest another one made never passes for
  "unchanged"); a field compared by its exact digest alone (final_url,
  canonical_url, whose comparison form is the value) likewise;
* where its page is and what read it: the SHA-256 of its HTML, its WARC file,
  offset and length, and the extractor: what reading the page again needs.

The trigger folds each `snapshot_rows` row in as it is inserted with its text,
whatever inserts it (a run, `export rebuild`, a merge, a follower); a row
inserted without its text (a pruning copying rows before their texts, a text
another row shares and this database left out) is not folded from it: its
facts come with it (`keep`, `fold_values`). A full database's TABLE holds every
snapshot's; a pruned one's (collect/prune.py) each article's latest, by capture
time and by id, the snapshots a comparison names, and those whose rows it
holds: the rows themselves may go, and what is read of them is the same
whatever database a job runs on (tests/record/test_fold_latest.py holds TABLE
equal to the facts computed from the rows).

TABLE is derived, never an observation: its name starts with
fileformat.DERIVED_PREFIX, it is never exported, and the record's rows make it
again. Like record/fold_keys.py, the digests are computed in Python by FUNCTION,
which every connection that writes snapshots registers (Store does).

Before migration 21 a pruned working database held its older texts as digests
(`prune_texts`) and each quiet article's latest snapshot packed in its dormant
row (record/dormant.py, format 1): `migrate` folds both in, repacks the dormant
rows without the snapshot (format 2) and drops `prune_texts`.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import sqlite3
import struct
from dataclasses import dataclass

from collector.parse import textnorm
from collector.record import dormant
from collector.record.fold import micros_sql, text_sql

TABLE = "fold_latest"
FUNCTION = "tw_snapshot_facts"
# The values an export may repeat from the article's snapshot before: fileformat.REPEATS's of scope article_id
# (not imported: fileformat reads the schema, which reads this module; tests/record/test_fold_latest.py holds them
# equal).
REPEATED = ("text", "headline", "byline", "final_url", "canonical_url")
# The compared fields (collect/events.py FIELDS) whose comparison form may differ from the value.
FORMS = ("text", "headline", "byline", "published_raw", "modified_raw")
# The facts' columns of a snapshot, in FUNCTION's order.
COLUMNS = ("extractor", "html_sha256", "warc_file", "warc_offset", "warc_length",
           "text", "headline", "byline", "published_raw", "modified_raw", "final_url", "canonical_url")
_FORMAT = 1
_EXACT, _FORM = 32, 16
_NONE = bytes(_EXACT)  # a NULL value's exact digest: no text's SHA-256 (never repeated: REPEATS needs text)
_UNKNOWN = bytes(_FORM)  # a form digest not known (migrated from another normalisation): never "unchanged"


@functools.lru_cache(maxsize=1)
def normaliser() -> str:
    """Return the fingerprint of the comparison form this process computes (its module's source)."""
    return hashlib.sha256(inspect.getsource(textnorm).encode("utf-8")).hexdigest()[:16]


def exact(value: str | None) -> bytes:
    """Return a value's exact digest (the SHA-256 of its UTF-8; a NULL's is all zero)."""
    return _NONE if value is None else hashlib.sha256(str(value).encode("utf-8")).digest()


def form(value: str | None) -> bytes:
    """Return the digest of a value's comparison form (None counts as empty, as events.differs does)."""
    return hashlib.sha256(textnorm.normalise_for_comparison(value or "").encode("utf-8")).digest()[:_FORM]


@dataclass(frozen=True)
class Facts:
    """One snapshot's facts (see the module's docstring)."""

    normaliser: bytes
    html_sha256: str | None
    exact: dict[str, bytes]
    forms: dict[str, bytes]
    warc_offset: int | None
    warc_length: int | None
    extractor: str | None
    warc_file: str | None

    def unchanged(self, field: str, value: str | None) -> bool:
        """Return True when `value` is, in the comparison form, this snapshot's value of `field`."""
        if field in REPEATED and exact(value) == self.exact[field]:
            return True
        if field not in FORMS or self.forms[field] == _UNKNOWN:
            return False
        return self.normaliser == bytes.fromhex(normaliser()[:8]) and form(value) == self.forms[field]

    def same(self, column: str, value) -> bool:
        """Return True when `value` (a text) is exactly this snapshot's value of a REPEATED column."""
        return isinstance(value, str) and self.same_or_none(column, value)

    def had_text(self) -> bool:
        """Return True when the snapshot had a text (a NULL one has none to leave out)."""
        return self.exact["text"] != _NONE

    def same_or_none(self, column: str, value) -> bool:
        """Return True when `value` is exactly this snapshot's value of a REPEATED column, NULL included."""
        return exact(value) == self.exact[column]


def pack(values: dict, inherited: dict[str, Facts] | None = None) -> bytes:
    """Return the facts of a snapshot of these COLUMNS' values; a column named in `inherited` (its value not
    at hand: it repeats that snapshot's) takes that snapshot's digests."""
    inherited = inherited or {}
    out = bytearray([_FORMAT]) + bytes.fromhex(normaliser()[:8])
    html = values.get("html_sha256")
    out += bytes.fromhex(html) if isinstance(html, str) and len(html) == 64 else _NONE
    for column in REPEATED:
        out += inherited[column].exact[column] if column in inherited else exact(values.get(column))
    for field in FORMS:
        if field in inherited:
            source = inherited[field]
            same = source.normaliser == bytes.fromhex(normaliser()[:8])
            out += source.forms[field] if same else _UNKNOWN
        else:
            out += form(values.get(field))
    out += struct.pack(">qq", *(-1 if values.get(c) is None else int(values[c]) for c in ("warc_offset", "warc_length")))
    for column in ("extractor", "warc_file"):
        text = values.get(column)
        data = b"" if text is None else str(text).encode("utf-8")
        out += struct.pack(">i", -1 if text is None else len(data)) + data
    return bytes(out)


def unpack(blob: bytes) -> Facts:
    """Return the Facts pack() wrote."""
    if not blob or blob[0] != _FORMAT:
        raise ValueError(f"a snapshot's facts are in format {bytes(blob[:1])!r}, not {_FORMAT}")
    at = 5
    html = blob[at:at + _EXACT]
    at += _EXACT
    digests = {}
    for column in REPEATED:
        digests[column] = bytes(blob[at:at + _EXACT])
        at += _EXACT
    forms = {}
    for field in FORMS:
        forms[field] = bytes(blob[at:at + _FORM])
        at += _FORM
    offset, length = struct.unpack(">qq", blob[at:at + 16])
    at += 16
    texts = []
    for _ in range(2):
        (size,) = struct.unpack(">i", blob[at:at + 4])
        at += 4
        texts.append(None if size < 0 else bytes(blob[at:at + size]).decode("utf-8"))
        at += max(size, 0)
    return Facts(bytes(blob[1:5]), None if html == _NONE else bytes(html).hex(), digests, forms,
                 None if offset < 0 else offset, None if length < 0 else length, texts[0], texts[1])


def _function(*values) -> bytes:
    return pack(dict(zip(COLUMNS, values)))


def register(conn: sqlite3.Connection) -> None:
    """Give a connection FUNCTION, which TABLE's trigger and the migration compute facts with."""
    conn.create_function(FUNCTION, len(COLUMNS), _function, deterministic=True)


_TEXT = "(SELECT t.text FROM snapshot_texts AS t WHERE t.id = {row}.text_id)"


def _us(text: str) -> str:
    """Return the SQL of an instant's microseconds (record/fold.py), 0 for a text that is no instant: it sorts first."""
    return f"COALESCE({micros_sql(text)}, 0)"
_HELD = "({row}.text_id IS NULL OR EXISTS (SELECT 1 FROM snapshot_texts AS t WHERE t.id = {row}.text_id))"


def _facts_sql(row: str) -> str:
    values = [_TEXT.format(row=row) if c == "text" else f"{row}.{c}" for c in COLUMNS]
    return f"{FUNCTION}({', '.join(values)})"


CREATE = f"""
CREATE TABLE {TABLE} (
    article_id INTEGER NOT NULL,
    captured_us INTEGER NOT NULL,   -- the snapshot's captured_at, microseconds since 1970 UTC
    snapshot_id INTEGER NOT NULL,
    facts BLOB NOT NULL,            -- pack(): digests, where its page is, what read it
    PRIMARY KEY (article_id, captured_us, snapshot_id)
) WITHOUT ROWID;
CREATE TRIGGER {TABLE}_snapshot AFTER INSERT ON snapshot_rows WHEN {_HELD.format(row="NEW")}
BEGIN
    INSERT INTO {TABLE} (article_id, captured_us, snapshot_id, facts)
    VALUES (NEW.article_id, {_us("NEW.captured_at")}, NEW.id, {_facts_sql("NEW")})
    ON CONFLICT DO NOTHING;
END;
"""

_FOLD_ROWS = (f"INSERT INTO {TABLE} (article_id, captured_us, snapshot_id, facts) "
              f"SELECT r.article_id, {_us('r.captured_at')}, r.id, {_facts_sql('r')} FROM snapshot_rows AS r "
              f"WHERE {_HELD.format(row='r')} ON CONFLICT DO NOTHING")


def refold(conn: sqlite3.Connection) -> None:
    """Fold every snapshot row held with its text into TABLE again, over what it holds. What
    `export restore-triggers` runs after putting back its trigger."""
    register(conn)
    conn.execute(_FOLD_ROWS)


# -- reading -------------------------------------------------------------------------

@dataclass(frozen=True)
class Latest:
    """A snapshot as TABLE knows it: its id, article, capture time (the record's text) and facts."""

    snapshot_id: int
    article_id: int
    captured_at: str
    facts: Facts

    def stub(self) -> dict:
        """Return what is known of the snapshot's row without it: the columns its facts hold as values."""
        return {"id": self.snapshot_id, "article_id": self.article_id, "captured_at": self.captured_at,
                "extractor": self.facts.extractor, "html_sha256": self.facts.html_sha256,
                "warc_file": self.facts.warc_file, "warc_offset": self.facts.warc_offset,
                "warc_length": self.facts.warc_length}


def _latest(conn, row) -> Latest | None:
    return None if row is None else Latest(row[0], row[1], row[2], unpack(row[3]))


_SELECT = f"SELECT snapshot_id, article_id, {text_sql('captured_us')}, facts FROM {TABLE}"


def previous(conn: sqlite3.Connection, article_id: int, captured_at: str, snapshot_id: int,
             strictly_before: bool = False) -> Latest | None:
    """Return the article's snapshot before one captured at `captured_at` (by capture time, then id; not
    `snapshot_id` itself, 0 for one not yet written), or None. With strictly_before, one captured earlier."""
    compare = "<" if strictly_before else "<="
    return _latest(conn, conn.execute(
        f"{_SELECT} WHERE article_id = :article AND snapshot_id != :id AND captured_us {compare} {_us(':at')} "
        "ORDER BY captured_us DESC, snapshot_id DESC LIMIT 1",
        {"article": article_id, "id": snapshot_id, "at": captured_at}).fetchone())


def before_id(conn: sqlite3.Connection, article_id: int, snapshot_id: int, low: int = 0) -> Latest | None:
    """Return the article's snapshot with the highest id below `snapshot_id` and above `low` (the export's
    "earlier row" of a stream), or None."""
    return _latest(conn, conn.execute(
        f"{_SELECT} WHERE article_id = ? AND snapshot_id < ? AND snapshot_id > ? ORDER BY snapshot_id DESC LIMIT 1",
        (article_id, snapshot_id, low)).fetchone())


def of(conn: sqlite3.Connection, article_id: int, snapshot_id: int) -> Latest | None:
    """Return one snapshot's entry, or None when TABLE does not hold it."""
    return _latest(conn, conn.execute(f"{_SELECT} WHERE article_id = ? AND snapshot_id = ?",
                                      (article_id, snapshot_id)).fetchone())


def projection(conn: sqlite3.Connection) -> dict[int, tuple]:
    """Return TABLE as {snapshot_id: (article_id, captured_us, facts)}."""
    return {r[0]: (r[1], r[2], bytes(r[3])) for r in conn.execute(
        f"SELECT snapshot_id, article_id, captured_us, facts FROM {TABLE}")}


def from_rows(conn: sqlite3.Connection) -> dict[int, tuple]:
    """Return the projection computed from the snapshots held with their texts, as `projection` gives it."""
    out = {}
    names = ", ".join(f"s.{c}" for c in COLUMNS)
    for row in conn.execute(f"SELECT s.id, s.article_id, {_us('s.captured_at')}, {names} FROM snapshots s "
                            f"JOIN snapshot_rows r ON r.id = s.id WHERE {_HELD.format(row='r')}"):
        out[row[0]] = (row[1], row[2], pack(dict(zip(COLUMNS, row[3:]))))
    return out


# -- writing where the trigger cannot ------------------------------------------------------

def fold_values(conn: sqlite3.Connection, article_id: int, captured_at: str, snapshot_id: int, values: dict,
                inherited: dict[str, Facts] | None = None) -> None:
    """Fold in a snapshot this database does not hold whole: its values, and for the columns in `inherited`
    the digests of the snapshot each repeats (a resumed row that repeats a text left out here)."""
    conn.execute(f"INSERT INTO {TABLE} (article_id, captured_us, snapshot_id, facts) "
                 f"VALUES (:article, {_us(':at')}, :id, :facts) ON CONFLICT DO NOTHING",
                 {"article": article_id, "at": captured_at, "id": snapshot_id, "facts": pack(values, inherited)})


def keep(conn: sqlite3.Connection, source: str = "src") -> int:
    """Copy from an attached database (a pruning's source) the rows of TABLE a pruned database keeps: of each
    article the projection of schedules keeps (main.fold_articles) its latest snapshot by capture time and by id,
    the snapshots main's comparisons name, and those whose rows main holds. Return how many rows were kept."""
    conn.execute(f"""INSERT OR REPLACE INTO main.{TABLE}
        SELECT f.article_id, f.captured_us, f.snapshot_id, f.facts
          FROM (SELECT g.*, ROW_NUMBER() OVER (PARTITION BY g.article_id
                                               ORDER BY g.captured_us DESC, g.snapshot_id DESC) AS n
                  FROM {source}.{TABLE} g WHERE g.article_id IN (SELECT article_id FROM main.fold_articles)) f
         WHERE f.n = 1""")
    conn.execute(f"""INSERT OR REPLACE INTO main.{TABLE}
        SELECT g.article_id, g.captured_us, g.snapshot_id, g.facts FROM {source}.{TABLE} g
         WHERE g.snapshot_id IN (SELECT MAX(snapshot_id) FROM {source}.{TABLE}
                                  WHERE article_id IN (SELECT article_id FROM main.fold_articles) GROUP BY article_id)
            OR g.snapshot_id IN (SELECT snapshot_before FROM main.comparisons UNION SELECT snapshot_after
                                   FROM main.comparisons UNION SELECT id FROM main.snapshot_rows)""")
    return conn.execute(f"SELECT COUNT(*) FROM main.{TABLE}").fetchone()[0]


# -- migration 21 ---------------------------------------------------------------------

_HELD_TEXTS = "prune_texts"  # a pruned database's older texts as digests, before this migration
_DORMANT = "prune_dormant"


def _table(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None


def _digests_of(held: dict) -> Facts:
    """Return the text digests a pruning held (prune_texts' row: hex SHA-256 of the text and of its comparison
    form, and the normalisation's fingerprint) as the Facts pack() inherits the text's digests from."""
    try:
        text, text_form = bytes.fromhex(held["sha256"]), bytes.fromhex(held["form_sha256"])
        tag = bytes.fromhex(str(held["normaliser"])[:8])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"text {held.get('text_id')}'s digests are damaged: {exc}") from exc
    if len(text) != _EXACT or len(text_form) != _EXACT or len(tag) != 4:
        raise ValueError(f"text {held.get('text_id')}'s digests are damaged")
    return Facts(tag, None, {"text": text}, {"text": text_form[:_FORM]}, None, None, None, None)


def _fold_snapshot(conn: sqlite3.Connection, row: dict, held: dict | None) -> None:
    """Fold in one snapshot row whose text is whole in snapshot_texts, NULL, or held as digests (`held`)."""
    values = {c: row.get(c) for c in COLUMNS if c != "text"}
    if row.get("text_id") is None:
        fold_values(conn, row["article_id"], row["captured_at"], row["id"], {**values, "text": None})
        return
    text = conn.execute("SELECT text FROM snapshot_texts WHERE id = ?", (row["text_id"],)).fetchone()
    if text is not None:
        fold_values(conn, row["article_id"], row["captured_at"], row["id"], {**values, "text": text[0]})
    elif held is not None:
        fold_values(conn, row["article_id"], row["captured_at"], row["id"], values, {"text": _digests_of(held)})
    else:
        raise ValueError(f"snapshot {row['id']}'s text {row['text_id']} is neither whole nor held as digests")


def migrate(conn: sqlite3.Connection, execute) -> None:
    """Migration 21: create TABLE and its trigger; fold in every snapshot row held with its text, those held
    with their text's digests (prune_texts), and the latest snapshot each dormant row packed; repack the dormant
    rows without it (format 2), but in a stream's database a follower keeps (it has prune_identities: the
    follower's merge copies the rows that repeat it with); drop prune_texts."""
    register(conn)
    execute(CREATE)
    conn.execute(_FOLD_ROWS)
    held_texts = _table(conn, _HELD_TEXTS)

    def digests_of(text_id):
        if not held_texts or text_id is None:
            return None
        row = conn.execute(f"SELECT text_id, sha256, form_sha256, normaliser FROM {_HELD_TEXTS} WHERE text_id = ?",
                           (text_id,)).fetchone()
        return None if row is None else dict(zip(("text_id", "sha256", "form_sha256", "normaliser"), row))

    if held_texts:
        names = [r[1] for r in conn.execute("PRAGMA table_info(snapshot_rows)")]
        for values in conn.cursor().execute(f"SELECT * FROM snapshot_rows WHERE text_id IN (SELECT text_id FROM "
                                            f"{_HELD_TEXTS}) AND text_id NOT IN (SELECT id FROM snapshot_texts)"):
            row = dict(zip(names, values))
            _fold_snapshot(conn, row, digests_of(row["text_id"]))
    if _table(conn, _DORMANT):
        repack = not _table(conn, "prune_identities")
        after = -1
        while batch := conn.execute(f"SELECT article_id, rows FROM {_DORMANT} WHERE article_id > ? "
                                    "ORDER BY article_id LIMIT 2000", (after,)).fetchall():
            for article_id, blob in batch:
                rows = dormant.unpack(blob)
                packed = {r["text_id"]: r for r in rows[dormant.HELD_V1]}
                for snapshot in rows["snapshot_rows"]:
                    text_id = snapshot.get("text_id")
                    _fold_snapshot(conn, snapshot, packed.get(text_id) or digests_of(text_id))
                if repack and (rows["snapshot_rows"] or rows[dormant.HELD_V1]):
                    conn.execute(f"UPDATE {_DORMANT} SET rows = ? WHERE article_id = ?",
                                 (dormant.pack({t: rows[t] for t in dormant.PACKED}), article_id))
            after = batch[-1][0]
    if _table(conn, _HELD_TEXTS):
        execute(f"DROP TABLE {_HELD_TEXTS}")
