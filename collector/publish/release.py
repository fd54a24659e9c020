"""Publishing newly closed periods: decide, audit the whole history with them, append or refuse.

`release` finds every period that has closed since the history was last
appended to (periods.py), decides it (disclosure.py) against the outsider's
model of its month including everything already published about that month,
then audits the whole published history as it would stand (audit.py). Only
if that audit passes are the new lines appended; otherwise nothing is, and
the release says why. A period is decided once: later builds read its line.

A month's members are fixed when its first week is published: an outlet
moved in the registry counts in its new group from the next month none of
whose weeks is yet published, and nothing already published is recomputed.
A month's counts that add up over time are the sums of its weeks' counts as
they were when each week was published.

A median capture delay is published only where every cell it is computed
from is, with its median (a month's weeks, the total's groups), and only
when its delays come from at least MIN_OUTLETS_PER_FIGURE outlets none of
which made more than DOMINANCE_SHARE of them: the count rule, applied to the
delays themselves (a group's captures can come from three outlets while the
delays, which need a listing before the capture, come from two). No
published figure is a sum of medians, so the outsider's integer program
(audit.py) has nothing to subtract them from; see
tests/publish/test_disclosure.py.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from collector import settings
from collector.clock import iso, parse_instant
from collector.errors import BadUsage
from collector.publish import audit, tallies
from collector.publish.cells import ADDITIVE, first_event, read_block
from collector.publish.disclosure import Decision, Protector, disclosive, primary
from collector.publish.figures import (COUNTS, MEDIAN, RATES, TOTAL_ID, cells_of, median_minutes,
                                       membership, ratio)
from collector.publish.periods import closed_periods, from_julian_day, month
from collector.record import shadows
from collector.record.store import Store

WITHHELD = {"withheld": True}


@dataclass
class Release:
    """What one release did: the periods it published (or would have) and the audit's verdict."""

    periods: list[str] = field(default_factory=list)
    published: list[dict] = field(default_factory=list)
    decisions: list[dict] = field(default_factory=list)
    audit: audit.AuditResult | None = None
    appended: bool = False

    def summary(self) -> str:
        """Return what happened in words safe for a public job summary."""
        verdict = self.audit.summary() if self.audit else "no audit ran"
        if not self.periods:
            return f"No period has closed since the last release; nothing new to publish. {verdict}."
        if not self.appended:
            return f"Nothing new was published: {verdict}. Periods held back: {', '.join(self.periods)}."
        withheld = sum(1 for line in self.published for g in line["figures"].values()
                       if g.get("articles_captured") == WITHHELD)
        return (f"Published {', '.join(self.periods)} ({withheld} group figures withheld). {verdict}.")


def release(store: Store, now: datetime, history, write: bool = True) -> Release:
    """Decide every newly closed period, audit the whole history with them, and append them if it passes.

    Raises BadUsage, before deciding anything, when the database was pruned
    without the rows the release computes figures from (refuse_pruned).
    """
    refuse_pruned(store, history)
    tallies.update(store.conn)  # once: every month below reads them as they now are
    start = first_event(store)
    known = set(history.periods())
    due = [p for p in closed_periods(None if start is None else from_julian_day(start), now)
           if p.id not in known]
    out = Release(periods=[p.id for p in due])
    by_month: dict[str, list] = defaultdict(list)
    for period in due:
        by_month[period.month].append(period)
    since = None if start is None else from_julian_day(start)
    for month, periods in by_month.items():
        published, decisions = decide_month(store, now, history.of_month(month), month, periods, since)
        out.published += published
        out.decisions += decisions
    pairs = list(zip(history.published.lines, history.decisions.lines)) + list(zip(out.published, out.decisions))
    out.audit = audit.audit_pairs(pairs)
    if out.audit.passed and due and write:
        history.append(out.published, out.decisions)
        out.appended = True
    return out


