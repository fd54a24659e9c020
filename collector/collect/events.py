"""Events: what the checks observed, stated as gone, reappeared or changed, each with its evidence.

* gone: at least settings.GONE_MIN_ABSENT_CHECKS consecutive `absent` checks
  spanning at least settings.GONE_MIN_SPAN_HOURS. Inconclusive checks neither
  count nor break the run of absences; a `present` check ends it. One `gone`
  per absence, decided at the check that first satisfies the rule.
* reappeared: the first `present` check after a `gone`.
* changed: one event per field that differs between a new snapshot and the
  article's previous one, compared after normalise_for_comparison, so an
  NFC/NFD spelling is no change and a gained or lost ZWJ is one. When the two
  snapshots were extracted by different software, the side(s) not made by the
  current extractor are extracted again from their HTML (a WARC file here or
  its release asset: collector/collect/comparisons.py); when that HTML cannot
  be had the check is recorded as not comparable and compared again later, so
  a change in our software is never reported as a change by the outlet.

Every event says when the change happened as an interval: the last time the
article was seen as before (last_unchanged_at: the previous snapshot; for a
gone the last snapshot, for a reappeared the last absent check) and the first
time it was seen changed (first_changed_at). It is aged at both ends, in hours
from first capture; review order uses the earlier (age_min_hours), the
earliest the change can have happened (collector/review/order.py). Age never
decides whether an event is recorded.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
from datetime import datetime, timedelta

from collector import settings
from collector.clock import parse_instant
from collector.parse.extract import extract, extractor_fingerprint
from collector.parse.textnorm import normalise_for_comparison
from collector.net.warcread import WarcReadError
from collector.record import fold, fold_absence, fold_latest
from collector.record.streams import next_id

KINDS = ("gone", "reappeared", "changed")
FIELDS = ("headline", "byline", "text", "published_raw", "modified_raw", "final_url", "canonical_url")
EXTRACTED_FIELDS = tuple(f for f in FIELDS if f != "final_url")

# -- the rule for gone ----------------------------------------------------------

def gone_decided(performed: list[datetime]) -> bool:
    """Return True when consecutive absent checks performed at these instants make an article gone."""
    if len(performed) < settings.GONE_MIN_ABSENT_CHECKS:
        return False
    return performed[-1] - performed[0] >= timedelta(hours=settings.GONE_MIN_SPAN_HOURS)


def absence_streak(conn, article_id: int) -> list[sqlite3.Row]:
    """Return the absent checks since the article's last present check, oldest first (its id, outcome and
    performed_at), from the projection of its checks (record/fold_absence.py), whether or not their rows are held.

    Inconclusive checks are passed over: they say nothing either way.
    """
    return fold_absence.streak(conn, article_id)


def is_gone(conn, article_id: int) -> bool:
    """Return True when the article's latest gone/reappeared event is a gone."""
    row = conn.execute("SELECT kind FROM events WHERE article_id = ? AND kind IN ('gone', 'reappeared') "
                       "ORDER BY id DESC LIMIT 1", (article_id,)).fetchone()
    return row is not None and row["kind"] == "gone"


# -- recording -----------------------------------------------------------------

def after_check(ctx, conn, check) -> list[str]:
    """Return the kinds of the gone and reappeared events recorded for a check just inserted.

    Changes of a present check are collector/collect/changes.py's.
    """
    if check["outcome"] == "absent":
        return _gone(ctx, conn, check)
    if check["outcome"] == "present":
        return _reappeared(ctx, conn, check)
    return []


def article_age_hours(conn, article_id: int, at: str) -> float:
    """Return the hours from the article's first capture to the instant `at`."""
    row = conn.execute(f"SELECT {fold.text_sql('first_capture_us')} FROM {fold.TABLE} WHERE article_id = ?",
                       (article_id,)).fetchone()
    first = row[0] if row else None
    return (parse_instant(at) - parse_instant(first)).total_seconds() / 3600


