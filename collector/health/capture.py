"""Capture checks: entries first listed already older than the capture window, and the listing lag.

An entry's first listing is the earliest listing naming its address key among
the listings this database holds (a pruned database keeps two days of them:
an address seen before is recognised by its article's first sighting).
"""

from __future__ import annotations

import statistics
from datetime import timedelta

from collector import settings
from collector.clock import iso, parse_instant
from collector.health.checks import Check, Finding, Inputs, grade, hours


def first_listings(inputs: Inputs) -> list[dict]:
    """Return the entries first listed in the last 24 hours: key, outlet, first listing time, stated date."""
    since = iso(inputs.now - timedelta(hours=24))
    rows = inputs.conn.execute("""
        WITH firsts AS (
            SELECT v.url_key AS url_key, MIN(l.fetched_at) AS first_at, MIN(v.published_utc) AS published,
                   MIN(l.outlet_id) AS outlet
              FROM listing_entry_values AS v JOIN listing_items AS i ON i.value_id = v.id
              JOIN listings AS l ON l.id = i.listing_id
             GROUP BY v.url_key)
        SELECT f.url_key, f.first_at, f.published, f.outlet,
               (SELECT MIN(l.fetched_at) FROM listings AS l WHERE l.outlet_id = f.outlet) AS outlet_first
          FROM firsts AS f
         WHERE f.first_at >= ? AND f.first_at <= ?
           AND NOT EXISTS (SELECT 1 FROM articles AS a WHERE a.url_key = f.url_key AND a.first_seen_at < ?)""",
        (since, iso(inputs.now), since)).fetchall()
    out = []
    for row in rows:
        first = parse_instant(row["first_at"])
        backlog = hours(first, parse_instant(row["outlet_first"])) < 1  # the outlet's first listings
        out.append({"outlet": row["outlet"], "first": first, "backlog": backlog,
                    "published": parse_instant(row["published"]) if row["published"] else None})
    return out


def missed(inputs: Inputs) -> list[Finding]:
    """Return the entries first listed when already older than the capture window: missed for good."""
    window = settings.CAPTURE_WINDOW_HOURS
    late = [e for e in first_listings(inputs)
            if not e["backlog"] and e["published"] and hours(e["first"], e["published"]) > window]
    outlets: dict[str, int] = {}
    for entry in late:
        outlets[entry["outlet"]] = outlets.get(entry["outlet"], 0) + 1
    named = ", ".join(f"{o} {n}" for o, n in sorted(outlets.items(), key=lambda x: -x[1])[:5])
    return [Finding("capture-missed", None, grade(len(late), settings.HEALTH_MISSED_ENTRIES), len(late),
                    settings.HEALTH_MISSED_ENTRIES,
                    f"{len(late)} entries first listed in 24 h were already older than {window} h"
                    + (f" ({named})" if named else ""))]


def lag(inputs: Inputs) -> list[Finding]:
    """Return the median hours between an entry's stated date and its first listing, last 24 hours."""
    lags = [hours(e["first"], e["published"]) for e in first_listings(inputs)
            if not e["backlog"] and e["published"] and e["published"] <= e["first"]]
    value = round(statistics.median(lags), 2) if lags else None
    detail = (f"median {value} h over {len(lags)} entries first listed in 24 h" if lags
              else "no dated entry first listed in 24 h")
    return [Finding("capture-lag", None, grade(value, settings.HEALTH_LISTING_LAG_HOURS), value,
                    settings.HEALTH_LISTING_LAG_HOURS, detail)]


CHECKS = [
    Check("capture-missed", "Entries first listed after the capture window (missed for good)", "capture", missed),
    Check("capture-lag", "Median lag between an entry's stated date and its first listing", "capture", lag),
]
