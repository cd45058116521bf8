"""Budget fill: one horizontal bar segment of tokens per pick, then the remaining budget."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

import plotly.graph_objects as go

from ..core.result import Selection
from .common import check_length
from .layout import PALETTE, apply_layout, escape

__all__ = [
    "LABEL_CHAR_WIDTH",
    "LABEL_FIT_WIDTH",
    "MIN_ID_CHARS",
    "BarData",
    "BarSegment",
    "budget_bar",
    "budget_bar_data",
    "fitted_label",
]

#: Width of one label character at 11 px (an upper bound for digits, ids and ". "), px.
LABEL_CHAR_WIDTH = 7.5
#: The plot width labels are cut to fit (px): the bar's width in a 1024 px window. An id
#: too long for its segment there is cut with "…" rather than left out, so long ids (a
#: Live pool's "doc.md#12") still name their segments; wider windows show the same cut.
#: A segment too narrow for even its number gets no label, so the browser measures none
#: of the labels it would hide (677 hidden labels: 0.37 s a draw; none: 0.10 s).
LABEL_FIT_WIDTH = 640
#: The fewest characters of an id a label shows cut; below it the label is the number alone.
MIN_ID_CHARS = 6


@dataclass(frozen=True)
class BarSegment:
    """One pick: its number in pick order, pool position, id label and the tokens it was
    charged; ``saved``: the tokens overlap-aware packing did not charge (ℓ − charged)."""

    pick: int
    chunk: int
    label: str
    tokens: int
    saved: int = 0


@dataclass(frozen=True)
class BarData:
    """Segments up to the step, the tokens they use, the budget and what is left (>= 0)."""

    segments: tuple[BarSegment, ...]
    used: int
    remaining: int
    budget: int


def budget_bar_data(
    selection: Selection, *, ids: Sequence[Any], step: int | None = None
) -> BarData:
    """The picks up to ``step`` (all picks when None) with the tokens each was charged (its
    token count, or with overlap-aware packing what it added to the context)."""
    check_length(ids, "ids", selection.n_chunks)
    k = selection.size if step is None else max(0, min(int(step), selection.size))
    segments = []
    for n, i in enumerate(selection.indices[:k], start=1):
        ell = int(selection.token_counts[i])
        charged = selection.steps[n - 1].winner_tokens
        charged = ell if charged is None else int(charged)
        segments.append(BarSegment(n, i, escape(ids[i]), charged, ell - charged))
    used = sum(s.tokens for s in segments)
    return BarData(tuple(segments), used, max(0, selection.budget - used), selection.budget)


def fitted_label(pick: int, chunk_id: Any, width: float) -> str:
    """ "<pick>. <id>" for a segment ``width`` px wide at 11 px: the id cut with "…" to fit
    while at least :data:`MIN_ID_CHARS` of it show (fewer name nothing: "2. bl…"), else the
    number alone, "" when not even that fits (the hover names every segment).

    >>> fitted_label(3, "report-2024-final.md#12", 210), fitted_label(3, "abcdefghij", 90)
    ('3. report-2024-final.md#12', '3. abcdefg…')
    >>> fitted_label(2, "blog-01", 60), fitted_label(12, "abc", 30), fitted_label(12, "abc", 10)
    ('2', '12', '')
    """
    fits = int((width - 6) // LABEL_CHAR_WIDTH)  # characters that fit, with a little room
    number, text = str(pick), str(chunk_id)
    full = f"{number}. {text}"
    if len(full) <= fits:
        return f"{number}. {escape(text)}"
    room = fits - len(number) - 3  # "12. " and the "…"
    if room >= MIN_ID_CHARS:
        return f"{number}. {escape(text[:room])}…"
    return number if len(number) <= fits else ""


def budget_bar(
    selection: Selection,
    *,
    ids: Sequence[Any],
    step: int | None = None,
    color: str = PALETTE["selected"],
    alt_color: str = "#3A93C9",
    title: str | None = None,
    height: int | None = 200,
) -> go.Figure:
    """Tokens per pick, side by side in pick order, then the unused budget as an empty segment.

    The picks are one trace (``"picks"``: bar k spans its ``base`` to ``base + x``, its
    ``customdata`` is the chunk's pool position) and the rest one more (``"remaining"``).
    Each segment is labelled with its pick number and id, the id cut with "…" to fit at
    11 px in a plot :data:`LABEL_FIT_WIDTH` wide (:func:`fitted_label`)."""
    data = budget_bar_data(selection, ids=ids, step=step)
    starts = list(accumulate((s.tokens for s in data.segments), initial=0))
    scale = LABEL_FIT_WIDTH / max(data.budget, data.used, 1)  # px per token
    labels = [fitted_label(s.pick, ids[s.chunk], s.tokens * scale) for s in data.segments]
    # One trace for all the picks (each bar placed by its base), not a trace per pick: the
    # browser's cost of a figure grows with its traces (150 picks: 0.19 s per draw).
    fig = go.Figure()
    inside = {"orientation": "h", "textposition": "inside", "insidetextanchor": "middle"}
    fig.add_trace(
        go.Bar(
            x=[s.tokens for s in data.segments],
            base=starts[:-1],
            y=["budget"] * len(data.segments),
            customdata=[s.chunk for s in data.segments],
            name="picks",
            text=labels,
            textangle=0,  # never turned on end in a narrow segment: hidden there instead
            showlegend=False,
            **inside,
            marker={
                "color": [color if s.pick % 2 else alt_color for s in data.segments],
                "line": {"color": "white", "width": 1},
            },
            hovertext=[
                f"pick {s.pick}: {s.label}<br>{s.tokens} tokens"
                + (f" ({s.saved} shared with earlier picks, paid once)" if s.saved else "")
                for s in data.segments
            ],
            hoverinfo="text",
        )
    )
    fig.add_trace(
        go.Bar(
            x=[data.remaining],
            base=[data.used],
            y=["budget"],
            name="remaining",
            text=[f"{data.remaining} left"],
            showlegend=False,
            **inside,
            marker={
                "color": PALETTE["remaining"],
                "line": {"color": PALETTE["chunk"], "width": 1},
                "pattern": {"shape": "/", "fgcolor": PALETTE["grid"]},
            },
            hovertemplate=f"{data.remaining} tokens left<extra></extra>",
        )
    )
    if title is None:
        saved = sum(s.saved for s in data.segments)
        title = (
            f"{data.used} of {data.budget} tokens used by {len(data.segments)} "
            f"chunk{'s' if len(data.segments) != 1 else ''}"
            + (f" · {saved} repeated tokens paid once" if saved else "")
        )
    apply_layout(fig, title=title, height=height)
    # Labels that do not fit their segment at a readable size are hidden, not shrunk to a
    # few pixels (each segment's hover still names it).
    fig.update_layout(barmode="overlay", bargap=0.25, uniformtext={"minsize": 11, "mode": "hide"})
    fig.update_xaxes(range=[0, max(data.budget, data.used, 1)], title="tokens")
    fig.update_yaxes(showticklabels=False)
    return fig