def record_event(ctx, conn, check, kind: str, evidence: dict, between: tuple[str | None, str],
                 field: str | None = None, before=None, after=None,
                 extractors: tuple[str | None, str | None] = (None, None), detected_at: str | None = None) -> str:
    """Return the kind after inserting one event decided by `check`.

    `between` is (last seen as before, first seen changed): the change
    happened in that interval. The event is aged at both ends; review order
    uses the earlier (age_min_hours), article_age_hours is the later.
    """
    unchanged, changed = between
    article = check["article_id"]
    conn.execute(
        "INSERT INTO events (id, article_id, kind, field, before, after, detected_at, article_age_hours, "
        "check_id, evidence, extractor_before, extractor_after, run_id, last_unchanged_at, first_changed_at, "
        "age_min_hours) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (next_id(conn, "events"), article, kind, field, before, after, detected_at or check["performed_at"],
         article_age_hours(conn, article, changed), check["id"], json.dumps(evidence, sort_keys=True),
         *extractors, ctx.run_id, unchanged, changed,
         None if unchanged is None else article_age_hours(conn, article, unchanged)))
    return kind


def _gone(ctx, conn, check) -> list[str]:
    """Return ['gone'] when this absent check first meets the rule for its absence, else []."""
    streak = absence_streak(conn, check["article_id"])
    times = [parse_instant(row["performed_at"]) for row in streak]
    if is_gone(conn, check["article_id"]) or not gone_decided(times):
        return []
    between = [row for row in fold_absence.streak(conn, check["article_id"], absent=False)
               if streak[0]["performed_at"] < row["performed_at"] < streak[-1]["performed_at"]]
    # The snapshot before the first absent check: its row, or (a pruned database) the projection's (fold_latest.py).
    last_seen = fold_latest.previous(conn, check["article_id"], streak[0]["performed_at"], 0, strictly_before=True)
    evidence = {"check": check["id"], "absent_checks": [row["id"] for row in streak],
                "inconclusive_checks": [row["id"] for row in between], "last_snapshot": last_seen.snapshot_id,
                "span_hours": round((times[-1] - times[0]).total_seconds() / 3600, 3)}
    # Gone between the last snapshot and the first absent check; detected_at stays
    # the check at which the rule was met.
    held = conn.execute("SELECT captured_at FROM snapshots WHERE id = ?", (last_seen.snapshot_id,)).fetchone()
    seen = (held[0] if held else last_seen.captured_at, streak[0]["performed_at"])
    return [record_event(ctx, conn, check, "gone", evidence, seen)]


def _reappeared(ctx, conn, check) -> list[str]:
    """Return ['reappeared'] when this present check follows a gone, else []."""
    if not is_gone(conn, check["article_id"]):
        return []
    gone = conn.execute("SELECT MAX(id) FROM events WHERE article_id = ? AND kind = 'gone'",
                        (check["article_id"],)).fetchone()[0]
    last_absent = fold_absence.last_absent(conn, check["article_id"])
    if last_absent is not None and parse_instant(last_absent) >= parse_instant(check["performed_at"]):
        # An absent check not before this one (a replay of another time): the latest before it, from the rows.
        last_absent = conn.execute("SELECT MAX(performed_at) FROM checks WHERE article_id = ? AND outcome = "
                                   "'absent' AND performed_at < ?", (check["article_id"], check["performed_at"])
                                   ).fetchone()[0]
    evidence = {"check": check["id"], "snapshot": check["snapshot_id"], "gone_event": gone}
    return [record_event(ctx, conn, check, "reappeared", evidence, (last_absent, check["performed_at"]))]


def stored(snapshot) -> dict:
    """Return a snapshot's compared fields as stored."""
    return {f: snapshot[f] for f in FIELDS}


def differs(before: str | None, after: str | None) -> bool:
    """Return True when two stored values differ in the method's comparison form (None counts as empty)."""
    return normalise_for_comparison(before or "") != normalise_for_comparison(after or "")


# -- the same extractor on both sides ----------------------------------------------

@functools.lru_cache(maxsize=1)
def current_extractor() -> str:
    """Return the fingerprint of the extractor this process runs (fixed for its life)."""
    return extractor_fingerprint()


def values_from_html(snapshot, body: bytes, content_type: str | None) -> dict:
    """Return the snapshot's field values as the current extractor reads `body`, which must be its HTML."""
    if hashlib.sha256(body).hexdigest() != snapshot["html_sha256"]:
        raise WarcReadError(f"the WARC record at {snapshot['warc_file']}:{snapshot['warc_offset']} "
                            "is not the HTML the snapshot was made from")
    page = extract(body, content_type, snapshot["final_url"])
    values = {f: getattr(page, f) for f in EXTRACTED_FIELDS}
    values["final_url"] = snapshot["final_url"]
    return values
