"""Pairwise cosine similarity of the chunks, in pick or cluster order."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Any, Literal

import numpy as np
import plotly.graph_objects as go

from ..core import validate as v
from ..core.prepared import unit_chunks as unit_rows_of
from ..core.result import Selection
from ..errors import InputError
from .common import check_length
from .layout import PALETTE, apply_layout, escape, snippet
from .projection import cosine_distances

__all__ = ["HeatmapData", "heatmap_data", "heatmap_order", "similarity_heatmap"]

#: Optimal leaf ordering is O(n³): 0.2 s at 500 chunks but 12 s at 2000. Above this size
#: the plain dendrogram order is used.
OPTIMAL_ORDERING_MAX = 600

#: With more runs of selected chunks than this in the order, only diagonal blocks are outlined.
MAX_OUTLINE_RUNS = 12


def heatmap_order(
    selection: Selection,
    unit_chunks: Any,
    *,
    method: Literal["pick", "cluster"] = "pick",
    limit: int | None = None,
) -> tuple[int, ...]:
    """An order of pool positions for the heatmap.

    ``unit_chunks`` are the pool's embeddings (N, d) or its :class:`~adagres.PreparedPool`
    (whose rows are not checked again).

    ``"pick"``: the picks in pick order, then the other chunks by decreasing relevance (ties
    to the lower position). ``"cluster"``: the same chunks grouped by average-linkage
    clustering on cosine distance (optimal leaf ordering up to
    :data:`OPTIMAL_ORDERING_MAX` chunks). ``limit`` keeps only the first ``limit`` chunks of
    the pick order before clustering, so a clustered heatmap of a large pool shows the
    picks and the most relevant chunks (pass the heatmap's ``max_chunks``).
    """
    chunks = unit_rows_of(unit_chunks, "unit_chunks")
    n = selection.n_chunks
    if chunks.shape[0] != n:
        raise InputError(f"unit_chunks: has {chunks.shape[0]} chunks, the selection {n}")
    v.choice(method, "method", ("pick", "cluster"))
    picked = set(selection.indices)
    rest = sorted(
        (i for i in range(n) if i not in picked), key=lambda i: (-selection.relevance[i], i)
    )
    order = [*selection.indices, *rest]
    if limit is not None:
        if limit < 1:
            raise InputError(f"limit: must be >= 1, got {limit}")
        order = order[:limit]
    if method == "pick" or len(order) < 3:
        return tuple(int(i) for i in order)
    from scipy.cluster.hierarchy import leaves_list, linkage
    from scipy.spatial.distance import squareform

    distances = cosine_distances(chunks[order].astype(np.float64))
    tree = linkage(
        squareform(distances, checks=False),
        method="average",
        optimal_ordering=len(order) <= OPTIMAL_ORDERING_MAX,
    )
    return tuple(int(order[k]) for k in leaves_list(tree))


@dataclass(frozen=True)
class HeatmapData:
    """The similarity matrix as drawn.

    ``order`` are the pool positions shown (the first ``max_chunks`` of the order given),
    ``n_total`` the length of that order. ``z[a][b]`` is the cosine of ``order[a]`` and
    ``order[b]``. ``outlines`` are rectangles (x0, x1, y0, y1) in cell coordinates around
    the blocks where both chunks are selected. ``rows`` names each shown chunk with a
    snippet of its text ("<b>id</b>: snippet", escaped): the figure's categories, which its
    hover shows for both chunks of a cell, with their cosine.
    """

    order: tuple[int, ...]
    n_total: int
    truncated: bool
    z: tuple[tuple[float, ...], ...]
    selected: tuple[int, ...]
    outlines: tuple[tuple[float, float, float, float], ...]
    labels: tuple[str, ...]
    rows: tuple[str, ...]


def _runs(positions: Sequence[int]) -> list[tuple[int, int]]:
    """Maximal runs of consecutive integers, as (first, last)."""
    # Within a run, position minus rank is constant.
    groups = groupby(enumerate(positions), key=lambda pair: pair[1] - pair[0])
    return [(run[0][1], run[-1][1]) for run in (list(group) for _, group in groups)]


def heatmap_data(
    unit_chunks: Any,
    *,
    order: Sequence[int],
    ids: Sequence[Any],
    texts: Sequence[str],
    selected: Iterable[int] | None = None,
    max_chunks: int = 150,
    snippet_chars: int = 50,
) -> HeatmapData:
    """Build the matrix, labels, hover text and selected-block outlines (see the class).

    ``unit_chunks`` are the pool's embeddings (N, d) or its :class:`~adagres.PreparedPool`.
    """
    chunks = unit_rows_of(unit_chunks, "unit_chunks")
    n = chunks.shape[0]
    check_length(ids, "ids", n)
    check_length(texts, "texts", n)
    full = [int(i) for i in order]
    v.indices(full, n, "order")
    if max_chunks < 1:
        raise InputError(f"max_chunks: must be >= 1, got {max_chunks}")
    shown = full[:max_chunks]
    sub = chunks[shown].astype(np.float64)
    z = sub @ sub.T
    chosen = set() if selected is None else {int(i) for i in selected}
    positions = [a for a, i in enumerate(shown) if i in chosen]
    runs = _runs(positions)
    pairs = (
        [(r, c) for r in runs for c in runs]
        if len(runs) <= MAX_OUTLINE_RUNS
        else [(r, r) for r in runs]
    )
    outlines = tuple((c[0] - 0.5, c[1] + 0.5, r[0] - 0.5, r[1] + 0.5) for r, c in pairs)
    labels = tuple(escape(ids[i]) for i in shown)
    rows = tuple(
        f"<b>{label}</b>: {snippet(texts[i], snippet_chars)}"
        for label, i in zip(labels, shown, strict=True)
    )
    return HeatmapData(
        order=tuple(shown),
        n_total=len(full),
        truncated=len(full) > len(shown),
        z=tuple(map(tuple, z.tolist())),  # the same floats as the loop over numbers, 5x faster
        selected=tuple(positions),
        outlines=outlines,
        labels=labels,
        rows=rows,
    )


#: Chunk ids written on each axis at most (every k-th id above it).
MAX_TICK_LABELS = 60


def similarity_heatmap(
    unit_chunks: Any,
    *,
    order: Sequence[int],
    ids: Sequence[Any],
    texts: Sequence[str],
    selected: Iterable[int] | None = None,
    max_chunks: int = 150,
    snippet_chars: int = 50,
    colorscale: str = "Blues",
    outline_color: str = PALETTE["winner"],
    title: str | None = None,
    height: int | None = 650,
) -> go.Figure:
    """Cosine heatmap with rows and columns in ``order``; the selected block outlined.

    Above ``max_chunks`` only the first ``max_chunks`` of the order are drawn and the title
    says "top M of N". Both axes name the chunks by id (every k-th above
    :data:`MAX_TICK_LABELS` rows). Hover shows both chunks' ids and snippets
    (``snippet_chars`` each) and their cosine; the snippets are sent once per row and the
    matrix as one float array, so the figure is about 0.33 MB at M = 150 (0.95 MB with an
    "id / id" text per cell, 4.7 MB with a pair of snippets in every cell), built in about
    30 ms.
    """
    data = heatmap_data(
        unit_chunks,
        order=order,
        ids=ids,
        texts=texts,
        selected=selected,
        max_chunks=max_chunks,
        snippet_chars=snippet_chars,
    )
    m = len(data.order)
    rows = list(data.rows)  # both axes' categories: the hover template shows them
    # The matrix as one float array and no text per cell: plotly checks an array at once
    # (a list of lists number by number: 0.24 s at M = 150 with the M² "id / id" texts the
    # hover used to carry), and sends it as base64 (about 300 kB instead of 1 MB of JSON);
    # the hover names both chunks from the rows' categories.
    z = np.asarray(data.z, dtype=np.float64).reshape(m, m)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=rows,
            y=rows,
            colorscale=colorscale,
            zmin=min(0.0, float(z.min())) if m else 0.0,
            zmax=1.0,
            hovertemplate="%{y}<br>%{x}<br>cosine %{z:.3f}<extra></extra>",
            colorbar={"title": {"text": "cosine"}, "thickness": 14},
            name="similarity",
        )
    )
    # One layout update for every outline: add_shape per rectangle re-validates the whole
    # layout each time (2.8 s for 144 rectangles, against milliseconds at once).
    rect = {"type": "rect", "line": {"color": outline_color, "width": 2}}
    rect["fillcolor"] = "rgba(0,0,0,0)"
    fig.update_layout(
        shapes=[{**rect, "x0": a, "x1": b, "y0": c, "y1": d} for a, b, c, d in data.outlines]
    )
    if title is None:
        what = f"top {m} of {data.n_total} chunks" if data.truncated else f"{m} chunks"
        title = f"Pairwise cosine similarity, {what}"
    apply_layout(fig, title=title, height=height)
    # Every chunk's id on both axes up to MAX_TICK_LABELS rows; past that every k-th, so
    # the axes still name the chunks without ids written over each other.
    every = max(1, -(-m // MAX_TICK_LABELS))
    ticks = {
        "tickvals": rows[::every],
        "ticktext": list(data.labels[::every]),
        "tickfont": {"size": 10},
    }
    # Category axes over the rows: a shape's numbers (the outlines) are category positions.
    axes = {"type": "category", "showgrid": False, "zeroline": False}
    fig.update_xaxes(**ticks, **axes, constrain="domain")
    fig.update_yaxes(**ticks, **axes, autorange="reversed", scaleanchor="x")
    return fig
