"""Releases: closed periods appended once to the published history, frozen whatever comes after."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta

import pytest

from collector.publish.history import History, HistoryError, is_append_of
from collector.publish.periods import week_start
from collector.publish.release import release
from collector.publish.site import build_site
from testing.synthetic import NOW, SyntheticRecord, populate, week_day

GROUPS = {"big": ["g1", "g2", "g3", "g4"], "trio": ["t1", "t2", "t3"], "four": ["f1", "f2", "f3", "f4"]}
W46_PUBLISHED = week_start(NOW) - timedelta(days=7) + timedelta(hours=24)  # W46 ended Monday 16 Nov
LATER = NOW + timedelta(days=5)


@pytest.fixture
def record(store):
    r = SyntheticRecord(store)
    for group, members in GROUPS.items():
        r.group(group)
        for outlet in members:
            r.outlet(outlet, group)
    populate(r, GROUPS, vary=True)
    r.finish_run(NOW)
    return r


def _open(tmp_path, name="h"):
    return History.open(tmp_path / name / "published", tmp_path / name / "decisions")


def _stats(store, tmp_path, history, name):
    build_site(store, tmp_path / name, LATER, history=history)
    return json.loads((tmp_path / name / "stats.json").read_text(encoding="utf-8"))


def test_republishing_after_more_runs_leaves_every_published_period_byte_for_byte(store, record, tmp_path):
    history = _open(tmp_path)
    first = release(store, W46_PUBLISHED, history)
    assert first.appended and first.periods == ["2026-W45", "2026-W46"]
    before = (tmp_path / "h" / "published" / "history.jsonl").read_bytes()
    site_before = _stats(store, tmp_path, history, "site1")
    # More runs: late captures inside published weeks, new weeks, and a registry move.
    for outlet in ("g1", "t2", "f3"):
        record.article(outlet, week_day(week_start(NOW) - timedelta(days=14), 2))
    store.execute("UPDATE outlets SET group_id = 'big' WHERE id = 't1'")
    again = _open(tmp_path)
    second = release(store, LATER, again)
    assert second.appended and second.periods == ["2026-W47", "2026-W48", "2026-11"]
    after = (tmp_path / "h" / "published" / "history.jsonl").read_bytes()
    assert is_append_of(before, after) and after != before
    site_after = _stats(store, tmp_path, again, "site2")
    for group, periods in site_before["figures"].items():
        for period in ("2026-W45", "2026-W46"):
            assert json.dumps(site_after["figures"][group][period]) == json.dumps(periods[period])
    assert [p for p in site_after["periods"] if p["id"] in ("2026-W45", "2026-W46")] == \
        [p for p in site_before["periods"]]
    # Nothing new to publish: the history stays exactly as it is.
    assert release(store, LATER + timedelta(hours=1), _open(tmp_path)).periods == []
    assert (tmp_path / "h" / "published" / "history.jsonl").read_bytes() == after


def test_a_moved_outlet_counts_in_its_old_group_until_a_new_month_begins(store, record, tmp_path):
    release(store, W46_PUBLISHED, _open(tmp_path))
    store.execute("UPDATE outlets SET group_id = 'big' WHERE id = 't1'")
    for outlet in ("g1", "g2", "g3", "g4", "t1", "t2", "t3", "f1", "f2", "f3", "f4"):
        record.article(outlet, week_day(week_start(NOW) + timedelta(days=7), 1))  # W49, in December
    history = _open(tmp_path)
    release(store, NOW + timedelta(days=12), history)
    members = {line["period"]: {g["id"]: len(g["outlets"]) for g in line["groups"]}
               for line in history.published.lines}
    for period in ("2026-W45", "2026-W47", "2026-W48", "2026-11"):
        assert members[period] == {"big": 4, "four": 4, "trio": 3}, period
    assert members["2026-W49"] == {"big": 5, "four": 4, "trio": 2}
    w49 = history.published.lines[-1]["figures"]
    assert w49["big"]["articles_captured"] == 5 and w49["trio"]["articles_captured"] == {"withheld": True}


def test_releasing_week_by_week_publishes_what_one_release_would(store, record, tmp_path):
    weekly = _open(tmp_path, "weekly")
    moment = W46_PUBLISHED - timedelta(days=7)
    while moment <= LATER:
        release(store, moment, weekly)
        weekly = _open(tmp_path, "weekly")
        moment += timedelta(days=1)
    once = _open(tmp_path, "once")
    release(store, LATER, once)

    def strip(lines):
        return [{k: v for k, v in line.items() if k != "published_at"} for line in lines]

    assert strip(weekly.published.lines) == strip(once.published.lines)
    assert weekly.decisions.lines == once.decisions.lines
    assert len({line["published_at"] for line in weekly.published.lines}) == 4  # W45, W46, W47, W48 with its month


def test_a_history_edited_since_it_was_read_is_never_appended_to(store, record, tmp_path):
    history = _open(tmp_path)
    release(store, W46_PUBLISHED, history)
    history = _open(tmp_path)
    path = tmp_path / "h" / "published" / "history.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"articles_captured":', b'"articles_captured": ', 1))
    with pytest.raises(HistoryError, match="changed since it was read"):
        release(store, LATER, history)
    assert not is_append_of(history.published.raw, path.read_bytes())


def test_the_two_files_must_list_the_same_periods(store, record, tmp_path):
    release(store, W46_PUBLISHED, _open(tmp_path))
    decisions = tmp_path / "h" / "decisions" / "decisions.jsonl"
    decisions.write_bytes(decisions.read_bytes().split(b"\n")[0] + b"\n")
    with pytest.raises(HistoryError, match="same periods"):
        _open(tmp_path)


def test_publish_audit_and_build_site_from_the_command_line(store, record, tmp_path):
    db = store.path
    store.checkpoint()
    common = ["--published", str(tmp_path / "pub"), "--decisions", str(tmp_path / "dec")]
    summary = tmp_path / "summary.md"
    run = [sys.executable, "-m", "collector"]
    done = subprocess.run(run + ["publish", "--db", str(db), "--now", LATER.isoformat(), "--summary",
                                 str(summary)] + common, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "Published 2026-W45, 2026-W46, 2026-W47, 2026-W48, 2026-11" in done.stdout
    assert "disclosure audit passed" in summary.read_text(encoding="utf-8")
    done = subprocess.run(run + ["audit"] + common, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "disclosure audit passed" in done.stdout, done.stdout + done.stderr
    done = subprocess.run(run + ["build-site", "--db", str(db), "--out", str(tmp_path / "site"),
                                 "--published", str(tmp_path / "pub")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    stats = json.loads((tmp_path / "site" / "stats.json").read_text(encoding="utf-8"))
    assert [p["id"] for p in stats["periods"]][-1] == "2026-11"
    done = subprocess.run(run + ["stats", "--published", str(tmp_path / "pub")], capture_output=True, text=True,
                          timeout=300)
    assert "== 2026-11 ==" in done.stdout and "== 2026-W48 ==" in done.stdout


def test_a_release_that_cannot_run_says_so_in_the_job_summary(store, record, tmp_path):
    common = ["--published", str(tmp_path / "pub"), "--decisions", str(tmp_path / "dec")]
    (tmp_path / "pub").mkdir()
    (tmp_path / "pub" / "history.jsonl").write_text('{"period": "2026-W45"', encoding="utf-8")  # a cut line
    summary = tmp_path / "summary.md"
    done = subprocess.run([sys.executable, "-m", "collector", "publish", "--db", store.path, "--now",
                           LATER.isoformat(), "--summary", str(summary)] + common,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "partial line" in done.stderr
    assert "Nothing new was published" in summary.read_text(encoding="utf-8")


def test_outlets_without_a_group_count_as_other_outlets_and_in_the_total(store, tmp_path):
    """An outlet with no group (NULL, or a group without a row, as a rebuild can load) is in the
    'Other outlets' group, under the same rules as every group, and in the total."""
    store.conn.execute("PRAGMA foreign_keys = OFF")  # outside a transaction, or SQLite ignores it
    r = SyntheticRecord(store)
    r.group("big")
    for outlet in GROUPS["big"]:
        r.outlet(outlet, "big")
    r.outlet("u1", None)
    r.outlet("u2", "gone")
    populate(r, {"big": GROUPS["big"], "other": ["u1", "u2"]})
    history = _open(tmp_path)
    assert release(store, LATER, history).appended
    line = history.published.lines[0]
    assert [(g["id"], len(g["outlets"])) for g in line["groups"]] == [("big", 4), ("ungrouped", 2)]
    assert line["groups"][1]["name"] == "Other outlets"
    figures = line["figures"]
    assert figures["ungrouped"]["articles_captured"] == {"withheld": True}  # two outlets: the group rule
    assert figures["all-outlets"]["outlets_monitored"] == 6


def test_a_release_when_no_outlet_is_active_publishes_its_periods_withheld(store, tmp_path):
    r = SyntheticRecord(store)
    r.group("big")
    for outlet in GROUPS["big"]:
        r.outlet(outlet, "big", active=False)  # every outlet removed from the registry
    populate(r, {"big": GROUPS["big"]})
    history = _open(tmp_path)
    outcome = release(store, LATER, history)
    assert outcome.appended and outcome.audit.passed
    for line in history.published.lines:
        assert line["groups"] == [] and line["figures"]["all-outlets"]["outlets_monitored"] == 0
        assert line["figures"]["all-outlets"]["articles_captured"] == {"withheld": True}
