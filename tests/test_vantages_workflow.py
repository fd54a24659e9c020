"""The vantages workflow: differences by vantage compared where a database holding every stream exists."""

from __future__ import annotations

import re

from collector.record import streams
from tests.test_workflows import WORKFLOWS, load, steps

WORKFLOW = WORKFLOWS / "vantages.yml"


def _index(listed: list[dict], text: str) -> int:
    return next(i for i, s in enumerate(listed) if text in s.get("run", ""))


def test_the_comparison_reads_every_stream_merged_and_writes_its_own_stream():
    workflow = load(WORKFLOW)
    job = workflow["jobs"]["compare"]
    listed = list(steps(workflow))
    assert job["if"] == "vars.TAKEDOWNWATCH_BD_RUNNER != ''"  # only with a second vantage
    assert job["env"]["STREAM"] == "vantages" and job["env"]["STREAM_DIR"] == "data/record/streams/vantages"
    assert job["concurrency"] == {"group": "record-vantages", "cancel-in-progress": False}
    merge = _index(listed, "export rebuild")
    compare = _index(listed, "compare-vantages")
    exported = _index(listed, "export new")
    push = _index(listed, "commit_record.sh")
    # The merged database is rebuilt from every period's repository (no --stream: every stream).
    assert "record_repository.sh history" in listed[merge]["run"] and "--stream" not in listed[merge]["run"]
    assert listed[merge]["env"]["GITHUB_TOKEN"] == "${{ steps.history-token.outputs.token }}"
    assert re.search(r'--db "\$DB" --stream "\$STREAM" --from "\$RUNNER_TEMP/merged.db"', listed[compare]["run"])
    assert '--out "$STREAM_DIR"' in listed[exported]["run"]
    assert merge < compare < exported < push
    assert listed[push]["env"]["RECORD"] == "${{ env.STREAM_DIR }}"
    assert listed[push]["env"]["RECORD_REPOSITORY"] == "${{ steps.record.outputs.repository }}"
    # Its working database: restored, levelled with its stream, saved only after the push.
    uses = [s.get("uses", "").split("@")[0] for s in listed]
    restore, save = uses.index("actions/cache/restore"), uses.index("actions/cache/save")
    level = _index(listed, "level_database.sh")
    assert restore < level < compare and push < save and "if" not in listed[save]
    assert listed[save]["with"]["key"] == listed[restore]["with"]["key"]
    assert listed[restore]["with"]["path"] == listed[save]["with"]["path"] == job["env"]["DB"]
    assert '"$STREAM_DIR" "$DB"' in listed[level]["run"]
    checkout = next(s for s in listed if "record_repository.sh checkout" in s.get("run", ""))
    assert checkout["env"]["RECORD_STREAM"] == "vantages"
    # Write access to this period's repository alone; every period's is only read.
    tokens = {s["id"]: s["with"] for s in listed if s.get("uses", "").startswith("actions/create-github-app-token@")}
    assert tokens["record-token"]["permission-contents"] == "write"
    assert tokens["record-token"]["repositories"] == "${{ steps.names.outputs.current-name }}"
    assert tokens["history-token"]["permission-contents"] == "read"


def test_it_runs_at_a_minute_of_its_own_and_its_stream_has_a_range_of_its_own():
    minute = load(WORKFLOW)["on"]["schedule"][0]["cron"].split()[0]
    taken = {int(m) for m in load(WORKFLOWS / "collect.yml")["on"]["schedule"][0]["cron"].split()[0].split(",")}
    taken |= {int(m) for m in load(WORKFLOWS / "archive.yml")["on"]["schedule"][0]["cron"].split()[0].split(",")}
    assert int(minute) not in taken
    names = [None] + [f"{v}-{k}of{n}" for v in ("hosted", "bd") for n in range(1, 11) for k in range(1, n + 1)]
    assert streams.base("vantages") not in {streams.base(n) for n in names}
