"""Disclosure control: the audit's algebra on crafted figures, and the rules on crafted records."""

from __future__ import annotations

from datetime import timedelta
from fractions import Fraction

import pytest

from collector.publish import disclosure
from collector.publish.audit import AuditFigure, audit
from collector.publish.disclosure import DisclosureError
from collector.publish.linalg import Echelon
from collector.publish.figures import compute_stats, stats_for_publication
from testing.synthetic import NOW, SyntheticRecord, populate, week_day

W47 = NOW - timedelta(days=10, hours=12)  # Monday 16 November
W48 = W47 + timedelta(days=7)


def fig(key: str, values: dict[str, dict[int, int]], family: str = "captured") -> AuditFigure:
    """Return an audit figure from {outlet: {cell: value}}."""
    return AuditFigure(key, family, {(o, c, ""): v for o, cells in values.items() for c, v in cells.items()})


A = {"a1": {0: 5}, "a2": {0: 7}}  # a group of two outlets
B = {"b1": {0: 4}, "b2": {0: 6}, "b3": {0: 9}}
C = {"c1": {0: 3}}


# -- the audit on crafted figures -------------------------------------------------------

def test_a_group_of_two_recovered_as_total_minus_others_is_caught():
    result = audit([fig("total", {**A, **B}), fig("B", B)], withheld=[fig("A", A)])
    assert not result.passed
    checks = {v.check for v in result.violations}
    assert checks == {"small_support", "withheld_derivable"}
    assert all(set(v.figures) == {"total", "B"} for v in result.violations)


def test_two_withheld_groups_with_three_outlets_together_pass():
    result = audit([fig("total", {**A, **B, **C}), fig("B", B)], withheld=[fig("A", A), fig("C", C)])
    assert result.passed, result.violations


def test_a_sliver_of_a_week_exposed_by_a_window_is_caught():
    # Cells: 0 = early part of week 47, 1 = its part inside the 7-day window, 2 = week 48.
    week47 = {"x": {0: 2, 1: 1}, "y": {0: 1, 1: 3}, "z": {0: 4, 1: 0}}
    week48 = {"x": {2: 1}, "y": {2: 1}, "z": {2: 1}}
    window = {"x": {1: 1, 2: 1}, "y": {1: 3, 2: 1}, "z": {1: 0, 2: 1}}
    figures = [fig("W47", week47), fig("W48", week48), fig("7d", window)]
    result = audit(figures)
    assert [v.check for v in result.violations] == ["small_support"]
    assert set(result.violations[0].figures) == {"W48", "7d"}
    assert {a[0] for a in result.violations[0].exposed} == {"x", "y"}
    assert audit(figures[:2]).passed


def test_zeros_of_a_small_group_are_guarded_but_zeros_of_a_large_one_are_not():
    small_zero = {"a1": {0: 0}, "a2": {0: 0}}
    large_zero = {"d1": {0: 0}, "d2": {0: 0}, "d3": {0: 0}}
    assert not audit([fig("total", {**small_zero, **B}), fig("B", B)], withheld=[fig("A", small_zero)]).passed
    assert audit([fig("total", {**large_zero, **B}), fig("B", B)], withheld=[fig("D", large_zero)]).passed


def test_a_dominated_remainder_is_caught():
    dominated = {"d1": {0: 95}, "d2": {0: 3}, "d3": {0: 2}}
    figures = [fig("total", {**dominated, **B}), fig("B", B)]
    result = audit(figures, partitions=[("total", ["D", "B"])])
    assert [v.check for v in result.violations] == ["dominated_remainder"]
    balanced = {"d1": {0: 40}, "d2": {0: 30}, "d3": {0: 30}}
    assert audit([fig("total", {**balanced, **B}), fig("B", B)], partitions=[("total", ["D", "B"])]).passed


def test_figures_of_separate_families_never_combine():
    figures = [fig("total", {**A, **B}, "captured"), fig("B", B, "queued")]
    assert audit(figures).passed


def test_elimination_is_exact_over_the_rationals():
    basis = Echelon({c: c for c in range(3)})
    for n, row in enumerate(({0: 1, 1: 1}, {1: 1, 2: 1}, {0: 1, 2: 1})):
        basis.add(row, {n: 1})
    assert basis.rank() == 3  # over GF(2) it would be 2
    combination = basis.contains({0: 1})
    assert combination == {0: Fraction(1, 2), 1: Fraction(-1, 2), 2: Fraction(1, 2)}


# -- the rules on crafted records --------------------------------------------------------

def _record(store, groups: dict[str, list[str]], **options) -> SyntheticRecord:
    r = SyntheticRecord(store)
    for group, members in groups.items():
        r.group(group)
        for outlet in members:
            r.outlet(outlet, group)
    populate(r, groups, **options)
    return r


def _figure(pub, group, period, measure="articles_captured"):
    return pub["figures"][group][period][measure]


def _reason(value) -> str | None:
    codes = {text: code for code, text in disclosure.reasons().items()}
    return codes[value["reason"]] if isinstance(value, dict) else None


GROUPS = {"pair": ["p1", "p2"], "trio": ["t1", "t2", "t3"], "big": ["g1", "g2", "g3", "g4"]}


