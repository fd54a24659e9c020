"""The disclosure audit: can any combination of published figures single out one or two outlets?

Model. A figure is a sum of *atoms*: (outlet, time cell, category) values,
where a time cell is the smallest interval the published periods are cut into
(ISO weeks split at the 7- and 30-day window starts; see periods.py). Counts
of distinct things, which do not add over time, have one cell per period.
A published figure is therefore a 0/1 vector over atoms, and whatever a
reader can compute exactly by adding and subtracting published figures is a
vector in the row space of the published vectors. Families (articles queued,
captured, archived, requests, and each per-period count) are separate spaces:
no published identity links them.

What is checked, exactly, for every family on every build:

1. Small support. Only non-zero atoms are kept (a reader may know an outlet had
   none). For every set S of one or two outlets, no non-zero vector of the row
   space may lie on S's atoms alone. This is exact and complete for supports of
   at most two outlets: identical atom columns are merged, atoms held by three
   or more outlets are pivoted first, and the remaining subspace is tested for
   each S with rational Gaussian elimination (rowspace.py). It catches a
   withheld group recovered as a total minus the other groups, a week recovered
   as the whole record minus the other weeks, and a sliver of a week recovered
   as a window minus the weeks it overlaps.
2. Withheld figures. No figure withheld for its own sake (too few outlets or
   dominance) may be in the row space, zeros included (here atoms with value
   zero count too, so the zeros of a group of one or two outlets stay hidden).
   A withheld zero of a group of three or more outlets may be derivable: it
   says only that the group as a whole had none.
3. Dominated remainders. For each parent figure and its published children
   (the groups within the all-outlets total, the weeks within the whole
   record, the request results within all requests), the remainder, which is
   exactly derivable, must come from at least three outlets and no outlet may
   hold more than settings.DOMINANCE_SHARE of it.

Limits, stated plainly: check 1 finds any exact combination about one or two
outlets, but dominance (3) is tested only on those three natural remainders,
not on every vector of the row space; bounds (a count is never negative, a
week never exceeds its record) can narrow a withheld value without revealing
it exactly and are not considered; rates and medians are not linear and are
published only where every count they are computed from is published, so they
are audited through those counts.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from typing import Hashable, Mapping, Sequence

from collector import settings
from collector.publish.linalg import combination_within, echelon_of

Atom = tuple[str, object, str]


@dataclass(frozen=True)
class AuditFigure:
    """One figure as the audit sees it: key, family and member atoms with their values."""

    key: tuple
    family: str
    atoms: Mapping[Atom, int]  # every atom the figure sums over, zeros included


@dataclass(frozen=True)
class Violation:
    """A published combination that exposes something; `figures` are the keys combined."""

    check: str  # small_support, withheld_derivable, dominated_remainder
    family: str
    figures: tuple
    exposed: frozenset  # atoms exposed (internal: holds outlet ids)


@dataclass
class AuditResult:
    """The outcome of one audit: passed, violations and how much was checked."""

    passed: bool
    violations: list[Violation] = field(default_factory=list)
    figures_checked: int = 0
    subsets_checked: int = 0


def disclosive(atoms: Mapping[Atom, int]) -> bool:
    """Return True when a sum over these atoms would be about fewer than 3 outlets or one dominant one."""
    per_outlet: dict[str, int] = defaultdict(int)
    for (outlet, _, _), value in atoms.items():
        per_outlet[outlet] += value
    total = sum(per_outlet.values())
    if total == 0:
        return 0 < len(per_outlet) < settings.MIN_OUTLETS_PER_FIGURE
    contributors = [v for v in per_outlet.values() if v]
    return (len(contributors) < settings.MIN_OUTLETS_PER_FIGURE
            or max(contributors) > settings.DOMINANCE_SHARE * total)


def audit(published_figures: Sequence[AuditFigure], withheld: Sequence[AuditFigure] = (),
          partitions: Sequence[tuple[tuple, Sequence[tuple]]] = (), quick: bool = False) -> AuditResult:
    """Return the result of checks 1-3 (module docstring) on the published figures.

    With quick, pairs of outlets are not tried once a single outlet is exposed:
    the verdict is the same, only the list of violations is shorter.
    """
    result = AuditResult(passed=True, figures_checked=len(published_figures))
    by_family: dict[str, list[AuditFigure]] = defaultdict(list)
    for figure in published_figures:
        by_family[figure.family].append(figure)
    held: dict[str, list[AuditFigure]] = defaultdict(list)
    for figure in withheld:
        held[figure.family].append(figure)
    for family in sorted(by_family):
        figures = by_family[family]
        result.violations += _small_support(family, figures, result, quick)
        result.violations += _withheld_derivable(family, figures, held[family])
    result.violations += _dominated_remainders(published_figures, partitions)
    result.passed = not result.violations
    return result


def _classes(figures: Sequence[AuditFigure], nonzero_only: bool):
    """Return atom classes (atoms in exactly the same figures) and each figure's row over them."""
    signature: dict[Atom, list[int]] = defaultdict(list)
    for index, figure in enumerate(figures):
        for atom, value in figure.atoms.items():
            if value or not nonzero_only:
                signature[atom].append(index)
    class_of_signature: dict[tuple, int] = {}
    class_of_atom: dict[Atom, int] = {}
    members: dict[int, list[Atom]] = defaultdict(list)
    rows: list[dict] = [{} for _ in figures]
    for atom, rows_in in signature.items():
        cls = class_of_signature.setdefault(tuple(rows_in), len(class_of_signature))
        class_of_atom[atom] = cls
        members[cls].append(atom)
        if len(members[cls]) == 1:
            for index in rows_in:
                rows[index][cls] = 1
    return rows, members, class_of_atom


