"""What an outsider can derive from one month's published figures: an integer program, solved by HiGHS.

The unknowns are every member outlet's own values: per week, articles
captured, archived, queued, listed and requests (whole numbers, at least 0),
and contributing and readable (0 or 1); per month, distinct articles listed,
contributing (0 or 1) and requests by result. The outsider knows, from the
method page and the outlets page:

* each group's members for the month, and that the total is all of them;
* every published count: the sum of its members' values equals it;
* the definitions: archived <= captured; an outlet contributes in a period
  exactly when it captured something in it (contributing <= captured <=
  CAPTURE_BOUND x contributing, where CAPTURE_BOUND is the number of requests
  the 2-second pacing allows in a week, so it can never bind wrongly); a
  month's counts are sums of its weeks'; an outlet contributes in a month
  exactly when it does in one of its weeks; distinct addresses listed in a
  month are at least those of any one week and at most their sum; readable
  in a month is readable in its last week; requests by result add up to the
  requests; everything is a whole number.

For any published or withheld figure, `interval` gives the least and greatest
values consistent with all of that: the tightest interval an outsider can
derive. Months are independent blocks (periods.py), so the model of one
month is the whole of what the published history says about it.
"""

from __future__ import annotations

from dataclasses import dataclass

import highspy
import numpy as np

from collector import settings
from collector.errors import TakedownWatchError
from collector.publish.cells import ADDITIVE

INF = highspy.kHighsInf
# No outlet can have more captures in a week than requests the pacing allows to one host.
CAPTURE_BOUND = int(7 * 86400 / settings.MIN_INTERVAL_SECONDS)
WEEKLY = ("articles_captured", "articles_archived", "articles_queued", "requests", "articles_listed",
          "outlets_contributing", "sources_readable")
BINARY = ("outlets_contributing", "sources_readable")
SOLVE_SECONDS = 20.0  # a bound not proved optimal in this time is reported as not proved


class ModelError(TakedownWatchError):
    """The model of a month is inconsistent with the figures given to it: a bug, never a disclosure."""


@dataclass(frozen=True)
class Interval:
    """The least and greatest value of a figure an outsider can derive; hi None when unbounded."""

    lo: int
    hi: int | None
    proved: bool = True

    def covers(self, lo: int, hi: int) -> bool:
        """Return True when the interval reaches at least down to lo and up to hi."""
        return self.proved and self.lo <= lo and (self.hi is None or self.hi >= hi)


# The unknowns fall into families no definition links to one another: the model of each is
# solved on its own, which is the same answer and several times faster.
FAMILY = {"articles_captured": "capture", "articles_archived": "capture", "outlets_contributing": "capture",
          "articles_queued": "queued", "requests": "requests", "articles_listed": "listed",
          "sources_readable": "readable"}


def family(measure: str) -> str:
    """Return the family of unknowns a measure's figures are sums of."""
    return "requests" if measure.startswith("requests:") else FAMILY[measure]


