"""Exact linear algebra over the rationals for the disclosure audit.

Rows are sparse dicts {column: Fraction}. An `Echelon` keeps a row-echelon
basis of every row added to it, under a chosen column order, and remembers for
each basis row which original rows (and with which coefficients) it came from,
so a violation can name the published figures that combine into it.
Arithmetic is exact (fractions.Fraction): a rank never depends on rounding.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Hashable, Iterable, Mapping

Row = dict[Hashable, Fraction]


class Echelon:
    """Gives a row-echelon basis, pivots chosen first in the given column order."""

    def __init__(self, order: Mapping[Hashable, int]):
        self.order = order
        # leading column -> (row with leading coefficient 1, provenance)
        self.pivots: dict[Hashable, tuple[Row, Row]] = {}

    def _lead(self, row: Row) -> Hashable:
        return min(row, key=self.order.__getitem__)

    def reduce(self, row: Mapping, provenance: Mapping) -> tuple[Row, Row]:
        """Return row minus its projection on the basis, and the provenance of that remainder."""
        row, provenance = dict(row), dict(provenance)
        while row:
            lead = self._lead(row)
            if lead not in self.pivots:
                break
            pivot, pivot_provenance = self.pivots[lead]
            factor = row[lead]
            _axpy(row, -factor, pivot)
            _axpy(provenance, -factor, pivot_provenance)
        return row, provenance

    def add(self, row: Mapping, provenance: Mapping) -> bool:
        """Return True when row was independent of the basis (and is now part of it)."""
        row, provenance = self.reduce(row, provenance)
        if not row:
            return False
        lead = self._lead(row)
        scale = 1 / Fraction(row[lead])
        self.pivots[lead] = ({c: v * scale for c, v in row.items()},
                             {r: v * scale for r, v in provenance.items()})
        return True

    def rank(self) -> int:
        """Return the dimension of the span of the rows added."""
        return len(self.pivots)

    def rows_leading_in(self, columns: set) -> list[tuple[Row, Row]]:
        """Return the basis rows whose leading column is in columns."""
        return [self.pivots[c] for c in self.pivots if c in columns]

    def contains(self, row: Mapping) -> Row | None:
        """Return the combination of original rows equal to row, or None if row is outside the span."""
        remainder, provenance = self.reduce(row, {})
        if remainder:
            return None
        return {r: -v for r, v in provenance.items()}


def echelon_of(rows: Iterable[tuple[Mapping, Mapping]], order: Mapping) -> Echelon:
    """Return the echelon basis of rows given as (row, provenance) pairs."""
    basis = Echelon(order)
    # Sparse rows first: weekly figures then reduce the long ones with little fill-in.
    for row, provenance in sorted(rows, key=lambda pair: len(pair[0])):
        basis.add(row, provenance)
    return basis


def combination_within(rows: list[tuple[Row, Row]], inside: set) -> tuple[Row, Row] | None:
    """Return a non-zero combination of rows supported only on `inside` and its provenance, or None.

    With the columns outside `inside` ordered first, a basis row leading in
    `inside` is zero everywhere outside it; such a row exists exactly when the
    span meets the coordinate subspace of `inside`.
    """
    columns = {c for row, _ in rows for c in row}
    outside = sorted((c for c in columns if c not in inside), key=repr)
    order = {c: i for i, c in enumerate(outside + sorted(columns & inside, key=repr))}
    basis = echelon_of(rows, order)
    found = basis.rows_leading_in(inside)
    return found[0] if found else None


def _axpy(target: Row, factor: Fraction, source: Mapping) -> None:
    """Add factor * source to target in place, dropping entries that become zero."""
    for column, value in source.items():
        updated = target.get(column, 0) + factor * value
        if updated:
            target[column] = updated
        else:
            target.pop(column, None)
