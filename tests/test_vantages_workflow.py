"""The vantages workflow: differences by vantage compared where a database following every stream exists."""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from collector.record import streams
from testing import vantage_farm
from tests.collect.test_compare_vantages import NOW, ROOT, ok
from tests.test_workflows import WORKFLOWS, load, steps

WORKFLOW = WORKFLOWS / "vantages.yml"


def _index(listed: list[dict], text: str) -> int:
    return next(i for i, s in enumerate(listed) if text in s.get("run", ""))


def test_the_comparison_reads_a_database_following_every_stream_and_writes_its_own_stream():
    workflow = load(WORKFLOW)
    job = workflow["jobs"]["compare"]
    listed = list(steps(workflow))
    assert job["if"] == "vars.TAKEDOWNWATCH_BD_RUNNER != ''"  # only with a second vantage
    assert job["env"]["STREAM"] == "vantages" and job["env"]["STREAM_DIR"] == "data/record/streams/vantages"
    assert job["concurrency"] == {"group": "record-vantages", "cancel-in-progress": False}
    follow = _index(listed, "follow_database.sh")
    compare = _index(listed, "compare-vantages")
    exported = _index(listed, "export new")
    push = _index(listed, "commit_record.sh")
    # No full merge any more: the followed database (every stream of this period) is only read.
    assert not [s for s in listed if "export rebuild" in s.get("run", "")]
    assert listed[follow]["run"] == 'bash .github/scripts/follow_database.sh "$RECORD" "$FOLLOWED"'  # no --writes
    assert listed[follow]["env"]["GITHUB_TOKEN"] == "${{ steps.record-token.outputs.token }}"
    assert re.search(r'--db "\$DB" --stream "\$STREAM" --from "\$FOLLOWED"', listed[compare]["run"])
    assert job["env"]["FOLLOWED"] != job["env"]["DB"]
    assert '--out "$STREAM_DIR"' in listed[exported]["run"]
    assert follow < compare < exported < push
    assert listed[push]["env"]["RECORD"] == "${{ env.STREAM_DIR }}"
    assert listed[push]["env"]["RECORD_REPOSITORY"] == "${{ steps.record.outputs.repository }}"
    # The followed database: a cache of its own, restored before the follow and saved right after it;
    # its prefix is no other cache's and no other's restore-keys prefix (pages' record-follow-).
    caches = [(i, s) for i, s in enumerate(listed) if s.get("uses", "").startswith("actions/cache/")]
    followed = [(i, s) for i, s in caches if "data/followed.db" in s["with"]["path"]]
    (restored, r), (saved, v) = followed
    assert r["uses"].startswith("actions/cache/restore@") and v["uses"].startswith("actions/cache/save@")
    assert restored < follow < saved < compare and r["with"]["path"] == v["with"]["path"] == (
        f"{job['env']['FOLLOWED']}\n{job['env']['FOLLOWED']}.streams\n")
    assert r["with"]["key"] == v["with"]["key"] and r["with"]["key"].startswith(r["with"]["restore-keys"])
    prefixes = {"record-stream-"}  # collect's matrix: record-stream-<stream>- (tests/test_workflows.py)
    for name in ("pages.yml", "archive.yml"):
        prefixes |= {s["with"]["restore-keys"] for s in steps(load(WORKFLOWS / name))
                     if s.get("uses", "").startswith("actions/cache/restore@")}
    prefixes |= {s["with"]["restore-keys"] for _, s in caches if "restore-keys" in s["with"] and s is not r}
    assert "record-follow-" in prefixes and len(prefixes) == 4
    for prefix in prefixes:
        assert not r["with"]["restore-keys"].startswith(prefix) and not prefix.startswith(r["with"]["restore-keys"])
    # Its working database: restored, pruned with its stream, saved only after the push.
    restore, save = [i for i, s in caches if s["with"]["path"] == job["env"]["DB"]]
    synced = _index(listed, "sync_database.sh")
    assert restore < synced < compare and push < save and "if" not in listed[save]
    assert listed[save]["with"]["key"] == listed[restore]["with"]["key"]
    assert listed[restore]["with"]["path"] == listed[save]["with"]["path"] == job["env"]["DB"]
    assert '"$STREAM_DIR" "$DB"' in listed[synced]["run"]
    checkout = next(s for s in listed if "record_repository.sh checkout" in s.get("run", ""))
    assert checkout["env"]["RECORD_STREAM"] == "vantages"  # its folder, to write
    assert checkout["env"]["RECORD_ALL_STREAMS"] == "yes"  # every stream's newest days, to follow
    # Write access to this period's repository alone; the period before's is only read, at a boundary.
    tokens = {s["id"]: s["with"] for s in listed if s.get("uses", "").startswith("actions/create-github-app-token@")}
    assert tokens["record-token"]["permission-contents"] == "write"
    assert tokens["record-token"]["repositories"] == "${{ steps.names.outputs.current-name }}"
    assert set(tokens) == {"record-token", "previous-token"}  # no token for every period's repositories
    assert tokens["previous-token"]["permission-contents"] == "read"


