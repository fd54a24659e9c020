"""An outsider attacking the built site: reads only what a visitor can, over every build, and solves for withheld figures.

It reads each build's `stats.json`, outlets page and overview page, and
nothing of the record. Every published count becomes an equation over unknown
per-outlet values in elementary time cells (the pieces every period of every
build cuts time into), so subtraction across groups, periods, measures and
builds are all special cases; to these it adds what the method page says
the definitions imply (archived <= captured, an outlet contributes exactly
when it captured something, a longer period lists at least the addresses a
shorter one inside it does, results add up to requests, whole numbers, none
negative) and solves, for every withheld count, for its least and greatest
value with HiGHS.

It is written apart from collector/publish/outsider.py on purpose: it knows
nothing of weeks, months or cells, only of the intervals the published
periods state, so it would catch what that model forgot. It reads the site as
built today and as built before the history existed (periods `all`, `7d`,
`30d` ending at the build's moment, withholding reasons in the figures).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import highspy
import numpy as np

INF = highspy.kHighsInf
ADDITIVE = ("articles_captured", "articles_archived", "articles_queued", "requests")
PER_PERIOD = ("outlets_contributing", "sources_readable", "articles_listed")
TOTAL = "all-outlets"
BOUND = 302400  # requests one host can be sent in a week at one every 2 seconds: the method page says so


@dataclass(frozen=True)
class Observation:
    """One figure as a visitor sees it: where, when, what, the value (None when withheld) and its group's members."""

    build: int
    group: str
    start: datetime
    end: datetime
    measure: str
    value: int | None
    members: tuple[str, ...]
    reason: str = ""  # the withholding reason a build showed beside the figure, if it showed one


