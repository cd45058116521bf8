"""Two selections of one pool on one map: the chunks only A picked, only B, both, neither."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..core.result import Selection
from ..errors import InputError
from .common import check_length
from .layout import PALETTE, SHORT_MODEBAR, UNDIMMED, apply_layout, escape, one_point, snippet
from .projection import Projection

__all__ = ["OverlayData", "overlay_data", "overlay_map"]

#: The four groups of the overlay, in drawing order (the picks over the rest).
GROUPS = ("neither", "A only", "B only", "both")


@dataclass(frozen=True)
class OverlayData:
    """Pool positions of each group (``GROUPS``: neither, A only, B only, both), as the two
    selections' indices split them, with the names of the two configurations."""

    groups: dict[str, tuple[int, ...]]
    names: tuple[str, str]


def overlay_data(a: Selection, b: Selection, *, names: tuple[str, str] = ("A", "B")) -> OverlayData:
    """Split the pool by which of the two selections picked each chunk."""
    if a.n_chunks != b.n_chunks:
        raise InputError(f"selections: of pools of {a.n_chunks} and {b.n_chunks} chunks")
    in_a = np.zeros(a.n_chunks, dtype=bool)
    in_b = np.zeros(b.n_chunks, dtype=bool)
    in_a[list(a.indices)] = True
    in_b[list(b.indices)] = True
    masks = {
        "neither": ~in_a & ~in_b,
        "A only": in_a & ~in_b,
        "B only": ~in_a & in_b,
        "both": in_a & in_b,
    }
    groups = {g: tuple(np.flatnonzero(masks[g]).tolist()) for g in GROUPS}
    return OverlayData(groups, names)


def overlay_map(
    projection: Projection,
    a: Selection,
    b: Selection,
    *,
    ids: Sequence[Any],
    texts: Sequence[str],
    names: tuple[str, str] = ("A", "B"),
    title: str | None = "A and B on the map",
    height: int | None = 460,
) -> go.Figure:
    """Both configurations' picks on the pool's 2-D map: A only, B only, both (and the
    chunks neither picked, in grey). Each point's ``customdata`` is its pool position;
    hover: id, which configurations picked it, a snippet of the text."""
    data = overlay_data(a, b, names=names)
    check_length(ids, "ids", a.n_chunks)
    check_length(texts, "texts", a.n_chunks)
    xy = projection.chunks
    a_name, b_name = names
    look = {
        "neither": ("picked by neither", PALETTE["candidate"], "circle", 7),
        "A only": (f"{a_name} only", PALETTE["selected"], "diamond", 12),
        "B only": (f"{b_name} only", PALETTE["winner"], "square", 12),
        "both": ("both", PALETTE["adaptive"], "star", 15),
    }
    fig = go.Figure()
    for group in GROUPS:
        members = list(data.groups[group])
        label, color, symbol, size = look[group]
        fig.add_trace(
            go.Scatter(
                x=xy[members, 0] if members else [],
                y=xy[members, 1] if members else [],
                customdata=members,
                mode="markers",
                name=f"{label} ({len(members)})",
                hovertext=[
                    f"<b>{escape(ids[i])}</b><br>{label}<br>{snippet(texts[i], 160)}"
                    for i in members
                ],
                hoverinfo="text",
                marker={
                    "color": color,
                    "symbol": symbol,
                    "size": size,
                    "line": {"color": "#444444", "width": 0.5},
                },
            )
        )
    if projection.query is not None:
        star = {"size": 20, "color": PALETTE["query"], "symbol": "star"}
        hover = {"hovertext": ["<b>query</b>"], "hoverinfo": "text"}
        fig.add_trace(one_point(projection.query, "query", star, kind=go.Scatter, **hover))
    fig.update_traces(unselected=UNDIMMED)
    apply_layout(fig, title=title, height=height)
    # Drawn in half a page's width beside its table: a mode bar of three buttons leaves the
    # title clear (the full bar covered it at a 1024 px window).
    fig.update_layout(modebar=SHORT_MODEBAR)
    fig.update_xaxes(showticklabels=False)
    fig.update_yaxes(showticklabels=False)
    return fig
