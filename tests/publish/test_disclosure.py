"""Disclosure control on crafted records: the rules, the protection ranges and the secondary choices."""

from __future__ import annotations

from datetime import timedelta

import pytest

from collector import settings
from collector.publish import disclosure
from collector.publish.disclosure import needed
from collector.publish.history import History
from collector.publish.release import WITHHELD, release
from testing.synthetic import NOW, SyntheticRecord, populate

LATER = NOW + timedelta(days=5)  # W45-W48 and November 2026 are closed and published
PERIODS = ["2026-W45", "2026-W46", "2026-W47", "2026-W48", "2026-11"]


def _record(store, groups: dict[str, list[str]], **options) -> SyntheticRecord:
    r = SyntheticRecord(store)
    for group, members in groups.items():
        r.group(group)
        for outlet in members:
            r.outlet(outlet, group)
    populate(r, groups, **options)
    return r


def _lines(store, now=LATER):
    out = release(store, now, History.memory(), write=False)
    assert out.audit.passed, out.audit.summary()
    return {line["period"]: line for line in out.published}, {line["period"]: line for line in out.decisions}


def _withheld(line, group) -> bool:
    return line["figures"][group]["articles_captured"] == WITHHELD


def test_protection_ranges():
    assert needed(2, True, members=2) == (0, 2)  # an outlet count: from none to min(3, members)
    assert needed(2, True, members=18) == (0, 3)
    assert needed(100, False, members=3) == (80, 120)  # a fifth either side
    assert needed(6, False, members=3) == (3, 9)  # at least 3 either side
    assert needed(1, False, members=3) == (0, 4)  # never below 0


def test_a_group_of_two_beside_three_and_four_hides_the_total_not_the_others(store):
    _record(store, {"pair": ["p1", "p2"], "trio": ["t1", "t2", "t3"], "big": ["g1", "g2", "g3", "g4"]})
    published, decisions = _lines(store)
    for period in PERIODS:
        line = published[period]
        assert _withheld(line, "pair") and _withheld(line, "all-outlets"), period
        assert line["figures"]["trio"]["articles_captured"] == (9 if period != "2026-11" else 36)
        assert not _withheld(line, "big")
        ranges = {(g, m): (lo, hi) for g, m, lo, hi in decisions[period]["ranges"]}
        assert ranges[("pair", "outlets_contributing")] == (0, 2)
        assert ("trio", "outlets_contributing") not in ranges  # only what the rules withheld is protected


def test_a_silent_outlet_in_a_larger_group_lets_that_group_protect_and_the_total_stay(store):
    r = _record(store, {"pair": ["p1", "p2"], "trio": ["t1", "t2", "t3"],
                        "big": ["g1", "g2", "g3", "g4", "g5", "g6"]})
    r.outlet("g7", "big")
    r.outlet("g8", "big")  # two members of big never capture anything: room to hide the pair in
    published, _ = _lines(store)
    line = published["2026-W46"]
    assert _withheld(line, "pair") and _withheld(line, "big")
    assert not _withheld(line, "all-outlets") and not _withheld(line, "trio")


def test_one_dominating_outlet_withholds_its_group_and_a_partner(store):
    _record(store, {"dom": ["d1", "d2", "d3", "d4"], "h": ["h1", "h2", "h3"], "k": ["k1", "k2", "k3"]},
            per_week={"d1": 60})
    published, decisions = _lines(store)
    line = published["2026-W46"]
    assert _withheld(line, "dom")
    assert sum(_withheld(line, g) for g in ("h", "k", "all-outlets")) >= 1
    ranges = {(g, m) for g, m, _, _ in decisions["2026-W46"]["ranges"]}
    assert ("dom", "articles_captured") in ranges and ("dom", "outlets_contributing") not in ranges


def test_every_count_of_a_cell_is_withheld_together(store):
    _record(store, {"pair": ["p1", "p2"], "trio": ["t1", "t2", "t3"], "big": ["g1", "g2", "g3", "g4"]},
            vary=True)
    published, _ = _lines(store)
    for line in published.values():
        for group, shown in line["figures"].items():
            counts = [shown[m] for m in ("outlets_contributing", "sources_readable", "articles_listed",
                                         "articles_queued", "articles_captured", "articles_archived", "requests")]
            assert all(v == WITHHELD for v in counts) or all(isinstance(v, int) for v in counts), (line["period"], group)


@pytest.mark.parametrize("per_week", [{}, {"a1": 9, "b2": 1}, {"b1": 8, "a3": 1}])
def test_a_tie_between_two_groups_is_broken_the_same_way_whatever_their_values(store, per_week):
    """Two groups of three beside a pair: the partner is chosen by the registry, never by the counts."""
    r = _record(store, {"a": ["a1", "a2", "a3"], "b": ["b1", "b2", "b3"], "pair": ["p1", "p2"]},
                per_week=per_week)
    for outlet in ("a4", "a5", "b4", "b5"):
        r.outlet(outlet, outlet[0])  # two silent members each: either group can cover the pair alone
    published, _ = _lines(store)
    for period in PERIODS:
        line = published[period]
        assert _withheld(line, "pair") and _withheld(line, "a") and not _withheld(line, "b"), period