def _instant(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def read_build(index: int, folder: Path) -> list[Observation]:
    """Return every count a build publishes, with its group's members as the build shows them."""
    stats = json.loads((folder / "stats.json").read_text(encoding="utf-8"))
    shown = _outlets_page(folder / "outlets.html")
    names = {g["id"]: g["name"] for g in stats["groups"]}
    out = []
    for period in stats["periods"]:
        members = period.get("members")  # the published history states each period's members
        if members is None:
            members = {gid: shown.get(name, []) for gid, name in names.items()}
        members = {gid: tuple(sorted(m)) for gid, m in members.items() if m}
        everyone = tuple(sorted({o for m in members.values() for o in m}))
        for gid, by_period in stats["figures"].items():
            figures = by_period.get(period["id"])
            if figures is None:
                continue
            for measure, value in figures.items():
                if not (measure in ADDITIVE or measure in PER_PERIOD or measure.startswith("requests:")):
                    continue
                count = value if isinstance(value, int) and not isinstance(value, bool) else None
                group_members = everyone if gid == TOTAL else members.get(gid, ())
                reason = value.get("reason", "") if isinstance(value, dict) else ""
                out.append(Observation(index, gid, _instant(period["start"]), _instant(period["end"]),
                                       measure, count, group_members, reason))
    return out


def _outlets_page(path: Path) -> dict[str, list[str]]:
    """Return {group name: outlet names} from an outlets page."""
    page = path.read_text(encoding="utf-8")
    groups = {}
    for section in re.findall(r"<section.*?</section>", page, re.S):
        name = html.unescape(re.search(r"<h2[^>]*>(.*?)</h2>", section, re.S).group(1).strip())
        outlets = [html.unescape(re.sub(r"<span.*?</span>", "", li).strip())
                   for li in re.findall(r"<li>(.*?)</li>", section, re.S)]
        groups[name] = outlets
    return groups


def page_numbers(folder: Path) -> list[str]:
    """Return every number in the tables of a build's overview pages (English), as printed."""
    page = (folder / "index.html").read_text(encoding="utf-8")
    page = re.sub(r"<svg.*?</svg>", "", page, flags=re.S)
    cells = re.findall(r"<td[^>]*>(.*?)</td>|<dd>(.*?)</dd>", page, re.S)
    texts = [re.sub(r"<[^>]+>", "", a or b).strip() for a, b in cells]
    return [t for t in texts if re.fullmatch(r"[\d,]+(\.\d+)?%?", t)]


def stats_numbers(folder: Path) -> set[str]:
    """Return every figure of a build's stats.json printed as the pages print it."""
    stats = json.loads((folder / "stats.json").read_text(encoding="utf-8"))
    out = set()
    for by_period in stats["figures"].values():
        for figures in by_period.values():
            for measure, value in figures.items():
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    continue
                if "rate" in measure or measure.startswith("share:"):
                    out.add(f"{round(value * 100, 1):.1f}%")
                else:
                    out.add(f"{value:,}" if isinstance(value, int) or value == int(value) else f"{value:,.1f}")
                    out.add(f"{int(value):,}" if value == int(value) else f"{value:.1f}")
    return out


class Attack:
    """The outsider's integer program over every build's published counts."""

    def __init__(self, observations: list[Observation]):
        self.observations = observations
        edges = sorted({o.start for o in observations} | {o.end for o in observations})
        self.cells = list(zip(edges, edges[1:]))
        self.outlets = sorted({m for o in observations for m in o.members})
        self.results = sorted({o.measure for o in observations if o.measure.startswith("requests:")})
        self.col: dict[tuple, int] = {}
        self.upper: list[float] = []
        self.rows: list[tuple[float, float, dict[int, float]]] = []
        self._build()

    def _var(self, key, upper=INF) -> int:
        if key not in self.col:
            self.col[key] = len(self.upper)
            self.upper.append(upper)
        return self.col[key]

    def _cells_of(self, start, end) -> list[int]:
        return [i for i, (a, b) in enumerate(self.cells) if a >= start and b <= end]

    def _build(self) -> None:
        builds = sorted({o.build for o in self.observations})
        for outlet in self.outlets:
            for i in range(len(self.cells)):
                cap = self._var((outlet, i, "articles_captured"))
                # Archive copies are confirmed after capture: a build may count fewer than a later one.
                archived = [self._var((outlet, i, "articles_archived", b)) for b in builds]
                for arch in archived:
                    self.rows.append((-INF, 0, {arch: 1, cap: -1}))
                for earlier, later in zip(archived, archived[1:]):
                    self.rows.append((-INF, 0, {earlier: 1, later: -1}))
                if self.results:
                    req = self._var((outlet, i, "requests"))
                    parts = {self._var((outlet, i, r)): 1 for r in self.results}
                    self.rows.append((0, 0, {**parts, req: -1}))
        intervals = sorted({(o.start, o.end) for o in self.observations if o.measure in PER_PERIOD})
        for outlet in self.outlets:
            for start, end in intervals:
                con = self._var((outlet, start, end, "outlets_contributing"), 1)
                self._var((outlet, start, end, "sources_readable"), 1)
                caps = {self._var((outlet, i, "articles_captured")): 1 for i in self._cells_of(start, end)}
                self.rows.append((-INF, 0, {con: 1, **{c: -1 for c in caps}}))
                self.rows.append((-INF, 0, {**caps, con: -BOUND * max(1, len(caps))}))
                for start2, end2 in intervals:
                    if (start2, end2) != (start, end) and start2 >= start and end2 <= end:
                        inner = self._var((outlet, start2, end2, "articles_listed"))
                        outer = self._var((outlet, start, end, "articles_listed"))
                        self.rows.append((-INF, 0, {inner: 1, outer: -1}))
        self.figure_rows = {}
        for obs in self.observations:
            self.figure_rows[obs] = self._figure(obs)
        for obs in self.observations:
            if obs.value is not None:
                self.rows.append((obs.value, obs.value, self.figure_rows[obs]))
            elif obs.measure == "outlets_contributing" and obs.reason:
                self.rows.append(_reason_row(obs.reason, self.figure_rows[obs]))

    def _figure(self, obs: Observation) -> dict[int, float]:
        if obs.measure in PER_PERIOD:
            return {self._var((m, obs.start, obs.end, obs.measure), 1 if obs.measure != "articles_listed" else INF): 1
                    for m in obs.members}
        by_build = (obs.build,) if obs.measure == "articles_archived" else ()
        return {self._var((m, i, obs.measure) + by_build): 1
                for m in obs.members for i in self._cells_of(obs.start, obs.end)}

    def outlet_row(self, outlet: str, start, end, measure: str) -> dict[int, float]:
        """Return the sum of one outlet's unknowns of an additive count over an interval."""
        return {self._var((outlet, i, measure)): 1 for i in self._cells_of(start, end)}

    def solve(self, targets: list) -> dict:
        """Return the least and greatest value (None: unbounded) the published figures allow of each target.

        A target is an observation, or (key, row) for any sum of unknowns (outlet_row).
        """
        n = len(self.upper)
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = n, len(self.rows)
        lp.col_cost_, lp.col_lower_, lp.col_upper_ = np.zeros(n), np.zeros(n), np.array(self.upper)
        lp.row_lower_ = np.array([r[0] for r in self.rows], dtype=float)
        lp.row_upper_ = np.array([r[1] for r in self.rows], dtype=float)
        starts, index, value = [0], [], []
        for _, _, coefficients in self.rows:
            for c, v in sorted(coefficients.items()):
                index.append(c)
                value.append(v)
            starts.append(len(index))
        lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
        lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, len(self.rows)
        lp.a_matrix_.start_, lp.a_matrix_.index_ = np.array(starts, np.int32), np.array(index, np.int32)
        lp.a_matrix_.value_ = np.array(value, float)
        lp.integrality_ = [highspy.HighsVarType.kInteger] * n
        highs = highspy.Highs()
        highs.setOptionValue("output_flag", False)
        highs.setOptionValue("time_limit", 30.0)
        highs.passModel(lp)
        out = {}
        for target in targets:
            cost = np.zeros(n)
            row = self.figure_rows[target] if isinstance(target, Observation) else target[1]
            for c in row:
                cost[c] = 1.0
            highs.changeColsCost(n, np.arange(n, dtype=np.int32), cost)
            bounds = []
            for sense in (highspy.ObjSense.kMinimize, highspy.ObjSense.kMaximize):
                highs.changeObjectiveSense(sense)
                highs.run()
                status = highs.getModelStatus()
                if status == highspy.HighsModelStatus.kOptimal:
                    bounds.append(highs.getInfo().objective_function_value)
                elif status == highspy.HighsModelStatus.kInfeasible:
                    raise AssertionError("the published figures contradict the definitions the attack assumes")
                else:
                    bounds.append(None)
            lo, hi = bounds
            key = target if isinstance(target, Observation) else target[0]
            out[key] = (int(np.ceil((lo or 0) - 1e-6)), None if hi is None else int(np.floor(hi + 1e-6)))
        return out


def _reason_row(reason: str, row: dict[int, float]) -> tuple[float, float, dict[int, float]]:
    """Return what a withholding reason says of the cell's contributing outlets: below 3, or at least 3."""
    if "of this group contributed captures" in reason:
        return (-INF, 2, row)  # the group rule applied
    return (3, INF, row)  # another rule, or protection of another figure: the group rule did not
