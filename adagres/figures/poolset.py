"""Figures across the queries of a pool set: how redundant each strategy's picks are, and
how many of top-k's chunks AdaGReS drops (one row per query, as the Pool sets page lists)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import plotly.graph_objects as go

from .layout import PALETTE, apply_layout

__all__ = [
    "POOLSET_STRATEGIES",
    "CountBars",
    "dropped_data",
    "dropped_figure",
    "redundancy_data",
    "redundancy_figure",
]

#: Row prefix -> (legend name, colour) of the strategies a pool set's rows compare.
POOLSET_STRATEGIES: dict[str, tuple[str, str]] = {
    "topk": ("top-k (budget)", PALETTE["candidate"]),
    "adagres": ("AdaGReS", PALETTE["selected"]),
    "recommended": ("recommended", PALETTE["adaptive"]),
}
#: Bins of the redundancy histogram (every strategy over the same edges, so bars compare).
REDUNDANCY_BINS = 30


class CountBars(NamedTuple):
    """Bars of query counts: ``x`` per series (bin centres or k), ``counts`` per series,
    ``width`` of a bar (None: plotly's own) and ``dtick`` of the count axis."""

    names: tuple[str, ...]
    x: tuple[tuple[float, ...], ...]
    counts: tuple[tuple[int, ...], ...]
    width: float | None
    dtick: int


def _count_tick(counts: Sequence[Sequence[int]]) -> int:
    """Whole-number ticks on an axis of these counts, at most about six of them."""
    largest = max((max(c, default=0) for c in counts), default=0)
    return max(1, math.ceil(largest / 5))


def redundancy_data(rows: Sequence[Mapping[str, Any]]) -> CountBars:
    """Histograms across queries of each strategy's mean pairwise cosine of its picks
    (``<prefix>_redundancy``), over the same :data:`REDUNDANCY_BINS` bins between the
    smallest and largest value (0.3 wide when they are equal; 0 to 1 without rows).

    >>> bars = redundancy_data([{"topk_redundancy": 0.5, "adagres_redundancy": 0.2,
    ...                          "recommended_redundancy": 0.2}])
    >>> [sum(c) for c in bars.counts], bars.dtick
    ([1, 1, 1], 1)
    """
    values = {p: [float(row[f"{p}_redundancy"]) for row in rows] for p in POOLSET_STRATEGIES}
    every = [v for vs in values.values() for v in vs]
    low, high = (min(every), max(every)) if every else (0.0, 1.0)
    edges = np.linspace(low, high if high > low else low + 0.3, REDUNDANCY_BINS + 1)
    centres = tuple(float(c) for c in (edges[:-1] + edges[1:]) / 2)
    counts = tuple(tuple(int(c) for c in np.histogram(values[p], edges)[0]) for p in values)
    return CountBars(
        names=tuple(name for name, _ in POOLSET_STRATEGIES.values()),
        x=(centres,) * len(counts),
        counts=counts,
        width=float(edges[1] - edges[0]),
        dtick=_count_tick(counts),
    )


def dropped_data(rows: Sequence[Mapping[str, Any]]) -> CountBars:
    """How many queries have AdaGReS (``dropped``) and the recommended preset
    (``dropped_recommended``) drop k of top-k's chunks, for each k that occurs.

    >>> dropped_data([{"dropped": 2, "dropped_recommended": 0}] * 3).counts
    ((3,), (3,))
    """
    xs, counts = [], []
    for key in ("dropped", "dropped_recommended"):
        tally = Counter(int(row[key]) for row in rows)
        ks = sorted(tally)
        xs.append(tuple(float(k) for k in ks))
        counts.append(tuple(tally[k] for k in ks))
    return CountBars(
        names=("AdaGReS", "recommended"),
        x=tuple(xs),
        counts=tuple(counts),
        width=None,
        dtick=_count_tick(counts),
    )


def _bars(
    bars: CountBars, colors: Sequence[str], *, barmode: str, x_title: str, **bar: Any
) -> go.Figure:
    figure = go.Figure()
    for name, x, counts, color in zip(bars.names, bars.x, bars.counts, colors, strict=True):
        figure.add_trace(go.Bar(x=list(x), y=list(counts), name=name, marker_color=color, **bar))
    figure.update_layout(barmode=barmode, xaxis_title=x_title, yaxis_title="queries")
    figure.update_yaxes(dtick=bars.dtick, tick0=0, rangemode="tozero")
    return figure


def redundancy_figure(rows: Sequence[Mapping[str, Any]], *, height: int = 360) -> go.Figure:
    """Overlaid histograms of :func:`redundancy_data`, one colour per strategy."""
    bars = redundancy_data(rows)
    colors = [color for _, color in POOLSET_STRATEGIES.values()]
    figure = _bars(
        bars,
        colors,
        barmode="overlay",
        x_title="mean pairwise cosine of the picks",
        width=bars.width,
        opacity=0.6,
    )
    return apply_layout(figure, title="Redundancy of the selections, across queries", height=height)


def dropped_figure(rows: Sequence[Mapping[str, Any]], *, height: int = 320) -> go.Figure:
    """Grouped bars of :func:`dropped_data`."""
    colors = [PALETTE["selected"], PALETTE["adaptive"]]
    figure = _bars(
        dropped_data(rows), colors, barmode="group", x_title="chunks top-k keeps that it drops"
    )
    return apply_layout(figure, title="Chunks dropped against top-k, across queries", height=height)
