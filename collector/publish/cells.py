"""Per-outlet, per-cell values read from the record: the atoms every figure sums.

An atom is (outlet id, cell, category). For counts that add up over time the
cell is the index of a time cell (see periods.py) and a period's count is the
sum of its cells. Counts of distinct things (outlets, addresses) do not add up
over time, so they are read once per period and their cell is "P:<period id>".
The category is the request result for request counts and "" otherwise.
Only non-zero atoms are kept.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from collector.publish.periods import (
    Timeline, build_timeline, cell_case_sql, from_julian_day, julian_day, period_cell,
)
from collector.record.store import Store

TOTAL_ID = "all-outlets"
UNGROUPED_ID = "ungrouped"
# The group of outlets the registry puts in none, as the site names it.
UNGROUPED_NAMES = {"name": "Other outlets", "name_bn": "অন্যান্য সংবাদমাধ্যম"}

# Families of figures that add up over time (sums over time cells).
TIME_ADDITIVE = ("articles_queued", "articles_captured", "articles_archived", "requests")
# Families counted once per period (distinct outlets or addresses).
PER_PERIOD = ("outlets_contributing", "sources_readable", "articles_listed")

Atom = tuple[str, object, str]
# A LIMIT keeps SQLite from flattening the inner query into the outer one, which
# would re-evaluate julianday() at every comparison of the cell CASE.
NO_FLATTEN = " LIMIT -1"


@dataclass
class Record:
    """What the stats layer needs from the database, already cut into cells."""

    timeline: Timeline
    groups: list[dict]  # id, name, name_bn, members (every outlet), active (monitored)
    atoms: dict[str, dict[Atom, int]] = field(default_factory=dict)
    delays: dict[tuple[str, int], list[float]] = field(default_factory=dict)
    results: list[str] = field(default_factory=list)


def read_record(store: Store, now) -> Record:
    """Return the groups, timeline and atom values of the record as of now."""
    timeline = build_timeline(_first_event(store, now), now)
    record = Record(timeline, _groups(store))
    case = cell_case_sql(timeline, "j")
    record.atoms["articles_queued"] = _count_atoms(store, case, """
        SELECT outlet_id, julianday(queued_at) AS j FROM capture_queue""")
    captured, archived, record.delays = _article_atoms(store, case, julian_day(now))
    record.atoms["articles_captured"], record.atoms["articles_archived"] = captured, archived
    record.atoms["requests"] = _request_atoms(store, case)
    record.results = sorted({atom[2] for atom in record.atoms["requests"]})
    record.atoms["outlets_contributing"] = _contributing_atoms(store, case, timeline)
    record.atoms["articles_listed"] = _listed_atoms(store, case, timeline)
    record.atoms["sources_readable"] = _readable_atoms(store, timeline)
    return record


def _first_event(store: Store, now):
    """Return the instant of the earliest observation the figures count, or None."""
    row = store.one("""
        SELECT MIN(j) FROM (
            SELECT MIN(julianday(fetched_at)) AS j FROM listings
            UNION ALL SELECT MIN(julianday(captured_at)) FROM snapshots
            UNION ALL SELECT MIN(julianday(queued_at)) FROM capture_queue
            UNION ALL SELECT MIN(julianday(started_at)) FROM requests WHERE outlet_id IS NOT NULL
            UNION ALL SELECT MIN(julianday(probed_at)) FROM source_probes)""")
    if row is None or row[0] is None or row[0] > julian_day(now):
        return None
    return from_julian_day(row[0])


def _groups(store: Store) -> list[dict]:
    """Return every group with its member outlets; outlets without one form 'ungrouped'."""
    groups = {r["id"]: {"id": r["id"], "name": r["name"], "name_bn": r["name_bn"],
                        "members": [], "active": []}
              for r in store.query("SELECT id, name, name_bn FROM outlet_groups ORDER BY name, id")}
    for row in store.query("SELECT id, group_id, active FROM outlets ORDER BY id"):
        if row["group_id"] not in groups:
            groups.setdefault(UNGROUPED_ID, {"id": UNGROUPED_ID, **UNGROUPED_NAMES, "members": [], "active": []})
        group = groups[row["group_id"] if row["group_id"] in groups else UNGROUPED_ID]
        group["members"].append(row["id"])
        if row["active"]:
            group["active"].append(row["id"])
    return list(groups.values())


def _count_atoms(store: Store, case: str, inner: str) -> dict[Atom, int]:
    """Return row counts per (outlet, cell) of an inner query giving outlet_id and j."""
    rows = store.query(f"SELECT outlet_id, {case} AS cell, COUNT(*) FROM ({inner}{NO_FLATTEN}) GROUP BY 1, 2")
    return {(r[0], r[1], ""): r[2] for r in rows if r[1] is not None and r[0] is not None}


def _article_atoms(store: Store, case: str, now_jd: float):
    """Return captured and archived atoms, and listing-to-capture delays per (outlet, cell).

    An article counts in the cell of its first capture, so the count adds up
    over time even if an article was ever captured twice.
    """
    rows = store.query(f"""
        SELECT outlet_id, {case} AS cell, archived, (j - jl) * 24.0 AS delay FROM (
            SELECT a.outlet_id AS outlet_id, MIN(julianday(s.captured_at)) AS j,
                EXISTS(SELECT 1 FROM archive_submissions x JOIN snapshots s2 ON s2.id = x.snapshot_id
                       WHERE s2.article_id = a.id AND x.status = 'success'
                         AND x.timestamp IS NOT NULL AND julianday(x.recorded_at) <= ?) AS archived,
                (SELECT MIN(julianday(l.fetched_at)) FROM listing_entries e
                   JOIN listings l ON l.id = e.listing_id
                  WHERE e.url_key IN (SELECT a.url_key UNION
                                      SELECT u.url_key FROM article_urls u WHERE u.article_id = a.id)
                ) AS jl
            FROM articles a JOIN snapshots s ON s.article_id = a.id AND s.purpose = 'capture'
            GROUP BY a.id{NO_FLATTEN})""", (now_jd,))
    captured: Counter = Counter()
    archived: Counter = Counter()
    delays: dict[tuple[str, int], list[float]] = defaultdict(list)
    for outlet, cell, was_archived, delay in rows:
        if cell is None:
            continue
        captured[(outlet, cell, "")] += 1
        if was_archived:
            archived[(outlet, cell, "")] += 1
        # A capture can precede its first listing only through a canonical join; no delay then.
        if delay is not None and delay >= 0:
            delays[(outlet, cell)].append(delay)
    return dict(captured), dict(archived), dict(delays)


def _request_atoms(store: Store, case: str) -> dict[Atom, int]:
    """Return request counts per (outlet, cell, result); archive requests have no outlet."""
    rows = store.query(f"""
        SELECT outlet_id, {case} AS cell, result, COUNT(*) FROM (
            SELECT outlet_id, result, julianday(started_at) AS j FROM requests
             WHERE outlet_id IS NOT NULL AND purpose != 'archive'{NO_FLATTEN})
        GROUP BY 1, 2, 3""")
    return {(r[0], r[1], r[2]): r[3] for r in rows if r[1] is not None}


def _contributing_atoms(store: Store, case: str, timeline: Timeline) -> dict[Atom, int]:
    """Return 1 per (outlet, period) where the outlet has a capture snapshot in it."""
    rows = store.query(f"""
        SELECT DISTINCT outlet_id, {case} AS cell FROM (
            SELECT a.outlet_id, julianday(s.captured_at) AS j FROM snapshots s
              JOIN articles a ON a.id = s.article_id WHERE s.purpose = 'capture'{NO_FLATTEN})""")
    owners = timeline.periods_of_cell()
    atoms: dict[Atom, int] = {}
    for outlet, cell in rows:
        if cell is not None:
            for period_id in owners[cell]:
                atoms[(outlet, period_cell(period_id), "")] = 1
    return atoms


def _listed_atoms(store: Store, case: str, timeline: Timeline) -> dict[Atom, int]:
    """Return per (outlet, period) the number of distinct addresses listed in the period."""
    rows = store.query(f"""
        SELECT outlet_id, url_key, {case} AS cell FROM (
            SELECT l.outlet_id AS outlet_id, e.url_key AS url_key, julianday(l.fetched_at) AS j
              FROM listing_entries e JOIN listings l ON l.id = e.listing_id{NO_FLATTEN})
        GROUP BY 1, 2, 3 ORDER BY 1, 2""")
    owners = timeline.periods_of_cell()
    counts: Counter = Counter()
    # Streamed by (outlet, address) so memory stays small on a long record.
    for (outlet, _key), group in itertools.groupby(rows, key=lambda r: (r[0], r[1])):
        periods = {p for row in group if row[2] is not None for p in owners[row[2]]}
        for period_id in periods:
            counts[(outlet, period_cell(period_id), "")] += 1
    return dict(counts)


def _readable_atoms(store: Store, timeline: Timeline) -> dict[Atom, int]:
    """Return 1 per (outlet, period) whose latest discovery round by the period's end validated a source."""
    rounds: dict[str, dict[int, list]] = defaultdict(dict)
    for outlet, run, j in store.query(
            "SELECT outlet_id, run_id, MIN(julianday(probed_at)) FROM source_probes GROUP BY 1, 2"):
        rounds[outlet][run] = [j, None]
    for outlet, run, j in store.query(
            "SELECT outlet_id, run_id, MIN(julianday(validated_at)) FROM sources GROUP BY 1, 2"):
        entry = rounds[outlet].setdefault(run, [j, None])
        entry[0], entry[1] = min(entry[0], j), j
    atoms: dict[Atom, int] = {}
    for period in timeline.periods:
        end = julian_day(period.end)
        for outlet, by_run in rounds.items():
            done = [(j, run, valid) for run, (j, valid) in by_run.items() if j <= end]
            if done:
                _, _, valid = max(done)
                if valid is not None and valid <= end:
                    atoms[(outlet, period_cell(period.id), "")] = 1
    return atoms