def _small_support(family: str, figures: Sequence[AuditFigure], result: AuditResult,
                   quick: bool = False) -> list[Violation]:
    """Return violations of check 1: combinations supported on one or two outlets."""
    rows, members, _ = _classes(figures, nonzero_only=True)
    outlets = {cls: {atom[0] for atom in atoms} for cls, atoms in members.items()}
    risky = {cls for cls, owners in outlets.items() if len(owners) < settings.MIN_OUTLETS_PER_FIGURE}
    if not risky:
        return []
    order = {cls: (1 if cls in risky else 0, cls) for cls in members}
    order = {cls: rank for rank, cls in enumerate(sorted(order, key=order.__getitem__))}
    basis = echelon_of(((row, {i: 1}) for i, row in enumerate(rows)), order)
    exposed_space = basis.rows_leading_in(risky)
    if not exposed_space:
        return []
    candidates = sorted({o for row, _ in exposed_space for cls in row for o in outlets[cls]})
    violations, flagged = [], []
    subsets = [frozenset([o]) for o in candidates] + [frozenset(p) for p in combinations(candidates, 2)]
    for subset in subsets:
        if quick and violations and len(subset) == 2:
            break
        if any(f <= subset for f in flagged):
            continue  # already reported through a smaller set
        inside = {cls for cls in risky if outlets[cls] <= subset}
        if not inside:
            continue
        result.subsets_checked += 1
        found = combination_within(exposed_space, inside)
        if found is not None:
            vector, provenance = found
            flagged.append(subset)
            exposed = frozenset(a for cls in vector for a in members[cls])
            violations.append(Violation("small_support", family, _keys(figures, provenance), exposed))
    return violations


def _withheld_derivable(family: str, figures: Sequence[AuditFigure],
                        withheld: Sequence[AuditFigure]) -> list[Violation]:
    """Return violations of check 2: withheld figures equal to a combination of published ones."""
    guarded = [w for w in withheld if _needs_guard(w)]
    if not guarded or not figures:
        return []
    rows, members, class_of_atom = _classes(figures, nonzero_only=False)
    order = {cls: cls for cls in members}
    basis = echelon_of(((row, {i: 1}) for i, row in enumerate(rows)), order)
    violations = []
    for figure in guarded:
        vector = _as_classes(figure, members, class_of_atom)
        if vector is None:
            continue
        provenance = basis.contains(vector)
        if provenance is not None:
            violations.append(Violation("withheld_derivable", family, _keys(figures, provenance),
                                        frozenset(figure.atoms)))
    return violations


def _needs_guard(figure: AuditFigure) -> bool:
    """Return True unless the figure is a zero over three or more outlets (see check 2)."""
    if any(figure.atoms.values()):
        return True
    return 0 < len({atom[0] for atom in figure.atoms}) < settings.MIN_OUTLETS_PER_FIGURE


def _as_classes(figure: AuditFigure, members, class_of_atom) -> dict | None:
    """Return the figure as a 0/1 row over classes, or None if it cuts a class or leaves the span."""
    counts: dict[int, int] = defaultdict(int)
    for atom in figure.atoms:
        if atom not in class_of_atom:
            return None  # an atom no published figure touches: the figure cannot be derived
        counts[class_of_atom[atom]] += 1
    if any(n != len(members[cls]) for cls, n in counts.items()):
        return None  # every derivable vector is constant on a class
    return {cls: 1 for cls in counts}


def _dominated_remainders(figures: Sequence[AuditFigure],
                          partitions: Sequence[tuple[tuple, Sequence[tuple]]]) -> list[Violation]:
    """Return violations of check 3: a derivable remainder of a parent that is disclosive."""
    published = {figure.key: figure for figure in figures}
    violations = []
    for parent_key, child_keys in partitions:
        parent = published.get(parent_key)
        children = [published[k] for k in child_keys if k in published]
        if parent is None or not children:
            continue
        covered = {atom for child in children for atom in child.atoms}
        remainder = {a: v for a, v in parent.atoms.items() if a not in covered}
        if remainder and disclosive(remainder):
            keys = (parent_key,) + tuple(child.key for child in children)
            exposed = frozenset(a for a, v in remainder.items() if v) or frozenset(remainder)
            violations.append(Violation("dominated_remainder", parent.family, keys, exposed))
    return violations


def _keys(figures: Sequence[AuditFigure], provenance: Mapping[Hashable, object]) -> tuple:
    """Return the keys of the figures with a non-zero coefficient in a combination."""
    return tuple(figures[i].key for i in sorted(provenance) if provenance[i])
