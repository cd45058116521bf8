"""The pool's map as an explorer: chunks coloured by any field, a text search highlighted,
lasso or box selection (each point's ``customdata`` is its pool position)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..errors import InputError
from .layout import HOVER_LINE, PALETTE, escape, map_layout, one_point, wrapped_snippet

__all__ = ["ExplorerData", "explorer_data", "explorer_map"]

#: Colours of the categories, in order (Okabe-Ito, then greys).
CATEGORY_COLORS = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#D55E00",
    "#CC79A7",
    "#56B4E9",
    "#F0E442",
    "#000000",
    "#777777",
    "#BBBBBB",
)
#: Categories drawn apart at most; the rest share one grey "other" group.
MAX_CATEGORIES = len(CATEGORY_COLORS) - 1


@dataclass(frozen=True)
class ExplorerData:
    """Per chunk: coordinates, hover, the colour value; the groups drawn for a category
    field (name -> positions, "other" last), and the chunks a search matched (None: no
    search)."""

    x: tuple[float, ...]
    y: tuple[float, ...]
    hover: tuple[str, ...]
    numbers: tuple[float, ...] | None
    groups: dict[str, tuple[int, ...]] | None
    matches: tuple[int, ...] | None


def explorer_data(
    xy: Any,
    *,
    ids: Sequence[Any],
    texts: Sequence[str],
    values: Sequence[Any],
    numeric: bool,
    matches: Sequence[int] | None = None,
) -> ExplorerData:
    """Plain data for :func:`explorer_map`: ``values`` colour each chunk (numbers on a
    scale when ``numeric``, else categories, the most frequent first); ``matches`` are the
    positions a search found.

    >>> d = explorer_data([[0, 0], [1, 1], [2, 2]], ids="abc", texts="xyz",
    ...                   values=["s1", "s2", "s1"], numeric=False, matches=[2])
    >>> d.groups, d.matches
    ({'s1': (0, 2), 's2': (1,)}, (2,))
    """
    points = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
    n = len(points)
    for name, column in (("ids", ids), ("texts", texts), ("values", values)):
        if len(column) != n:
            raise InputError(f"{name}: has {len(column)} entries, the map {n} points")
    hover = tuple(
        "<br>".join(
            [
                f"<b>{escape(ids[i])}</b> · {escape(values[i])}",
                *wrapped_snippet(texts[i], 160, width=HOVER_LINE),
            ]
        )
        for i in range(n)
    )
    numbers = groups = None
    if numeric:
        numbers = tuple(float(v) for v in values)
    else:
        labels = [str(v) for v in values]
        order = sorted(set(labels), key=lambda v: (-labels.count(v), v))
        kept = order[:MAX_CATEGORIES] if len(order) > MAX_CATEGORIES + 1 else order
        groups = {v: tuple(i for i in range(n) if labels[i] == v) for v in kept}
        rest = tuple(i for i in range(n) if labels[i] not in groups)
        if rest:
            groups["other"] = rest
    found = None if matches is None else tuple(sorted({int(i) for i in matches}))
    return ExplorerData(
        x=tuple(points[:, 0].tolist()),
        y=tuple(points[:, 1].tolist()),
        hover=hover,
        numbers=numbers,
        groups=groups,
        matches=found,
    )


def explorer_map(
    xy: Any,
    *,
    ids: Sequence[Any],
    texts: Sequence[str],
    values: Sequence[Any],
    numeric: bool,
    color_by: str,
    matches: Sequence[int] | None = None,
    query: Any = None,
    asked: Any = None,
    neighbours: Sequence[int] = (),
    new_picks: Sequence[int] = (),
    chosen: Sequence[int] | None = None,
    title: str | None = None,
    height: int | None = 560,
) -> go.Figure:
    """The pool's chunks coloured by ``color_by`` (a legend per category, or a colour bar),
    the chunks a search matched ringed in black over the rest (which fade), the query a
    star; lasso selection by default.

    A new query in place: ``asked`` (its 2-D point) is drawn as a second star, its nearest
    chunks (``neighbours``) ringed in its colour and the chunks its selection picked
    (``new_picks``) marked with a cross. ``chosen`` (pool positions, e.g. bars chosen on
    the facets) are drawn selected, as a lasso around them would, and the rest dimmed."""
    data = explorer_data(xy, ids=ids, texts=texts, values=values, numeric=numeric, matches=matches)
    faded = 0.25 if data.matches is not None else 0.9
    fig = go.Figure()

    chosen_set = None if chosen is None else {int(i) for i in chosen}

    def trace(positions: Sequence[int], name: str, marker: dict[str, Any], **extra: Any) -> None:
        if chosen_set is not None:
            extra["selectedpoints"] = [k for k, i in enumerate(positions) if i in chosen_set]
        fig.add_trace(chunk_markers(data, positions, name, marker, **extra))

    everyone = range(len(data.x))
    if data.numbers is not None:
        trace(
            everyone,
            color_by,
            {
                "size": 9,
                "color": list(data.numbers),
                "opacity": faded,
                "colorscale": "Viridis",
                "showscale": True,
                "colorbar": {"title": {"text": color_by}, "thickness": 14},
            },
            showlegend=False,
        )
    else:
        assert data.groups is not None
        for k, (name, positions) in enumerate(data.groups.items()):
            color = CATEGORY_COLORS[-2] if name == "other" else CATEGORY_COLORS[k]
            trace(positions, f"{color_by}: {name}", {"size": 9, "color": color, "opacity": faded})
    if data.matches is not None:
        ring = {"size": 13, "color": "rgba(0,0,0,0)", "line": {"color": "black", "width": 2}}
        trace(data.matches, f"matches ({len(data.matches)})", ring)
    if query is not None:
        star = {"size": 16, "color": PALETTE["query"], "symbol": "star"}
        fig.add_trace(one_point(np.asarray(query, dtype=np.float64).reshape(2), "query", star))
    if asked is not None:  # the new query's star, its neighbours' rings, its picks' crosses
        color = PALETTE["adaptive"]
        ring = {"size": 17, "color": "rgba(0,0,0,0)", "line": {"color": color, "width": 2}}
        cross = {"size": 9, "color": color, "symbol": "x"}
        for chunks, name, marker in (
            (neighbours, f"nearest to the new query ({len(neighbours)})", ring),
            (new_picks, f"new selection ({len(new_picks)})", cross),
        ):
            fig.add_trace(chunk_markers(data, list(chunks), name, marker))
        star = {"size": 18, "color": color, "symbol": "star"}
        star["line"] = {"color": "black", "width": 1}
        fig.add_trace(one_point(np.asarray(asked, dtype=np.float64).reshape(2), "new query", star))
    map_layout(fig, title=title, height=height, dragmode="lasso")
    return fig


def chunk_markers(
    data: Any, positions: Sequence[int], name: str, marker: dict[str, Any], **extra: Any
) -> go.Scattergl:
    """One layer of the map: the chunks at ``positions`` with their hover, by position."""
    return go.Scattergl(
        x=[data.x[i] for i in positions],
        y=[data.y[i] for i in positions],
        customdata=list(positions),
        mode="markers",
        name=name,
        hovertext=[data.hover[i] for i in positions],
        hoverinfo="text",
        marker=marker,
        **extra,
    )
