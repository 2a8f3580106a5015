"""Small charts drawn on the server as SVG, each with a text alternative.

No chart library is downloaded: a histogram, a line or a bar chart of one
series is a few rectangles or a polyline, with the axis range written out.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

WIDTH, HEIGHT = 480, 220
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 12, 44


@dataclass(frozen=True)
class Series:
    name: str
    kind: str  # histogram | line | bar
    x: Sequence[float | str]
    y: Sequence[float]
    x_label: str
    y_label: str

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> "Series":
        """A series as the worker's JSON result carries it."""
        return cls(raw["name"], raw["kind"], raw["x"], raw["y"], raw["x_label"], raw["y_label"])


def _fmt(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 1e4 or abs(value) < 1e-3:
        return f"{value:.2e}"
    return f"{value:.4g}"


def _finite(values: Sequence[float]) -> list[float]:
    return [v for v in values if isinstance(v, int | float) and math.isfinite(v)]


def summary(series: Series) -> str:
    """One sentence that says what the chart shows, for its text alternative."""
    ys = _finite(series.y)
    if not ys:
        return f"{series.name}: no finite values."
    if series.kind == "bar" or any(isinstance(x, str) for x in series.x):
        pairs = ", ".join(f"{x}: {_fmt(y)}" for x, y in zip(series.x, series.y, strict=False))
        return f"{series.name}: {pairs}."
    xs = [float(x) for x in series.x]
    peak = max(range(len(ys)), key=lambda i: ys[i])
    return (
        f"{series.name}: {series.y_label} against {series.x_label} for {series.x_label} "
        f"from {_fmt(min(xs))} to {_fmt(max(xs))}; {series.y_label} ranges from "
        f"{_fmt(min(ys))} to {_fmt(max(ys))}, highest at {series.x_label} = {_fmt(xs[peak])}."
    )


def svg(series: Series, chart_id: str) -> Markup:
    """The chart as inline SVG; ``chart_id`` makes its title/desc ids unique on the page."""
    ys = [v if isinstance(v, int | float) and math.isfinite(v) else 0.0 for v in series.y]
    top = max([*ys, 0.0])
    bottom = min([*ys, 0.0])
    span = (top - bottom) or 1.0
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def y_pos(value: float) -> float:
        return TOP + plot_h * (1 - (value - bottom) / span)

    shapes: list[str] = []
    n = len(ys)
    categorical = series.kind in ("histogram", "bar") or any(isinstance(x, str) for x in series.x)
    if categorical and n:
        step = plot_w / n
        for i, value in enumerate(ys):
            y0, y1 = y_pos(max(value, 0.0)), y_pos(min(value, 0.0))
            shapes.append(
                f'<rect x="{LEFT + i * step + step * 0.1:.1f}" y="{y0:.1f}" '
                f'width="{step * 0.8:.1f}" height="{max(y1 - y0, 0.5):.1f}" class="bar"/>'
            )
    elif n:
        xs = [float(x) for x in series.x]
        lo, hi = min(xs), max(xs)
        width = (hi - lo) or 1.0
        points = " ".join(
            f"{LEFT + plot_w * (x - lo) / width:.1f},{y_pos(y):.1f}"
            for x, y in zip(xs, ys, strict=False)
        )
        shapes.append(f'<polyline points="{points}" class="line"/>')
    x_first = series.x[0] if n else ""
    x_last = series.x[-1] if n else ""
    label_first = x_first if isinstance(x_first, str) else _fmt(float(x_first))
    label_last = x_last if isinstance(x_last, str) else _fmt(float(x_last))
    title_id, desc_id = f"{chart_id}-title", f"{chart_id}-desc"
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-labelledby="{title_id} {desc_id}" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{title_id}">{escape(series.name)}</title>',
        f'<desc id="{desc_id}">{escape(summary(series))}</desc>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + plot_h}" class="axis"/>',
        f'<line x1="{LEFT}" y1="{y_pos(0.0):.1f}" x2="{LEFT + plot_w}" y2="{y_pos(0.0):.1f}" '
        'class="axis"/>',
        *shapes,
        f'<text x="{LEFT - 6}" y="{TOP + 10}" text-anchor="end">{_fmt(top)}</text>',
        f'<text x="{LEFT - 6}" y="{TOP + plot_h}" text-anchor="end">{_fmt(bottom)}</text>',
        f'<text x="{LEFT}" y="{HEIGHT - BOTTOM + 16}">{escape(label_first)}</text>',
        f'<text x="{LEFT + plot_w}" y="{HEIGHT - BOTTOM + 16}" text-anchor="end">'
        f"{escape(label_last)}</text>",
        f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 8}" text-anchor="middle">'
        f"{escape(series.x_label)}</text>",
        f'<text x="14" y="{TOP + plot_h / 2}" text-anchor="middle" '
        f'transform="rotate(-90 14 {TOP + plot_h / 2})">{escape(series.y_label)}</text>',
        "</svg>",
    ]
    return Markup("".join(parts))
