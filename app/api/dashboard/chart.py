"""A small bar chart as inline SVG (pure): no script, no external file, so it renders
with JavaScript off and under a strict Content-Security-Policy."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

WIDTH, HEIGHT, AXIS = 560, 140, 18


@dataclass(frozen=True)
class Bar:
    label: str  # under the bar
    value: float
    title: str  # shown on hover


def bar_chart(bars: Sequence[Bar], caption: str) -> Markup:
    """Bars scaled to the largest value; an empty or all-zero series draws a flat axis."""
    top = max((b.value for b in bars), default=0.0)
    slot = WIDTH / max(len(bars), 1)
    parts = [
        f'<svg class="chart" role="img" viewBox="0 0 {WIDTH} {HEIGHT + AXIS}"'
        f' width="{WIDTH}" height="{HEIGHT + AXIS}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(caption)}</title>",
        f'<line x1="0" y1="{HEIGHT}" x2="{WIDTH}" y2="{HEIGHT}" class="axis"/>',
    ]
    for i, bar in enumerate(bars):
        height = 0.0 if top <= 0 else max(bar.value / top * (HEIGHT - 4), 1.0 if bar.value else 0)
        x = i * slot + slot * 0.15
        parts.append(
            f'<rect class="bar" x="{x:.1f}" y="{HEIGHT - height:.1f}" width="{slot * 0.7:.1f}"'
            f' height="{height:.1f}"><title>{escape(bar.title)}</title></rect>'
        )
        parts.append(
            f'<text x="{x + slot * 0.35:.1f}" y="{HEIGHT + AXIS - 4}" text-anchor="middle">'
            f"{escape(bar.label)}</text>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))
