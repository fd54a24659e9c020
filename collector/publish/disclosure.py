"""Disclosure control: which coverage figures may be published, checked by an exact audit.

Rules, in order:

* Group rule. A group (or the all-outlets total) with fewer than
  settings.MIN_OUTLETS_PER_FIGURE outlets contributing captures in a period
  is withheld for that period: every figure of it.
* Figure rule. A count made by fewer than that many outlets, or of which one
  outlet makes more than settings.DOMINANCE_SHARE (the (1, k%) dominance rule),
  is withheld: it would be a figure about that outlet.
* Secondary suppression. Published figures must not combine into a withheld
  one, into anything about one or two outlets, or into a dominated remainder
  (audit.py states precisely what is checked). Whenever the audit finds such a
  combination one of its figures is withheld too, chosen in this order:
  rolling 7- and 30-day windows first (the weekly series carries the same
  facts), then single request results, then a group's week nearest in time to
  what is exposed, then a group's whole record, and the all-outlets total last.
  So where a withheld group could be recovered as the total minus the other
  groups, the published group with the fewest contributing outlets is withheld
  with it, and the total over all outlets stays published.
* Derived figures. Rates, request shares and the median delay are not linear;
  each is published only where every count it is computed from is published,
  so they are audited through those counts.

The audit runs again on the final set; if it fails the build stops with
DisclosureError. The published output carries no outlet id.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime

from collector import settings
from collector.publish.audit import AuditFigure, AuditResult, audit, disclosive
from collector.clock import parse_instant
from collector.errors import TakedownWatchError
from collector.publish.cells import TIME_ADDITIVE, TOTAL_ID
from collector.publish.periods import period_cell


class DisclosureError(TakedownWatchError):
    """The published figures would reveal a withheld one: the build must not go on."""


def reasons() -> dict[str, str]:
    """Return the plain-language reason for each kind of withholding, from the settings."""
    least, share = settings.MIN_OUTLETS_PER_FIGURE, round(settings.DOMINANCE_SHARE * 100)
    return {
        "group": f"fewer than {least} outlets of this group contributed captures in this period",
        "few": f"fewer than {least} outlets contributed to this figure",
        "dominance": f"one outlet made more than {share}% of this figure",
        "secondary": "withheld so that withheld figures cannot be worked out from published ones",
    }


def protect(stats: dict) -> dict:
    """Return the publishable figures of compute_stats output; raise DisclosureError if unsafe."""
    context = _Context(stats)
    withheld: dict[tuple, str] = {}
    primary_suppression(context, withheld)
    secondary_suppression(context, withheld)
    result = final_audit(context, withheld)
    if not result.passed:
        kinds = sorted({f"{v.check} in {v.family}" for v in result.violations})
        raise DisclosureError(f"disclosure audit failed ({len(result.violations)} violations: "
                              f"{', '.join(kinds)}); nothing was published")
    return _publication(stats, context, withheld, result)


class _Context:
    """Gives the figures of compute_stats output by key, and their audit vectors."""

    def __init__(self, stats: dict):
        self.stats = stats
        self.figures = {(f["group"], f["period"], f["measure"]): f for f in stats["figures"]}
        self.periods = {p["id"]: p for p in stats["periods"]}
        self.groups = {g["id"]: g for g in stats["groups"]}
        self.tables = {family: {(o, c, k): v for o, c, k, v in rows}
                       for family, rows in stats["atoms"].items()}
        self.cell_starts = [parse_instant(a) for a, _ in stats["cells"]]
        self._vectors: dict[tuple, AuditFigure] = {}

    def additive(self) -> list[tuple]:
        """Return the keys of the figures the audit covers (sums over atoms)."""
        return [key for key, f in self.figures.items() if f["family"]]

    def vector(self, key: tuple) -> AuditFigure:
        """Return a figure as the audit sees it: every member atom with its value."""
        if key not in self._vectors:
            figure = self.figures[key]
            family, period = figure["family"], self.periods[key[1]]
            cells = period["cells"] if family in TIME_ADDITIVE else [period_cell(period['id'])]
            categories = ([figure["category"]] if figure["category"] is not None
                          else self.stats["results"] if family == "requests" else [""])
            table = self.tables.get(family, {})
            atoms = {(o, c, k): table.get((o, c, k), 0) for o in self.groups[key[0]]["members"]
                     for c in cells for k in categories}
            self._vectors[key] = AuditFigure(key, family, atoms)
        return self._vectors[key]

    def partitions(self) -> list[tuple[tuple, list[tuple]]]:
        """Return (parent, children) figure keys that split a parent exactly (audit check 3)."""
        groups = [g for g in self.groups if g != TOTAL_ID]
        weeks = [p for p, v in self.periods.items() if v["kind"] == "week"]
        measures = sorted({k[2] for k in self.additive()})
        out = [((TOTAL_ID, p, m), [(g, p, m) for g in groups]) for p in self.periods for m in measures]
        out += [((g, "all", m), [(g, w, m) for w in weeks])
                for g in self.groups for m in measures if self.figures[(g, "all", m)]["family"]
                in TIME_ADDITIVE]
        out += [((g, p, "requests"), [(g, p, m) for m in measures if m.startswith("requests:")])
                for g in self.groups for p in self.periods]
        return [(parent, [c for c in children if c in self.figures])
                for parent, children in out if parent in self.figures]


def primary_suppression(context: _Context, withheld: dict[tuple, str]) -> None:
    """Withhold whole group-periods under the group rule, then single figures under the figure rule."""
    for key, figure in context.figures.items():
        group, period, _ = key
        contributing = context.figures[(group, period, "outlets_contributing")]["value"]
        if contributing < settings.MIN_OUTLETS_PER_FIGURE:
            withheld[key] = "group"
    for key in context.additive():
        if key in withheld:
            continue
        atoms = {a: v for a, v in context.vector(key).atoms.items() if v}
        if atoms and disclosive(atoms):
            few = len({a[0] for a in atoms}) < settings.MIN_OUTLETS_PER_FIGURE
            withheld[key] = "few" if few else "dominance"


def secondary_suppression(context: _Context, withheld: dict[tuple, str]) -> None:
    """Withhold more figures until the audit finds no exposing combination."""
    _partition_pass(context, withheld)
    by_family: dict[str, list[tuple]] = defaultdict(list)
    for key in context.additive():
        by_family[context.figures[key]["family"]].append(key)
    partitions = context.partitions()
    for family, keys in sorted(by_family.items()):
        family_partitions = [(p, c) for p, c in partitions if p in set(keys)]
        for _ in range(len(keys) + 1):
            result = _audit_keys(context, keys, withheld, family_partitions, quick=True)
            if result.passed:
                break
            _withhold_one_per_violation(context, withheld, result)


def _partition_pass(context: _Context, withheld: dict[tuple, str]) -> None:
    """Withhold children of exactly split parents until no remainder is disclosive (cheap, no algebra)."""
    changed = True
    while changed:
        changed = False
        for parent, children in context.partitions():
            while parent not in withheld:
                open_children = [c for c in children if c in context.figures and c not in withheld]
                covered = {a for c in open_children for a in context.vector(c).atoms}
                remainder = {a: v for a, v in context.vector(parent).atoms.items() if a not in covered}
                if not open_children or not remainder or not disclosive(remainder):
                    break
                exposed = {a for a, v in remainder.items() if v} or set(remainder)
                victim = min(open_children, key=lambda k: _priority(context, k, exposed, withheld))
                withheld[victim] = "secondary"
                changed = True


def _withhold_one_per_violation(context: _Context, withheld: dict, result: AuditResult) -> None:
    """Withhold one figure of each violation, skipping violations an earlier choice already broke."""
    touched: set = set()
    for violation in result.violations:
        if touched & set(violation.figures):
            continue
        candidates = [k for k in violation.figures if k not in withheld]
        victim = min(candidates, key=lambda k: _priority(context, k, violation.exposed, withheld))
        withheld[victim] = "secondary"
        touched.update(violation.figures)


def final_audit(context: _Context, withheld: dict[tuple, str]) -> AuditResult:
    """Return the audit of everything that would be published."""
    return _audit_keys(context, context.additive(), withheld, context.partitions())


def _audit_keys(context: _Context, keys, withheld, partitions, quick: bool = False) -> AuditResult:
    """Return the audit of the published figures among keys, guarding the primary-withheld ones."""
    published = [context.vector(k) for k in keys if k not in withheld]
    guarded = [context.vector(k) for k in keys if withheld.get(k) in ("group", "few", "dominance")]
    return audit(published, guarded, partitions, quick=quick)


def _priority(context: _Context, key: tuple, exposed, withheld: dict) -> tuple:
    """Return the sort key of a figure as a candidate for secondary suppression (lowest first)."""
    group, period_id, measure = key
    # A group already withheld to cover another group in this measure is withheld again
    # before a new one is, so the same partner covers a small group in every period.
    covers_other = not {atom[0] for atom in exposed} <= set(context.groups[group]["members"])
    partner = covers_other and any(k[0] == group and k[2] == measure and why == "secondary"
                                   for k, why in withheld.items())
    period = context.periods[period_id]
    total, week = group == TOTAL_ID, period["kind"] == "week"
    if period["kind"] == "window":
        rank = 0
    elif ":" in measure:
        rank = 1
    else:
        rank = {(False, True): 2, (False, False): 3, (True, True): 4, (True, False): 5}[(total, week)]
    distance = abs((parse_instant(period["start"]) - _exposed_start(context, exposed)).days)
    contributing = context.figures[(group, period_id, "outlets_contributing")]["value"]
    return (not partner, rank, distance, contributing, context.figures[key]["value"], key)


def _exposed_start(context: _Context, exposed) -> datetime:
    """Return the earliest instant of the atoms a violation exposes."""
    starts = []
    for _, cell, _ in exposed:
        if isinstance(cell, int):
            starts.append(context.cell_starts[cell])
        else:
            starts.append(parse_instant(context.periods[cell[2:]]["start"]))
    return min(starts) if starts else parse_instant(context.stats["now"])


def _publication(stats: dict, context: _Context, withheld: dict, result: AuditResult) -> dict:
    """Return the published document: values or withheld markers, no outlet ids anywhere."""
    texts = reasons()
    figures: dict = defaultdict(dict)
    for key, figure in context.figures.items():
        group, period, measure = key
        reason = withheld.get(key) or _derived_reason(context, figure, withheld)
        value = {"withheld": True, "reason": texts[reason]} if reason else figure["value"]
        figures[group].setdefault(period, {})[measure] = value
    return {
        "now": stats["now"],
        "software_version": stats["software_version"],
        "rules": {"min_outlets_per_figure": settings.MIN_OUTLETS_PER_FIGURE,
                  "dominance_share": settings.DOMINANCE_SHARE},
        "periods": [{k: p[k] for k in ("id", "kind", "start", "end")} for p in stats["periods"]],
        "groups": [{k: g[k] for k in ("id", "name", "name_bn")} for g in stats["groups"]],
        "results": stats["results"],
        "figures": dict(figures),
        "audit": {"passed": result.passed, "figures_checked": result.figures_checked,
                  "figures_withheld": sum(1 for k in withheld if context.figures[k]["family"]),
                  "outlet_subsets_checked": result.subsets_checked},
    }


def _derived_reason(context: _Context, figure: dict, withheld: dict) -> str | None:
    """Return why a rate, share or median cannot be published, or None if it can.

    It carries the reason of the withheld count it needs, so a share whose count
    is never shown (request results) still says why it is missing.
    """
    for required in figure.get("requires", ()):
        reason = withheld.get((figure["group"], figure["period"], required))
        if reason:
            return reason
    return None