def test_it_runs_at_a_minute_of_its_own_and_its_stream_has_a_range_of_its_own():
    minute = load(WORKFLOW)["on"]["schedule"][0]["cron"].split()[0]
    taken = {int(m) for m in load(WORKFLOWS / "collect.yml")["on"]["schedule"][0]["cron"].split()[0].split(",")}
    taken |= {int(m) for m in load(WORKFLOWS / "archive.yml")["on"]["schedule"][0]["cron"].split()[0].split(",")}
    assert int(minute) not in taken
    names = [None] + [f"{v}-{k}of{n}" for v in ("hosted", "bd") for n in range(1, 11) for k in range(1, n + 1)]
    assert streams.base("vantages") not in {streams.base(n) for n in names}


def _farm(farm, tmp_path, blocked: set[str]) -> Path:
    """One site answering by the client's source address: 127.0.0.3 gets a block page for the paths in blocked."""
    _, registry = vantage_farm.site_by_source_address(farm, tmp_path, ("/news/open", "/news/blocked"), NOW,
                                               blocked=lambda path: path in blocked)
    return registry


def _collect(tmp_path, registry: Path, record: Path, at) -> None:
    vantage_farm.collect_both_vantages(tmp_path, registry, record, at)


def _differences(db: Path) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT url_key, kind, request_a, request_b FROM vantage_differences ORDER BY id").fetchall()
    finally:
        conn.close()


def test_the_workflows_follow_reads_only_the_new_files_and_the_new_difference_is_recorded_once(farm, tmp_path):
    """Two runs of the job's follow step, through the real script, with a collection between them."""
    listed = list(steps(load(WORKFLOW)))
    follow_step = listed[_index(listed, "follow_database.sh")]["run"]
    keeps = listed[_index(listed, "follow_database.sh")]["env"]["FOLLOW_KEEPS"]  # what its pruning keeps
    record, followed, mine = tmp_path / "record", tmp_path / "followed.db", tmp_path / "vantages.db"
    env = {**os.environ, "PYTHON": sys.executable, "PYTHONPATH": str(ROOT), "RECORD": str(record),
           "FOLLOWED": str(followed), "FOLLOW_KEEPS": keeps}
    env.pop("GITHUB_TOKEN", None)

    def follow() -> str:
        done = subprocess.run(["bash", "-c", follow_step], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    def compare(minutes: int, db: Path = mine, source: Path = followed) -> str:
        said = ok("compare-vantages", "--db", str(db), "--stream", "vantages", "--from", str(source),
                  "--now", (NOW + timedelta(minutes=minutes)).isoformat(), "--vantage", "comparer")
        ok("export", "new", "--db", str(db), "--out", str(streams.folder(record, "vantages")))
        return said

    blocked = {"/news/blocked"}
    registry = _farm(farm, tmp_path, blocked)
    _collect(tmp_path, registry, record, NOW)
    first = follow()
    assert "inside-1of1 1, outside-1of1 1" in first and "merged anew (there was no merged database)" in first
    assert f"pruned {followed}: " in first  # and pruned, every stream's own database too (follow_prune.py)
    said = compare(10)
    assert "1 differences recorded (reach 1)" in said, said
    assert [(u.rsplit("/", 1)[1], k) for u, k, _, _ in _differences(mine)] == [("blocked", "reach")]

    # An hour on: both vantages recheck; the outside one is now blocked from the open article too.
    blocked.add("/news/open")
    _collect(tmp_path, registry, record, NOW + timedelta(minutes=61))
    before = tmp_path / "vantages-before.db"
    shutil.copy(mine, before)
    second = follow()
    # Only each stream's file written since (the comparison's own export included), merged as an increment.
    assert "new export files per stream: inside-1of1 1, outside-1of1 1, vantages 1" in second, second
    # The vantages stream is new to it (its first file was exported after the first follow): that one
    # stream's own database is built from its folder; the others are resumed, and nothing merged anew.
    assert second.splitlines()[0].rstrip().endswith("; rebuilt the own database of vantages"), second
    conn = sqlite3.connect(followed)
    marks = dict(conn.execute("SELECT stream, through FROM sync_followed WHERE table_name = 'requests'"))
    conn.close()
    assert set(marks) == {"inside-1of1", "outside-1of1", "vantages"}
    merged = tmp_path / "merged.db"
    ok("export", "rebuild", "--out", str(record), "--db", str(merged))
    said = compare(70)
    found = _differences(mine)[1:]
    assert ("open", "reach") in {(u.rsplit("/", 1)[1], k) for u, k, _, _ in found}, said
    assert len({(u, k, a, b) for u, k, a, b in found}) == len(found)
    assert "0 differences recorded (none)" in compare(75)  # a run over the same rows: nothing again
    third = follow()  # the two comparisons' exports alone
    assert third.splitlines()[0].rstrip().endswith(
        "new export files per stream: inside-1of1 0, outside-1of1 0, vantages 2"), third
    # Nothing missed: a full merge of the files the second follow read, compared from the same state,
    # finds the same differences.
    said = ok("compare-vantages", "--db", str(before), "--from", str(merged),
              "--now", (NOW + timedelta(minutes=70)).isoformat(), "--vantage", "comparer")
    assert _differences(before)[1:] == found, said
