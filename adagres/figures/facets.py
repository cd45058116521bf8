"""Linked views beside the pool map: one bar chart per facet of the chunks (relevance,
tokens, verdict, a metadata column), each bar a bin of chunks, the chunks chosen on the map
drawn over the pool. Every bar carries ``(facet, bin)`` as its ``customdata``, so a click or
a box on the bars names chunks, which the app then chooses on the map."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..errors import InputError
from .layout import HOVER_LABEL, PALETTE, apply_layout, escape

__all__ = ["Facet", "facet_positions", "facets_data", "facets_figure"]

#: Bins of a numeric facet; bars of a categorical one (the rest are "other").
FACET_BINS = 10


class Facet(NamedTuple):
    """One facet: its ``name``, a label per bin, the pool positions in each bin (every
    chunk in exactly one) and how many of the chosen chunks each bin holds."""

    name: str
    labels: tuple[str, ...]
    members: tuple[tuple[int, ...], ...]
    chosen: tuple[int, ...]


def _numeric(name: str, values: Sequence[float], chosen: set[int]) -> Facet:
    array = np.asarray(values, dtype=np.float64)
    low, high = (float(array.min()), float(array.max())) if array.size else (0.0, 1.0)
    edges = np.linspace(low, high if high > low else low + 1.0, FACET_BINS + 1)
    # Bin k holds edges[k] <= v < edges[k + 1]; the last bin also holds its upper edge.
    where = np.clip(np.searchsorted(edges, array, side="right") - 1, 0, FACET_BINS - 1)
    whole = all(float(v).is_integer() for v in edges) or name == "tokens"
    text = "{:.0f}" if whole else "{:.3f}"
    labels = tuple(f"{text.format(a)}–{text.format(b)}" for a, b in itertools.pairwise(edges))
    members = tuple(tuple(int(i) for i in np.flatnonzero(where == k)) for k in range(FACET_BINS))
    return Facet(name, labels, members, tuple(len(chosen.intersection(m)) for m in members))


def _categorical(name: str, values: Sequence[Any], chosen: set[int]) -> Facet:
    counts = Counter(str(v) for v in values)
    shown = [label for label, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    if len(shown) > FACET_BINS:  # the largest categories, the rest together
        shown = [*shown[: FACET_BINS - 1], "other"]
    slot = {label: k for k, label in enumerate(shown)}
    groups: list[list[int]] = [[] for _ in shown]
    for i, value in enumerate(values):
        groups[slot.get(str(value), len(shown) - 1)].append(i)
    members = tuple(tuple(g) for g in groups)
    return Facet(name, tuple(shown), members, tuple(len(chosen.intersection(m)) for m in members))


def facets_data(
    facets: Sequence[tuple[str, Sequence[Any], bool]], *, chosen: Iterable[int] = ()
) -> tuple[Facet, ...]:
    """One :class:`Facet` per ``(name, value per chunk, numeric)``: numbers in
    :data:`FACET_BINS` equal bins from the smallest to the largest value, categories by
    decreasing count (the :data:`FACET_BINS` − 1 largest, then "other").

    >>> (f,) = facets_data([("verdict", ["picked", "outscored", "picked"], False)], chosen=[2])
    >>> f.labels, f.members, f.chosen
    (('picked', 'outscored'), ((0, 2), (1,)), (1, 0))
    """
    picked = {int(i) for i in chosen}
    sizes = {len(values) for _, values, _ in facets}
    if len(sizes) > 1:
        raise InputError(f"facets: value lists have different lengths {sorted(sizes)}")
    return tuple(
        (_numeric if numeric else _categorical)(name, values, picked)
        for name, values, numeric in facets
    )


def facet_positions(facets: Sequence[Facet], bars: Iterable[Sequence[int]]) -> tuple[int, ...]:
    """The pool positions in the bars ``(facet, bin)`` (a chart selection's customdata),
    sorted; bars that do not exist are ignored."""
    out: set[int] = set()
    for facet, bin_ in bars:
        if 0 <= facet < len(facets) and 0 <= bin_ < len(facets[facet].members):
            out.update(facets[facet].members[bin_])
    return tuple(sorted(out))


def facets_figure(
    facets: Sequence[Facet],
    *,
    chosen_name: str = "chosen on the map",
    color: str = PALETTE["candidate"],
    chosen_color: str = PALETTE["selected"],
    columns: int = 2,
    height: int | None = 560,
) -> go.Figure:
    """The facets as small bar charts, ``columns`` to a row: the pool's count per bin in
    grey, the chosen chunks' count over it. A box across bars' tips selects them."""
    rows = max(1, -(-len(facets) // columns))
    fig = make_subplots(
        rows=rows,
        cols=columns,
        subplot_titles=[escape(f.name) for f in facets],
        vertical_spacing=0.22,
        horizontal_spacing=0.12,
    )
    for k, facet in enumerate(facets):
        place = {"row": k // columns + 1, "col": k % columns + 1}
        labels = [escape(label) for label in facet.labels]
        bars = (
            ("pool", "pool", color, [len(m) for m in facet.members], "chunks"),
            (chosen_name, "chosen", chosen_color, list(facet.chosen), "chosen"),
        )
        for name, group, fill, counts, what in bars:
            bar = go.Bar(
                x=labels,
                y=counts,
                customdata=[[k, b] for b in range(len(labels))],
                name=name,
                legendgroup=group,
                showlegend=k == 0,
                marker={"color": fill},
                hovertemplate=f"%{{x}}: %{{y}} {what}<extra></extra>",
            )
            fig.add_trace(bar, **place)
    fig.update_layout(
        barmode="overlay", dragmode="select", clickmode="event+select", hoverlabel=HOVER_LABEL
    )
    fig.update_xaxes(tickangle=-45, tickfont={"size": 10}, type="category")
    return apply_layout(fig, title="Chunks by facet", height=height)
