"""Plotly figure builders for the app's views (imports plotly; never streamlit).

Not imported by ``adagres`` itself, so the core stays numpy-only. Every builder takes
results (a :class:`~adagres.Selection`, a projection, a sweep, arrays), first extracts plain
data (the ``*_data`` functions, which tests check exactly) and then draws a ``go.Figure``.
Styling arguments are keyword-only; :func:`apply_layout` gives every figure the same look.
Names load on first use (PEP 562), so ``adagres.figures.projection`` imports without plotly.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the module of this package that defines it.
_HOME = {
    "BarData": "budget_bar",
    "BarSegment": "budget_bar",
    "DistributionsData": "sweeps",
    "ExplorerData": "explorer",
    "FONT": "layout",
    "HOVER_LINE": "layout",
    "HeatmapData": "heatmap",
    "LABEL_CHAR_WIDTH": "budget_bar",
    "LABEL_FIT_WIDTH": "budget_bar",
    "MIN_ID_CHARS": "budget_bar",
    "MARKER_STEPS": "timeline",
    "MAX_PICK_LABELS": "pool_map",
    "METRIC_LABELS": "sweeps",
    "MapData": "pool_map",
    "MapPoints": "pool_map",
    "OverlayData": "overlay",
    "PAIR_METRICS": "sweeps",
    "PALETTE": "layout",
    "STRATEGY_COLORS": "layout",
    "SensitivityData": "sensitivity",
    "SweepLines": "sweeps",
    "TITLE_MARGIN": "layout",
    "TITLE_MARGIN_PER_LINE": "layout",
    "TimelineData": "timeline",
    "VerdictData": "verdict",
    "apply_layout": "layout",
    "budget_bar": "budget_bar",
    "budget_bar_data": "budget_bar",
    "budget_sweep_figure": "sweeps",
    "distributions_data": "sweeps",
    "distributions_figure": "sweeps",
    "escape": "layout",
    "explorer_data": "explorer",
    "explorer_map": "explorer",
    "fitted_label": "budget_bar",
    "panel_vline": "layout",
    "gain_timeline": "timeline",
    "heatmap_data": "heatmap",
    "heatmap_order": "heatmap",
    "map_data": "pool_map",
    "overlay_data": "overlay",
    "overlay_map": "overlay",
    "pool_map": "pool_map",
    "sensitivity_data": "sensitivity",
    "sensitivity_figure": "sensitivity",
    "similarity_heatmap": "heatmap",
    "snippet": "layout",
    "sweep_lines": "sweeps",
    "timeline_data": "timeline",
    "verdict_data": "verdict",
    "verdict_figure": "verdict",
    "verdict_phrase": "pool_map",
    "CountBars": "poolset",
    "POOLSET_STRATEGIES": "poolset",
    "dropped_data": "poolset",
    "dropped_figure": "poolset",
    "redundancy_data": "poolset",
    "redundancy_figure": "poolset",
    "mark_chunk": "pool_map",
    "Facet": "facets",
    "facet_positions": "facets",
    "facets_data": "facets",
    "facets_figure": "facets",
    "VERDICT_MARKERS": "pool_map",
}

__all__ = sorted(_HOME)


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'adagres.figures' has no attribute {name!r}")
    module = importlib.import_module(f".{_HOME[name]}", __name__)
    # Bind every public name of that module at once: importing a submodule binds the
    # submodule itself to the package (``pool_map``, ``budget_bar``), which the function of
    # the same name must replace.
    for public, home in _HOME.items():
        if home == _HOME[name]:
            globals()[public] = getattr(module, public)
    return globals()[name]


def __dir__() -> list[str]:
    return __all__
