"""What the simulated year's record says, held against what the newsroom really served.

An event is false when the world does not bear it out: a `changed` whose field
was the same at both snapshots' instants (as the outlet served it, whatever
our software read), a `gone` whose absent checks found the article served, a
`reappeared` at a check that did not find it. A real change is missed when
two consecutive snapshots of an article straddle it and no event records it
(a comparison still open, across the extractor upgrade, is counted apart). A
disappearance is missed when the checks after it met the gone rule and no
`gone` was written. An article is lost when it was listed, served to a
collection within its capture window, and never captured, unless its capture
was answered "not found" or "gone" while the outlet really did not serve it:
the method takes that answer as final (a 404 or 410 is never tried again), so
such an article (taken down before its first capture, back later) is counted
apart, as `absent_at_capture`, not as lost. A "not found" the world does not
bear out (the page was served at that instant) is still a loss.
"""

from __future__ import annotations

import bisect
import json
import sqlite3
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from collector.clock import iso, parse_instant
from collector.collect.events import gone_decided

FIELDS = ("headline", "byline", "text", "final_url", "canonical_url")


def truth(story, at: datetime, address: str) -> dict | None:
    """Return the fields the outlet served at `address` at `at`, as the world knows them (None: no page)."""
    kind, detail = story.state(at, urlsplit(address).path)
    if kind != "page":
        return None
    return {"headline": detail["headline"], "byline": detail["byline"], "text": detail["text"],
            "final_url": detail["path"], "canonical_url": detail["path"]}


def judge(db, room, collections: list[datetime], outage: tuple[datetime, datetime] | None) -> dict:
    """Return the year's verdict: events by kind, false events, missed changes, lost articles, retries.

    `collections` are the collect jobs' start times: an article is lost only if
    one of them found it served within its capture window and it was never captured.
    """
    conn = sqlite3.connect(db)
    conn.row_factory = sqlite3.Row
    try:
        return _judge(conn, room, collections, outage)
    finally:
        conn.close()


def _judge(conn, room, collections, outage) -> dict:
    stories = {o.base + s.path: s for o in room.outlets for s in o.stories}
    article_story = {r["id"]: stories.get(r["url"]) for r in conn.execute("SELECT id, url FROM articles")}
    snapshots = defaultdict(list)
    for row in conn.execute("SELECT id, article_id, captured_at, final_url, purpose FROM snapshots "
                            "ORDER BY article_id, captured_at, id"):
        snapshots[row["article_id"]].append(row)
    by_id = {s["id"]: s for rows in snapshots.values() for s in rows}
    events = conn.execute("SELECT * FROM events ORDER BY id").fetchall()
    false, recorded = [], set()
    for event in events:
        story, evidence = article_story[event["article_id"]], json.loads(event["evidence"])
        if event["kind"] == "changed":
            before, after = by_id[evidence["snapshot_before"]], by_id[evidence["snapshot_after"]]
            recorded.add((before["id"], after["id"], event["field"]))
            was, now = (truth(story, parse_instant(s["captured_at"]), s["final_url"]) for s in (before, after))
            if was is None or now is None or was[event["field"]] == now[event["field"]]:
                false.append(_describe(event, story))
        elif event["kind"] == "gone" and not all(_absent(conn, story, c) for c in evidence["absent_checks"]):
            false.append(_describe(event, story))
        elif event["kind"] == "reappeared" and _absent(conn, story, evidence["check"]):
            false.append(_describe(event, story))
    still_open = _open_pairs(conn)
    missed, changes_seen = [], 0
    for article, rows in snapshots.items():
        story = article_story[article]
        for before, after in zip(rows, rows[1:]):
            was, now = (truth(story, parse_instant(s["captured_at"]), s["final_url"]) for s in (before, after))
            for name in FIELDS:
                if was and now and was[name] != now[name]:
                    changes_seen += 1
                    if (before["id"], after["id"], name) not in recorded and (before["id"], after["id"]) not in still_open:
                        missed.append(f"{name} of {story.outlet.id}/{story.number} between snapshots "
                                      f"{before['id']} and {after['id']}")
    missed += _missed_gone(conn, article_story, events)
    return {"events": dict(Counter(e["kind"] for e in events)), "false_events": len(false), "false": false[:20],
            "changes_seen": changes_seen, "missed_changes": len(missed), "missed": missed[:20],
            "comparisons_open": len(still_open), **lost_articles(conn, room, collections, outage), **_retries(conn)}


def _describe(event, story) -> str:
    return f"event {event['id']} {event['kind']} {event['field'] or ''} of {story.outlet.id}/{story.number}"


def _absent(conn, story, check_id: int) -> bool:
    check = conn.execute("SELECT performed_at, url FROM checks WHERE id = ?", (check_id,)).fetchone()
    kind, _ = story.state(parse_instant(check["performed_at"]), urlsplit(check["url"]).path)
    return kind in ("absent", "unpublished")


