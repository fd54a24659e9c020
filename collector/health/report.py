"""The health report: Markdown a person reads, JSON a script reads, and a summary with no subject named."""

from __future__ import annotations

from collector.health.checks import FAIL, OK, ORDER, WARN, Finding, worst
from collector.health.suite import all_checks

RUNBOOK = "docs/health.md"
_MARK = {OK: "ok", WARN: "WARN", FAIL: "FAIL"}


def as_json(findings: list[Finding], now: str) -> dict:
    """Return the report as JSON: the worst state, and every finding."""
    return {"now": now, "state": worst(findings), "runbook": RUNBOOK,
            "findings": [f.as_json() for f in findings]}


def by_check(findings: list[Finding]) -> dict[str, list[Finding]]:
    """Return the findings grouped by check id, in report order."""
    groups: dict[str, list[Finding]] = {c.id: [] for c in all_checks()}
    for finding in findings:
        groups.setdefault(finding.check, []).append(finding)
    return {k: v for k, v in groups.items() if v}


def markdown(findings: list[Finding], now: str) -> str:
    """Return the report in Markdown: the checks not ok first, each subject's finding, then the ok ones counted."""
    titles = {c.id: c.title for c in all_checks()}
    groups = by_check(findings)
    lines = [f"# Health at {now}: {worst(findings)}", ""]
    counts = {s: sum(1 for f in findings if f.state == s) for s in (FAIL, WARN, OK)}
    lines += [f"{counts[FAIL]} failing, {counts[WARN]} warning, {counts[OK]} ok. "
              f"Each check's runbook: {RUNBOOK}#<check id>.", ""]
    bad = {k: v for k, v in groups.items() if worst(v) != OK}
    for check_id, group in sorted(bad.items(), key=lambda kv: -ORDER[worst(kv[1])]):
        lines += [f"## {_MARK[worst(group)]} {check_id}: {titles.get(check_id, check_id)}", "",
                  f"Runbook: {RUNBOOK}#{check_id}", "", "| state | subject | value | detail |", "|---|---|---|---|"]
        for f in sorted(group, key=lambda f: (-ORDER[f.state], f.subject or "")):
            if f.state != OK:
                lines.append(f"| {_MARK[f.state]} | {f.subject or '-'} | {_value(f.value)} | {_cell(f.detail)} |")
        fine = sum(1 for f in group if f.state == OK)
        lines += ([f"", f"{fine} other subject(s) ok."] if fine else []) + [""]
    lines += ["## ok", "", "| check | subjects | detail |", "|---|---|---|"]
    for check_id, group in groups.items():
        if check_id not in bad:
            detail = group[0].detail if len(group) == 1 else f"{len(group)} subjects, all ok"
            lines.append(f"| {check_id} | {len(group)} | {_cell(detail)} |")
    return "\n".join(lines) + "\n"


def summary(findings: list[Finding], now: str) -> str:
    """Return a group-level summary (a job summary): per check, subjects by state, no subject named."""
    lines = [f"## Health at {now}: {worst(findings)}", "", "| check | fail | warn | ok |", "|---|--:|--:|--:|"]
    for check_id, group in by_check(findings).items():
        n = {s: sum(1 for f in group if f.state == s) for s in (FAIL, WARN, OK)}
        lines.append(f"| [{check_id}]({RUNBOOK}#{check_id}) | {n[FAIL]} | {n[WARN]} | {n[OK]} |")
    return "\n".join(lines) + "\n"


def _value(value) -> str:
    return "-" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
