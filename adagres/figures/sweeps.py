"""Budget sweeps (one line per strategy) and the pool's distributions."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ..core.sweep import BUDGET_COLUMNS, BudgetSweep
from ..errors import InputError
from .layout import PALETTE, STRATEGY_COLORS, apply_layout, nan_list

__all__ = [
    "METRIC_LABELS",
    "PAIR_METRICS",
    "DistributionsData",
    "SweepLines",
    "budget_sweep_figure",
    "distributions_data",
    "distributions_figure",
    "sweep_lines",
]

#: Axis titles of the metrics a budget sweep can plot.
METRIC_LABELS: dict[str, str] = {
    "size": "chunks selected",
    "tokens_used": "tokens used",
    "budget_use": "budget use",
    "objective": "F (at the adaptive λ)",
    "relevance_sum": "Σ relevance",
    "relevance_mean": "mean relevance",
    "redundancy_mean": "mean pair cosine",
    "redundancy_max": "max pair cosine",
    "near_duplicates": "near-duplicate pairs",
    "iou": "IoU with gold",
    "recall": "gold recall",
    "precision": "gold precision",
    "answer_found": "answer found",
    "lam": "λ",
}


#: Metrics over pairs of picks: undefined (a gap, not 0) where fewer than two were picked.
PAIR_METRICS = frozenset({"redundancy_mean", "redundancy_max"})
#: Marker symbols, one per line in turn, so that lines drawn on top of each other show.
_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "star", "cross")


@dataclass(frozen=True)
class SweepLines:
    """The values each strategy's line draws (None: a gap) and, for a line equal to an
    earlier one at every budget, that strategy's name (``same_as``)."""

    budgets: tuple[int, ...]
    values: dict[str, tuple[float | None, ...]]
    same_as: dict[str, str]


def sweep_lines(budget_sweep: BudgetSweep, metric: str) -> SweepLines:
    """Plain series of ``metric``: runs that failed are gaps, and so are pair metrics where
    fewer than two chunks were picked (a mean over no pair is undefined, not 0)."""
    if metric not in METRIC_LABELS or metric not in BUDGET_COLUMNS:
        raise InputError(f"metric: expected one of {', '.join(METRIC_LABELS)}, got {metric!r}")
    sizes = cast("dict[str, list[int | None]]", budget_sweep.series("size"))
    values: dict[str, tuple[float | None, ...]] = {}
    for strategy, raw in budget_sweep.series(metric).items():
        line = nan_list(raw)
        if metric in PAIR_METRICS:
            line = [
                None if n is None or n < 2 else y
                for y, n in zip(line, sizes[strategy], strict=True)
            ]
        values[strategy] = tuple(line)
    same_as: dict[str, str] = {}
    seen: dict[tuple[float | None, ...], str] = {}
    for strategy, drawn in values.items():
        if drawn in seen:
            same_as[strategy] = seen[drawn]
        else:
            seen[drawn] = strategy
    return SweepLines(tuple(budget_sweep.budgets), values, same_as)


def budget_sweep_figure(
    budget_sweep: BudgetSweep,
    *,
    metric: str,
    title: str | None = None,
    height: int | None = 420,
) -> go.Figure:
    """``metric`` against the budget, one line per strategy (gaps where a run failed or a
    pair metric is undefined). Each line has its own marker symbol, later lines smaller
    markers and a dashed line, so lines on top of each other all show; a line equal to an
    earlier one says so in the legend."""
    lines = sweep_lines(budget_sweep, metric)
    fig = go.Figure()
    x = list(lines.budgets)
    # Budget use is a share: written as a percentage with one decimal, as the app does.
    value = "%{y:.1%}" if metric == "budget_use" else "%{y:.4g}"
    for number, (strategy, values) in enumerate(lines.values.items()):
        same = lines.same_as.get(strategy)
        fig.add_trace(
            go.Scatter(
                x=x,
                y=list(values),
                mode="lines+markers",
                name=strategy if same is None else f"{strategy} (same as {same})",
                line={
                    "color": STRATEGY_COLORS.get(strategy, PALETTE["chunk"]),
                    "dash": "solid" if same is None else "dot",
                },
                marker={
                    "symbol": _SYMBOLS[number % len(_SYMBOLS)],
                    "size": max(5, 10 - 2 * number),
                },
                hovertemplate=f"{strategy}<br>budget %{{x}}: {value}<extra></extra>",
            )
        )
    label = METRIC_LABELS[metric]
    apply_layout(fig, title=f"{label} by budget" if title is None else title, height=height)
    fig.update_xaxes(title="token budget")
    fig.update_yaxes(title=label, tickformat=".0%" if metric == "budget_use" else None)
    return fig


@dataclass(frozen=True)
class DistributionsData:
    """Relevance and token counts of the pool, and of the selected chunks if given."""

    relevance: tuple[float, ...]
    tokens: tuple[int, ...]
    selected_relevance: tuple[float, ...] | None
    selected_tokens: tuple[int, ...] | None


def distributions_data(
    relevance: Any, tokens: Any, *, selected: Iterable[int] | None = None
) -> DistributionsData:
    """Plain values for :func:`distributions_figure`."""
    rel = np.asarray(relevance, dtype=np.float64).reshape(-1)
    tok = np.asarray(tokens).reshape(-1)
    if rel.shape != tok.shape:
        raise InputError(f"tokens: has {tok.size} entries, relevance has {rel.size}")
    picks = None if selected is None else [int(i) for i in selected]
    return DistributionsData(
        relevance=tuple(float(x) for x in rel),
        tokens=tuple(int(x) for x in tok),
        selected_relevance=None if picks is None else tuple(float(rel[i]) for i in picks),
        selected_tokens=None if picks is None else tuple(int(tok[i]) for i in picks),
    )


def distributions_figure(
    relevance: Any,
    tokens: Any,
    *,
    selected: Iterable[int] | None = None,
    selected_name: str = "selected",
    color: str = PALETTE["candidate"],
    selected_color: str = PALETTE["selected"],
    title: str | None = "Relevance and length of the pool's chunks",
    height: int | None = 340,
) -> go.Figure:
    """Relevance histogram and token-length histogram side by side, the chunks at positions
    ``selected`` overlaid under the name ``selected_name`` (the picks, or the chunks chosen
    on a map)."""
    data = distributions_data(relevance, tokens, selected=selected)
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.1)
    groups = [("pool", "pool", color, data.relevance, data.tokens)]
    if data.selected_relevance is not None:
        picked = (data.selected_relevance, data.selected_tokens or ())
        groups.append((selected_name, "selected", selected_color, *picked))
    for name, group, fill, *columns in groups:
        for col, values in enumerate(columns, start=1):
            histogram = go.Histogram(
                x=list(values),
                name=name,
                marker={"color": fill},
                legendgroup=group,
                showlegend=False if col == 2 else None,  # one legend entry per group
            )
            fig.add_trace(histogram, row=1, col=col)
    apply_layout(fig, title=title, height=height)
    fig.update_layout(barmode="overlay")
    fig.update_traces(opacity=0.8)
    fig.update_xaxes(title_text="relevance (cosine to the query)", row=1, col=1)
    fig.update_xaxes(title_text="tokens", row=1, col=2)
    fig.update_yaxes(title_text="chunks", row=1, col=1)
    return fig
