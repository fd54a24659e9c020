"""Charts as plain geometry, drawn into inline SVG by the templates (no JavaScript).

Text never scales with the chart: an SVG with a viewBox shrinks its text with
its width (a 720-unit chart on a 390 px phone draws 13 px labels at 7 px).
So the outer SVG has no viewBox: its user unit is the CSS pixel, text has the
stylesheet's size at every width, horizontal positions are percentages of the
width, and vertical ones are pixels of a fixed height. Only the lines are
drawn in a nested, stretched viewBox, with strokes that do not scale.

Ticks fall on round numbers (1, 2 or 5 times a power of ten; whole numbers for
counts). A chart of a single period is drawn as bars, one per group with its
value written beside it, never as a lone dot. A withheld period is a gap in
its line, never a zero: a zero would be a figure the disclosure control did
not publish.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

# Colours readable on white and apart for common colour blindness; each line
# also has its own dash pattern so colour is never the only cue.
PALETTE = ("#1f5f99", "#c0392b", "#1e8a73", "#9a6208", "#6b4c9a", "#3d4f5c", "#8a5a44")
DASHES = ("", "6 3", "2 3", "8 3 2 3", "1 2", "10 4", "4 4")
HEIGHT = 240  # CSS px, at every width
TOP, BOTTOM = 28, 36  # room above the plot (the top tick's label) and below it (period labels)
X_FROM, X_TO = 7.0, 95.0  # percent of the width the periods span: room for the tick labels at the left, half a label at the right
INNER_WIDTH = 1000  # user units across the nested viewBox the lines are drawn in
MAX_PERIOD_LABELS = 7  # labels under the axis, so they fit side by side on a 360 px phone
BAR_ROW, BAR_THICKNESS, BAR_SPAN = 46, 16, 78.0  # px per group, px per bar, percent of the width the longest bar may take


@dataclass
class Line:
    """One series: its name, colour, dash, path (in the nested viewBox) and dots (x in percent, y in px)."""

    name: str
    colour: str
    dash: str
    path: str
    points: list[tuple[float, float]] = field(default_factory=list)


@dataclass
class Bar:
    """One group's value in a single-period chart: width in percent of the chart, its label, its row's top."""

    name: str
    colour: str
    width: float
    label: str
    y: float


@dataclass
class Chart:
    """Everything a template needs to draw one chart; `kind` is 'line' or 'bars'."""

    kind: str
    height: int
    y_ticks: list[tuple[float, str]] = field(default_factory=list)  # (y in px, label)
    x_ticks: list[tuple[float, str]] = field(default_factory=list)  # (x in percent, label)
    lines: list[Line] = field(default_factory=list)
    bars: list[Bar] = field(default_factory=list)
    period: str = ""  # the single period a bar chart shows
    plot_top: float = TOP
    plot_bottom: float = HEIGHT - BOTTOM

    @property
    def plot_height(self) -> float:
        return self.plot_bottom - self.plot_top

    @property
    def inner_width(self) -> int:
        return INNER_WIDTH


def nice_ticks(highest: float, whole: bool = False, top: float | None = None) -> list[float]:
    """Return round tick values from 0 past `highest`: steps of 1, 2 or 5 times a power of ten, four or five of them.

    `whole` keeps every step a whole number (counts); `top`, when given, is the last tick (a rate's 100%).
    """
    ceiling = top if top is not None else max(highest, 0)
    if ceiling <= 0:
        return [0, 1]
    rough = ceiling / 5
    magnitude = 10 ** math.floor(math.log10(rough))
    step = next(f * magnitude for f in (1, 2, 5, 10) if f * magnitude >= rough)
    if whole:
        step = max(1, round(step))
    count = math.ceil(ceiling / step - 1e-9)
    return [round(k * step, 10) for k in range(count + 1)]


def weekly_chart(names: list[str], series: list[list[float | None]], x_labels: list[str],
                 y_label: Callable[[float], str], whole: bool = False, y_max: float | None = None,
                 period: str = "", missing: str = "", value_label: Callable[[float], str] | None = None) -> Chart:
    """Return a line chart of the periods, or bars when there is a single period.

    `y_label` writes a tick, `value_label` (default: y_label) a bar's own value, `missing` a withheld bar.
    """
    if len(x_labels) == 1:
        return bar_chart(names, [s[0] if s else None for s in series], value_label or y_label, whole, y_max,
                         period, missing)
    return line_chart(names, series, x_labels, y_label, whole, y_max)


def line_chart(names: list[str], series: list[list[float | None]], x_labels: list[str],
               y_label: Callable[[float], str], whole: bool = False, y_max: float | None = None) -> Chart:
    """Return the geometry of a line chart; None values are gaps."""
    values = [v for s in series for v in s if v is not None]
    ticks = nice_ticks(max(values, default=0), whole, y_max)
    chart = Chart("line", HEIGHT)
    count = max(len(x_labels), 1)

    def x(i: int) -> float:
        return X_FROM + (X_TO - X_FROM) * (i / (count - 1) if count > 1 else 0.5)

    def y(v: float) -> float:
        return chart.plot_bottom - chart.plot_height * (v / ticks[-1])

    for n, (name, values_of) in enumerate(zip(names, series)):
        points = [(x(i), y(v)) for i, v in enumerate(values_of) if v is not None]
        inner = lambda i: x(i) / 100 * INNER_WIDTH  # noqa: E731
        chart.lines.append(Line(name, PALETTE[n % len(PALETTE)], DASHES[n % len(DASHES)],
                                _path(values_of, inner, lambda v: y(v) - chart.plot_top), points))
    chart.y_ticks = [(y(t), y_label(t)) for t in ticks]
    step = max(1, -(-count // MAX_PERIOD_LABELS))
    shown = list(range(len(x_labels) - 1, -1, -step))[::-1]  # always label the latest period; none before the first
    chart.x_ticks = [(x(i), x_labels[i]) for i in shown]
    return chart


def bar_chart(names: list[str], values: list[float | None], y_label: Callable[[float], str], whole: bool = False,
              y_max: float | None = None, period: str = "", missing: str = "") -> Chart:
    """Return one horizontal bar per group with its value beside it; a withheld value is a row with no bar."""
    ticks = nice_ticks(max((v for v in values if v is not None), default=0), whole, y_max)
    chart = Chart("bars", TOP + BAR_ROW * max(len(names), 1), period=period)
    for n, (name, value) in enumerate(zip(names, values)):
        width = 0.0 if value is None else BAR_SPAN * value / ticks[-1]
        chart.bars.append(Bar(name, PALETTE[n % len(PALETTE)], width, missing if value is None else y_label(value),
                              TOP + BAR_ROW * n))
    return chart


def _path(values: list[float | None], x, y) -> str:
    """Return an SVG path that starts a new stroke after every gap."""
    parts, pen_down = [], False
    for i, value in enumerate(values):
        if value is None:
            pen_down = False
            continue
        parts.append(f"{'L' if pen_down else 'M'}{x(i):.1f} {y(value):.1f}")
        pen_down = True
    return " ".join(parts)
