"""Cached figures of the selection under the current settings (built with ``adagres.figures``).

Keyed like every result (``ui.compute.SelectionKey``) plus what the figure adds: the step
shown and the projection method for the step figures, the order and size for the heatmap.
Replaying steps, or going back to a budget already seen, costs no figure building.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from . import compute, progress
from .cache import Slot
from .compute import SelectionKey
from .projection_store import projection

__all__ = [
    "SVG_MAX_POINTS",
    "heatmap",
    "marked_map",
    "overlay",
    "step_figures",
    "uses_svg",
]

#: (map, gain timeline, budget bar, projection method, UMAP still pending)
StepFigures = tuple[Any, Any, Any, str, bool]

#: Up to this many chunks the map is drawn as SVG rather than WebGL. Without a GPU
#: (software rendering) a WebGL redraw of a 200-point map took 1–3 s against 0.3 s for SVG,
#: which kept the replay's map steps behind its other figures. Plotly.newPlot of the
#: Selection map in Chromium here: 2,000 points 0.17–0.28 s as SVG against 0.51–0.87 s as
#: WebGL, 5,000 points 0.51 against 0.72 s, 10,000 points 0.83 against 1.21 s; in the app a
#: budget change at 2,000 chunks settled in 1.14–1.34 s instead of 1.55–1.83 s.
SVG_MAX_POINTS = 10_000


def uses_svg(n_points: int) -> bool:
    """Whether a map of ``n_points`` chunks is drawn as SVG (see :data:`SVG_MAX_POINTS`)."""
    return n_points <= SVG_MAX_POINTS


@st.cache_resource(max_entries=256, show_spinner=False)
def _step_maps(key: SelectionKey, step: int, method: str) -> Slot[Any]:
    return Slot()


@st.cache_resource(max_entries=256, show_spinner=False)
def _step_charts(key: SelectionKey, step: int) -> Slot[Any]:
    return Slot()


@st.cache_resource(max_entries=32, show_spinner=False)
def _marked_maps(key: SelectionKey, step: int, method: str, chunk: int) -> Slot[Any]:
    return Slot()


# Few: the hover text of one heatmap is a few megabytes.
@st.cache_resource(max_entries=16, show_spinner=False)
def _heatmaps(key: SelectionKey, method: str, max_chunks: int) -> Slot[Any]:
    return Slot()


def step_figures(key: SelectionKey, step: int) -> StepFigures:
    """The map, the gain timeline and the budget bar at ``step``, with the map's projection
    method and whether a better projection (UMAP) is still being computed."""
    chunk_map, method, pending = step_map(key, step)

    def build() -> tuple[Any, Any]:
        from adagres import figures

        selection, pool = compute.selection(key), key.pool.get()
        return (
            figures.gain_timeline(selection, step=step),
            figures.budget_bar(selection, ids=pool.ids, step=step),
        )

    timeline, bar = _step_charts(key, step).fill(build)
    return chunk_map, timeline, bar, method, pending


def step_map(key: SelectionKey, step: int) -> tuple[Any, str, bool]:
    """The map at ``step`` alone (what Why dropped shows), with its projection method and
    whether UMAP is still being computed."""
    # One read of the projection store: the coordinates drawn are those of the method in the
    # key, even when the UMAP layout lands between two reads.
    coordinates, method, pending = projection(key.pool)

    def build() -> Any:
        from adagres import figures

        selection, pool = compute.selection(key), key.pool.get()
        titles = [chunk.title for chunk in pool.chunks]
        return figures.pool_map(
            coordinates,
            selection,
            step,
            ids=pool.ids,
            texts=pool.texts,
            titles=titles,
            svg=uses_svg(len(pool)),
        )

    return _step_maps(key, step, method).fill(build), method, pending


def overlay(key: SelectionKey, a: Any, b: Any) -> tuple[Any, str, bool]:
    """Both configurations' picks on the pool map (A only, B only, both), with the
    projection method and whether UMAP is still being computed."""
    coordinates, method, pending = projection(key.pool)
    from adagres import figures

    pool = key.pool.get()
    figure = figures.overlay_map(coordinates, a, b, ids=pool.ids, texts=pool.texts)
    return figure, method, pending


def marked_map(key: SelectionKey, step: int, chunk: int) -> tuple[Any, str, bool]:
    """The map at ``step`` with the chunk at pool position ``chunk`` ringed (the chunk
    inspected on "Why dropped"), with the projection method and whether UMAP is pending."""
    coordinates, drawn, _ = projection(key.pool)
    figure, method, pending = step_map(key, step)
    if method != drawn:  # the UMAP layout landed between the two reads: read it again
        coordinates, _, _ = projection(key.pool)

    def build() -> Any:
        from adagres import figures

        pool = key.pool.get()
        point = (float(coordinates.chunks[chunk][0]), float(coordinates.chunks[chunk][1]))
        return figures.mark_chunk(
            figure, point, int(chunk), name=pool.ids[chunk], svg=uses_svg(len(pool))
        )

    return _marked_maps(key, step, method, int(chunk)).fill(build), method, pending


def heatmap(key: SelectionKey, method: str, max_chunks: int) -> tuple[Any, tuple[int, ...], int]:
    """(figure, pool positions shown in row order, pool size) of the selection's heatmap."""

    def build() -> tuple[Any, tuple[int, ...], int]:
        from adagres import figures

        selection, pool = compute.selection(key), key.pool.get()
        # Clustering is limited to the first M of the pick order, so the title is set here.
        order = figures.heatmap_order(selection, pool.prepared, method=method, limit=max_chunks)
        n = len(pool)
        what = f"top {len(order)} of {n} chunks" if len(order) < n else f"{n} chunks"
        by = "pick order, then relevance" if method == "pick" else "clustered"
        with progress.spinner("Drawing the similarity heatmap…"):
            figure = figures.similarity_heatmap(
                pool.prepared,
                order=order,
                ids=pool.ids,
                texts=pool.texts,
                selected=selection.indices,
                max_chunks=max_chunks,
                title=f"Pairwise cosine similarity, {what} ({by})",
            )
        return figure, order, n

    return _heatmaps(key, method, int(max_chunks)).fill(build)
