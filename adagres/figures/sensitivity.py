"""How the selection responds to λ: F, relevance, redundancy and size across a λ grid."""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.sweep import LamSweep
from .layout import PALETTE, apply_layout, panel_vline

__all__ = ["SENSITIVITY_PANELS", "SensitivityData", "sensitivity_data", "sensitivity_figure"]

#: The panels, top to bottom: (field of :class:`LamSweep`, axis title).
SENSITIVITY_PANELS: tuple[tuple[str, str], ...] = (
    ("objective", "F at λ"),
    ("relevance_sum", "Σ relevance"),
    ("redundancy_mean", "mean pair cosine"),
    ("size", "chunks"),
)


@dataclass(frozen=True)
class SensitivityData:
    """The sweep's series per panel, the grid positions where the set changes, the λ marks."""

    lams: tuple[float, ...]
    series: dict[str, tuple[float, ...]]
    change_positions: tuple[int, ...]
    adaptive_lam: float
    manual_lam: float | None


def sensitivity_data(
    lam_sweep: LamSweep, *, adaptive_lam: float, manual_lam: float | None = None
) -> SensitivityData:
    """Plain series from the sweep (no recomputation)."""
    lams = tuple(float(x) for x in lam_sweep.lams)
    changes = set(lam_sweep.changes)
    return SensitivityData(
        lams=lams,
        series={f: tuple(float(x) for x in getattr(lam_sweep, f)) for f, _ in SENSITIVITY_PANELS},
        change_positions=tuple(k for k, lam in enumerate(lams) if lam in changes),
        adaptive_lam=float(adaptive_lam),
        manual_lam=None if manual_lam is None else float(manual_lam),
    )


def _whole_step(values: list[float], ticks: int = 4) -> int:
    """A whole tick step giving about ``ticks`` ticks over ``values``' range.

    >>> _whole_step([10, 11, 12]), _whole_step([0, 40])
    (1, 10)
    """
    spread = max(values, default=0) - min(values, default=0)
    return max(1, -(-int(spread) // ticks))


def sensitivity_figure(
    lam_sweep: LamSweep,
    *,
    adaptive_lam: float,
    manual_lam: float | None = None,
    color: str = PALETTE["selected"],
    change_color: str = PALETTE["stop"],
    title: str | None = "Sensitivity to λ",
    height: int | None = 620,
) -> go.Figure:
    """Four stacked panels sharing the λ axis, vertical lines at the adaptive and manual λ,
    and markers at the grid values where the picked set changes."""
    data = sensitivity_data(lam_sweep, adaptive_lam=adaptive_lam, manual_lam=manual_lam)
    fig = make_subplots(
        rows=len(SENSITIVITY_PANELS), cols=1, shared_xaxes=True, vertical_spacing=0.04
    )
    x = list(data.lams)
    for row, (field, label) in enumerate(SENSITIVITY_PANELS, start=1):
        y = list(data.series[field])
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="lines",
                name=label,
                showlegend=False,
                line={"color": color, "shape": "hv" if field == "size" else "linear"},
                hovertemplate=f"λ %{{x:.4f}}: {label} %{{y:.4f}}<extra></extra>",
            ),
            row=row,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=[x[k] for k in data.change_positions],
                y=[y[k] for k in data.change_positions],
                mode="markers",
                name="set changes",
                showlegend=row == 1,
                legendgroup="changes",
                marker={"color": change_color, "size": 7, "symbol": "diamond"},
                hovertemplate="set changes at λ %{x:.4f}<extra></extra>",
            ),
            row=row,
            col=1,
        )
        fig.update_yaxes(title_text=label, row=row, col=1)
        if field == "size":  # whole chunks: integer ticks only (never 11.5)
            fig.update_yaxes(tick0=0, dtick=_whole_step(y), tickformat="d", row=row, col=1)
    # One vertical line per panel and λ, and a label over the top panel, in one update.
    marks: list[tuple[float, str, str, str | None]] = [
        (data.adaptive_lam, "adaptive λ", PALETTE["adaptive"], None)
    ]
    if data.manual_lam is not None:
        marks.append((data.manual_lam, "manual λ", PALETTE["manual"], "dash"))
    shapes, labels = [], []
    above = {"y": 1.0, "xref": "x", "yref": "paper", "showarrow": False, "yanchor": "bottom"}
    for lam, text, line_color, dash in marks:
        line = {"color": line_color, "width": 2, **({"dash": dash} if dash else {})}
        shapes += [panel_vline(lam, row, line) for row in range(1, len(SENSITIVITY_PANELS) + 1)]
        labels.append({**above, "x": lam, "text": text, "font": {"color": line_color}})
    fig.update_layout(shapes=shapes, annotations=labels)
    apply_layout(fig, title=title, height=height)
    fig.update_xaxes(title_text="λ", row=len(SENSITIVITY_PANELS), col=1)
    return fig