def unpublished_from(store: Store, history) -> datetime | None:
    """Return the start of the first month a later release still reads (None: the whole record).

    That is the month of the first period not yet in the published history:
    `export prune --for-figures` keeps the running aggregates of its weeks on
    (collector/collect/prune.py, collector/publish/tallies.py).
    """
    start = first_event(store)
    if start is None:
        return None
    since = from_julian_day(start)
    known = set(history.periods())
    later = since
    while True:  # the published history is in period order: the first period missing from it
        for period in closed_periods(since, later):
            if period.id not in known:
                return month(period.month, since).start
        later += timedelta(days=40)


def refuse_pruned(store: Store, history) -> None:
    """Raise BadUsage when the database was pruned without rows a release from `history` reads.

    `export prune` keeps every row a release reads only from its
    figures_from instant on (collector/collect/prune.py): with --for-figures,
    from the first month not yet in the published history, else from the
    recent ledger's start. Figures computed from such a database would be
    silently wrong (and their disclosure search can run for minutes).
    """
    if shadows.figures_as_aggregates(store.conn) and not tallies.present(store.conn):
        raise BadUsage(f"this database was pruned (at {shadows.pruned_at(store.conn)}) keeping the figures as "
                       "running aggregates, and they are missing from it (its fold_tally_ tables were dropped): "
                       "its rows alone would give wrong figures. Publish from the full database `export rebuild` "
                       "makes (pruned with `export prune --for-figures` if it must be small)")
    kept = shadows.figures_from(store.conn)
    if not kept:  # never pruned (None), or pruned keeping every row ("")
        return
    needed = unpublished_from(store, history)
    if needed is not None and parse_instant(kept) <= needed:
        return
    reads = "the whole record" if needed is None else f"rows from {iso(needed)} on"
    raise BadUsage(f"this database was pruned (at {shadows.pruned_at(store.conn)}) keeping only the rows "
                   f"from {kept} on, and a release from this published history reads {reads}: its figures "
                   "would be wrong. Publish from a database that holds them: one pruned with "
                   "`export prune --for-figures` and this published history, "
                   "or the full database `export rebuild` makes")


def decide_month(store: Store, now: datetime, old: list[tuple[dict, dict]], month: str, periods, since=None):
    """Return the published and decision lines of a month's new periods."""
    if old:
        names = {g["id"]: g for g in old[0][0]["groups"]}
        groups = [dict(names[gid], outlets=[dict(o, id=i) for o, i in zip(names[gid]["outlets"], ids)])
                  for gid, ids in old[0][1]["members"].items()]
    else:
        groups = membership(store)
    block = read_block(store, month, since, update=False)
    cells = cells_of(block, groups, periods)
    weekly = {(g, line["period"]): counts for line, decision in old if line["kind"] == "week"
              for g, counts in decision["counts"].items()}
    weekly.update({key: cell.counts for key, cell in cells.items()})
    for period in (p for p in periods if p.kind == "month"):
        for (group, pid), cell in cells.items():
            if pid == period.id:
                for measure in ADDITIVE:
                    cell.counts[measure] = sum(weekly[(group, w)][measure] for w in period.weeks)
                cell.counts["sources_readable"] = weekly[(group, period.weeks[-1])]["sources_readable"]
    decision = Decision()
    primary(cells, decision)
    ids = {g["id"]: tuple(o["id"] for o in g["outlets"]) for g in groups}
    ids[TOTAL_ID] = tuple(sorted(o for members in ids.values() for o in members))
    weeks = [line["period"] for line, _ in old if line["kind"] == "week"] + \
            [p.id for p in periods if p.kind == "week"]
    month_in = month if any(p.kind == "month" for p in periods) else None
    model = audit.model_of([line for line, _ in old], ids, weeks, month_in, block.results)
    ranges = {(g, line["period"], m): (lo, hi) for line, decision_line in old
              for g, m, lo, hi in decision_line["ranges"]}
    ranges.update(decision.ranges)
    figures = {(g, p.id, m): cells[(g, p.id)].counts[m] for p in periods for g in ids
               for m in model.measures(p.id)}
    units = {(g, p.id, kind) for p in periods for g in ids
             for kind in (("main", "results") if p.kind == "month" else ("main",))}
    decision.withheld &= units
    starts = {line["period"]: line["start"] for line, _ in old} | {p.id: iso(p.start) for p in periods}
    Protector(model, figures, units, ranges, {g: len(m) for g, m in ids.items()}, starts).protect(decision)
    published_weeks = {(g, line["period"]) for line, _ in old for g, f in line["figures"].items()
                       if f.get("articles_captured") != WITHHELD}
    published_weeks |= {(g, p.id) for p in periods for g in ids if (g, p.id, "main") not in decision.withheld}
    medians = {(g, line["period"]) for line, _ in old for g, f in line["figures"].items() if f.get(MEDIAN) != WITHHELD}
    by_id = {p.id: _published_line(p, groups, cells, decision, block.results, published_weeks, medians, now)
             for p in sorted(periods, key=lambda p: p.kind == "month")}  # a month's weeks first: their medians
    lines = [by_id[p.id] for p in periods]
    private = [_decision_line(p, ids, cells, decision) for p in periods]
    return lines, private


