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

__all__ = ["StepFigures", "heatmap", "step_figures"]

#: (map, gain timeline, budget bar, projection method, UMAP still pending)
StepFigures = tuple[Any, Any, Any, str, bool]


@st.cache_resource(max_entries=256, show_spinner=False)
def _step_figures(key: SelectionKey, step: int, method: str) -> Slot[Any]:
    return Slot()


# Few: the hover text of one heatmap is a few megabytes.
@st.cache_resource(max_entries=16, show_spinner=False)
def _heatmaps(key: SelectionKey, method: str, max_chunks: int) -> Slot[Any]:
    return Slot()


def step_figures(key: SelectionKey, step: int) -> StepFigures:
    """The map, the gain timeline and the budget bar at ``step``, with the map's projection
    method and whether a better projection (UMAP) is still being computed."""
    # One read of the projection store: the coordinates drawn are those of the method in the
    # key, even when the UMAP layout lands between two reads.
    coordinates, method, pending = projection(key.pool)

    def build() -> tuple[Any, Any, Any]:
        from adagres import figures

        selection, pool = compute.selection(key), key.pool.get()
        titles = [chunk.title for chunk in pool.chunks]
        return (
            figures.pool_map(
                coordinates, selection, step, ids=pool.ids, texts=pool.texts, titles=titles
            ),
            figures.gain_timeline(selection, step=step),
            figures.budget_bar(selection, ids=pool.ids, step=step),
        )

    return (*_step_figures(key, step, method).fill(build), method, pending)


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
                pool.prepared, order=order, ids=pool.ids, texts=pool.texts,
                selected=selection.indices, max_chunks=max_chunks,
                title=f"Pairwise cosine similarity, {what} ({by})",
            )  # fmt: skip
        return figure, order, n

    return _heatmaps(key, method, int(max_chunks)).fill(build)
