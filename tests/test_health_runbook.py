"""Every health check id has its runbook entry (docs/health.md, a heading per id): alerts link to it."""

import re
from pathlib import Path

from collector.health import suite

RUNBOOK = Path(__file__).resolve().parent.parent / "docs" / "health.md"


def test_every_check_has_a_runbook_entry_and_no_entry_is_for_a_missing_check():
    headings = set(re.findall(r"^## ([a-z-]+)$", RUNBOOK.read_text(encoding="utf-8"), re.M))
    ids = {check.id for check in suite.all_checks()}
    assert ids - headings == set(), "checks without a runbook entry"
    assert headings - ids == set(), "runbook entries for no check"