def _open_pairs(conn) -> set[tuple[int, int]]:
    """Return the snapshot pairs whose latest comparison says not comparable (to be compared again)."""
    rows = conn.execute("SELECT snapshot_before, snapshot_after, outcome FROM comparisons ORDER BY id")
    latest = {(r[0], r[1]): r[2] for r in rows}
    return {pair for pair, outcome in latest.items() if outcome == "not_comparable"}


def _missed_gone(conn, article_story, events) -> list[str]:
    """Return the disappearances whose checks met the gone rule with no gone event written."""
    gone = {e["article_id"] for e in events if e["kind"] == "gone"}
    missed = []
    for article, story in article_story.items():
        if story is None or story.gone_at is None or article in gone:
            continue
        rows = conn.execute("SELECT performed_at, outcome FROM checks WHERE article_id = ? AND outcome != "
                            "'inconclusive' AND performed_at >= ? ORDER BY performed_at",
                            (article, iso(story.gone_at))).fetchall()
        times = [parse_instant(r["performed_at"]) for r in rows if r["outcome"] == "absent"]
        if gone_decided(times):
            missed.append(f"gone of {story.outlet.id}/{story.number}")
    return missed


def lost_articles(conn, room, collections: list[datetime], outage) -> dict:
    """Return articles listed and never captured, all of them and those the outage could have cost.

    Not lost: an article taken down before any collection could have found it served.
    """
    captured = {r[0] for r in conn.execute("SELECT a.url FROM articles a WHERE EXISTS (SELECT 1 FROM snapshots s "
                                           "WHERE s.article_id = a.id AND s.purpose = 'capture')")}
    settled = collections[-1] - timedelta(hours=3)  # the last runs' articles may still be waiting
    listed = [s for o in room.outlets for s in o.stories if s.published <= settled]
    window = timedelta(hours=48)

    def servable(story) -> bool:
        first = bisect.bisect_left(collections, story.published)
        return any(story.state(t)[0] in ("page", "redirect", "failing")
                   for t in collections[first:bisect.bisect_right(collections, story.published + window)])

    answered = defaultdict(list)  # article address -> when its capture was answered 404 or 410
    for row in conn.execute("SELECT a.url, c.attempted_at FROM capture_attempts c JOIN articles a ON "
                            "a.id = c.article_id WHERE c.result IN ('not_found', 'gone')"):
        answered[row[0]].append(parse_instant(row[1]))

    def absent_when_answered(story) -> bool:
        """Return True when a capture was answered 404/410 at an instant the outlet served no page there."""
        return any(story.state(t)[0] in ("absent", "unpublished") for t in answered[story.outlet.base + story.path])

    uncaptured = [s for s in listed if s.outlet.base + s.path not in captured and servable(s)]
    absent = [s for s in uncaptured if absent_when_answered(s)]
    lost = [s for s in uncaptured if not absent_when_answered(s)]
    lost_ids = {id(s) for s in lost}
    in_outage = [] if outage is None else [
        s for s in listed if outage[0] - timedelta(hours=48) <= s.published < outage[1] and s.outlet.outages]
    return {"articles_listed": len(listed), "articles_lost": len(lost),
            "lost": [f"{s.outlet.id}/{s.number} published {s.published:%Y-%m-%d %H:%M}" for s in lost[:20]],
            "absent_at_capture": len(absent),
            "absent": [f"{s.outlet.id}/{s.number} published {s.published:%Y-%m-%d %H:%M}, 404 at its capture, "
                       f"served again from {s.away[1]:%Y-%m-%d %H:%M}" if s.away else
                       f"{s.outlet.id}/{s.number} published {s.published:%Y-%m-%d %H:%M}, 404 at its capture"
                       for s in absent[:20]],
            "outage_articles": len(in_outage),
            "outage_lost": sum(1 for s in in_outage if id(s) in lost_ids)}


def _retries(conn) -> dict:
    """Return how often captures and checks were tried again, and how comparisons were made."""
    one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
    how = dict(conn.execute("SELECT COALESCE(how, outcome), COUNT(*) FROM comparisons GROUP BY 1").fetchall())
    return {"capture_retries": one("SELECT COUNT(*) FROM capture_attempts WHERE try_number > 1"),
            "captured_after_retry": one("SELECT COUNT(*) FROM capture_attempts WHERE try_number > 1 "
                                        "AND outcome = 'captured'"),
            "check_retries": one("SELECT COUNT(*) FROM checks WHERE try_number > 1"),
            "comparisons": how, "warc_downloads": one("SELECT COUNT(*) FROM requests WHERE purpose = 'evidence' "
                                                      "AND status_code = 206")}
