"""Disclosure control of newly closed periods: which cells are withheld, and why (internal).

A *unit* is what is published or withheld as a whole: every count of one
group in one period (`main`), or a month's requests by result for one group
(`results`, withheld whenever the group's main unit is). Rules:

* Group rule. A unit of a group, or of the all-outlets total, with fewer than
  settings.MIN_OUTLETS_PER_FIGURE outlets contributing is withheld.
* Count rule. A unit is withheld when one of its counts of articles or
  requests comes from fewer than that many outlets, or one outlet makes more
  than settings.DOMINANCE_SHARE of it (the (1, k%) dominance rule).
* Protection ranges. Every count that made a unit withheld must stay
  uncertain to an outsider: the interval the published history allows it
  (outsider.py) must reach from 0 to min(MIN_OUTLETS_PER_FIGURE, members)
  for the count of contributing outlets under the group rule, and at least
  max(PROTECT_MIN_COUNT, PROTECT_SHARE x value) below and above the value for
  a count of articles or requests (below, down to 0 at most). A cell with no
  member outlet (every outlet inactive) is withheld but needs no range: its
  counts are about no outlet, and an outsider knows they are 0.
* Secondary suppression. While some protected count's interval is too
  narrow, another unit of the new periods is withheld: the cheapest, in an
  order fixed by the registry alone (the same group in the other new period
  first, then other groups from the fewest members up, by id, the total last),
  that makes the range hold (a group's month before its weeks); if none does
  alone, the one that narrows the shortfall most; then, the same way, a pair of
  one unit of the same period and one of the same group (a count given away
  both across groups and across its month), then the three other corners of a
  rectangle of groups and periods (the hypercube method's pattern); then a
  group's units in every new period at once; if none helps, every unit of the
  new periods. Units a
  later choice made unnecessary are published again, largest groups first. Values never
  order the candidates, so a tie cannot be broken one way in one build and
  another way in the next; and a period is decided once, when it is
  published, and never again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from collector import settings
from collector.publish.figures import OUTLET_COUNTS, TOTAL_ID, Cell
from collector.publish.outsider import BlockModel


@dataclass
class Decision:
    """What is withheld among the new periods' units, and the ranges every protected count needs."""

    withheld: set = field(default_factory=set)  # units (group, period, kind)
    primary: set = field(default_factory=set)
    ranges: dict = field(default_factory=dict)  # (group, period, measure) -> (lo, hi)
    steps: int = 0


def unit_of(key: tuple) -> tuple:
    """Return the unit a figure (group, period, measure) is published or withheld with."""
    group, period, measure = key
    return (group, period, "results" if measure.startswith("requests:") else "main")


def needed(value: int, outlet_count: bool, members: int) -> tuple[int, int]:
    """Return the interval a protected count's derivable interval must cover."""
    if outlet_count:
        return 0, min(settings.MIN_OUTLETS_PER_FIGURE, members)
    margin = max(settings.PROTECT_MIN_COUNT, math.ceil(settings.PROTECT_SHARE * value))
    return max(0, value - margin), value + margin


def disclosive(per_outlet: dict) -> bool:
    """Return True when a count comes from fewer than the minimum of outlets or one dominates it."""
    total = sum(per_outlet.values())
    if total == 0:
        return False
    contributors = [v for v in per_outlet.values() if v]
    return (len(contributors) < settings.MIN_OUTLETS_PER_FIGURE
            or max(contributors) > settings.DOMINANCE_SHARE * total)


def primary(cells: dict[tuple[str, str], Cell], decision: Decision) -> None:
    """Withhold the units the group and count rules catch, and record their protection ranges."""
    for (group, period), cell in sorted(cells.items()):
        members = len(cell.members)
        if cell.counts["outlets_contributing"] < settings.MIN_OUTLETS_PER_FIGURE:
            for kind in ("main", "results"):
                decision.primary.add((group, period, kind))
            if cell.counts["outlets_contributing"] == 0 and (members >= settings.MIN_OUTLETS_PER_FIGURE or not members):
                continue  # a zero of three or more outlets says only that none of them had any; of none, nothing
            for measure, value in cell.counts.items():
                if measure != "sources_readable":
                    decision.ranges[(group, period, measure)] = needed(
                        value, measure in OUTLET_COUNTS, members)
            continue
        for measure, value in cell.counts.items():
            if measure in OUTLET_COUNTS or not disclosive(cell.per_outlet[measure]):
                continue
            decision.primary.add(unit_of((group, period, measure)))
            decision.ranges[(group, period, measure)] = needed(value, False, members)
    decision.withheld |= decision.primary
    # A group's results go with its counts.
    decision.withheld |= {(g, p, "results") for g, p, kind in decision.withheld if kind == "main"}


