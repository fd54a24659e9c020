"""The collect workflow's scripts with several streams: each job checks out, seeds and pushes its own folder."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

from collector.record import export, merge, streams
from collector.record.folder import continues, verify
from collector.record.store import Store
from testing.fake_github import FakeGitHub
from tests.test_private_record import CODE, script

ENV = {"RECORD_PREFIX": CODE, "RECORD_MONTHS": "12", "RECORD_FIRST_PERIOD": "2026"}


def _checkout(github: FakeGitHub, tmp_path: Path, stream: str, when: datetime, label: str) -> tuple[Path, str, str]:
    """A collect job's start: check out this period's repository, roll its stream over when due.

    Returns (the clone, the repository, the checkout's `due`)."""
    clone = tmp_path / f"{label}-{stream or 'default'}"
    env = {**ENV, "NOW": when.isoformat(), "RECORD_STREAM": stream}
    out = script(github, "record_repository.sh", "checkout", str(clone), **env)
    assert out.returncode == 0, out.stderr
    due = out.stdout.split("due=")[1].strip()
    if due == "yes":
        seeded = script(github, "record_repository.sh", "seed", str(clone), **env)
        assert seeded.returncode == 0, seeded.stderr
    return clone, out.stdout.split("repository=")[1].split()[0], due


def _slot(github: FakeGitHub, tmp_path: Path, stores: dict, when: datetime, label: str) -> list[str]:
    """One 15-minute slot: every stream's job checks out the same commit, writes one run, pushes its folder."""
    jobs = {name: _checkout(github, tmp_path, name, when, label) for name in stores}
    for name, (clone, repository, _) in jobs.items():
        stores[name].insert("runs", {"command": "run", "started_at": when.isoformat(), "vantage": name or "hosted",
                                     "software_version": "0", "settings": "{}"})
        target = streams.folder(clone, name or None)
        assert export.export_new(stores[name], target, now=when).path is not None
        pushed = script(github, "commit_record.sh", f"record: {label}", RECORD=str(target),
                        RECORD_REPOSITORY=repository)
        assert pushed.returncode == 0, pushed.stdout + pushed.stderr
    return [due for _, _, due in jobs.values()]


def test_streams_push_side_by_side_roll_over_each_and_merge_across_years(tmp_path):
    github = FakeGitHub(tmp_path / "gh")
    assert script(github, "record_repository.sh", "prepare", NOW="2026-12-20T05:23:00Z", **ENV).returncode == 0
    stores = {}
    for name in ("", "hosted-2of2"):
        stores[name] = Store(tmp_path / f"{name or 'default'}.db")
        if name:
            with stores[name].transaction() as conn:
                streams.set_stream(conn, name)
    late = datetime(2026, 12, 31, 23, 52, tzinfo=timezone.utc)
    # Both streams' jobs of one slot start from the same commit: the second push rebases onto the first.
    assert _slot(github, tmp_path, stores, late, "2026") == ["no", "no"]
    # The first slot of 2027: a stream rolls its own folder over; a stream new in 2027 starts from nothing
    # (the default stream's rollover: tests/test_private_record.py).
    stores["bd-1of2"] = Store(tmp_path / "bd.db")
    with stores["bd-1of2"].transaction() as conn:
        streams.set_stream(conn, "bd-1of2")
    first = late + timedelta(minutes=15)
    assert _slot(github, tmp_path, {n: stores[n] for n in ("hosted-2of2", "bd-1of2")}, first, "2027") == ["yes"] * 2
    for store in stores.values():
        store.close()

    history = script(github, "record_repository.sh", "history", str(tmp_path / "all"),
                     NOW="2027-03-01T00:00:00Z", **ENV)
    assert history.returncode == 0, history.stderr
    folders = [Path(f) for f in history.stdout.split()]
    # Each stream's chain runs across the boundary; the new stream's starts in 2027.
    assert verify([streams.folder(f, "hosted-2of2") for f in folders]) == 2  # 1 in 2026, its copy and 1 in 2027
    assert verify(folders[:1]) == 1  # the default stream, in 2026 only: 2027's folder is still found
    assert continues(streams.folder(folders[1], "hosted-2of2"))["repository"] == f"{CODE}-record-2026"
    assert continues(streams.folder(folders[1], "bd-1of2")) is None
    assert verify(streams.folder(folders[1], "bd-1of2")) == 1
    counts = merge.rebuild_record(folders, tmp_path / "merged.db")
    assert counts["runs"] == 1 + 2 + 1
    conn = sqlite3.connect(tmp_path / "merged.db")
    assert {r[0] for r in conn.execute("SELECT vantage FROM runs")} == {"hosted", "hosted-2of2", "bd-1of2"}
    conn.close()


def test_a_job_that_follows_every_stream_checks_out_each_ones_newest_days_and_follows_them(tmp_path):
    """pages and archive: record_repository.sh with RECORD_ALL_STREAMS, then follow_database.sh."""
    github = FakeGitHub(tmp_path / "gh")
    assert script(github, "record_repository.sh", "prepare", NOW="2026-08-01T05:23:00Z", **ENV).returncode == 0
    stores = {}
    for name in ("hosted-1of2", "bd-1of2"):
        stores[name] = Store(tmp_path / f"{name}.db")
        with stores[name].transaction() as conn:
            streams.set_stream(conn, name)
    days = [datetime(2026, 8, d, 6, 7, tzinfo=timezone.utc) for d in (4, 5, 6)]
    for n, when in enumerate(days):
        _slot(github, tmp_path, stores, when, f"day{n}")

    def follower(label: str, when: datetime) -> tuple[Path, object]:
        clone = tmp_path / f"follow-{label}"
        # A period after the first: its record has begun, in the streams' folders (the folder's own is empty).
        env = {**ENV, "NOW": when.isoformat(), "RECORD_ALL_STREAMS": "yes", "RECORD_DAYS": "2",
               "RECORD_FIRST_PERIOD": "2025"}
        out = script(github, "record_repository.sh", "checkout", str(clone), **env)
        assert out.returncode == 0 and "due=no" in out.stdout, out.stdout + out.stderr
        # Never pruned (PRUNE_EVERY_HOURS 0), so it can be compared with a full rebuild row for row.
        return clone, script(github, "follow_database.sh", str(clone), str(tmp_path / "followed.db"),
                             PRUNE_EVERY_HOURS="0")

    clone, first = follower("a", days[-1])
    # Each stream's two newest days, and no older one, until a database is first written.
    checked = lambda: {p.relative_to(clone).as_posix()[:-len("/000001.jsonl.bz2")] for p in clone.rglob("*.jsonl.bz2")}
    assert first.returncode == 0, first.stdout + first.stderr
    assert "checking out the whole record folder" in first.stderr  # no copy yet: every stream's every file
    assert len(checked()) == 6
    merge.rebuild_record([clone], tmp_path / "full.db")
    dump = lambda db: {t: sorted(sqlite3.connect(db).execute(f'SELECT * FROM "{t}"')) for t in ("runs",)}
    assert dump(tmp_path / "followed.db") == dump(tmp_path / "full.db") and len(dump(tmp_path / "full.db")["runs"]) == 6
    # A later run restores that copy: the newest days of each stream are enough.
    later = datetime(2026, 8, 7, 6, 7, tzinfo=timezone.utc)
    _slot(github, tmp_path, stores, later, "day4")
    for store in stores.values():
        store.close()
    clone, second = follower("b", later)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "checking out the whole" not in second.stderr, second.stderr
    assert checked() == {f"streams/{name}/2026/08/{day}" for name in stores for day in ("06", "07")}
    assert "new export files per stream: bd-1of2 1, hosted-1of2 1" in second.stdout


def test_a_follower_behind_the_period_before_follows_its_repository_after_the_rollover(tmp_path):
    """archive, pages, health: a copy that had not followed a stream to the period before's end resumes in
    the new period's folder only from that period's last file; follow_database.sh follows the period
    before's repository too, read with PREVIOUS_TOKEN, and stops saying why without it."""
    github = FakeGitHub(tmp_path / "gh")
    assert script(github, "record_repository.sh", "prepare", NOW="2026-12-20T05:23:00Z", **ENV).returncode == 0
    stores = {"hosted-1of2": Store(tmp_path / "hosted.db")}
    with stores["hosted-1of2"].transaction() as conn:
        streams.set_stream(conn, "hosted-1of2")
    db = tmp_path / "followed.db"

    def follower(label: str, when: datetime, **env: str):
        clone = tmp_path / "jobs" / label / "record"
        out = script(github, "record_repository.sh", "checkout", str(clone),
                     **{**ENV, "NOW": when.isoformat(), "RECORD_ALL_STREAMS": "yes"})
        assert out.returncode == 0, out.stdout + out.stderr
        return clone, script(github, "follow_database.sh", str(clone), str(db), PRUNE_EVERY_HOURS="0", **env)

    _slot(github, tmp_path, stores, datetime(2026, 12, 31, 22, 7, tzinfo=timezone.utc), "a")
    _, done = follower("a", datetime(2026, 12, 31, 22, 10, tzinfo=timezone.utc))
    assert done.returncode == 0, done.stdout + done.stderr
    # The stream writes twice more, the second time in the new period (its rollover), before the follower
    # runs again: its copy is in sync with neither file it resumes from in 2027's folder.
    _slot(github, tmp_path, stores, datetime(2026, 12, 31, 23, 52, tzinfo=timezone.utc), "b")
    assert _slot(github, tmp_path, stores, datetime(2027, 1, 1, 0, 7, tzinfo=timezone.utc), "c") == ["yes"]
    stores["hosted-1of2"].close()
    saved = db.read_bytes()
    _, refused = follower("b", datetime(2027, 1, 1, 0, 10, tzinfo=timezone.utc))
    assert refused.returncode == 1 and f"continues {CODE}-record-2026" in refused.stderr, refused.stderr
    assert db.read_bytes() == saved  # left as it was
    clone, done = follower("c", datetime(2027, 1, 1, 0, 10, tzinfo=timezone.utc), PREVIOUS_TOKEN="read-2026")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"following {CODE}-record-2026 too" in done.stderr
    earlier = clone.parent / f"{CODE.split('/')[1]}-record-2026"
    merge.rebuild_record([earlier, clone], tmp_path / "full.db")
    dump = lambda path: sorted(sqlite3.connect(path).execute("SELECT * FROM runs"))
    assert dump(db) == dump(tmp_path / "full.db") and len(dump(db)) == 3
