"""Line charts as plain geometry, drawn into inline SVG by the templates (no JavaScript).

A withheld week is a gap in its line, never a zero: a zero would be a figure
the disclosure control did not publish.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Colours readable on white and apart for common colour blindness; each line
# also has its own dash pattern so colour is never the only cue.
PALETTE = ("#1f5f99", "#c0392b", "#1e8a73", "#b7770d", "#6b4c9a", "#3d4f5c", "#8a5a44")
DASHES = ("", "6 3", "2 3", "8 3 2 3", "1 2", "10 4", "4 4")
WIDTH, HEIGHT = 720, 300
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 16, 40


@dataclass
class Line:
    """One series: its name, colour, dash, path and points."""

    name: str
    colour: str
    dash: str
    path: str
    points: list[tuple[float, float]] = field(default_factory=list)


@dataclass
class Chart:
    """Everything a template needs to draw one chart."""

    width: int
    height: int
    lines: list[Line]
    y_ticks: list[tuple[float, str]]  # (y position, label)
    x_ticks: list[tuple[float, str]]  # (x position, label)
    plot: tuple[float, float, float, float]  # left, top, right, bottom


def line_chart(names: list[str], series: list[list[float | None]], x_labels: list[str],
               y_label, y_max: float | None = None) -> Chart:
    """Return the geometry of a line chart; None values are gaps."""
    values = [v for s in series for v in s if v is not None]
    top = y_max if y_max is not None else _nice_ceiling(max(values, default=0))
    right, bottom = WIDTH - RIGHT, HEIGHT - BOTTOM
    count = max(len(x_labels), 1)

    def x(i: int) -> float:
        return LEFT + (right - LEFT) * (i / (count - 1) if count > 1 else 0.5)

    def y(v: float) -> float:
        return bottom - (bottom - TOP) * (v / top if top else 0)

    lines = []
    for n, (name, values_of) in enumerate(zip(names, series)):
        points = [(x(i), y(v)) for i, v in enumerate(values_of) if v is not None]
        lines.append(Line(name, PALETTE[n % len(PALETTE)], DASHES[n % len(DASHES)],
                          _path(values_of, x, y), points))
    steps = _divisions(top)
    y_ticks = [(y(top * k / steps), y_label(top * k / steps)) for k in range(steps + 1)]
    step = max(1, -(-count // 8))  # at most about eight labels under the axis
    x_ticks = [(x(i), label) for i, label in enumerate(x_labels) if i % step == 0]
    return Chart(WIDTH, HEIGHT, lines, y_ticks, x_ticks, (LEFT, TOP, right, bottom))


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


def _divisions(top: float) -> int:
    """Return how many grid steps split top into round numbers (20 -> 4 x 5, 50 -> 5 x 10)."""
    magnitude = 10 ** (len(str(int(top))) - 1) if top >= 1 else 1
    return 4 if round(top / magnitude, 1) in (2, 2.5) else 5


def _nice_ceiling(value: float) -> float:
    """Return a round number at or above value (1, 2, 2.5 or 5 times a power of ten)."""
    if value <= 0:
        return 1
    magnitude = 10 ** (len(str(int(value))) - 1) if value >= 1 else 1
    for factor in (1, 2, 2.5, 5, 10):
        if factor * magnitude >= value:
            return factor * magnitude
    return 10 * magnitude
