"""Differences by vantage: one address asked from two network locations, answered differently.

The method names its limitation: differences seen only from inside or only
from outside Bangladesh were not detectable from one location. With a second
vantage, each run compares its own final answers for articles (captures and
revisits) with the other vantages' final answers for the same address within
settings.VANTAGE_COMPARE_WINDOW_HOURS, and records every difference as an
observation with both request ids:

* reach: one side got the page (a 2xx) and the other did not (a challenge, a
  block, a timeout, a reset connection, an error status, ...);
* status: neither got the page, and their results or statuses differ;
* final_address: both got a page, at different final addresses;
* text: both got a page, and the extracted text, headline or byline differ
  after the comparison normalisation (an NFC/NFD spelling is no difference).

Like events, they are for people to review; nothing about a single article is
ever published. The final answer of a fetch is its last request row: not a
redirect hop, and not followed by another attempt at the same address.

In production each (vantage, shard) job writes its own stream with its own
working database, so no run's database holds another vantage's answers.
`compare_streams` compares them where they are all present: a database that
holds several streams (the merged database of `export rebuild`), writing each
difference into the database of the job doing the comparison (its own stream
and id range; `python -m collector compare-vantages`). There, every answer is
compared with the latest earlier answer of each other vantage for the same
address within the window (answer a is the later one, b the earlier), so the
pairs depend on the rows alone: a second comparison over the same rows finds
the same pairs, and a pair already recorded, in either database and either
order, is never recorded again.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta

from collector import settings
from collector.clock import iso, parse_instant
from collector.parse.textnorm import normalise_for_comparison
from collector.record import references
from collector.record.articles import article_key
from collector.record.streams import next_id

PURPOSES = ("capture", "recheck")
COMPARED = ("headline", "byline", "text")


@dataclass(frozen=True)
class Answer:
    """The final answer of one fetch of an article address, from one vantage."""

    request_id: int
    vantage: str
    url_key: str
    started_at: str
    result: str
    status: int | None
    final_key: str
    values: dict | None  # the snapshot's compared fields, normalised; None without a snapshot

    @property
    def reached(self) -> bool:
        return self.result == "ok" and self.values is not None


def compare_run(ctx) -> int:
    """Return how many differences were recorded between this run's answers and other vantages'."""
    now = ctx.clock.now()
    since = iso(now - timedelta(hours=settings.VANTAGE_COMPARE_WINDOW_HOURS))
    marks = ", ".join("?" for _ in PURPOSES)
    if ctx.store.one(f"SELECT 1 FROM requests WHERE purpose IN ({marks}) AND sent = 1 AND started_at >= ? "
                     f"AND vantage != ? LIMIT 1", (*PURPOSES, since, ctx.vantage)) is None:
        # No other vantage's answer to compare with (a job's own working database):
        # nothing to normalise. Normalising every snapshot of the window anyway took
        # more CPU than the crawl itself (bench/shards.py: 2.9 s a shard).
        return 0
    answers = _answers(ctx.store.query, since)
    run_requests = _run_requests(ctx.store, ctx.run_id)  # once, not once per answer
    mine = [a for a in answers if a.request_id in run_requests]
    others: dict[str, list[Answer]] = {}
    for answer in answers:
        if answer.vantage != ctx.vantage:
            others.setdefault(answer.url_key, []).append(answer)
    found = 0
    with ctx.store.transaction() as conn:
        for a in mine:
            for b in _nearest_per_vantage(a, others.get(a.url_key, [])):
                for kind, detail in differences(a, b):
                    found += conn.execute(
                        "INSERT OR IGNORE INTO vantage_differences (id, run_id, found_at, url_key, article_id, kind, "
                        "request_a, request_b, vantage_a, vantage_b, detail) VALUES (?, ?, ?, ?, "
                        "(SELECT article_id FROM article_urls WHERE url_key = ? LIMIT 1), ?, ?, ?, ?, ?, ?)",
                        (next_id(conn, "vantage_differences"), ctx.run_id, ctx.clock.now_iso(), a.url_key,
                         a.url_key, kind, a.request_id,
                         b.request_id, a.vantage, b.vantage, json.dumps(detail, sort_keys=True))).rowcount
    if found:
        ctx.count("vantage_differences", found)
    return found


@dataclass(frozen=True)
class Compared:
    """What one comparison over a database holding several streams found and recorded."""

    answers: int  # final answers of article fetches compared (started since `since`)
    vantages: int  # distinct vantages among them
    pairs: int  # pairs of answers from different vantages compared
    recorded: dict  # kind -> differences newly recorded
    known: int  # differences found that were already recorded


def compare_streams(store, source: sqlite3.Connection | None, *, run_id: int, since: datetime,
                    now: datetime) -> Compared:
    """Compare every vantage's answers in `source` and record each new difference in `store`.

    `source` is a database holding several streams (None: the store's own
    database); rows go to `store`, in its stream's id range. Answers started
    from `since` to `now` are each compared with the latest earlier answer of
    every other vantage for the same address, within the window.
    """
    read = store.conn if source is None else source
    window = timedelta(hours=settings.VANTAGE_COMPARE_WINDOW_HOURS)
    until = iso(now)
    answers = [a for a in _answers(lambda sql, params=(): read.execute(sql, params).fetchall(),
                                   iso(since - window)) if a.started_at <= until]
    found = pairs(answers, iso(since), window)
    known = _recorded(store.conn) | (set() if source is None else _recorded(source))
    new, seen = [], 0
    for a, b in found:
        for kind, detail in differences(a, b):
            key = (min(a.request_id, b.request_id), max(a.request_id, b.request_id), kind)
            if key in known:
                seen += 1
                continue
            known.add(key)
            article = read.execute("SELECT article_id FROM article_urls WHERE url_key = ? ORDER BY article_id "
                                   "LIMIT 1", (a.url_key,)).fetchone()
            new.append((a, b, kind, detail, article[0] if article else None))
    recorded: dict[str, int] = {}
    # With a source, the requests and articles referred to are in the other streams' ranges.
    with references.unchecked(store.conn) if source is not None else nullcontext(), store.transaction() as conn:
        for a, b, kind, detail, article_id in new:
            conn.execute(
                "INSERT INTO vantage_differences (id, run_id, found_at, url_key, article_id, kind, request_a, "
                "request_b, vantage_a, vantage_b, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (next_id(conn, "vantage_differences"), run_id, until, a.url_key, article_id, kind,
                 a.request_id, b.request_id, a.vantage, b.vantage, json.dumps(detail, sort_keys=True)))
            recorded[kind] = recorded.get(kind, 0) + 1
    return Compared(len([a for a in answers if a.started_at >= iso(since)]), len({a.vantage for a in answers}),
                    len(found), recorded, seen)


def pairs(answers: list[Answer], since: str, window: timedelta) -> list[tuple[Answer, Answer]]:
    """Return (a, b) for each answer a started since `since` and each other vantage's latest earlier answer b
    for the same address, at most `window` before it (earlier: by start, then by request id)."""
    by_address: dict[str, list[Answer]] = {}
    for answer in sorted(answers, key=lambda x: (x.started_at, x.request_id)):
        by_address.setdefault(answer.url_key, []).append(answer)
    found = []
    for group in by_address.values():
        latest: dict[str, Answer] = {}
        for a in group:
            if a.started_at >= since:
                at = parse_instant(a.started_at)
                found += [(a, latest[v]) for v in sorted(latest)
                          if v != a.vantage and at - parse_instant(latest[v].started_at) <= window]
            latest[a.vantage] = a
    return found


def _recorded(conn: sqlite3.Connection) -> set[tuple[int, int, str]]:
    """Return every difference a database holds, as (lower request id, higher request id, kind)."""
    return {(min(a, b), max(a, b), kind) for a, b, kind in conn.execute(
        "SELECT request_a, request_b, kind FROM vantage_differences")}


def differences(a: Answer, b: Answer) -> list[tuple[str, dict]]:
    """Return (kind, detail) for every way answer b differs from answer a (empty when alike)."""
    detail = {"a": _side(a), "b": _side(b)}
    if a.reached != b.reached:
        return [("reach", detail)]
    if not a.reached:
        return [("status", detail)] if (a.result, a.status) != (b.result, b.status) else []
    found = []
    if a.status != b.status:
        found.append(("status", detail))
    if a.final_key != b.final_key:
        found.append(("final_address", detail))
    changed = [f for f in COMPARED if a.values[f] != b.values[f]]
    if changed:
        found.append(("text", {**detail, "fields": changed}))
    return found


def _side(answer: Answer) -> dict:
    digest = None
    if answer.values is not None:
        digest = hashlib.sha256(json.dumps(answer.values, sort_keys=True).encode("utf-8")).hexdigest()[:16]
    return {"request_id": answer.request_id, "vantage": answer.vantage, "result": answer.result,
            "status": answer.status, "final_address": answer.final_key, "normalised_digest": digest}


def _nearest_per_vantage(a: Answer, candidates: list[Answer]) -> list[Answer]:
    """Return, for each other vantage, its answer nearest in time to a."""
    at = parse_instant(a.started_at)
    best: dict[str, Answer] = {}
    for b in candidates:
        gap = abs((parse_instant(b.started_at) - at).total_seconds())
        if b.vantage not in best or gap < abs((parse_instant(best[b.vantage].started_at) - at).total_seconds()):
            best[b.vantage] = b
    return [best[v] for v in sorted(best)]


def _run_requests(store, run_id: int) -> set[int]:
    return {r[0] for r in store.query("SELECT id FROM requests WHERE run_id = ?", (run_id,))}


def _answers(query, since: str) -> list[Answer]:
    """Return the final answers of article fetches started since `since`, from every vantage.

    `query(sql, params)` returns rows of the database read (Store.query, or a connection's).
    """
    marks = ", ".join("?" for _ in PURPOSES)
    rows = {r["id"]: r for r in query(
        f"SELECT id, run_id, url, redirected_from, attempt, result, status_code, vantage, started_at "
        f"FROM requests WHERE purpose IN ({marks}) AND sent = 1 AND started_at >= ? ORDER BY id",
        (*PURPOSES, since))}
    retried = {(r["run_id"], r["url"], r["redirected_from"], r["attempt"] - 1) for r in rows.values()}
    snapshots = {r["request_id"]: r for r in query(
        f"SELECT s.request_id, s.headline, s.byline, s.text FROM snapshots s JOIN requests q "
        f"ON q.id = s.request_id WHERE q.purpose IN ({marks}) AND q.started_at >= ?", (*PURPOSES, since))}
    answers = []
    for row in rows.values():
        if row["result"] == "redirect" or (row["run_id"], row["url"], row["redirected_from"], row["attempt"]) in retried:
            continue
        root = row
        while root["redirected_from"] is not None and root["redirected_from"] in rows:
            root = rows[root["redirected_from"]]
        shot = snapshots.get(row["id"])
        values = None if shot is None else {f: normalise_for_comparison(shot[f] or "") for f in COMPARED}
        answers.append(Answer(row["id"], row["vantage"], article_key(root["url"]), row["started_at"],
                              row["result"], row["status_code"], article_key(row["url"]), values))
    return answers
