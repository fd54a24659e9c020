"""The true coverage figures of one month of weeks, by group: internal, never published as such.

A *cell* is one group (or the all-outlets total) in one period (a week or its
month). Its figures are sums over the group's members of the per-outlet
values in cells.py; the group's members are fixed for the whole month (see
membership()). Definitions, per cell:

outlets monitored: the members; outlets contributing: members with an article
first captured in the period; sources readable: members whose latest discovery
round by the period's end validated a source; articles listed: distinct
addresses in listings fetched in the period (a month counts an address once);
articles queued: capture-queue rows queued in it; articles captured: articles
whose first capture falls in it; articles archived: those of them with a
successful, timestamped Internet Archive submission recorded by the week's
cut-off; requests: requests for the members (archive submissions have none),
by result for months; median delay: minutes from an article's first listing
to its first capture (the record's capture_delays view), over the period's
captures, with how many of them each member made (a median is a figure
about its outlets too: release.py publishes it only under the count rule).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from collector.publish.cells import ADDITIVE, Block
from collector.record.store import Store

TOTAL_ID = "all-outlets"
UNGROUPED_ID = "ungrouped"
TOTAL_NAMES = ("All outlets", "সব সংবাদমাধ্যম")
# The group of outlets the registry puts in none, as the site names it.
UNGROUPED_NAMES = {"name": "Other outlets", "name_bn": "অন্যান্য সংবাদমাধ্যম"}
# The counts of a cell, in the order they are shown.
COUNTS = ("outlets_contributing", "sources_readable", "articles_listed", "articles_queued",
          "articles_captured", "articles_archived", "requests")
# Counts of outlets (0 or 1 per member) rather than of articles or requests.
OUTLET_COUNTS = ("outlets_contributing", "sources_readable")
# Figures computed from counts: (measure, numerator, denominator).
RATES = (("capture_rate", "articles_captured", "articles_queued"),
         ("archive_rate", "articles_archived", "articles_captured"))
MEDIAN = "median_delay_minutes"


@dataclass
class Cell:
    """One group in one period: its true counts, each member's share of them, and its capture delays."""

    group: str
    period: str
    members: tuple[str, ...]
    counts: dict[str, int] = field(default_factory=dict)
    per_outlet: dict[str, dict[str, int]] = field(default_factory=dict)  # measure -> {outlet: value}
    delays: list[float] = field(default_factory=list)
    delay_counts: dict[str, int] = field(default_factory=dict)  # outlet -> how many of the delays are its


def membership(store: Store) -> list[dict]:
    """Return the groups as the registry has them now: id, names and active member outlets (id, names).

    Outlets without a group form 'ungrouped'. This is what a month's membership
    is fixed to when its first week is published.
    """
    groups = {r["id"]: {"id": r["id"], "name": r["name"], "name_bn": r["name_bn"], "outlets": []}
              for r in store.query("SELECT id, name, name_bn FROM outlet_groups ORDER BY id")}
    for row in store.query("SELECT id, name, name_bn, group_id FROM outlets WHERE active = 1 ORDER BY id"):
        if row["group_id"] not in groups:
            groups.setdefault(UNGROUPED_ID, {"id": UNGROUPED_ID, **UNGROUPED_NAMES, "outlets": []})
        group = groups[row["group_id"] if row["group_id"] in groups else UNGROUPED_ID]
        group["outlets"].append({"id": row["id"], "name": row["name"], "name_bn": row["name_bn"]})
    return [g for g in groups.values() if g["outlets"]]


def cells_of(block: Block, groups: list[dict], periods) -> dict[tuple[str, str], Cell]:
    """Return the true cells of the given periods of the block, for every group and the total."""
    members = {g["id"]: tuple(o["id"] for o in g["outlets"]) for g in groups}
    members[TOTAL_ID] = tuple(sorted(o for ids in members.values() for o in ids))
    out = {}
    for period in periods:
        for group, ids in members.items():
            out[(group, period.id)] = _cell(block, group, period, ids)
    return out


def _cell(block: Block, group: str, period, ids: tuple[str, ...]) -> Cell:
    """Return one cell's counts and per-outlet values."""
    cell = Cell(group, period.id, ids)
    measures = list(COUNTS) + ([f"requests:{r}" for r in block.results] if period.kind == "month" else [])
    for measure in measures:
        per = {}
        for outlet in ids:
            if period.kind == "month" and measure in ADDITIVE:
                value = sum(block.value(outlet, w, measure) for w in period.weeks)
            else:
                value = block.value(outlet, period.id, measure)
            if value:
                per[outlet] = value
        cell.per_outlet[measure] = per
        cell.counts[measure] = sum(per.values())
    for outlet in ids:
        mine = [d for w in period.weeks for d in block.delays.get((outlet, w), ())]
        if mine:
            cell.delay_counts[outlet] = len(mine)
            cell.delays += mine
    cell.delays.sort()
    return cell


def ratio(top: int, bottom: int) -> float | None:
    """Return top / bottom rounded for publication, or None without a denominator."""
    return round(top / bottom, 4) if bottom else None


def median_minutes(delays: list[float]) -> float | None:
    """Return the median of capture delays in whole minutes, or None without any."""
    return float(round(statistics.median(delays))) if delays else None

