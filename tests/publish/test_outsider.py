"""The outsider's integer program: the tightest intervals published figures allow, on crafted figures."""

from __future__ import annotations

import pytest

from collector.publish.outsider import CAPTURE_BOUND, BlockModel, ModelError

PAIR, TRIO, BIG = ("p1", "p2"), ("t1", "t2", "t3"), ("b1", "b2", "b3", "b4")
GROUPS = {"pair": PAIR, "trio": TRIO, "big": BIG, "total": PAIR + TRIO + BIG}


def model(weeks=("W1",), month=None, groups=GROUPS, results=()):
    return BlockModel(list(weeks), month, groups, results)


def fix(m, group, period, **values):
    for measure, value in values.items():
        m.fix((group, period, measure), value)


def test_a_withheld_group_is_the_total_minus_the_others():
    m = model()
    fix(m, "trio", "W1", articles_captured=15)
    fix(m, "big", "W1", articles_captured=20)
    fix(m, "total", "W1", articles_captured=45)
    got = m.interval(("pair", "W1", "articles_captured"))
    assert (got.lo, got.hi) == (10, 10)


def test_full_groups_pin_a_small_group_s_contributing_count():
    """With every member of the others contributing, the total gives the pair's count away."""
    m = model()
    fix(m, "trio", "W1", outlets_contributing=3)
    fix(m, "total", "W1", outlets_contributing=8)
    got = m.interval(("pair", "W1", "outlets_contributing"))
    assert (got.lo, got.hi) == (1, 2)  # 8 - 3 - (at most 4 of big)
    fix(m, "big", "W1", outlets_contributing=4)
    got = m.interval(("pair", "W1", "outlets_contributing"))
    assert (got.lo, got.hi) == (1, 1)


def test_captured_bounds_contributing_and_archived_bounds_captured():
    m = model()
    fix(m, "pair", "W1", articles_captured=0)
    assert m.interval(("pair", "W1", "outlets_contributing")).hi == 0  # no capture: nobody contributed
    assert m.interval(("pair", "W1", "articles_archived")).hi == 0
    m = model()
    fix(m, "pair", "W1", outlets_contributing=2)
    assert m.interval(("pair", "W1", "articles_captured")).lo == 2  # each contributor captured one
    fix(m, "pair", "W1", articles_archived=7)
    assert m.interval(("pair", "W1", "articles_captured")).lo == 7
    assert m.interval(("pair", "W1", "requests")).hi is None  # nothing bounds requests


def test_a_month_minus_its_other_weeks_gives_a_withheld_week():
    m = model(weeks=("W1", "W2"), month="M")
    fix(m, "pair", "M", articles_captured=30)
    fix(m, "pair", "W2", articles_captured=12)
    got = m.interval(("pair", "W1", "articles_captured"))
    assert (got.lo, got.hi) == (18, 18)


def test_a_month_s_contributing_and_listed_follow_its_weeks():
    m = model(weeks=("W1", "W2"), month="M")
    fix(m, "trio", "W1", outlets_contributing=3, articles_listed=40)
    fix(m, "trio", "W2", articles_listed=25)
    assert m.interval(("trio", "M", "outlets_contributing")).lo == 3
    got = m.interval(("trio", "M", "articles_listed"))
    assert (got.lo, got.hi) == (40, 65)  # at least one week's distinct addresses, at most their sum
    fix(m, "trio", "W2", sources_readable=2)
    got = m.interval(("trio", "M", "sources_readable"))
    assert (got.lo, got.hi) == (2, 2)  # readable at a month's end is readable at its last week's


def test_requests_by_result_add_up_to_the_requests():
    m = model(weeks=("W1",), month="M", results=("ok", "timeout"))
    fix(m, "pair", "W1", requests=100)
    m.fix(("pair", "M", "requests:ok"), 93)
    got = m.interval(("pair", "M", "requests:timeout"))
    assert (got.lo, got.hi) == (7, 7)


def test_contradictory_figures_are_a_model_error_not_an_interval():
    m = model()
    fix(m, "pair", "W1", outlets_contributing=2, articles_captured=1)
    with pytest.raises(ModelError):
        m.interval(("trio", "W1", "articles_captured"))


def test_the_capture_bound_is_the_pacing_limit_of_a_week():
    assert CAPTURE_BOUND == 7 * 24 * 3600 // 2


def test_a_month_without_any_member_outlet_gives_every_figure_as_zero():
    """Every outlet inactive: the groups have no members, and a sum over no outlet is 0 (no solver to build)."""
    m = model(weeks=("W1", "W2"), month="M", groups={"total": ()}, results=("ok",))
    fix(m, "total", "W1", articles_captured=0)
    for period, measure in (("W1", "articles_captured"), ("W2", "sources_readable"), ("M", "requests:ok")):
        got = m.interval(("total", period, measure))
        assert (got.lo, got.hi, got.proved) == (0, 0, True)
    fix(m, "total", "W2", requests=4)  # four requests of no outlet: the figures contradict the definitions
    with pytest.raises(ModelError):
        m.interval(("total", "W2", "requests"))
