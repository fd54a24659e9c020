"""Per-outlet checks: silence, unreadable sources, robots.txt, challenges, captures against the usual rate, lost sources.

This report names outlets: it is private, like the record it reads. An
outlet is judged only when this database's runs have sent it requests (a
shard's database holds the other shards' outlets, never asked).
"""

from __future__ import annotations

from datetime import timedelta

from collector import settings
from collector.clock import iso, parse_instant
from collector.health.checks import OK, WARN, Check, Finding, Inputs, grade, hours
from collector.net.robotscache import UNAVAILABLE

# A robots.txt answer that lets the outlet be read: its rules, or none to read (4xx: no restrictions).
_ROBOTS_READ = ("ok", *UNAVAILABLE)
# How far back runs are read to count failures in a row: more than the largest threshold needs.
_LOOKBACK_HOURS = 48


def asked_outlets(inputs: Inputs) -> list[str]:
    """Return the active outlets this database's runs have sent requests to, sorted."""
    rows = inputs.conn.execute(
        "SELECT o.id FROM outlets AS o WHERE o.active = 1 AND EXISTS "
        "(SELECT 1 FROM requests AS r WHERE r.outlet_id = o.id) ORDER BY o.id").fetchall()
    return [r[0] for r in rows]


def run_rows(inputs: Inputs) -> dict[str, list[dict]]:
    """Return, per outlet, each recent run's tally of its requests and listings, newest run first."""
    since = iso(inputs.now - timedelta(hours=_LOOKBACK_HOURS))
    robots_read = ", ".join("?" for _ in _ROBOTS_READ)
    rows = inputs.conn.execute(f"""
        SELECT r.outlet_id AS outlet, r.run_id AS run, MIN(r.started_at) AS at,
               SUM(r.purpose = 'robots' AND r.result IN ({robots_read})) AS robots_read,
               SUM(r.purpose = 'robots' AND r.result NOT IN ({robots_read}) AND r.result != 'challenge') AS robots_bad,
               SUM(r.result = 'challenge') AS challenges,
               SUM(r.result = 'robots_unreachable') AS blocked,
               SUM(r.purpose IN ('listing', 'discovery')) AS tried,
               (SELECT COUNT(*) FROM listings AS l WHERE l.run_id = r.run_id AND l.outlet_id = r.outlet_id) AS listings
          FROM requests AS r WHERE r.outlet_id IS NOT NULL AND r.started_at >= ?
         GROUP BY r.outlet_id, r.run_id ORDER BY r.outlet_id, at DESC, r.run_id DESC""",
        (*_ROBOTS_READ, *_ROBOTS_READ, since)).fetchall()
    out: dict[str, list[dict]] = {}
    for row in rows:
        out.setdefault(row["outlet"], []).append(dict(row))
    return out


def in_a_row(runs: list[dict], counts, failed) -> int:
    """Return how many of the newest runs that count (counts(run)) failed (failed(run)), without a break."""
    streak = 0
    for run in runs:
        if not counts(run):
            continue
        if not failed(run):
            break
        streak += 1
    return streak


def _streak_check(check_id: str, thresholds: tuple, counts, failed, what: str):
    def run(inputs: Inputs) -> list[Finding]:
        tallies = run_rows(inputs)
        out = []
        for outlet in asked_outlets(inputs):
            streak = in_a_row(tallies.get(outlet, []), counts, failed)
            out.append(Finding(check_id, outlet, grade(streak, thresholds), streak, thresholds,
                               f"{streak} run(s) in a row {what}"))
        return out
    return run


def _unexplained(run: dict) -> bool:
    return not (run["challenges"] or run["blocked"] or (run["robots_bad"] and not run["robots_read"]))


no_source = _streak_check(
    "outlet-no-source", settings.HEALTH_NO_SOURCE_RUNS, lambda r: r["tried"],
    lambda r: r["listings"] == 0 and _unexplained(r), "with sources to read and no listing read from any")
robots = _streak_check(
    "outlet-robots", settings.HEALTH_ROBOTS_RUNS, lambda r: r["robots_read"] or r["robots_bad"],
    lambda r: r["robots_bad"] and not r["robots_read"], "whose robots.txt could not be read (5xx, timeout, no connection)")
challenge = _streak_check(
    "outlet-challenge", settings.HEALTH_CHALLENGE_RUNS, lambda r: True, lambda r: r["challenges"],
    "answered with a bot challenge")


