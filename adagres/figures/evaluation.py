"""The evaluation report's figures, drawn from the points :mod:`adagres.eval.frontier`
computes (which tests check exactly): per corpus, the recall–repeated-text frontier of the
compared strategies (:func:`frontier_figure`, the lead) and recall against mean pairwise
cosine, one panel per budget (:func:`tradeoff_figure`, kept for the cosine view).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from .layout import SHORT_MODEBAR, apply_layout, panel_vline

__all__ = ["frontier_figure", "tradeoff_figure"]

_FAMILY_SYMBOLS = {
    "adagres": "circle",
    "fixed λ": "diamond",
    "baseline": "square",
    "variant": "star",
    "preset": "star-diamond",
    "custom": "triangle-up",
}
#: Colours of the trade-off figure's strategies (up to 24, plotly's palette for many).
_PALETTE = qualitative.Dark24


def tradeoff_figure(
    points: Sequence[Mapping[str, Any]], *, corpus: str, label: str, panel_height: int = 380
) -> go.Figure:
    """The recall–redundancy trade-off of ``corpus``: one panel per budget (two per row),
    one marker per strategy (x: Δ mean pairwise cosine vs topk_budget, paired over queries;
    y: the primary metric with its 95 % CI). Markers: the strategy's family; an open marker
    is measured on fewer queries than topk_budget (see the hover). ``points``:
    :func:`adagres.eval.frontier.tradeoff_points`; ``label``: the primary metric's."""
    budgets = sorted({p["budget"] for p in points})
    columns = min(2, max(len(budgets), 1))
    rows = max(1, math.ceil(len(budgets) / columns))
    figure = make_subplots(
        rows=rows,
        cols=columns,
        shared_yaxes=True,
        subplot_titles=[f"{b} tokens" for b in budgets],
        horizontal_spacing=0.04,
        vertical_spacing=0.12,
    )
    strategies = list(dict.fromkeys(p["strategy"] for p in points))
    colour = {name: _PALETTE[i % len(_PALETTE)] for i, name in enumerate(strategies)}
    # Traces name their panel's axes (x, x2, …: make_subplots numbers them row by row) and
    # go in with one call, the x = 0 lines with the layout: add_trace(row=, col=) and
    # add_vline looked the panel up per call (0.1–0.19 s for 23 strategies at 4 budgets).
    traces, lines = [], []
    for position, budget in enumerate(budgets):
        where = {"row": position // columns + 1, "col": position % columns + 1}
        axis = "" if position == 0 else str(position + 1)
        for p in (p for p in points if p["budget"] == budget):
            traces.append(
                go.Scatter(
                    x=[p["x"]],
                    y=[p["y"]],
                    xaxis=f"x{axis}",
                    yaxis=f"y{axis}",
                    mode="markers",
                    name=p["strategy"],
                    legendgroup=p["strategy"],
                    showlegend=position == 0,
                    marker={
                        "color": colour[p["strategy"]],
                        "size": 10,
                        "opacity": 0.85,
                        "symbol": _FAMILY_SYMBOLS.get(p["family"], "circle")
                        + ("-open" if p["n"] < p["n_all"] else ""),
                    },
                    error_y={
                        "type": "data",
                        "symmetric": False,
                        "array": [p["y_high"] - p["y"]],
                        "arrayminus": [p["y"] - p["y_low"]],
                        "thickness": 1,
                        "width": 3,
                    },
                    hovertemplate=f"{p['strategy']} · {budget} tokens · {p['n']} of "
                    f"{p['n_all']} queries<br>Δ cosine %{{x:+.3f}}"
                    f"<br>{label} %{{y:.3f}}<extra></extra>",
                )
            )
        lines.append(panel_vline(0, position + 1, {"color": "#999", "width": 1, "dash": "dot"}))
        if position >= len(budgets) - columns:  # the bottom row names the axis
            figure.update_xaxes(title_text="Δ mean cosine vs topk_budget", **where)
        if where["col"] == 1:
            figure.update_yaxes(title_text=label, **where)
    figure.add_traces(traces)
    figure.update_layout(shapes=lines, legend={"font": {"size": 10}, "tracegroupgap": 0})
    # The shared look: the title below the mode bar's row, the legend (one entry per
    # strategy, several rows at 1024 px) under the panels, where it pushes them up.
    title = f"{corpus}: {label} vs mean cosine"  # the intervals: in the hover
    apply_layout(figure, title=title, height=max(panel_height * rows + 280, 700))
    # Drawn in an expander on the Evidence page: a mode bar of three buttons leaves the
    # title clear at a 1024 px window (the full bar covered it).
    figure.update_layout(modebar=SHORT_MODEBAR)
    return figure


#: Colours of the compared strategies, in the order :func:`compared` lists them (top-k
#: dark grey; Okabe–Ito after it).
_COMPARED_COLOURS = ("#444444", "#E69F00", "#009E73", "#0072B2", "#CC79A7", "#D55E00")


def frontier_figure(
    points: Sequence[Mapping[str, Any]],
    *,
    corpus: str,
    label: str,
    order: Sequence[str],
    baseline: str | None = None,
) -> go.Figure:
    """The recall–repeated-text frontier of ``corpus``: x the share of the context's words
    that repeat text already in it, y the corpus's primary metric (answer recall), for the
    compared strategies only (default :func:`adagres.eval.frontier.compared`, at most six:
    the legend names what a reader weighs, the full tables hold the rest).

    One line per strategy through its budgets, smallest to largest, the marker growing with
    the budget; not one marker per strategy and budget in a panel per budget. A packer is
    chosen for a range of budgets, and more budget buys both recall and room to repeat, so a
    strategy reads as a path: a path above and to the left of top-k's finds as many answers
    for less repeated text at every budget, and a crossing shows the budget where the order
    changes. One panel per corpus keeps every budget of a strategy in one view; the 95 %
    intervals are in the hover and the tables, where error bars would hide the lines."""
    budgets = sorted({p["budget"] for p in points})
    size = {b: 8 + 10 * i / max(len(budgets) - 1, 1) for i, b in enumerate(budgets)}
    names = list(dict.fromkeys(p["strategy"] for p in points))
    figure = go.Figure()
    for name in names:
        mine = [p for p in points if p["strategy"] == name]
        colour = _COMPARED_COLOURS[order.index(name) % len(_COMPARED_COLOURS)]
        figure.add_trace(
            go.Scatter(
                x=[p["x"] for p in mine],
                y=[p["y"] for p in mine],
                mode="lines+markers",
                name=mine[0]["label"],
                legendgroup=name,
                line={
                    "color": colour,
                    "width": 2,
                    "dash": "dot" if name == baseline else "solid",
                },
                marker={"color": colour, "size": [size[p["budget"]] for p in mine]},
                customdata=[[p["budget"], p["n"], _interval(p)] for p in mine],
                hovertemplate=f"{mine[0]['label']} · %{{customdata[0]}} tokens · "
                "%{customdata[1]} queries<br>repeated text %{x:.1%}"
                f"<br>{label} %{{y:.3f}} %{{customdata[2]}}<extra></extra>",
            )
        )
    figure.update_xaxes(title_text="repeated text (share of the context's words)", tickformat=".0%")
    figure.update_yaxes(title_text=label)
    sizes = ", ".join(map(str, budgets))
    apply_layout(figure, title=f"{corpus}: {label} against repeated text", height=600)
    # The legend's title says how to read the markers; the bottom margin keeps the axis
    # title clear of the legend's row(s) in the static image too.
    figure.update_layout(
        legend={"font": {"size": 11}, "title": {"text": f"marker size: budget ({sizes} tokens)"}},
        margin={"b": 120},
    )
    return figure


def _interval(point: Mapping[str, Any]) -> str:
    if point["y_low"] is None or point["y_high"] is None:
        return ""
    return f"[{point['y_low']:.3f}, {point['y_high']:.3f}]"
