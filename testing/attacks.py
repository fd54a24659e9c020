"""Crafted records and an outsider who attacks every build of their site (testing/outsider.py).

Each scenario inserts a record, then builds the site at several moments
(registry edits in between where the scenario says), exactly as the hourly
workflow would. `attack` reads every build as a visitor, solves for every
withheld count, and scores the result against the truth, which it reads
from the record with its own queries: a withheld count is *protected* when
the rules withheld it for its own sake (fewer than 3 outlets contributing,
or a count from fewer than 3 outlets or more than 85% from one), and then
the outsider's interval must reach a fifth of its value (at least 3) either
side, or for a count of contributing outlets span from 0 to min(3, members).

Run against a checkout of the site before the published history existed:

    PYTHONPATH=OLD_CHECKOUT:. python -m testing.attacks --old
"""

from __future__ import annotations

import math
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from testing.outsider import ADDITIVE, Attack, page_numbers, read_build, stats_numbers
from testing.synthetic import NOW, SyntheticRecord, populate, week_day

MIN_OUTLETS, DOMINANCE, SHARE, MIN_COUNT = 3, 0.85, 0.2, 3
DAY = timedelta(days=1)
LATER = NOW + 5 * DAY  # the week of NOW and November 2026 are closed and published by then


def _groups(r: SyntheticRecord, groups: dict[str, list[str]]) -> None:
    for group, members in groups.items():
        r.group(group)
        for outlet in members:
            r.outlet(outlet, group)


def pair(r):
    """A group of two beside groups of three and four."""
    groups = {"pair": ["p1", "p2"], "trio": ["t1", "t2", "t3"], "big": ["g1", "g2", "g3", "g4"]}
    _groups(r, groups)
    populate(r, groups, weeks=5, vary=True)
    return [(NOW - 8 * DAY, None), (NOW - DAY, None), (NOW, None), (LATER, None)]


def threshold(r):
    """A group of four of which two capture only in alternate weeks: it crosses the threshold."""
    _groups(r, {"g": ["g1", "g2", "g3", "g4"], "h": ["h1", "h2", "h3", "h4"], "k": ["k1", "k2", "k3"]})
    populate(r, {"g": ["g1", "g2"], "h": ["h1", "h2", "h3", "h4"], "k": ["k1", "k2", "k3"]}, weeks=5, vary=True)
    first = NOW - timedelta(days=NOW.weekday() + 28, hours=12)
    for week in (0, 2, 4):
        for outlet in ("g3", "g4"):
            for n in range(2 + week):
                r.article(outlet, week_day(first + 7 * week * DAY, n % 3, 9))
    return [(NOW - 8 * DAY, None), (NOW, None), (LATER, None)]


def dominance(r):
    """One outlet makes most of its group's captures."""
    groups = {"dom": ["d1", "d2", "d3", "d4"], "h": ["h1", "h2", "h3"], "k": ["k1", "k2", "k3"]}
    _groups(r, groups)
    populate(r, groups, weeks=4, per_week={"d1": 60})
    return [(NOW - DAY, None), (NOW, None), (LATER, None)]


def tie(r):
    """Two groups tied on contributing outlets beside a pair: the protecting group must not flip."""
    groups = {"a": ["a1", "a2", "a3"], "b": ["b1", "b2", "b3"], "pair": ["p1", "p2"]}
    _groups(r, groups)
    populate(r, groups, weeks=4, vary=True)
    return [(NOW - 3 * DAY, None), (NOW - 2 * DAY, None), (NOW - DAY, None), (NOW, None), (LATER, None)]


def move(r):
    """An outlet moved to another group between two builds."""
    groups = {"big": ["g1", "g2", "g3", "g4"], "trio": ["t1", "t2", "t3"], "four": ["f1", "f2", "f3", "f4"]}
    _groups(r, groups)
    populate(r, groups, weeks=4, vary=True)

    def moved(store):
        store.execute("UPDATE outlets SET group_id = 'big' WHERE id = 't3'")
    return [(NOW - 2 * DAY, None), (NOW - DAY, moved), (LATER, None)]


def hour(r):
    """Two builds an hour apart, one outlet of a pair capturing in between."""
    groups = {"pair": ["p1", "p2"], "trio": ["t1", "t2", "t3"], "big": ["g1", "g2", "g3", "g4"]}
    _groups(r, groups)
    populate(r, groups, weeks=4)
    r.article("p1", NOW - 3 * DAY + timedelta(minutes=10), timedelta(minutes=20))
    return [(NOW - 3 * DAY, None), (NOW - 3 * DAY + timedelta(hours=1), None), (LATER, None)]