class BlockModel:
    """The outsider's integer program for one month of weeks, with one equation row per figure."""

    def __init__(self, weeks: list[str], month: str | None, groups: dict[str, tuple], results=()):
        self.weeks, self.month, self.groups = list(weeks), month, dict(groups)
        self.results = list(results) if month else []
        self._upper: dict[str, list[float]] = {}
        self.col: dict[tuple, tuple[str, int]] = {}
        self._rows: dict[str, list[tuple[float, float, dict[int, float]]]] = {}
        self.row_of: dict[tuple, tuple[str, int]] = {}
        outlets = sorted({o for members in self.groups.values() for o in members}, key=str)
        for outlet in outlets:
            self._outlet(outlet)
        for group, members in sorted(self.groups.items()):
            for period in self.weeks + ([month] if month else []):
                for measure in self.measures(period):
                    fam = family(measure)
                    columns = [c for o in members for c in self.columns(o, period, measure)]
                    self.row_of[(group, period, measure)] = (fam, self._row(fam, -INF, INF, {c: 1.0 for c in columns}))
        # A family without unknowns (no member outlet at all: every outlet inactive) has no solver.
        self.exact = {fam: self._solver(fam, integer=True) for fam in self._rows if fam in self._upper}
        self.relaxed = {fam: self._solver(fam, integer=False) for fam in self._rows if fam in self._upper}
        self.bounds: dict[tuple, tuple[float, float]] = {}
        self._state: dict[str, dict[int, float]] = {fam: {} for fam in self._rows}
        self._known: dict[tuple, Interval] = {}

    def measures(self, period: str) -> list[str]:
        """Return the count measures a period has a figure of."""
        return list(WEEKLY) + ([f"requests:{r}" for r in self.results] if period == self.month else [])

    def columns(self, outlet, period: str, measure: str) -> list[int]:
        """Return the columns (in the measure's family) an outlet's value in a period is the sum of."""
        if period == self.month and measure in ADDITIVE:
            return [self.col[(outlet, w, measure)][1] for w in self.weeks]
        if period == self.month and measure == "sources_readable":
            return [self.col[(outlet, self.weeks[-1], measure)][1]]
        return [self.col[(outlet, period, measure)][1]]

    def _var(self, key: tuple, upper: float = INF) -> int:
        fam = family(key[2])
        uppers = self._upper.setdefault(fam, [])
        self.col[key] = (fam, len(uppers))
        uppers.append(upper)
        return len(uppers) - 1

    def _row(self, fam: str, lower: float, upper: float, coefficients: dict[int, float]) -> int:
        rows = self._rows.setdefault(fam, [])
        rows.append((lower, upper, coefficients))
        return len(rows) - 1

    def _outlet(self, outlet) -> None:
        """Add one outlet's unknowns and the definitions linking them."""
        for w in self.weeks:
            for measure in WEEKLY:
                self._var((outlet, w, measure), 1.0 if measure in BINARY else INF)
            cap, arch, con = (self.col[(outlet, w, m)][1] for m in
                              ("articles_captured", "articles_archived", "outlets_contributing"))
            self._row("capture", -INF, 0.0, {arch: 1.0, cap: -1.0})
            self._row("capture", -INF, 0.0, {con: 1.0, cap: -1.0})
            self._row("capture", -INF, 0.0, {cap: 1.0, con: -float(CAPTURE_BOUND)})
        if not self.month:
            return
        con_m = self._var((outlet, self.month, "outlets_contributing"), 1.0)
        listed_m = self._var((outlet, self.month, "articles_listed"))
        weekly = {m: [self.col[(outlet, w, m)][1] for w in self.weeks]
                  for m in ("outlets_contributing", "articles_listed", "requests")}
        self._row("capture", -INF, 0.0, {con_m: 1.0, **{c: -1.0 for c in weekly["outlets_contributing"]}})
        self._row("listed", -INF, 0.0, {listed_m: 1.0, **{c: -1.0 for c in weekly["articles_listed"]}})
        for c in weekly["outlets_contributing"]:
            self._row("capture", -INF, 0.0, {c: 1.0, con_m: -1.0})
        for c in weekly["articles_listed"]:
            self._row("listed", -INF, 0.0, {c: 1.0, listed_m: -1.0})
        if self.results:
            by_result = [self._var((outlet, self.month, f"requests:{r}")) for r in self.results]
            self._row("requests", 0.0, 0.0, {**{c: 1.0 for c in by_result}, **{c: -1.0 for c in weekly["requests"]}})

    def _solver(self, fam: str, integer: bool) -> highspy.Highs:
        """Return a HiGHS instance holding one family's model, every figure's row still free."""
        rows, uppers = self._rows[fam], self._upper[fam]
        lp = highspy.HighsLp()
        n, m = len(uppers), len(rows)
        lp.num_col_, lp.num_row_ = n, m
        lp.col_cost_ = np.zeros(n)
        lp.col_lower_, lp.col_upper_ = np.zeros(n), np.array(uppers)
        lp.row_lower_ = np.array([r[0] for r in rows], dtype=float)
        lp.row_upper_ = np.array([r[1] for r in rows], dtype=float)
        starts, index, value = [0], [], []
        for _, _, coefficients in rows:
            for column, coefficient in sorted(coefficients.items()):
                index.append(column)
                value.append(coefficient)
            starts.append(len(index))
        lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
        lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, m
        lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
        lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
        lp.a_matrix_.value_ = np.array(value, dtype=float)
        if integer:
            lp.integrality_ = [highspy.HighsVarType.kInteger] * n
        highs = highspy.Highs()
        for option, setting in (("output_flag", False), ("time_limit", SOLVE_SECONDS), ("threads", 1),
                                ("mip_rel_gap", 0.0), ("mip_abs_gap", 0.0), ("random_seed", 0)):
            highs.setOptionValue(option, setting)
        highs.passModel(lp)
        return highs

    def fix(self, key: tuple, value: int | None) -> None:
        """Publish a figure (its row becomes an equation) or, with None, withhold it (the row is free)."""
        fam, row = self.row_of[key]
        low, high = (-INF, INF) if value is None else (float(value), float(value))
        if self.bounds.get((fam, row), (-INF, INF)) == (low, high):
            return
        self.bounds[(fam, row)] = (low, high)
        if value is None:
            self._state[fam].pop(row, None)
        else:
            self._state[fam][row] = value
        for solvers in (self.exact, self.relaxed):
            if fam in solvers:
                solvers[fam].changeRowBounds(row, low, high)

    def interval(self, key: tuple, need: tuple[int, int] | None = None) -> Interval:
        """Return the least and greatest values of a figure consistent with everything fixed.

        With need, the linear relaxation is solved first: its interval contains
        the integer one, so if it already misses need, so does the exact one,
        and that answer (not exact, but failing as the exact one would) is returned.
        """
        fam, row = self.row_of[key]
        state = (key, need, frozenset(self._state[fam].items()))
        if fam not in self.exact:
            return self._no_unknowns(fam, key)
        if state not in self._known:
            columns = sorted(self._rows[fam][row][2])
            got = None
            if need is not None:
                got = self._solve(self.relaxed[fam], columns, key)
            if got is None or got.covers(*need):
                got = self._solve(self.exact[fam], columns, key)
            self._known[state] = got
        return self._known[state]

    def _no_unknowns(self, fam: str, key: tuple) -> Interval:
        """Return the interval of a figure of a family with no unknowns: a sum over no outlet is 0."""
        if any(self._state[fam].values()):
            raise ModelError(f"the figures fixed for {key[1]} contradict the definitions")
        return Interval(0, 0)

    def _solve(self, highs: highspy.Highs, columns: list[int], key: tuple) -> Interval:
        n = highs.getNumCol()
        cost = np.zeros(n)
        cost[columns] = 1.0
        highs.changeColsCost(n, np.arange(n, dtype=np.int32), cost)
        bounds, proved = [], True
        for sense in (highspy.ObjSense.kMinimize, highspy.ObjSense.kMaximize):
            highs.changeObjectiveSense(sense)
            highs.run()
            status = highs.getModelStatus()
            if status == highspy.HighsModelStatus.kOptimal:
                bounds.append(highs.getInfo().objective_function_value)
            elif status in (highspy.HighsModelStatus.kUnbounded, highspy.HighsModelStatus.kUnboundedOrInfeasible) \
                    and sense == highspy.ObjSense.kMaximize:
                bounds.append(None)
            elif status == highspy.HighsModelStatus.kInfeasible:
                raise ModelError(f"the figures fixed for {key[1]} contradict the definitions")
            else:
                # Not proved in time: the incumbent is a value the figure can take, so the
                # interval reported is inside the true one (it errs towards failing the audit).
                info = highs.getInfo()
                bounds.append(info.objective_function_value if info.primal_solution_status else 0.0)
                proved = False
        lo, hi = bounds
        return Interval(int(np.ceil(lo - 1e-6)), None if hi is None else int(np.floor(hi + 1e-6)), proved)
