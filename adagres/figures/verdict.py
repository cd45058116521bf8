"""The "why dropped" view: one chunk's score at each step against the winner's."""

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

    ``eligible`` says whether the rule could take it at each step, ``fits`` whether it fitted
    the tokens left (a chunk that fits may still be barred: the near-duplicate guard);
    ``barred`` says why it could not be taken where it could not ("" where it could).
    ``event_step`` is the step of the verdict (pick, first did-not-fit or stop) and ``event``
    a short label for it. ``n_steps`` is the run's number of steps (the x axis spans
    1..n_steps) and ``score_name`` the rule's score in words ("score = relevance").
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
    fits: tuple[bool, ...] = ()
    barred: tuple[str, ...] = ()
    n_steps: int = 0
    score_name: str = "score"


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
        "duplicate": f"duplicate of the pick at step {verdict.step}"
        if verdict.duplicate_of is None
        else f"duplicate of {str(ids[verdict.duplicate_of])!r} (step {verdict.step})",
    }.get(kind, f"{plain_name(kind)} (step {verdict.step})")
    fits = tuple(verdict.tokens <= selection.steps[g.step - 1].tokens_available for g in h)
    barred = tuple(
        "" if g.eligible else "does not fit" if not fit else plain_name(kind)
        for g, fit in zip(h, fits, strict=True)
    )
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
        event=escape(event),
        summary=escape(verdict.summary(ids)),
        fits=fits,
        barred=barred,
        n_steps=len(selection.steps),
        score_name=selection.scoring.formula,
    )


def verdict_figure(
    selection: Selection,
    chunk: int,
    *,
    ids: Sequence[Any],
    chunk_color: str = PALETTE["winner"],
    winner_color: str = PALETTE["selected"],
    barred_color: str = PALETTE["candidate"],
    title: str | None = None,
    height: int | None = 360,
) -> go.Figure:
    """The chunk's score against the winner's score at every step it was in play, a zero
    line, and a marker at its pick, first did-not-fit step or the stop.

    Its score is a line where the rule could take it; where it could not (too large for
    the tokens left, or barred as a duplicate) it is a hollow grey point whose hover says
    why, so a barred chunk above the winners does not read as one that should have won.
    The x axis spans the run's steps; the y axis names the rule's score.
    """
    data = verdict_data(selection, chunk, ids=ids)
    fig = go.Figure()
    # numpy arrays, not lists: plotly checks a list element by element (see pool_map).
    steps = np.asarray(data.steps, dtype=np.int64)
    score = np.asarray(data.score, dtype=np.float64)
    could = np.asarray(data.eligible, dtype=bool)
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
    name = escape(ids[data.chunk])
    fig.add_trace(
        go.Scatter(
            x=steps,
            y=np.where(could, score, np.nan),
            mode="lines+markers",
            name=f"{name}: could be taken",
            line={"color": chunk_color},
            marker={"size": 9},
            connectgaps=False,
            hovertemplate="step %{x}: score %{y:+.4f}<extra></extra>",
        )
    )
    if not could.all():
        fig.add_trace(
            go.Scatter(
                x=steps[~could],
                y=score[~could],
                customdata=np.asarray(data.barred, dtype=object)[~could],
                mode="markers",
                name=f"{name}: could not be taken",
                marker={"symbol": "circle-open", "size": 9, "color": barred_color},
                hovertemplate="step %{x}: score %{y:+.4f}, not taken: %{customdata}<extra></extra>",
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
    last = max(data.n_steps, 1)
    fig.update_xaxes(title="step", range=[0.5, last + 0.5], dtick=1 if last <= 30 else None)
    fig.update_yaxes(title=escape(data.score_name))
    return fig
