"""The record rolls over by year: each year's files in a repository of their own, one chain across them."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from collector.cli.export import export as export_command
from collector.record import export as ex
from collector.record import folder, rollover
from collector.record import rebuild as rebuilding
from collector.record.fileformat import ExportError, file_sha256, read_header
from collector.record.store import Store
from tests.record.test_export import dump

NEW_YEAR = datetime(2027, 1, 1, tzinfo=timezone.utc)
PREVIOUS = "activaterights/takedownwatch-record-2026"


def job(store: Store, n: int, when: datetime) -> None:
    """Add what a job adds: a run, a request, a queued article, and the queue's state changed."""
    run = store.insert("runs", {"command": "run", "started_at": f"{when:%Y-%m-%dT%H:%M:%SZ}", "vantage": "v",
                                "software_version": "0", "settings": "{}"})
    url = f"https://www.paper.example.com.bd/national/{n}"
    store.insert("requests", {"run_id": run, "outlet_id": "paper", "purpose": "listing", "method": "GET", "url": url,
                              "attempt": 1, "sent": 1, "started_at": "t", "finished_at": "t", "result": "ok",
                              "vantage": "v"})
    store.insert("capture_queue", {"url_key": url, "url": url, "outlet_id": "paper", "reason": "recent",
                                   "queued_at": "t", "queued_run": run})
    if n > 1:  # a state row changed in place, exported as it now is
        store.execute("UPDATE capture_queue SET state = 'captured', done_at = ? WHERE url_key = ?",
                      (f"{when:%Y-%m-%dT%H:%M:%SZ}", url[:-len(str(n))] + str(n - 1)))


@pytest.fixture
def years(tmp_path):
    """Two record folders: 2026 (four files, the last written on 31 December), and 2027 rolled over from it.

    Returns (2026 folder, 2027 folder, the working database, a copy saved after the last 2026 file).
    """
    store = Store(tmp_path / "work.db")
    store.insert("outlet_groups", {"id": "g", "name": "G", "name_bn": "গ"})
    store.insert("outlets", {"id": "paper", "name": "Paper", "name_bn": "পত্রিকা", "homepage": "https://p/",
                             "group_id": "g", "first_seen_at": "t", "last_synced_at": "t"})
    old, new = tmp_path / "record-2026", tmp_path / "record-2027"
    for n, when in enumerate([NEW_YEAR - timedelta(days=d) for d in (3, 2, 1)] + [NEW_YEAR - timedelta(hours=1)], 1):
        job(store, n, when)
        assert ex.export_new(store, old, now=when).path is not None
    store.checkpoint()
    shutil.copyfile(tmp_path / "work.db", tmp_path / "saved.db")  # the cache the first job of 2027 restores
    # The rollover reads only the last file of the year before: a sparse checkout holds nothing else.
    sparse = tmp_path / "sparse-2026"
    last = folder.last_batch(old)
    (sparse / folder.record_name(last)).parent.mkdir(parents=True)
    shutil.copyfile(last, sparse / folder.record_name(last))
    new.mkdir()
    assert rollover.due(new)
    rollover.seed(sparse, new, PREVIOUS, NEW_YEAR)
    assert not rollover.due(new)
    for n, when in ((5, NEW_YEAR + timedelta(hours=1)), (6, NEW_YEAR + timedelta(days=1))):
        job(store, n, when)
        assert ex.export_new(store, new, now=when).path is not None
    store.close()
    return old, new, tmp_path / "work.db", tmp_path / "saved.db"


def test_the_chain_continues_across_the_boundary(years):
    old, new, _, _ = years
    seed, *later = folder.batches(new)
    assert folder.record_name(seed) == "2026/12/31/000004.jsonl.bz2"  # the last file of 2026, as it was
    assert seed.read_bytes() == (old / "2026/12/31/000004.jsonl.bz2").read_bytes()
    first_of_2027 = read_header(later[0])
    assert first_of_2027["batch"] == 5 and first_of_2027["previous_sha256"] == file_sha256(seed)
    assert [folder.record_name(p)[:10] for p in later] == ["2027/01/01", "2027/01/02"]
    assert json.loads((new / "CONTINUES.json").read_text())["repository"] == PREVIOUS
    assert folder.verify([old, new]) == 6  # the copy counted once
    assert folder.verify(new) == 3  # alone: from the copy on
    assert folder.verify(old) == 4


def test_rebuild_reads_the_repositories_in_order_and_a_resume_needs_only_the_newest(years, tmp_path):
    old, new, work, saved = years
    rebuilding.rebuild([old, new], tmp_path / "full.db")
    assert dump(tmp_path / "full.db") == dump(work)
    with pytest.raises(ExportError, match="give every record repository, oldest first"):
        rebuilding.rebuild([new], tmp_path / "partial.db")
    files, _ = rebuilding.resume(new, saved)  # the cache saved by the last job of 2026
    assert files == 2 and dump(saved) == dump(work)


