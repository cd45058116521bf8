"""Plotly figure builders for the app's views (imports plotly; never streamlit).

Not imported by ``adagres`` itself, so the core stays numpy-only. Every builder takes
results (a :class:`~adagres.Selection`, a projection, a sweep, arrays), first extracts plain
data (the ``*_data`` functions, which tests check exactly) and then draws a ``go.Figure``.
Styling arguments are keyword-only; :func:`apply_layout` gives every figure the same look.
"""

from .budget_bar import BarData, BarSegment, budget_bar, budget_bar_data
from .heatmap import HeatmapData, heatmap_data, heatmap_order, similarity_heatmap
from .layout import FONT, PALETTE, STRATEGY_COLORS, apply_layout, escape, snippet
from .pool_map import MapData, MapPoints, map_data, pool_map
from .sensitivity import SensitivityData, sensitivity_data, sensitivity_figure
from .sweeps import (
    METRIC_LABELS,
    DistributionsData,
    budget_sweep_figure,
    distributions_data,
    distributions_figure,
)
from .timeline import TimelineData, gain_timeline, timeline_data
from .verdict import VerdictData, verdict_data, verdict_figure

__all__ = [
    "FONT",
    "METRIC_LABELS",
    "PALETTE",
    "STRATEGY_COLORS",
    "BarData",
    "BarSegment",
    "DistributionsData",
    "HeatmapData",
    "MapData",
    "MapPoints",
    "SensitivityData",
    "TimelineData",
    "VerdictData",
    "apply_layout",
    "budget_bar",
    "budget_bar_data",
    "budget_sweep_figure",
    "distributions_data",
    "distributions_figure",
    "escape",
    "gain_timeline",
    "heatmap_data",
    "heatmap_order",
    "map_data",
    "pool_map",
    "sensitivity_data",
    "sensitivity_figure",
    "similarity_heatmap",
    "snippet",
    "timeline_data",
    "verdict_data",
    "verdict_figure",
]
