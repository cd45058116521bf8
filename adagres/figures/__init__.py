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

#: The public names of each module of this package.
_NAMES = {
    "budget_bar": (
        "BarData",
        "BarSegment",
        "LABEL_CHAR_WIDTH",
        "LABEL_FIT_WIDTH",
        "MIN_ID_CHARS",
        "budget_bar",
        "budget_bar_data",
        "fitted_label",
    ),
    "explorer": ("ExplorerData", "explorer_data", "explorer_map"),
    "facets": ("Facet", "facet_positions", "facets_data", "facets_figure"),
    "heatmap": ("HeatmapData", "heatmap_data", "heatmap_order", "similarity_heatmap"),
    "layout": (
        "FONT",
        "HOVER_LINE",
        "PALETTE",
        "STRATEGY_COLORS",
        "TITLE_MARGIN",
        "TITLE_MARGIN_PER_LINE",
        "apply_layout",
        "escape",
        "panel_vline",
        "snippet",
    ),
    "overlay": ("OverlayData", "overlay_data", "overlay_map"),
    "pool_map": (
        "MAX_PICK_LABELS",
        "MapData",
        "MapPoints",
        "VERDICT_MARKERS",
        "map_data",
        "mark_chunk",
        "pool_map",
        "verdict_phrase",
    ),
    "poolset": (
        "CountBars",
        "POOLSET_STRATEGIES",
        "dropped_data",
        "dropped_figure",
        "redundancy_data",
        "redundancy_figure",
    ),
    "sensitivity": ("SensitivityData", "sensitivity_data", "sensitivity_figure"),
    "sweeps": (
        "DistributionsData",
        "METRIC_LABELS",
        "PAIR_METRICS",
        "SweepLines",
        "budget_sweep_figure",
        "distributions_data",
        "distributions_figure",
        "sweep_lines",
    ),
    "timeline": ("MARKER_STEPS", "TimelineData", "gain_timeline", "timeline_data"),
    "verdict": ("VerdictData", "verdict_data", "verdict_figure"),
}
#: Public name -> the module of this package that defines it.
_HOME = {name: module for module, names in _NAMES.items() for name in names}

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