def silent(inputs: Inputs) -> list[Finding]:
    """Return per outlet the hours since its last listing with entries (since it was added, if none)."""
    rows = inputs.conn.execute(
        "SELECT o.id, o.first_seen_at, (SELECT MAX(l.fetched_at) FROM listings AS l WHERE l.outlet_id = o.id "
        "AND (l.entry_count > 0 OR l.entries_of IS NOT NULL)) AS last FROM outlets AS o WHERE o.active = 1")
    known = {r[0]: (r[2], r[1]) for r in rows}
    out = []
    for outlet in asked_outlets(inputs):
        last, added = known[outlet]
        value = round(hours(inputs.now, parse_instant(last or added)), 1)
        said = f"last listing with entries {last}" if last else f"no listing with entries since it was added ({added})"
        out.append(Finding("outlet-silent", outlet, grade(value, settings.HEALTH_SILENT_HOURS), value,
                           settings.HEALTH_SILENT_HOURS, f"{value} h: {said}"))
    return out


def capture_rate(inputs: Inputs) -> list[Finding]:
    """Return per outlet its captures of the last 24 hours as a share of its usual day."""
    day = inputs.now - timedelta(hours=24)
    start = day - timedelta(days=settings.HEALTH_USUAL_DAYS)
    rows = inputs.conn.execute(
        "SELECT a.outlet_id AS outlet, SUM(s.captured_at >= ?) AS today, SUM(s.captured_at < ?) AS before, "
        "MIN(s.captured_at) AS first FROM snapshots AS s JOIN articles AS a ON a.id = s.article_id "
        "WHERE s.purpose = 'capture' AND s.captured_at >= ? AND s.captured_at <= ? GROUP BY a.outlet_id",
        (iso(day), iso(day), iso(start), iso(inputs.now))).fetchall()
    tally = {r["outlet"]: r for r in rows}
    out = []
    thresholds = settings.HEALTH_CAPTURE_SHARE
    for outlet in asked_outlets(inputs):
        row = tally.get(outlet)
        today = row["today"] if row else 0
        days = hours(day, parse_instant(row["first"])) / 24 if row and row["before"] else 0.0
        usual = row["before"] / days if days >= 1 else None
        if usual is None or usual < settings.HEALTH_USUAL_MIN:
            out.append(Finding("outlet-capture-rate", outlet, OK, today, thresholds,
                               f"{today} captures in 24 h; not judged (usual day unknown or under "
                               f"{settings.HEALTH_USUAL_MIN:g})"))
            continue
        share = round(today / usual, 2)
        out.append(Finding("outlet-capture-rate", outlet, grade(share, thresholds, lower_is_worse=True), share,
                           thresholds, f"{today} captures in 24 h against a usual {usual:.1f} a day", True))
    return out


def sources_lost(inputs: Inputs) -> list[Finding]:
    """Return per outlet the sources its last discovery validated that gave no listing lately."""
    since = iso(inputs.now - timedelta(hours=settings.HEALTH_SOURCE_LOST_HOURS))
    settled = iso(inputs.now - timedelta(hours=1))  # a source validated this hour has had no chance yet
    rows = inputs.conn.execute("""
        SELECT s.outlet_id AS outlet, s.url AS url, EXISTS (
                 SELECT 1 FROM listings AS l WHERE l.outlet_id = s.outlet_id AND l.url = s.url AND l.fetched_at >= ?
                    AND (l.entry_count > 0 OR l.entries_of IS NOT NULL)) AS listed
          FROM sources AS s
         WHERE s.run_id = (SELECT MAX(t.run_id) FROM sources AS t WHERE t.outlet_id = s.outlet_id)
           AND s.validated_at <= ?""", (since, settled)).fetchall()
    found: dict[str, list] = {}
    for row in rows:
        found.setdefault(row["outlet"], []).append(row)
    out = []
    for outlet in asked_outlets(inputs):
        sources = found.get(outlet, [])
        lost = [r["url"] for r in sources if not r["listed"]]
        # Every source lost is outlet-no-source's (or robots', or a challenge's) to say.
        state = WARN if lost and len(lost) < len(sources) else OK
        detail = (f"{len(lost)} of {len(sources)} source(s) validated at discovery gave no listing in "
                  f"{settings.HEALTH_SOURCE_LOST_HOURS:g} h" + (f": {', '.join(lost[:3])}" if lost else ""))
        out.append(Finding("outlet-sources-lost", outlet, state, len(lost), None, detail))
    return out


CHECKS = [
    Check("outlet-silent", "Hours since the outlet's last listing with entries", "outlet", silent),
    Check("outlet-no-source", "Runs in a row with no readable source", "outlet", no_source),
    Check("outlet-robots", "Runs in a row with robots.txt unreachable", "outlet", robots),
    Check("outlet-challenge", "Runs in a row answered with a challenge", "outlet", challenge),
    Check("outlet-capture-rate", "Captures in the last 24 hours against the usual day", "outlet", capture_rate),
    Check("outlet-sources-lost", "Sources validated at discovery that list nothing now", "outlet", sources_lost),
]