def test_a_group_of_two_is_withheld_with_the_smallest_other_group_and_the_total_stays(store):
    _record(store, GROUPS)
    pub = stats_for_publication(store, NOW)
    for period in ("all", "7d", "30d", "2026-W48"):
        assert _reason(_figure(pub, "pair", period)) == "group"
        assert _reason(_figure(pub, "trio", period)) == "secondary"
        assert isinstance(_figure(pub, "big", period), int)
        assert isinstance(_figure(pub, "all-outlets", period), int)
    assert pub["audit"]["passed"]


def test_withheld_groups_together_with_three_outlets_need_no_partner(store):
    _record(store, {"pair": ["p1", "p2"], "solo": ["s1"], "big": ["g1", "g2", "g3", "g4"]})
    pub = stats_for_publication(store, NOW)
    assert _reason(_figure(pub, "pair", "all")) == "group"
    assert _reason(_figure(pub, "solo", "all")) == "group"
    assert isinstance(_figure(pub, "big", "all"), int)
    assert _figure(pub, "all-outlets", "all") == _figure(pub, "big", "all") + 3 * 3 * 4


def test_a_group_dropping_from_three_to_two_mid_record_hides_a_neighbouring_week(store):
    r = _record(store, {"g": ["g1", "g2"], "h": ["h1", "h2", "h3", "h4"]})
    r.outlet("g3", "g")
    for week in (W47 - timedelta(days=14), W47 - timedelta(days=7)):  # g3 only in the first two weeks
        r.article("g3", week_day(week, 1))
    pub = stats_for_publication(store, NOW)
    assert isinstance(_figure(pub, "g", "2026-W45"), int)
    assert _reason(_figure(pub, "g", "2026-W46")) == "secondary"
    assert _reason(_figure(pub, "g", "2026-W47")) == "group"
    assert _reason(_figure(pub, "g", "2026-W48")) == "group"
    assert _figure(pub, "g", "all") == 2 * 3 * 4 + 2  # the whole record stays published


def test_a_window_that_would_expose_part_of_a_week_is_withheld(store):
    r = _record(store, {"g": ["g1", "g2", "g3"], "h": ["h1", "h2", "h3"]}, weeks=2)
    for outlet in ("g1", "g2", "h1", "h2", "h3"):  # Friday of week 47, inside the 7-day window
        r.article(outlet, week_day(W47, 4))
    pub = stats_for_publication(store, NOW)
    assert isinstance(_figure(pub, "g", "2026-W47"), int) and isinstance(_figure(pub, "g", "2026-W48"), int)
    assert _reason(_figure(pub, "g", "7d")) == "secondary"
    assert pub["audit"]["passed"]


def test_a_dominant_outlet_withholds_the_count_and_its_cover(store):
    _record(store, {"dom": ["d1", "d2", "d3", "d4"], "h": ["h1", "h2", "h3"]}, per_week={"d1": 60})
    pub = stats_for_publication(store, NOW)
    value = _figure(pub, "dom", "all")
    assert _reason(value) == "dominance" and "85%" in value["reason"]
    assert _reason(_figure(pub, "dom", "all", "archive_rate")) == "dominance"  # from its counts
    assert isinstance(_figure(pub, "dom", "all", "outlets_contributing"), int)
    assert _reason(_figure(pub, "h", "all")) == "secondary"
    assert isinstance(_figure(pub, "all-outlets", "all"), int)


def test_the_audit_fails_the_build_without_secondary_suppression(store, monkeypatch):
    _record(store, GROUPS)
    monkeypatch.setattr(disclosure, "secondary_suppression", lambda context, withheld: None)
    with pytest.raises(DisclosureError, match="disclosure audit failed"):
        stats_for_publication(store, NOW)


def test_a_safe_record_passes_the_audit_with_nothing_to_add(store, monkeypatch):
    _record(store, {"a": ["a1", "a2", "a3"], "b": ["b1", "b2", "b3", "b4"]})
    monkeypatch.setattr(disclosure, "secondary_suppression", lambda context, withheld: None)
    pub = stats_for_publication(store, NOW)
    assert pub["audit"]["passed"]
    assert _figure(pub, "a", "all") + _figure(pub, "b", "all") == _figure(pub, "all-outlets", "all")


def test_every_published_sum_over_groups_leaves_three_outlets_or_none(store):
    """An independent check of the result: total minus published groups is about 0 or >= 3 outlets."""
    _record(store, {"pair": ["p1", "p2"], "trio": ["t1", "t2", "t3"], "four": ["f1", "f2", "f3", "f4"],
                    "five": ["v1", "v2", "v3", "v4", "v5"]})
    stats = compute_stats(store, NOW)
    pub = disclosure.protect(stats)
    contributors = {(f["group"], f["period"], f["measure"]): set(f["outlets"]) for f in stats["figures"]}
    for period in pub["figures"]["all-outlets"]:
        for measure, value in pub["figures"]["all-outlets"][period].items():
            if not isinstance(value, int) or measure == "outlets_monitored":
                continue
            hidden = set(contributors[("all-outlets", period, measure)])
            for group in ("pair", "trio", "four", "five"):
                if isinstance(pub["figures"][group][period].get(measure), int):
                    hidden -= contributors[(group, period, measure)]
            assert len(hidden) == 0 or len(hidden) >= 3, (period, measure)
