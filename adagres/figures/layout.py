"""Shared look of every figure: template, fonts, margins, colours, and safe hover text."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable
from typing import Any

import plotly.graph_objects as go

from ..core.strategies import STRATEGIES

__all__ = [
    "FONT",
    "HOVER_LABEL",
    "HOVER_LINE",
    "PALETTE",
    "SHORT_MODEBAR",
    "STRATEGY_COLORS",
    "TITLE_CHARS",
    "TITLE_MARGIN",
    "TITLE_MARGIN_PER_LINE",
    "UNDIMMED",
    "apply_layout",
    "escape",
    "map_layout",
    "one_point",
    "panel_vline",
    "plain_name",
    "snippet",
    "wrap_title",
    "wrapped_snippet",
]

#: Named colours used across figures (colour-blind safe: Okabe–Ito plus greys).
PALETTE: dict[str, str] = {
    "query": "#D55E00",  # vermillion
    "selected": "#0072B2",  # blue
    "winner": "#E69F00",  # orange
    "runner_up": "#56B4E9",  # sky blue
    "candidate": "#999999",
    "did_not_fit": "#BBBBBB",
    "stop": "#CC79A7",  # reddish purple
    "remaining": "#FFFFFF",
    "grid": "#DDDDDD",
    "zero": "#666666",
    "adaptive": "#009E73",  # bluish green
    "manual": "#D55E00",
    "band": "rgba(153, 153, 153, 0.25)",
    "chunk": "#666666",
}

#: Continuous colour scale for gains (low → high): light to dark green, so it never
#: competes with the blue of selected chunks or the orange of the winner.
GAIN_SCALE = "YlGn"

#: Colours given to the strategies in the registry's order (Okabe–Ito; black for the fifth,
#: the optimum), so a strategy keeps its colour across figures.
STRATEGY_PALETTE = (
    "#0072B2",
    "#E69F00",
    "#D55E00",
    "#009E73",
    "#000000",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#882255",
)
#: One colour per strategy, stable across figures.
STRATEGY_COLORS: dict[str, str] = dict(zip(STRATEGIES, STRATEGY_PALETTE, strict=False))

#: A trace's look for points outside a click selection: unchanged. plotly dims them to a
#: fifth by default, which on a map the pages select from would fade every other chunk.
UNDIMMED: dict[str, Any] = {"marker": {"opacity": 1.0}}

FONT: dict[str, Any] = {"family": "Inter, Helvetica, Arial, sans-serif", "size": 13}


# A small template with the look of plotly's "plotly_white": white ground, light grid.
# Built once: naming "plotly_white" makes plotly validate its whole template (about 10 ms
# per figure), which the Selection page would pay three times on every slider move.
_GRID = "#EBF0F8"
_AXIS = {"gridcolor": _GRID, "zerolinecolor": _GRID, "linecolor": _GRID, "ticks": ""}
_TEMPLATE = go.layout.Template(
    layout={
        "plot_bgcolor": "white",
        "paper_bgcolor": "white",
        "xaxis": _AXIS,
        "yaxis": _AXIS,
        "colorway": [*STRATEGY_PALETTE[:6], PALETTE["stop"], PALETTE["chunk"]],
    }
)


#: Characters per title line: a longer title is wrapped at spaces (plotly does not wrap).
TITLE_CHARS = 56
#: Space above the title for plotly's mode bar, which shows over the figure's top edge.
MODEBAR_ROW = 30
#: Pixels per line of a wrapped title (plotly's title font is 1.3 × FONT's size, its lines
#: 1.4 apart: 24 px at 13 px).
TITLE_LINE = 24
#: The top margin plotly's title automargin asks for, one line and each further line
#: (measured in Chromium: 70, 117.4 and 164.8 px for one to three lines), rounded up.
TITLE_MARGIN, TITLE_MARGIN_PER_LINE = 72, 48

#: Stop reasons and verdicts as the app says them where underscores as spaces would not do
#: (the enum values are identifiers; :func:`plain_name` spaces the others).
PLAIN_NAMES: dict[str, str] = {
    "non_positive_gain": "no positive gain",
    "not_in_optimum": "not in the optimum",
    "duplicate": "duplicate of a pick",
}


def plain_name(value: Any) -> str:
    """A stop reason or verdict kind (enum or its value) in words.

    >>> plain_name("non_positive_gain"), plain_name("budget_exhausted")
    ('no positive gain', 'budget exhausted')
    """
    raw = str(getattr(value, "value", value))
    return PLAIN_NAMES.get(raw, raw.replace("_", " "))


def wrap_title(text: str, width: int = TITLE_CHARS) -> str:
    """``text`` with ``<br>`` between words so that no line is much longer than ``width``
    characters (markup such as ``<b>`` counts as characters; titles here use little).

    >>> wrap_title("one two three", 8)
    'one two<br>three'
    """
    lines: list[str] = []
    for paragraph in text.split("<br>"):
        line = ""
        for word in paragraph.split(" "):
            if line and len(line) + 1 + len(word) > width:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
    return "<br>".join(lines)


def apply_layout(
    fig: go.Figure, *, title: str | None = None, height: int | None = None
) -> go.Figure:
    """Set the shared template, font and margins (and optionally title and height) in place.

    ``title`` is plotly label markup written by code: escape any user text in it (chunk ids)
    with :func:`escape`. Long titles are wrapped (:func:`wrap_title`). The title sits below
    a free row for plotly's mode bar, and the legend (horizontal) goes under the plot, so
    neither the mode bar nor a legend that wraps onto several rows covers the title; both
    push the plot area instead of overlapping it (plotly's automargin). The top margin
    starts where the title's automargin would put it (:data:`TITLE_MARGIN`): a margin that
    automargin has to grow makes plotly draw the whole figure twice (a 677-pick budget bar:
    0.37 s a draw instead of 0.15 s). Returns ``fig`` so calls can be chained.
    """
    layout: dict[str, Any] = {
        "template": _TEMPLATE,
        "font": FONT,
        "margin": {"l": 60, "r": 20, "t": MODEBAR_ROW + 10, "b": 50},
        "hoverlabel": {"font": {"family": FONT["family"], "size": 12}, "align": "left"},
        "legend": {
            "orientation": "h",
            "yref": "container",
            "yanchor": "bottom",
            "y": 0,
            "xanchor": "left",
            "x": 0,
        },
    }
    if title is not None:
        text = wrap_title(title)
        lines = text.count("<br>") + 1
        # plotly ends a title of several lines where one line would end (it grows upward,
        # out of the figure: two lines measured 16 px above its top in Chromium), so the
        # pad holds the lines beyond the first above it.
        top = MODEBAR_ROW + TITLE_LINE * (lines - 1)
        layout["margin"]["t"] = TITLE_MARGIN + TITLE_MARGIN_PER_LINE * (lines - 1)
        layout["title"] = {
            "text": text,
            "x": 0,
            "xanchor": "left",
            "xref": "container",
            "y": 1,
            "yanchor": "top",
            "yref": "container",
            "pad": {"t": top, "l": 8, "b": 8},
            "automargin": True,
        }
    if height is not None:
        layout["height"] = height
    fig.update_layout(**layout)
    return fig


def map_layout(fig: go.Figure, *, title: str | None, height: int | None, **extra: Any) -> None:
    """:func:`apply_layout` for a 2-D map: white hover labels, no ticks, equal axes."""
    apply_layout(fig, title=title, height=height)
    fig.update_layout(hoverlabel=HOVER_LABEL, **extra)
    fig.update_xaxes(showticklabels=False, zeroline=False, title=None)
    fig.update_yaxes(showticklabels=False, zeroline=False, title=None, scaleanchor="x")


def one_point(
    xy: Any, name: str, marker: dict[str, Any], *, kind: Any = go.Scattergl, **extra: Any
) -> Any:
    """A trace of ``kind`` holding one marker at ``xy`` (a query's star, a ring around a
    chunk): no hover unless ``extra`` gives one."""
    options = {"hoverinfo": "skip", **extra}
    return kind(
        x=[float(xy[0])], y=[float(xy[1])], mode="markers", name=name, marker=marker, **options
    )


#: The mode bar of a figure drawn in a narrow place (half a page, an expander): zoom, pan
#: and reset only, so that at a 1024 px window it leaves the title clear.
SHORT_MODEBAR = {
    "remove": ["zoomIn2d", "zoomOut2d", "autoScale2d", "lasso2d", "select2d", "toImage"]
}


def escape(text: Any) -> str:
    """``text`` as plain text for a plotly label: ``&``, ``<`` and ``>`` are escaped.

    >>> escape("a<b & c>d")
    'a&lt;b &amp; c&gt;d'
    """
    return html.escape(str(text), quote=False)


def snippet(text: Any, n: int = 160) -> str:
    """The first ``n`` characters of ``text`` on one line, escaped for a hover label.

    White space (newlines included) collapses to single spaces; a cut text ends with "…".
    Escaping happens after the cut, so an entity is never split.

    >>> snippet("<script>alert(1)</script>")
    '&lt;script&gt;alert(1)&lt;/script&gt;'
    >>> snippet("one\\n two   three", n=7)
    'one two…'
    """
    return escape(_cut(text, n))


def _cut(text: Any, n: int) -> str:
    flat = " ".join(str(text).split())
    return flat[:n].rstrip() + "…" if len(flat) > n else flat


#: Characters per line of a hover's text snippet: a narrow label, not one 160 characters
#: wide that plotly has to put over the top of the map.
HOVER_LINE = 60
#: Hover labels of the maps: white with dark text and border, readable over any point
#: colour (plotly takes each trace's colour otherwise: light grey for chunks that do not
#: fit).
HOVER_LABEL = {"bgcolor": "white", "bordercolor": "#444444", "font": {"color": "#222222"}}


def wrapped_snippet(text: Any, n: int = 160, *, width: int = 60) -> list[str]:
    """:func:`snippet` as lines of at most ``width`` characters (before escaping), for a
    hover label that stays narrow.

    >>> wrapped_snippet("one two three four", 100, width=9)
    ['one two', 'three', 'four']
    """
    import textwrap

    return [escape(line) for line in textwrap.wrap(_cut(text, n), width) or [""]]


def number(value: float | None, fmt: str = "+.4f") -> str:
    """A number for hover text; "–" for None or NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return format(value, fmt)


def nan_list(values: Iterable[Any]) -> list[float | None]:
    """Floats for plotting, with None and NaN as None (a gap in a line)."""
    return [None if x is None or math.isnan(float(x)) else float(x) for x in values]


def panel_vline(x: float, panel: int, line: dict[str, Any]) -> dict[str, Any]:
    """A vertical line at ``x`` over the whole height of subplot ``panel`` (1, 2, …, in
    make_subplots' order: its axes are x/y, x2/y2, …), as a layout shape. Figures set all
    their lines in one ``update_layout(shapes=…)``: plotly's ``add_vline`` looks the subplot
    up per call (34 ms a line on the λ page)."""
    axis = "" if panel == 1 else str(panel)
    return {
        "type": "line",
        "x0": x,
        "x1": x,
        "xref": f"x{axis}",
        "y0": 0,
        "y1": 1,
        "yref": f"y{axis} domain",
        "line": line,
    }
