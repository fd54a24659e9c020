"""Every check, in report order, and the run of them all."""

from __future__ import annotations

from collector.health import archive, capture, evidence, jobs, outlets, storage
from collector.health.checks import Check, Finding, Inputs


def all_checks() -> list[Check]:
    """Return every check, in report order."""
    return [*outlets.CHECKS, *jobs.CHECKS, *capture.CHECKS, *archive.CHECKS, *evidence.CHECKS, *storage.CHECKS]


def run_checks(inputs: Inputs, only: tuple[str, ...] = ()) -> list[Finding]:
    """Return every check's findings (only the checks named, when some are)."""
    findings = []
    for check in all_checks():
        if not only or check.id in only:
            findings.extend(check.run(inputs))
    return findings
