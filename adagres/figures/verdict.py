"""The "why dropped" view: one chunk's gain at each step against the winner's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..core.result import Selection
from ..errors import InputError
from .common import check_length
from .layout import PALETTE, apply_layout, escape, plain_name

__all__ = ["VerdictData", "verdict_data", "verdict_figure"]


@dataclass(frozen=True)
class VerdictData:
    """A chunk's score per step it was in play (what the rule maximised), the winners'
    scores, its marginal F gains, and its verdict.

    ``eligible`` says whether it fitted at each step. ``event_step`` is the step of the
    verdict (pick, first did-not-fit or stop) and ``event`` a short label for it.
    """

    chunk: int
    kind: str
    steps: tuple[int, ...]
    gain: tuple[float, ...]
    winner_gain: tuple[float | None, ...]
    score: tuple[float, ...]
    winner_score: tuple[float | None, ...]
    eligible: tuple[bool, ...]
    event_step: int | None
    event: str
    summary: str


def verdict_data(selection: Selection, chunk: int, *, ids: Sequence[Any]) -> VerdictData:
    """Read one chunk's verdict and gain history from the selection (traced for history)."""
    check_length(ids, "ids", selection.n_chunks)
    if isinstance(chunk, bool) or not 0 <= int(chunk) < selection.n_chunks:
        raise InputError(f"chunk: position {chunk} is outside the pool of {selection.n_chunks}")
    verdict = selection.verdict(int(chunk))
    h = verdict.history
    kind = verdict.kind.value
    event = {
        "selected": f"selected at step {verdict.step}",
        "did_not_fit": f"did not fit: {verdict.tokens} tokens, {verdict.tokens_left} left",
        "outscored": f"closest to the winner (stop: {plain_name(selection.stop_reason)})",
        "non_positive_gain": "stop: score ≤ 0",
        "not_in_optimum": "not in the optimum",
        "duplicate": f"duplicate of the pick at step {verdict.step}",
    }[kind]
    return VerdictData(
        chunk=int(chunk),
        kind=kind,
        steps=tuple(g.step for g in h),
        gain=tuple(g.gain for g in h),
        winner_gain=tuple(g.winner_gain for g in h),
        score=tuple(g.score for g in h),
        winner_score=tuple(g.winner_score for g in h),
        eligible=tuple(g.eligible for g in h),
        event_step=verdict.step,
        event=event,
        summary=escape(verdict.summary(ids)),
    )


def verdict_figure(
    selection: Selection,
    chunk: int,
    *,
    ids: Sequence[Any],
    chunk_color: str = PALETTE["winner"],
    winner_color: str = PALETTE["selected"],
    title: str | None = None,
    height: int | None = 360,
) -> go.Figure:
    """The chunk's score (steps where it did not fit drawn hollow) against the winner's score
    at every step it was in play, a zero line, and a marker at its pick, first did-not-fit
    step or the stop."""
    data = verdict_data(selection, chunk, ids=ids)
    fig = go.Figure()
    # numpy arrays, not lists: plotly checks a list element by element (see pool_map).
    steps = np.asarray(data.steps, dtype=np.int64)
    fig.add_trace(
        go.Scatter(
            x=steps,
            y=np.asarray(data.winner_score, dtype=np.float64),
            mode="lines+markers",
            name="winner of the step",
            line={"color": winner_color},
            hovertemplate="step %{x}: winner score %{y:+.4f}<extra></extra>",
        )
    )
    fig.add_trace(
        go.Scatter(
            x=steps,
            y=np.asarray(data.score, dtype=np.float64),
            mode="lines+markers",
            name=f"{escape(ids[data.chunk])}",
            line={"color": chunk_color},
            marker={
                "symbol": np.where(
                    np.asarray(data.eligible, dtype=bool), "circle", "circle-open"
                ).astype(object),
                "size": 9,
            },
            hovertemplate="step %{x}: score %{y:+.4f}<extra></extra>",
        )
    )
    fig.add_hline(y=0.0, line={"color": PALETTE["zero"], "width": 1})
    if data.event_step is not None:
        fig.add_vline(
            x=data.event_step,
            line={"color": PALETTE["stop"], "dash": "dot"},
            annotation_text=data.event,
            annotation_position="top left",
        )
    apply_layout(fig, title=data.summary if title is None else title, height=height)
    fig.update_xaxes(title="step", dtick=1 if len(data.steps) <= 30 else None)
    fig.update_yaxes(title="marginal gain")
    return fig