@pytest.mark.parametrize("damage, message", [
    ("seed edited", "does not start with that file unchanged"),
    ("fork at the boundary", "forked at the boundary"),
    ("out of order", "has no CONTINUES.json"),
    ("not rolled over", "has sequence 4, expected 1"),
])
def test_verify_finds_a_broken_boundary(years, damage, message):
    old, new, _, _ = years
    folders = [old, new]
    if damage == "seed edited":
        seed = folder.batches(new)[0]
        seed.write_bytes(seed.read_bytes() + b"\n")
    elif damage == "fork at the boundary":  # a 2026 job wrote after the rollover
        late = old / "2026/12/31/000005.jsonl.bz2"
        shutil.copyfile(folder.batches(new)[1], late)
    elif damage == "out of order":
        folders = [new, old]
    elif damage == "not rolled over":
        (new / "CONTINUES.json").unlink()
    with pytest.raises(ExportError, match=message):
        folder.verify(folders)


def test_a_new_years_folder_is_never_started_from_nothing(years, tmp_path):
    """Exporting to an empty folder a database in sync with another's file would start a second record."""
    _, _, work, _ = years
    store = Store(work)
    job(store, 7, NEW_YEAR + timedelta(days=2))
    with pytest.raises(ExportError, match="never from nothing"):
        ex.export_new(store, tmp_path / "record-2027-empty", now=NEW_YEAR + timedelta(days=2))
    store.close()
    assert not (tmp_path / "record-2027-empty").exists()


def test_the_rollover_is_done_once(years, tmp_path):
    old, new, _, _ = years
    with pytest.raises(ExportError, match="the rollover into it was done"):
        rollover.seed(old, new, PREVIOUS, NEW_YEAR)
    with pytest.raises(ExportError, match="nothing to continue"):
        rollover.seed(tmp_path / "nothing", tmp_path / "fresh", PREVIOUS, NEW_YEAR)


@pytest.mark.parametrize("now, current, previous, prepare", [
    ("2026-06-15T12:00:00Z", "o/tw-record-2026", "o/tw-record-2025", ["o/tw-record-2026"]),
    ("2026-12-17T23:59:59Z", "o/tw-record-2026", "o/tw-record-2025", ["o/tw-record-2026"]),
    ("2026-12-18T00:00:00Z", "o/tw-record-2026", "o/tw-record-2025", ["o/tw-record-2026", "o/tw-record-2027"]),
    ("2026-12-31T23:59:59Z", "o/tw-record-2026", "o/tw-record-2025", ["o/tw-record-2026", "o/tw-record-2027"]),
    ("2027-01-01T00:00:00Z", "o/tw-record-2027", "o/tw-record-2026", ["o/tw-record-2027"]),
    ("2027-01-01T05:30:00+06:00", "o/tw-record-2026", "o/tw-record-2025", ["o/tw-record-2026", "o/tw-record-2027"]),
])
def test_which_record_repositories_a_moment_needs(now, current, previous, prepare):
    """A year's period is the UTC year; the next one's repository is made settings.RECORD_PREPARE_DAYS ahead."""
    found = rollover.repositories("o/tw", datetime.fromisoformat(now.replace("Z", "+00:00")), 12)
    assert (found.current, found.previous, list(found.prepare)) == (current, previous, prepare)
    assert found.label == current.rsplit("-", 1)[1]


@pytest.mark.parametrize("months, now, label, previous, following", [
    (6, "2027-03-01T00:00:00Z", "2027-01", "2026-07", None),
    (6, "2027-06-20T00:00:00Z", "2027-01", "2026-07", "2027-07"),
    (6, "2027-07-01T00:00:00Z", "2027-07", "2027-01", None),
    (3, "2027-12-31T00:00:00Z", "2027-10", "2027-07", "2028-01"),
    (1, "2027-01-15T00:00:00Z", "2027-01", "2026-12", None),
])
def test_shorter_periods_each_have_a_repository(months, now, label, previous, following):
    """At 100 outlets a year's record passes 5 GB: settings.RECORD_REPOSITORY_MONTHS makes the periods shorter."""
    found = rollover.repositories("o/tw", datetime.fromisoformat(now.replace("Z", "+00:00")), months)
    assert (found.label, found.current, found.previous) == (label, f"o/tw-record-{label}", f"o/tw-record-{previous}")
    assert list(found.prepare) == [found.current] + ([f"o/tw-record-{following}"] if following else [])


def test_a_period_must_divide_a_year():
    with pytest.raises(ExportError, match="does not divide a year"):
        rollover.repositories("o/tw", NEW_YEAR, 5)


