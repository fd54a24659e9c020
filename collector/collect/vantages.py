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
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta

from collector import settings
from collector.clock import iso, parse_instant
from collector.parse.textnorm import normalise_for_comparison
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
    answers = _answers(ctx.store, since)
    mine = [a for a in answers if a.request_id in _run_requests(ctx.store, ctx.run_id)]
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


def _answers(store, since: str) -> list[Answer]:
    """Return the final answers of article fetches started since `since`, from every vantage."""
    marks = ", ".join("?" for _ in PURPOSES)
    rows = {r["id"]: r for r in store.query(
        f"SELECT id, run_id, url, redirected_from, attempt, result, status_code, vantage, started_at "
        f"FROM requests WHERE purpose IN ({marks}) AND sent = 1 AND started_at >= ? ORDER BY id",
        (*PURPOSES, since))}
    retried = {(r["run_id"], r["url"], r["redirected_from"], r["attempt"] - 1) for r in rows.values()}
    snapshots = {r["request_id"]: r for r in store.query(
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