def test_a_failing_audit_publishes_nothing_and_says_why_without_naming_a_group(store, tmp_path, monkeypatch):
    _record(store, {"pair": ["p1", "p2"], "trio": ["t1", "t2", "t3"], "big": ["g1", "g2", "g3", "g4"]})
    monkeypatch.setattr(disclosure.Protector, "protect", lambda self, decision: None)
    history = History.open(tmp_path / "published", tmp_path / "decisions")
    out = release(store, LATER, history)
    assert not out.appended and not (tmp_path / "published").exists()
    summary = out.summary()
    assert "Nothing new was published" in summary and "disclosure audit failed" in summary
    assert "2026-W45" in summary
    for name in ("pair", "trio", "big", "p1", "t1"):
        assert name not in summary
    assert str(settings.MIN_OUTLETS_PER_FIGURE) not in summary.split("disclosure audit failed")[0]


def test_a_median_is_published_only_where_every_cell_it_is_computed_from_is(store):
    r = _record(store, {"g": ["g1", "g2", "g3", "g4"], "h": ["h1", "h2", "h3", "h4"], "k": ["k1", "k2", "k3"]},
                weeks=0)
    populate(r, {"g": ["g1"], "h": ["h1", "h2", "h3", "h4"], "k": ["k1", "k2", "k3"]}, weeks=4)
    w45 = NOW - timedelta(days=24, hours=12)
    for week in (0, 2, 3):  # g2-g4 capture nothing in W46: g is withheld by the group rule that week
        for outlet in ("g2", "g3", "g4"):
            r.article(outlet, w45 + timedelta(days=7 * week, hours=9))
    published, _ = _lines(store)
    median = "median_delay_minutes"
    assert published["2026-W46"]["figures"]["g"][median] == WITHHELD
    assert published["2026-W46"]["figures"]["h"][median] == 60.0  # an hour from listing to capture
    shown = [p for p in PERIODS[:4] if not _withheld(published[p], "g")]
    assert shown and all(published[p]["figures"]["g"][median] == 60.0 for p in shown)
    month = published["2026-11"]["figures"]
    assert month["h"][median] == 60.0
    assert month["g"][median] == WITHHELD  # it would mix in the withheld week
    assert month["all-outlets"][median] == WITHHELD
    for period in PERIODS[:4]:  # the total's median only where every group's week is shown
        every = all(not _withheld(published[period], group) for group in ("g", "h", "k", "all-outlets"))
        assert (published[period]["figures"]["all-outlets"][median] == 60.0) == every


def _delays_record(store, captures: dict[str, tuple[int, int]]) -> None:
    """Groups g (the outlets given) and h (three outlets, 3 captures each an hour after listing) in W47.

    captures: outlet -> (articles captured an hour after their listing, articles captured before any listing
    named them, which have no delay).
    """
    r = SyntheticRecord(store)
    w47 = NOW - timedelta(days=10, hours=12)
    for group, outlets in (("g", captures), ("h", {o: (3, 0) for o in ("h1", "h2", "h3")})):
        r.group(group)
        for outlet, (timed, early) in outlets.items():
            r.outlet(outlet, group)
            for n in range(timed + early):
                after = timedelta(hours=1) if n < timed else timedelta(hours=-1)
                r.article(outlet, w47 + timedelta(days=n % 5, hours=9 + n // 5), after)


def test_a_median_of_two_outlets_delays_is_withheld_though_three_contributed(store):
    _delays_record(store, {"g1": (3, 0), "g2": (3, 0), "g3": (0, 3)})  # g3's captures all came before a listing
    published, _ = _lines(store)
    figures = published["2026-W47"]["figures"]
    assert figures["g"]["outlets_contributing"] == 3 and figures["g"]["articles_captured"] == 9  # counts shown
    assert figures["g"]["median_delay_minutes"] == WITHHELD
    assert figures["h"]["median_delay_minutes"] == 60.0
    assert figures["all-outlets"]["median_delay_minutes"] == WITHHELD  # it is computed from g's


def test_a_median_one_outlet_dominates_is_withheld(store):
    # 12 of g's 14 delays are g1's (86%, over the dominance share), though g1 made only half of the captures.
    _delays_record(store, {"g1": (12, 0), "g2": (1, 5), "g3": (1, 5)})
    published, _ = _lines(store)
    figures = published["2026-W47"]["figures"]
    assert 12 / 14 > settings.DOMINANCE_SHARE >= 12 / 24
    assert figures["g"]["articles_captured"] == 24
    assert figures["g"]["median_delay_minutes"] == WITHHELD
    assert figures["h"]["median_delay_minutes"] == 60.0


def test_a_median_of_three_outlets_none_dominating_is_published(store):
    _delays_record(store, {"g1": (10, 0), "g2": (1, 5), "g3": (1, 5)})  # 10 of 12: 83%
    published, _ = _lines(store)
    assert published["2026-W47"]["figures"]["g"]["median_delay_minutes"] == 60.0