def test_the_commands(years, tmp_path):
    old, new, _, _ = years
    runner = CliRunner()
    both = runner.invoke(export_command, ["verify", "--chain-only", "--out", str(old), "--out", str(new)])
    assert both.exit_code == 0 and both.output == "6 export files, chain intact, content checked\n", both.output
    alone = runner.invoke(export_command, ["verify", "--chain-only", "--out", str(new)])
    assert alone.exit_code == 0 and f"continues {PREVIOUS} from 2026/12/31/000004.jsonl.bz2, not checked here" \
        in alone.output and alone.output.endswith("3 export files, chain intact, content checked\n")
    reversed_ = runner.invoke(export_command, ["verify", "--chain-only", "--out", str(new), "--out", str(old)])
    assert reversed_.exit_code == 1 and "CONTINUES.json" in reversed_.output
    assert runner.invoke(export_command, ["rollover", "--check", "--out", str(new)]).exit_code == 1
    fresh = tmp_path / "record-2028"
    assert runner.invoke(export_command, ["rollover", "--check", "--out", str(fresh)]).exit_code == 0
    done = runner.invoke(export_command, ["rollover", "--from", str(new), "--out", str(fresh), "--continues",
                                          "o/tw-record-2027", "--now", "2028-01-01T00:17:00Z"])
    assert done.exit_code == 0, done.output
    assert runner.invoke(export_command, ["verify", "--chain-only", "--out", str(old), "--out", str(new), "--out",
                                          str(fresh)]).output.startswith("6 export files")
    rebuilt = runner.invoke(export_command, ["rebuild", "--out", str(old), "--out", str(new), "--out", str(fresh),
                                             "--db", str(tmp_path / "cli.db")])
    assert rebuilt.exit_code == 0 and "\nrebuilt " in rebuilt.output and "runs 6" in rebuilt.output, rebuilt.output
    listed = runner.invoke(export_command, ["repositories", "--prefix", "o/tw", "--months", "12", "--now",
                                            "2027-12-20T00:00:00Z", "--first", "2026"])
    assert listed.output.split("\n")[:7] == [
        "label=2027", "current=o/tw-record-2027", "previous=o/tw-record-2026", "current-name=tw-record-2027",
        "previous-name=tw-record-2026", "prepare=o/tw-record-2027 o/tw-record-2028",
        "history-names=tw-record-2026,tw-record-2027"]
    halves = runner.invoke(export_command, ["repositories", "--prefix", "o/tw", "--months", "6", "--now",
                                            "2027-08-01T00:00:00Z"])
    assert halves.output.split("\n")[:3] == ["label=2027-07", "current=o/tw-record-2027-07",
                                             "previous=o/tw-record-2027-01"]
    later = runner.invoke(export_command, ["repositories", "--prefix", "o/tw", "--first", "2028", "--now",
                                           "2027-08-01T00:00:00Z"])
    assert later.exit_code == 2 and "not the label of a period up to now's" in later.output
    wrong = runner.invoke(export_command, ["repositories", "--prefix", "o/tw", "--months", "5"])
    assert wrong.exit_code == 2 and "does not divide a year" in wrong.output


def test_a_sparse_checkout_of_the_newest_days_is_enough_to_resume_and_to_check_the_tail(years, tmp_path):
    """A job checks out only its period's newest days: the files from its cached database's on."""
    old, _, work, saved = years
    sparse = tmp_path / "sparse"
    for path in folder.batches(old)[2:]:  # the last two of four
        (sparse / folder.record_name(path)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, sparse / folder.record_name(path))
    with pytest.raises(ExportError, match="expected 1"):
        folder.verify(sparse)
    assert folder.verify(sparse, tail=True) == 2
    runner = CliRunner()
    done = runner.invoke(export_command, ["verify", "--chain-only", "--tail", "--out", str(sparse)])
    assert done.exit_code == 0 and "2 export files present, chain intact" in done.output, done.output
    assert runner.invoke(export_command, ["verify", "--tail", "--out", str(sparse)]).exit_code == 2
    # A gap inside the tail, or a file edited, is found all the same.
    third = sparse / folder.record_name(folder.batches(old)[2])
    third.rename(tmp_path / "third.bz2")
    second = folder.batches(old)[1]
    (sparse / folder.record_name(second)).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(second, sparse / folder.record_name(second))
    with pytest.raises(ExportError, match="has sequence 4, expected 3"):
        folder.verify(sparse, tail=True)
    shutil.move(tmp_path / "third.bz2", third)
    assert folder.verify(sparse, tail=True) == 3
    third.write_bytes(third.read_bytes() + b"\n")  # edited: the file after it no longer follows it
    with pytest.raises(ExportError, match="SHA-256 chain broken"):
        folder.verify(sparse, tail=True)
    # The cache saved after 2026's last file resumes from a checkout holding only that file.
    newest = tmp_path / "newest"
    last = folder.batches(old)[-1]
    (newest / folder.record_name(last)).parent.mkdir(parents=True)
    shutil.copyfile(last, newest / folder.record_name(last))
    files, _ = rebuilding.resume(newest, saved)
    assert files == 0