def real(r):
    """The real registry's group sizes (18/8/7/5/3), one news agency silent for a week."""
    sizes = {"bn-dailies": 18, "en-dailies": 8, "online-portals": 7, "broadcasters": 5, "news-agencies": 3}
    groups = {g: [f"{g[:2]}{i}" for i in range(1, n + 1)] for g, n in sizes.items()}
    _groups(r, groups)
    quiet = dict(groups, **{"news-agencies": ["ne1", "ne2"]})
    populate(r, quiet, weeks=3)
    first = NOW - timedelta(days=NOW.weekday() + 14, hours=12)
    for week in (0, 2):  # ne3 is silent in the middle week
        for n in range(3):
            r.article("ne3", week_day(first + 7 * week * DAY, n, 9))
    return [(NOW - DAY, None), (LATER, None)]


SCENARIOS = {f.__name__: f for f in (pair, threshold, dominance, tie, move, hour, real)}


@dataclass
class Score:
    """What the outsider achieved on one scenario's builds."""

    withheld: int = 0
    protected: int = 0
    exact: set = field(default_factory=set)  # protected counts pinned to one value
    narrow: list = field(default_factory=list)  # protected counts whose interval misses the range
    tightest: tuple | None = None  # (width / needed width, key, interval, needed)
    pages_only_repeat_stats: bool = True
    outlets_exact: set = field(default_factory=set)  # one outlet's own weekly count, pinned and not zero


def build_all(name: str, builder, workdir: Path):
    """Build a scenario's record and its site at each of its moments; return the store and build folders."""
    from collector.record.store import Store

    store = Store(workdir / "record.db")
    record = SyntheticRecord(store)
    steps = SCENARIOS[name](record)
    record.finish_run(NOW)
    folders = []
    for index, (moment, change) in enumerate(steps):
        if change is not None:
            change(store)
        folder = workdir / f"build-{index}"
        try:
            # At 17 minutes past the hour, as the workflow runs, never on an observation's instant.
            builder(store, folder, moment + timedelta(minutes=17), workdir)
        except Exception as exc:  # a build that refuses to publish publishes nothing: nothing to read
            print(f"  build {index} of {name} published nothing: {exc}", file=sys.stderr)
            continue
        folders.append(folder)
    return store, folders


def attack(store, folders: list[Path]) -> Score:
    """Attack every build of a site together and score it against the record."""
    score = Score()
    observations = [o for i, folder in enumerate(folders) for o in read_build(i, folder)]
    for folder in folders:
        printed = stats_numbers(folder)
        score.pages_only_repeat_stats &= all(n in printed for n in page_numbers(folder))
    targets = [o for o in observations if o.value is None]
    score.withheld = len(targets)
    ids = {row[1]: row[0] for row in store.query("SELECT id, name FROM outlets")}
    model = Attack(observations)
    bounds = model.solve(targets)
    weeks = sorted({(o.start, o.end) for o in observations if o.end - o.start == timedelta(days=7)})
    singles = [((outlet, start.isoformat(), measure), model.outlet_row(outlet, start, end, measure))
               for outlet in model.outlets for start, end in weeks
               for measure in ("articles_captured", "requests")]
    for key, (lo, hi) in model.solve(singles).items():
        if hi is not None and lo == hi and lo > 0:
            score.outlets_exact.add(key)
    for target, (lo, hi) in bounds.items():
        need = _needed(store, target, ids)
        if need is None:
            continue
        score.protected += 1
        key = (target.group, target.start.isoformat(), target.end.isoformat(), target.measure)
        if hi is not None and lo == hi:
            score.exact.add(key)
        if lo > need[0] or (hi is not None and hi < need[1]):
            score.narrow.append((key, (lo, hi), need))
        ratio = math.inf if hi is None else (hi - lo) / max(1, need[1] - need[0])
        if score.tightest is None or ratio < score.tightest[0]:
            score.tightest = (ratio, key, (lo, hi), need)
    return score


