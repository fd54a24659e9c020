"""Charts: round ticks, text that does not shrink with the chart, and a single period drawn as bars."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from collector import settings
from collector.publish import charts
from collector.publish.periods import week_start
from collector.publish.site import build_site
from testing.synthetic import NOW, SyntheticRecord, populate

# Figures are published for closed weeks only: build when NOW's week (2026-W48) has closed and been published.
PUBLISHED = week_start(NOW) + timedelta(days=7, hours=settings.PUBLISH_AFTER_HOURS)

ROUND = {1, 2, 5}


def _is_round(step: float) -> bool:
    """Return True for 1, 2 or 5 times a power of ten."""
    mantissa = f"{step:.10e}".split("e")[0].rstrip("0").rstrip(".")
    return float(mantissa) in ROUND


@pytest.mark.parametrize("highest, whole", [(1, True), (3, True), (7, True), (13, True), (48, True),
                                            (250, True), (416, True), (999, True), (1001, True), (23456, True),
                                            (0.37, False), (2.5, False), (0.004, False), (0, True)])
def test_ticks_fall_on_round_numbers(highest, whole):
    ticks = charts.nice_ticks(highest, whole)
    steps = {round(b - a, 10) for a, b in zip(ticks, ticks[1:])}
    assert ticks[0] == 0 and len(steps) == 1, ticks
    step = steps.pop()
    assert _is_round(step), ticks
    assert ticks[-1] >= highest and ticks[-1] - step < max(highest, 0) or highest == 0, ticks
    assert 2 <= len(ticks) <= 7, ticks
    if whole:
        assert all(t == int(t) for t in ticks), ticks


def test_a_rate_axis_runs_to_100_percent_in_steps_of_20():
    assert charts.nice_ticks(0.37, top=1.0) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]


def test_counts_of_one_or_two_get_whole_ticks():
    assert charts.nice_ticks(1, whole=True) == [0, 1]
    assert charts.nice_ticks(2, whole=True) == [0, 1, 2]


def test_one_period_is_drawn_as_bars_with_their_values_and_many_as_lines():
    one = charts.weekly_chart(["A", "B"], [[12], [None]], ["W49"], str, whole=True, period="Week 49",
                              missing="withheld")
    assert one.kind == "bars" and not one.lines
    assert [(b.name, b.label) for b in one.bars] == [("A", "12"), ("B", "withheld")]
    assert one.bars[0].width == pytest.approx(charts.BAR_SPAN * 12 / charts.nice_ticks(12, True)[-1])
    assert one.bars[1].width == 0
    many = charts.weekly_chart(["A"], [[3, None, 5]], ["W1", "W2", "W3"], str, whole=True)
    assert many.kind == "line" and not many.bars
    assert many.lines[0].path.count("M") == 2  # the withheld week is a gap, not a zero


def test_period_labels_are_few_enough_for_a_phone_and_include_the_latest():
    labels = [f"W{n}" for n in range(1, 53)]
    chart = charts.line_chart(["A"], [list(range(52))], labels, str, whole=True)
    shown = [label for _x, label in chart.x_ticks]
    assert len(shown) <= charts.MAX_PERIOD_LABELS and shown[-1] == "W52"


@pytest.fixture
def built(store, tmp_path):
    def build(weeks: int):
        r = SyntheticRecord(store)
        groups = {"a": ["a1", "a2", "a3"], "b": ["b1", "b2", "b3"]}
        for group, members in groups.items():
            r.group(group)
            for outlet in members:
                r.outlet(outlet, group)
        populate(r, groups, weeks=weeks)
        r.finish_run(NOW)
        build_site(store, tmp_path / "site", PUBLISHED, settings)
        return (tmp_path / "site" / "index.html").read_text(encoding="utf-8")

    return build


def test_the_outer_svg_has_no_viewbox_so_its_text_keeps_its_size(built):
    page = built(weeks=4)
    outer = re.findall(r'<svg class="chart-svg"[^>]*>', page)
    assert len(outer) == 2 and not any("viewBox" in tag for tag in outer)
    assert 'vector-effect="non-scaling-stroke"' in page
    assert not re.search(r'<text[^>]*font-size', page)  # sizes come from the stylesheet, in CSS px


def test_a_site_with_one_week_draws_bars_not_dots(built):
    page = built(weeks=1)
    assert "<circle" not in page
    assert page.count('class="chart chart-bars"') == 2 and "<rect" in page
