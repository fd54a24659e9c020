"""Review order: events listed oldest article first, and each shown as the lines `review` prints.

Age orders review; it never decides whether an event is recorded (the method).
"""

from __future__ import annotations

import sqlite3
import unicodedata

# Oldest article first: a change to an article a year old is read before one
# to an article an hour old. An event happened somewhere between the last time
# the article was seen as before and the first time it was seen changed; it is
# ordered by the article's age at the earliest of those moments (events from
# before migration 10 have only the later). The Datasette canned query is this text.
REVIEW_ORDER_SQL = """
SELECT e.id AS event_id, COALESCE(e.age_min_hours, e.article_age_hours) AS age_from_hours,
       e.article_age_hours AS age_to_hours, e.article_age_hours, e.kind, e.field, a.outlet_id,
       a.url AS article_url, e.last_unchanged_at, e.first_changed_at, e.detected_at, c.slot, e.before, e.after,
       e.extractor_before, e.extractor_after, e.evidence
FROM events e
JOIN articles a ON a.id = e.article_id
JOIN checks c ON c.id = e.check_id
ORDER BY COALESCE(e.age_min_hours, e.article_age_hours) DESC, e.id
""".strip()


def review_rows(conn, kinds: tuple[str, ...] = (), limit: int | None = None) -> list[sqlite3.Row]:
    """Return events in review order (oldest article first), optionally of some kinds only."""
    rows = []
    for row in conn.execute(REVIEW_ORDER_SQL):
        if limit is not None and len(rows) >= limit:
            break
        if not kinds or row["kind"] in kinds:
            rows.append(row)
    return rows


# Invisible characters that can be the whole of a change are named when shown.
_VISIBLE = str.maketrans({"\u200d": "⟨ZWJ⟩", "\u200c": "⟨ZWNJ⟩", "\u00a0": "⟨NBSP⟩", "\u00ad": "⟨SHY⟩"})


def _window(before: str | None, after: str | None, width: int = 90) -> tuple[str, str]:
    """Return both values cut to the same window around their first difference, invisibles named.

    Shown in NFC so that an encoding-only difference elsewhere does not move the window.
    """
    before, after = (None if v is None else unicodedata.normalize("NFC", v) for v in (before, after))
    if before is None or after is None:
        return tuple("(none)" if v is None else _cut(v, 0, width) for v in (before, after))
    first = next((i for i, (a, b) in enumerate(zip(before, after)) if a != b), min(len(before), len(after)))
    start = max(0, first - width // 3)
    return _cut(before, start, width), _cut(after, start, width)


def _cut(value: str, start: int, width: int) -> str:
    """Return width characters of value from start, blanks collapsed, with … where it was cut."""
    piece = " ".join(value[start:start + width].split()).translate(_VISIBLE)
    return ("…" if start else "") + piece + ("…" if start + width < len(value) else "")


def format_row(row) -> str:
    """Return one event as the lines `review` prints: its age as an interval, then what changed."""
    what = row["kind"] + (f" {row['field']}" if row["field"] else "")
    age = f"{row['age_from_hours']:.1f}-{row['age_to_hours']:.1f} h"
    head = (f"{age:>17}  #{row['event_id']:<6} {what:<22} {row['outlet_id']}  "
            f"{row['article_url']}  (check {row['slot']}, {row['detected_at']})")
    lines = [head]
    if row["last_unchanged_at"]:
        lines.append(f"{'':19}between {row['last_unchanged_at']} (last seen as before) and "
                     f"{row['first_changed_at']} (first seen {'absent' if row['kind'] == 'gone' else 'changed'})")
    if row["kind"] != "changed":
        return "\n".join(lines)
    before, after = _window(row["before"], row["after"])
    lines += [f"{'':19}before: {before}", f"{'':19}after:  {after}"]
    if row["extractor_before"] != row["extractor_after"]:
        lines.append(f"{'':19}extractor: {row['extractor_before']} -> {row['extractor_after']}")
    return "\n".join(lines)


# Differences by vantage, oldest article first, as events are.
VANTAGE_DIFFERENCES_SQL = """
SELECT d.id, d.kind, d.url_key, d.vantage_a, d.vantage_b, d.request_a, d.request_b, d.found_at, d.detail,
       a.outlet_id, COALESCE((julianday(d.found_at) - julianday(a.first_seen_at)) * 24, 0) AS article_age_hours
FROM vantage_differences d LEFT JOIN articles a ON a.id = d.article_id
ORDER BY article_age_hours DESC, d.id
""".strip()


def format_difference(row) -> str:
    """Return one vantage difference as the line `vantage-differences` prints."""
    import json

    detail = json.loads(row["detail"])
    sides = " vs ".join(f"{s['vantage']}: {s['result']}" + (f" {s['status']}" if s["status"] else "")
                        for s in (detail["a"], detail["b"]))
    fields = f" ({', '.join(detail['fields'])})" if detail.get("fields") else ""
    return (f"{row['article_age_hours']:9.1f} h  #{row['id']:<6} {row['kind'] + fields:<22} {row['outlet_id']}  "
            f"{row['url_key']}  [{sides}; requests {row['request_a']}, {row['request_b']}]")