class Protector:
    """Chooses secondary suppressions for the new periods of one month, against the outsider's model."""

    def __init__(self, model: BlockModel, figures: dict[tuple, int], new_units: set,
                 ranges: dict, members: dict[str, int], starts: dict[str, str]):
        self.model, self.figures, self.ranges = model, figures, ranges
        self.new_units, self.members, self.starts = set(new_units), members, starts

    def apply(self, withheld: set) -> None:
        """Fix every figure of the new periods in the model: its value, or free when withheld."""
        for key, value in self.figures.items():
            self.model.fix(key, None if unit_of(key) in withheld else value)

    def protect(self, decision: Decision) -> None:
        """Add secondary suppressions to decision until every protected count meets its range."""
        self.apply(decision.withheld)
        while True:
            failing = self.first_failing()
            if failing is None:
                break
            decision.steps += 1
            chosen = self._choose(failing, decision.withheld)
            decision.withheld |= chosen
            self.apply(decision.withheld)
        self._release_unneeded(decision)

    def _release_unneeded(self, decision: Decision) -> None:
        """Publish again each secondary unit that a later choice made unnecessary, largest groups first."""
        secondary = {u for u in decision.withheld - decision.primary if u[2] == "main" or
                     (u[0], u[1], "main") not in decision.withheld}
        for unit in sorted(secondary, key=lambda u: (-self.members.get(u[0], 0), u[0], self.starts[u[1]], u[2])):
            group, period, kind = unit
            freed = {unit} | ({(group, period, "results")} if kind == "main" else set())
            freed -= decision.primary
            if unit not in freed:
                continue
            trial = decision.withheld - freed
            self.apply(trial)
            if self.first_failing() is None:
                decision.withheld = trial
        self.apply(decision.withheld)

    def first_failing(self):
        """Return the first protected count whose interval is too narrow, or None.

        Earlier periods first, a month after its weeks, as they are published;
        the count that failed last time is tried first, as it is the likeliest to fail again.
        """
        order = sorted(self.ranges, key=lambda k: (self.starts[k[1]], "-W" not in k[1], k))
        last = getattr(self, "_last_failing", None)
        if last in self.ranges and self.shortfall(last) > 0:
            return last
        for key in order:
            if key != last and self.shortfall(key) > 0:
                self._last_failing = key
                return key
        return None

    def shortfall(self, key: tuple) -> float:
        """Return by how much a protected count's interval misses its range (0 when it is met)."""
        lo, hi = self.ranges[key]
        got = self.model.interval(key, (lo, hi))
        if not got.proved:
            return math.inf
        return max(0, got.lo - lo) + (0 if got.hi is None else max(0, hi - got.hi))

    def _choose(self, failing: tuple, withheld: set) -> set:
        """Return the units to withhold next for the failing count."""
        before = self.shortfall(failing)
        candidates = self.candidates(failing, withheld)
        # A count can be given away twice, across groups and across its month: one unit of the
        # same period and one of the same group may be needed together.
        across = [u for u in candidates if u[1] == failing[1]]
        along = [u for u in candidates if u[0] == failing[0] and u[1] != failing[1]]
        # ...or, as the hypercube method of tau-argus does, the corners of a rectangle: another group in
        # the same period, the same group in another period, and that group in that period.
        open_units = set(candidates)
        corners = [[a, b, (a[0], b[1], a[2])] for a in across for b in along if (a[0], b[1], a[2]) in open_units]
        for trials in ([[u] for u in candidates], [[a, b] for a in across for b in along], corners):
            best, best_gain = None, 0.0
            for units in trials:
                trial = withheld
                for unit in units:
                    trial = self._with(unit, trial)
                self.apply(trial)
                after = self.shortfall(failing)
                if after == 0:
                    return trial - withheld
                if before - after > best_gain:
                    best, best_gain = trial - withheld, before - after
            if best is not None:
                return best
        # Still nothing: a group's units in every new period at once, the total last.
        for group in sorted({u[0] for u in self.new_units}, key=lambda g: (g == TOTAL_ID, self.members[g], g)):
            trial = withheld | {u for u in self.new_units if u[0] == group}
            self.apply(trial)
            if self.shortfall(failing) < before:
                return trial - withheld
        return {u for u in self.new_units if u not in withheld}

    def _with(self, unit: tuple, withheld: set) -> set:
        """Return withheld plus a unit, and a main unit's results with it."""
        group, period, kind = unit
        extra = {unit} | ({(group, period, "results")} if kind == "main" else set())
        return withheld | (extra & self.new_units) | {unit}

    def candidates(self, failing: tuple, withheld: set) -> list[tuple]:
        """Return the new units not yet withheld, cheapest first, in an order the registry alone fixes."""
        group0, period0, _ = failing
        kind0 = unit_of(failing)[2]
        units = [u for u in self.new_units if u not in withheld and (kind0 == "results" or u[2] == "main")]

        def cost(unit):
            group, period, kind = unit
            total = group == TOTAL_ID
            rank = (0 if group == group0 and period != period0 else
                    1 if not total and period == period0 else
                    2 if not total else 3 if period == period0 else 4)
            # Among a group's own new periods its month comes first: one cell instead of a week and its partners.
            return (rank, kind != kind0, "-W" in period, self.members.get(group, 0), group, self.starts[period], kind)

        return sorted(units, key=cost)