def _needed(store, target, ids) -> tuple[int, int] | None:
    """Return the range a withheld count must keep, or None when the rules did not withhold it for itself."""
    members = [ids[name] for name in target.members]
    contributing = _per_outlet(store, members, target, "articles_captured")
    count = sum(1 for v in contributing.values() if v)
    if count < MIN_OUTLETS and not (count == 0 and len(members) >= MIN_OUTLETS):
        if target.measure == "outlets_contributing":
            return 0, min(MIN_OUTLETS, len(members))
        if target.measure == "sources_readable":
            return None
        return _around(sum(_per_outlet(store, members, target, target.measure).values()))
    if target.measure in ("outlets_contributing", "sources_readable"):
        return None
    values = [v for v in _per_outlet(store, members, target, target.measure).values() if v]
    if values and (len(values) < MIN_OUTLETS or max(values) > DOMINANCE * sum(values)):
        return _around(sum(values))
    return None


def _around(value: int) -> tuple[int, int]:
    margin = max(MIN_COUNT, math.ceil(SHARE * value))
    return max(0, value - margin), value + margin


def _per_outlet(store, members, target, measure) -> dict[str, int]:
    """Return each member's true value of a count over the target's interval, by the record's own rows."""
    from collector.clock import iso

    start, end = iso(target.start), iso(target.end)
    queries = {
        "articles_captured": """SELECT a.outlet_id, COUNT(*) FROM (SELECT a.id, a.outlet_id, MIN(s.captured_at) AS t
            FROM articles a JOIN snapshots s ON s.article_id = a.id AND s.purpose = 'capture' GROUP BY a.id) a
            WHERE julianday(a.t) >= julianday(?) AND julianday(a.t) < julianday(?) GROUP BY 1""",
        "articles_archived": """SELECT a.outlet_id, COUNT(*) FROM (SELECT a.id, a.outlet_id, MIN(s.captured_at) AS t
            FROM articles a JOIN snapshots s ON s.article_id = a.id AND s.purpose = 'capture' GROUP BY a.id) a
            WHERE julianday(a.t) >= julianday(?) AND julianday(a.t) < julianday(?) AND EXISTS (
              SELECT 1 FROM archive_submissions x JOIN snapshots s ON s.id = x.snapshot_id
               WHERE s.article_id = a.id AND x.status = 'success') GROUP BY 1""",
        "articles_queued": """SELECT outlet_id, COUNT(*) FROM capture_queue
            WHERE julianday(queued_at) >= julianday(?) AND julianday(queued_at) < julianday(?) GROUP BY 1""",
        "requests": """SELECT outlet_id, COUNT(*) FROM requests WHERE purpose != 'archive'
            AND julianday(started_at) >= julianday(?) AND julianday(started_at) < julianday(?) GROUP BY 1""",
        "articles_listed": """SELECT l.outlet_id, COUNT(DISTINCT e.url_key) FROM listings l
            JOIN listing_entries e ON e.listing_id = l.id
            WHERE julianday(l.fetched_at) >= julianday(?) AND julianday(l.fetched_at) < julianday(?) GROUP BY 1""",
    }
    if measure == "outlets_contributing":
        measure = "articles_captured"
    if measure.startswith("requests:"):
        rows = store.query("""SELECT outlet_id, COUNT(*) FROM requests WHERE purpose != 'archive' AND result = ?
            AND julianday(started_at) >= julianday(?) AND julianday(started_at) < julianday(?) GROUP BY 1""",
                           (measure.split(":", 1)[1], start, end))
    else:
        rows = store.query(queries[measure], (start, end))
    values = {outlet: count for outlet, count in rows}
    return {m: values.get(m, 0) for m in members}


def old_builder(store, folder, moment, workdir):
    """Build the site as the code before the published history did: figures computed at each build."""
    from collector import settings
    from collector.publish.site import build_site

    build_site(store, folder, moment, settings)


def main(argv: list[str]) -> int:
    """Attack every scenario and print what the outsider recovered (--old: the site before the history)."""
    if "--old" in argv:
        builder = old_builder
    else:
        from testing.attack_builds import history_builder as builder
    total = 0
    for name in [a for a in argv if not a.startswith("--")] or SCENARIOS:
        with tempfile.TemporaryDirectory() as tmp:
            store, folders = build_all(name, builder, Path(tmp))
            score = attack(store, folders)
        total += len(score.exact)
        print(f"{name}: {score.withheld} withheld counts over {len(folders)} builds, {score.protected} protected; "
              f"{len(score.exact)} recovered exactly, {len(score.narrow)} narrower than their range; "
              f"{len(score.outlets_exact)} weekly counts of single outlets recovered; tightest {score.tightest}")
    print(f"protected counts recovered exactly: {total}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
