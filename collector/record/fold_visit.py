"""Migration 22: what a revisit reads of an article besides its schedule and latest snapshot, folded in every database.

A revisit fetches an article at the address it was recorded by, judges a
redirect by every address recorded for it, and writes a check whose address
the export repeats from the article's check before as {"$same": id}. None of
that needs the article's rows:

* the articles' projection (record/fold.py, TABLE there) gains, per article,
  `url` and `key`, its articles row's address (what it is revisited at, held
  as `held_address` writes it: see there) and
  the digest of that row's address key (record/fold_keys.py key_digest, 16
  bytes), and `keys`, the digests of the key of every address article_urls
  recorded for it, concatenated in the order they arrived (what
  outcomes.front_page_reason reads, with `key`; and what articles.add_address
  reads, as article_urls' UNIQUE (article_id, url_key) would);
* CHECKS holds, per check, its article, id and the SHA-256 of its address:
  equal digests, equal addresses, so {"$same": id} is written as from the row.

The triggers below fold each row in as it is inserted, whatever inserts it (a
run, `export rebuild`, a merge, a pruning's copy); each value is the article
row's own, a set or a row's own, so the order rows arrive in does not change
them and a row folded twice changes nothing (`from_rows` computes them from
the rows; tests/record/test_fold_visit.py holds the two equal). A full
database's CHECKS holds every check's; a pruned one's (collect/prune.py) each
article's latest and those whose rows it holds (`keep`): an article's rows may
leave the working database, and what its revisit reads is the same whatever
database the job runs on.

Derived, never an observation: the names start with fileformat.DERIVED_PREFIX,
nothing here is exported, and the record's rows make it again. Before
migration 22 a pruned database packed these in its dormant rows
(record/dormant.py); `migrate` folds them in from there.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3

from collector.parse.inflate import InflateError
from collector.record import dormant
from collector.record.fold import TABLE as ARTICLES
from collector.record.fold_keys import FUNCTION as KEY_DIGEST, key_digest

CHECKS = "fold_checks"
ADD_KEY = "tw_keys_with"  # (keys, digest): keys with digest appended unless it is one of them
URL_DIGEST = "tw_url_sha256"
HELD_ADDRESS = "tw_held_address"
# An address held verbatim, or with its runs of percent-escaped UTF-8 written as the characters they escape.
_VERBATIM, _UNESCAPED = "=", "~"
_ESCAPED_RUN = re.compile(r"(?:%[89A-F][0-9A-F])+")  # escapes of bytes 0x80-0xFF, upper-case as browsers write them


def held_address(url: str | None) -> str | None:
    """Return how the projection holds an address: exactly recoverable by `address` (held_address(u) is
    '=' + u, or '~' + u with each run of upper-case percent escapes that is well-formed UTF-8 written as the
    characters it escapes, when escaping those characters again gives u back exactly).

    A Bangla address is mostly such escapes: each character's three bytes take nine characters escaped
    and three held (bench/working_db.py's real addresses, 294 bytes on average, hold in about 130)."""
    if url is None:
        return None
    if url.isascii():
        unescaped = _ESCAPED_RUN.sub(_unescape, url)
        if unescaped != url and _escape(unescaped) == url:
            return _UNESCAPED + unescaped
    return _VERBATIM + url


def address(held: str | None) -> str | None:
    """Return the address `held_address` held."""
    if held is None:
        return None
    if held[:1] not in (_VERBATIM, _UNESCAPED):
        raise ValueError(f"an address held as {held[:40]!r}, by no form held_address writes")
    return held[1:] if held.startswith(_VERBATIM) else _escape(held[1:])


def _unescape(run: re.Match) -> str:
    try:
        return bytes.fromhex(run.group(0).replace("%", "")).decode("utf-8")
    except UnicodeDecodeError:
        return run.group(0)


def _escape(text: str) -> str:
    return "".join(c if c.isascii() else "".join(f"%{b:02X}" for b in c.encode("utf-8")) for c in text)
_KEY = 16  # bytes of a key digest


def url_digest(url: str | None) -> bytes | None:
    """Return the SHA-256 of an address's UTF-8 (None for none)."""
    return None if url is None else hashlib.sha256(str(url).encode("utf-8")).digest()


def keys_with(keys: bytes | None, digest: bytes | None) -> bytes | None:
    """Return `keys` with `digest` appended, unless it is one of them (compared at whole 16-byte steps)."""
    keys = bytes(keys or b"")
    if digest is None or len(digest) != _KEY:
        return keys or None
    if any(keys[i:i + _KEY] == digest for i in range(0, len(keys), _KEY)):
        return keys
    return keys + bytes(digest)


def register(conn: sqlite3.Connection) -> None:
    """Give a connection the functions the triggers fold with (Store does, as for record/fold_keys.py)."""
    conn.create_function(ADD_KEY, 2, keys_with, deterministic=True)
    conn.create_function(URL_DIGEST, 1, url_digest, deterministic=True)
    conn.create_function(HELD_ADDRESS, 1, held_address, deterministic=True)


_ON_URL = "ON CONFLICT (article_id) DO UPDATE SET url = excluded.url, key = excluded.key"
_ON_KEY = f"ON CONFLICT (article_id) DO UPDATE SET keys = {ADD_KEY}({ARTICLES}.keys, excluded.keys)"

CREATE = f"""
ALTER TABLE {ARTICLES} ADD COLUMN url TEXT;   -- the articles row's address, as held_address holds it
ALTER TABLE {ARTICLES} ADD COLUMN key BLOB;   -- the 16-byte digest of that row's address key
ALTER TABLE {ARTICLES} ADD COLUMN keys BLOB;  -- 16-byte digests of its article_urls rows' address keys
CREATE TABLE {CHECKS} (
    article_id INTEGER NOT NULL,
    check_id INTEGER NOT NULL,
    url_sha256 BLOB NOT NULL,       -- the SHA-256 of the check's address: what an export repeats
    PRIMARY KEY (article_id, check_id)
) WITHOUT ROWID;
CREATE TRIGGER {ARTICLES}_address AFTER INSERT ON articles
BEGIN
    INSERT INTO {ARTICLES} (article_id, url, key) VALUES (NEW.id, {HELD_ADDRESS}(NEW.url), {KEY_DIGEST}(NEW.url_key))
    {_ON_URL};
END;
CREATE TRIGGER {ARTICLES}_key AFTER INSERT ON article_urls
BEGIN
    INSERT INTO {ARTICLES} (article_id, keys) VALUES (NEW.article_id, {KEY_DIGEST}(NEW.url_key)) {_ON_KEY};
END;
CREATE TRIGGER {CHECKS}_check AFTER INSERT ON checks
BEGIN
    INSERT INTO {CHECKS} (article_id, check_id, url_sha256) VALUES (NEW.article_id, NEW.id, {URL_DIGEST}(NEW.url))
    ON CONFLICT DO NOTHING;
END;
"""

# Every row the database holds, folded in as the triggers would (over what the tables hold), in SQL.
_FOLD_ROWS = (
    f"INSERT INTO {ARTICLES} (article_id, url, key) SELECT id, {HELD_ADDRESS}(url), {KEY_DIGEST}(url_key) "
    f"FROM articles WHERE true {_ON_URL}",
    f"INSERT INTO {ARTICLES} (article_id, keys) SELECT article_id, {KEY_DIGEST}(url_key) FROM article_urls "
    f"WHERE true ORDER BY id {_ON_KEY}",
    f"INSERT INTO {CHECKS} (article_id, check_id, url_sha256) SELECT article_id, id, {URL_DIGEST}(url) FROM checks "
    "WHERE true ON CONFLICT DO UPDATE SET url_sha256 = excluded.url_sha256",
)


def refold(conn: sqlite3.Connection) -> None:
    """Fold every articles, article_urls and checks row in again, replacing what the rows say (a trigger altered,
    not only dropped, may have folded wrong values). What `export restore-triggers` runs after putting back one of
    these triggers. An article whose articles row is held has every article_urls row held too (a pruning keeps
    both or neither): its keys are made again from them alone; another's (a quiet article's, whose older
    addresses were left out) only gain the keys of the rows held."""
    register(conn)
    conn.execute(f"UPDATE {ARTICLES} SET keys = NULL WHERE article_id IN (SELECT id FROM articles)")
    for statement in _FOLD_ROWS:
        conn.execute(statement)


# -- reading -----------------------------------------------------------------------

def url_of(conn: sqlite3.Connection, article_id: int) -> str | None:
    """Return the address an article is revisited at, or None when no articles row was folded in."""
    row = conn.execute(f"SELECT url FROM {ARTICLES} WHERE article_id = ?", (article_id,)).fetchone()
    return address(row[0]) if row else None


def addresses(conn: sqlite3.Connection, article_id: int) -> frozenset[bytes]:
    """Return the digests of the address keys article_urls recorded for an article."""
    row = conn.execute(f"SELECT keys FROM {ARTICLES} WHERE article_id = ?", (article_id,)).fetchone()
    return _split(row[0] if row else None)


def keys_of(conn: sqlite3.Connection, article_id: int) -> frozenset[bytes]:
    """Return the digests of every address key recorded for an article: its articles row's and article_urls'."""
    row = conn.execute(f"SELECT key, keys FROM {ARTICLES} WHERE article_id = ?", (article_id,)).fetchone()
    return _split(row[1]) | ({bytes(row[0])} if row[0] is not None else set()) if row else frozenset()


def _split(keys: bytes | None) -> frozenset[bytes]:
    keys = bytes(keys or b"")
    return frozenset(keys[i:i + _KEY] for i in range(0, len(keys), _KEY))


def knows(keys: frozenset[bytes], key: str) -> bool:
    """Return True when an address key is one of an article's (keys_of)."""
    return key_digest(key) in keys


def check_before(conn: sqlite3.Connection, article_id: int, check_id: int, low: int = 0) -> tuple[int, bytes] | None:
    """Return (id, address digest) of the article's check with the highest id below `check_id` and above `low`
    (the export's "earlier row" of a stream), or None."""
    row = conn.execute(f"SELECT check_id, url_sha256 FROM {CHECKS} WHERE article_id = ? AND check_id < ? "
                       "AND check_id > ? ORDER BY check_id DESC LIMIT 1", (article_id, check_id, low)).fetchone()
    return None if row is None else (row[0], bytes(row[1]))


def repeated_url(conn: sqlite3.Connection, article_id: int, check_id: int) -> str | None:
    """Return the address of a check this database does not hold, when it is the article's (its digest says so),
    else None: what a resumed check that repeats it reads (record/rebuild.py)."""
    found = conn.execute(f"SELECT url_sha256 FROM {CHECKS} WHERE article_id = ? AND check_id = ?",
                         (article_id, check_id)).fetchone()
    url = url_of(conn, article_id)
    return url if found is not None and url is not None and url_digest(url) == bytes(found[0]) else None


def projection(conn: sqlite3.Connection) -> tuple[dict, dict]:
    """Return ({article_id: (url, its row's key digest, frozenset of its addresses' key digests)} of the articles
    with any, {check_id: (article_id, address digest)})."""
    articles = {r[0]: (address(r[1]), None if r[2] is None else bytes(r[2]), _split(r[3])) for r in conn.execute(
        f"SELECT article_id, url, key, keys FROM {ARTICLES} WHERE url IS NOT NULL OR keys IS NOT NULL")}
    checks = {r[1]: (r[0], bytes(r[2])) for r in conn.execute(f"SELECT article_id, check_id, url_sha256 FROM {CHECKS}")}
    return articles, checks


def from_rows(conn: sqlite3.Connection) -> tuple[dict, dict]:
    """Return the projection computed from the rows alone, as `projection` gives it (a full database's equals it)."""
    rows = {r[0]: (r[1], key_digest(r[2])) for r in conn.execute("SELECT id, url, url_key FROM articles")}
    keys: dict[int, set[bytes]] = {a: set() for a in rows}
    for article_id, key in conn.execute("SELECT article_id, url_key FROM article_urls"):
        keys.setdefault(article_id, set()).add(key_digest(key))
    articles = {a: (*rows.get(a, (None, None)), frozenset(keys[a])) for a in keys}
    checks = {r[0]: (r[1], url_digest(r[2])) for r in conn.execute("SELECT id, article_id, url FROM checks")}
    return articles, checks


# -- kept by a pruning -------------------------------------------------------------

def keep(conn: sqlite3.Connection, source: str = "src") -> int:
    """Copy from an attached database (a pruning's source) the checks' entries a pruned database keeps: of each
    article the articles' projection keeps (record/fold.py keep, which copies its url and keys), its latest (what
    its next check's export repeats); those of the checks main holds its triggers folded. Return how many."""
    conn.execute(f"""INSERT INTO main.{CHECKS} SELECT c.article_id, MAX(c.check_id), c.url_sha256
        FROM {source}.{CHECKS} c WHERE c.article_id IN (SELECT article_id FROM main.{ARTICLES})
        GROUP BY c.article_id ON CONFLICT DO NOTHING""")
    return conn.execute(f"SELECT COUNT(*) FROM main.{CHECKS}").fetchone()[0]


# -- migration 22 ------------------------------------------------------------------

def migrate(conn: sqlite3.Connection, execute) -> None:
    """Migration 22: add the columns, CHECKS and the triggers, fold in every row the database holds and what its
    dormant rows packed (their article's address and keys, their latest check). (Migration 23 folds their latest
    check into the absence streak, then drops a working database's dormant rows: record/fold_absence.py.)"""
    register(conn)
    execute(CREATE)
    refold(conn)
    if not dormant.exists(conn):
        return
    for article_id, blob in conn.execute(f"SELECT article_id, rows FROM {dormant.TABLE}").fetchall():
        try:
            rows = dormant.unpack(blob)
            _fold_dormant(conn, rows)
        except (ValueError, KeyError, TypeError, InflateError) as exc:  # Store refuses a ValueError, rolled back
            raise ValueError(f"dormant article {article_id}'s packed rows are damaged: {exc!r}") from exc


def _fold_dormant(conn: sqlite3.Connection, rows: dict[str, list[dict]]) -> None:
    """Fold in what one dormant row packed: its article's address and key, its addresses' keys, its checks."""
    for article in rows["articles"]:
        conn.execute(f"INSERT INTO {ARTICLES} (article_id, url, key) VALUES (?, ?, ?) {_ON_URL}",
                     (article["id"], held_address(article["url"]), key_digest(article["url_key"])))
    for address in sorted(rows["article_urls"], key=lambda r: r["id"]):
        conn.execute(f"INSERT INTO {ARTICLES} (article_id, keys) VALUES (?, ?) {_ON_KEY}",
                     (address["article_id"], key_digest(address["url_key"])))
    for check in rows["checks"]:
        conn.execute(f"INSERT INTO {CHECKS} VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                     (check["article_id"], check["id"], url_digest(check["url"])))