def _published_line(period, groups, cells, decision: Decision, results, published, medians: set, now) -> dict:
    """Return the published line of one period: members by name, figures or the withheld marker.

    medians: the (group, period) whose median is shown, added to as this period's are decided.
    """
    figures = {}
    for group in [g["id"] for g in groups] + [TOTAL_ID]:
        cell = cells[(group, period.id)]
        main = (group, period.id, "main") not in decision.withheld
        shown = {"outlets_monitored": len(cell.members)}
        for measure in COUNTS:
            shown[measure] = cell.counts[measure] if main else WITHHELD
        for measure, top, bottom in RATES:
            shown[measure] = ratio(cell.counts[top], cell.counts[bottom]) if main else WITHHELD
        parts = [(g["id"], period.id) for g in groups] if group == TOTAL_ID else [(group, period.id)]
        parts = [(g, w) for g, _ in parts for w in period.weeks] + parts
        whole = main and all(part in published for part in parts)
        whole = whole and all(part in medians for part in parts if part != (group, period.id))
        shown[MEDIAN] = median_minutes(cell.delays) if whole and not disclosive(cell.delay_counts) else WITHHELD
        if shown[MEDIAN] != WITHHELD:
            medians.add((group, period.id))
        if period.kind == "month":
            open_results = main and (group, period.id, "results") not in decision.withheld
            for result in results:
                count = cell.counts[f"requests:{result}"]
                shown[f"requests:{result}"] = count if open_results else WITHHELD
                shown[f"share:{result}"] = ratio(count, cell.counts["requests"]) if open_results else WITHHELD
        figures[group] = shown
    return {
        "period": period.id, "kind": period.kind, "month": period.month, "weeks": list(period.weeks),
        "start": iso(period.start), "end": iso(period.end), "published_at": iso(now),
        "software_version": settings.__version__,
        "rules": {"min_outlets_per_figure": settings.MIN_OUTLETS_PER_FIGURE,
                  "dominance_share": settings.DOMINANCE_SHARE, "protect_share": settings.PROTECT_SHARE,
                  "protect_min_count": settings.PROTECT_MIN_COUNT,
                  "publish_after_hours": settings.PUBLISH_AFTER_HOURS},
        "groups": [{"id": g["id"], "name": g["name"], "name_bn": g["name_bn"],
                    "outlets": [{"name": o["name"], "name_bn": o["name_bn"]} for o in g["outlets"]]}
                   for g in groups],
        "results": list(results) if period.kind == "month" else [],
        "figures": figures,
    }


def _decision_line(period, ids: dict, cells, decision: Decision) -> dict:
    """Return the private line of one period: members by id, true counts, ranges and what is withheld."""
    return {
        "period": period.id,
        "members": {g: list(m) for g, m in ids.items() if g != TOTAL_ID},
        "counts": {g: cells[(g, period.id)].counts for g in ids},
        "ranges": sorted([g, m, lo, hi] for (g, p, m), (lo, hi) in decision.ranges.items() if p == period.id),
        "withheld": sorted([g, kind] for g, p, kind in decision.withheld if p == period.id),
    }
