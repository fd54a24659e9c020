"""The disclosure audit: for every withheld count, the tightest interval an outsider can derive.

It reads the published history alone (history.jsonl: every period, every
figure, every group's members) and, from its private side, the protection
range each withheld count needs. For each month it builds the outsider's
integer program (outsider.py) from exactly what was published and, for every
protected count, solves for the least and greatest value the whole
published history allows. The audit passes when every such interval covers
its range. Months are independent, so this is the whole published history's
verdict.

A failure is reported without values or groups (a job summary is public);
`details` gives the internal view for the people who run the project.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from collector.publish.figures import TOTAL_ID
from collector.publish.outsider import BlockModel, Interval


@dataclass(frozen=True)
class Finding:
    """One protected count whose derivable interval misses its range (internal: holds the range)."""

    period: str
    group: str
    measure: str
    interval: Interval
    needed: tuple[int, int]


@dataclass
class AuditResult:
    """The audit's verdict: findings, and how much it checked."""

    findings: list[Finding] = field(default_factory=list)
    counts_checked: int = 0
    months: int = 0

    @property
    def passed(self) -> bool:
        """Return True when every protected count meets its range."""
        return not self.findings

    def summary(self) -> str:
        """Return the verdict in words safe for a public log: no group, no value."""
        if self.passed:
            return (f"disclosure audit passed: {self.counts_checked} withheld counts in {self.months} "
                    "months, none narrower than its protection range")
        by_period = Counter((f.period, f.measure) for f in self.findings)
        parts = ", ".join(f"{n} of {measure.replace('_', ' ')} in {period}"
                          for (period, measure), n in sorted(by_period.items()))
        return (f"disclosure audit failed: {len(self.findings)} withheld counts could be narrowed "
                f"below their protection range ({parts})")


def groups_of(line: dict, key: str = "name") -> dict[str, tuple]:
    """Return a published line's groups as {group id: member outlets}, with the total of all of them."""
    groups = {g["id"]: tuple(o[key] for o in g["outlets"]) for g in line["groups"]}
    groups[TOTAL_ID] = tuple(sorted(o for members in groups.values() for o in members))
    return groups


def model_of(lines: list[dict], groups: dict[str, tuple], weeks: list[str], month: str | None,
             results=()) -> BlockModel:
    """Return the outsider's model of one month, every figure of the given published lines fixed."""
    model = BlockModel(weeks, month, groups, results)
    for line in lines:
        for group, figures in line["figures"].items():
            for measure, value in figures.items():
                key = (group, line["period"], measure)
                if key in model.row_of and isinstance(value, int) and not isinstance(value, bool):
                    model.fix(key, value)
    return model


def audit_history(history) -> AuditResult:
    """Return the audit of a whole history (history.History) with its decisions."""
    return audit_pairs(list(zip(history.published.lines, history.decisions.lines)))


def audit_pairs(pairs: list[tuple[dict, dict]]) -> AuditResult:
    """Return the audit of (published line, decision line) pairs, month by month."""
    result = AuditResult()
    by_month: dict[str, list] = {}
    for published, decision in pairs:
        by_month.setdefault(published["month"], []).append((published, decision))
    for month in sorted(by_month):
        result.months += 1
        lines = by_month[month]
        result.findings += audit_month([p for p, _ in lines], [d for _, d in lines], result)
    return result


def audit_month(published: list[dict], decisions: list[dict], result: AuditResult) -> list[Finding]:
    """Return the findings of one month: its protected counts whose intervals miss their ranges."""
    weeks = [line["period"] for line in published if line["kind"] == "week"]
    months = [line for line in published if line["kind"] == "month"]
    month = months[0]["period"] if months else None
    model = model_of(published, groups_of(published[0]), weeks, month, months[0]["results"] if months else ())
    findings = []
    for line, decision in zip(published, decisions):
        for group, measure, lo, hi in decision["ranges"]:
            got = model.interval((group, line["period"], measure), (lo, hi))
            result.counts_checked += 1
            if not got.covers(lo, hi):
                findings.append(Finding(line["period"], group, measure, got, (lo, hi)))
    return findings


def details(result: AuditResult) -> list[str]:
    """Return one line per finding with its group, interval and range (internal only)."""
    return [f"{f.period} {f.group} {f.measure}: derivable [{f.interval.lo}, "
            f"{'inf' if f.interval.hi is None else f.interval.hi}], needs [{f.needed[0]}, {f.needed[1]}]"
            f"{'' if f.interval.proved else ' (not proved in time)'}" for f in result.findings]
