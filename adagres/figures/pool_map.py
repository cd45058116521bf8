"""The map of the pool at one step of a selection: picks so far, the winner, the gains."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from ..core import validate as v
from ..core.records import VerdictKind
from ..core.result import Selection
from ..errors import InputError
from .common import check_length, step_candidates
from .layout import (
    GAIN_SCALE,
    HOVER_LINE,
    PALETTE,
    UNDIMMED,
    escape,
    map_layout,
    number,
    one_point,
    plain_name,
    snippet,
    wrapped_snippet,
)
from .projection import Projection

__all__ = [
    "MAX_PICK_LABELS",
    "VERDICT_MARKERS",
    "MapData",
    "MapPoints",
    "away_from",
    "map_data",
    "mark_chunk",
    "pool_map",
    "verdict_phrase",
]

#: How the map draws the chunks not picked, by verdict, once the run has stopped (colour,
#: symbol): those that lost on score as light circles, those too large as crosses, those
#: the rule might not take as open diamonds; an unknown kind gets the last entry.
VERDICT_MARKERS: dict[str, tuple[str, str]] = {
    "outscored": ("#9ECAE1", "circle"),
    "non_positive_gain": ("#FDAE6B", "circle"),
    "not_in_optimum": ("#9ECAE1", "circle"),
    "did_not_fit": ("#999999", "x"),
    "duplicate": ("#CC79A7", "diamond-open"),
    "other": ("#666666", "square-open"),
}

#: Picks numbered on the map at most; past it each pick's number is only in its hover.
#: Hundreds of numbers overlap into an unreadable blot, and each is an SVG text the browser
#: lays out: a Why dropped budget change at 2,000 chunks settled in 0.8 s with ~20 picks
#: and in about 2 s with several hundred, all of them numbered.
MAX_PICK_LABELS = 60


@dataclass(frozen=True)
class MapPoints:
    """One group of chunks on the map: pool positions, coordinates, hover text.

    ``values`` are the gains at the step (candidates); ``labels`` the pick numbers (picks),
    each placed on the side of its point away from the query (``label_positions``).
    """

    indices: tuple[int, ...]
    x: tuple[float, ...]
    y: tuple[float, ...]
    hover: tuple[str, ...]
    values: tuple[float, ...] | None = None
    labels: tuple[str, ...] | None = None
    label_positions: tuple[str, ...] | None = None


@dataclass(frozen=True)
class MapData:
    """What the map shows at step ``step`` of a selection, as plain numbers and strings.

    ``step`` is the step drawn (1..len(selection.steps)), or 0 for "before the first
    pick". ``picked`` are the accepted picks up to that step, in pick order, labelled
    "1", "2", …; ``winner`` is the step's winner (accepted: it is the last of ``picked``;
    not accepted: the chunk that would have come next when the run stopped, with
    ``stop_reason`` set). Before the stop: ``candidates`` are the other chunks in play that
    can be taken, valued by their score at the step; ``unfit`` are chunks in play too large
    for the tokens left; ``ineligible`` those that fit but the rule may not take (the
    near-duplicate guard dropped them; their verdict says why). At the stop the run's
    verdicts are final, so every chunk not picked is in ``by_verdict`` instead, one group per
    verdict kind (kind value, chunks) in the order of ``VerdictKind``: the groups count what
    the Pool table counts, and ``candidates``, ``unfit`` and ``ineligible`` are empty.
    """

    step: int
    method: str
    query: tuple[float, float] | None
    picked: MapPoints
    candidates: MapPoints
    unfit: MapPoints
    winner: int | None
    winner_xy: tuple[float, float] | None
    winner_accepted: bool
    stop_reason: str | None
    color_by: str
    ineligible: MapPoints = MapPoints((), (), (), ())
    by_verdict: tuple[tuple[str, MapPoints], ...] = ()


def verdict_phrase(kind: Any, step: int | None, of: Any = None) -> str:
    """A chunk's final verdict in a few words, with its step, as every view says it; ``of``
    names the pick a duplicate duplicates (its verdict's ``duplicate_of``, as an id).

    >>> verdict_phrase("outscored", 3), verdict_phrase("duplicate", 1)
    ('outscored (closest at step 3)', 'duplicate of a pick (dropped at step 1)')
    >>> verdict_phrase("duplicate", 1, of="faq-01")
    "duplicate of a pick ('faq-01', dropped at step 1)"
    """
    raw = str(getattr(kind, "value", kind))
    if step is None:
        return plain_name(raw)
    if raw == "duplicate" and of is not None:
        return f"duplicate of a pick ({str(of)!r}, dropped at step {step})"
    return {
        "selected": f"selected at step {step}",
        "did_not_fit": f"did not fit at step {step}",
        "outscored": f"outscored (closest at step {step})",
        "non_positive_gain": f"no positive gain at the stop (step {step})",
        "not_in_optimum": "not in the optimum",
        "duplicate": f"duplicate of a pick (dropped at step {step})",
    }.get(raw, f"{plain_name(raw)} (step {step})")


def _hover(
    i: int,
    selection: Selection,
    ids: Sequence[Any],
    texts: Sequence[str],
    titles: Sequence[str] | None,
    line: str,
) -> str:
    head = f"<b>{escape(ids[i])}</b>"
    if titles is not None and titles[i]:
        head += f" · {snippet(titles[i], 80)}"
    kind, step = selection.verdict_kinds[i]
    # The pick a duplicate duplicates, from its verdict (few chunks: the guard's drops).
    holder = (
        selection.verdict(i).duplicate_of
        if str(getattr(kind, "value", kind)) == "duplicate"
        else None
    )
    phrase = verdict_phrase(kind, step, None if holder is None else ids[holder])
    lines = [line] if line else []
    return "<br>".join(
        [
            head,
            f"tokens {int(selection.token_counts[i])} · relevance {selection.relevance[i]:.4f}",
            *lines,
            f"verdict: {escape(phrase)}",
            *wrapped_snippet(texts[i], 160, width=HOVER_LINE),
        ]
    )


def map_data(
    projection: Projection,
    selection: Selection,
    step: int,
    *,
    ids: Sequence[Any],
    texts: Sequence[str],
    titles: Sequence[str] | None = None,
    color_by: str = "score",
) -> MapData:
    """Extract what :func:`pool_map` draws at ``step`` from the selection's step record.

    ``step`` beyond the last step is the last step (where the run stopped); 0 shows the
    pool before the first pick, valued by the first step's gains. Steps other than the last
    need a traced selection. ``color_by`` is ``"score"`` (what the strategy maximised, the
    default) or ``"gain"`` (the marginal F gain at the shared terms; differs from the score
    for ``ratio``, MMR, top-k and the variants). Each candidate's hover gives its score,
    the score's two terms and its marginal F gain.
    """
    n = selection.n_chunks
    if projection.chunks.shape[0] != n:
        raise InputError(f"projection: has {projection.chunks.shape[0]} chunks, the selection {n}")
    check_length(ids, "ids", n)
    check_length(texts, "texts", n)
    check_length(titles, "titles", n)
    v.choice(color_by, "color_by", ("gain", "score"))
    if isinstance(step, bool) or not isinstance(step, (int, np.integer)) or step < 0:
        raise InputError(f"step: expected a whole number >= 0, got {step!r}")
    t = min(int(step), len(selection.steps))
    record = selection.steps[max(t, 1) - 1]
    cand = step_candidates(selection, max(t, 1))
    values = cand.gain if color_by == "gain" else cand.score
    xy = projection.chunks
    shown = t > 0
    winner = record.winner if shown else None
    accepted = shown and record.accepted
    n_picks = min(t, selection.size)
    picks = selection.indices[:n_picks]

    def points(indices: Sequence[int], lines: Sequence[str], **extra: Any) -> MapPoints:
        return MapPoints(
            indices=tuple(int(i) for i in indices),
            x=tuple(float(xy[i, 0]) for i in indices),
            y=tuple(float(xy[i, 1]) for i in indices),
            hover=tuple(
                _hover(int(i), selection, ids, texts, titles, line)
                for i, line in zip(indices, lines, strict=True)
            ),
            **extra,
        )

    pick_lines = [
        f"pick {k} · gain at pick {number(selection.steps[k - 1].gain)}"
        for k in range(1, n_picks + 1)
    ]
    q = projection.query
    query = None if q is None else (float(q[0]), float(q[1]))
    picked = points(
        picks,
        pick_lines,
        labels=tuple(str(k) for k in range(1, n_picks + 1)),
        label_positions=away_from(xy[list(picks)], query),
    )
    in_play = cand.in_play.copy()
    if accepted and winner is not None:
        in_play[winner] = False
    left = record.tokens_available
    stopped = shown and not accepted and t == len(selection.steps)
    if stopped:  # the verdicts are final: draw them, not the state of the last step
        in_play[:] = False
    fits = np.flatnonzero(in_play & cand.eligible)
    too_large = selection.token_counts > left
    unfit_idx = np.flatnonzero(in_play & ~cand.eligible & too_large)
    barred_idx = np.flatnonzero(in_play & ~cand.eligible & ~too_large)
    at = f"step {max(t, 1)}"
    columns = (cand.score, cand.score_relevance, cand.score_redundancy, cand.gain)
    terms = zip(*(column[fits].tolist() for column in columns), strict=True)
    candidates = points(
        fits.tolist(),
        [
            f"score at {at}: {number(sc)} = relevance {rel:.4f} − redundancy {red:.4f}"
            f"<br>marginal F gain {number(g)}"
            for sc, rel, red, g in terms
        ],
        values=tuple(float(values[i]) for i in fits),
    )
    unfit = points(
        unfit_idx.tolist(),
        [
            f"does not fit at {at}: needs {int(selection.token_counts[i])} tokens, {left} left"
            for i in unfit_idx.tolist()
        ],
    )
    barred = points(barred_idx.tolist(), [f"fits at {at} but may not be taken"] * len(barred_idx))
    by_verdict: list[tuple[str, MapPoints]] = []
    if stopped:
        kinds = [str(getattr(k, "value", k)) for k, _ in selection.verdict_kinds]
        chosen = set(picks)
        known = [str(k.value) for k in VerdictKind]
        # A kind this module does not know yet still gets its group, after the known ones.
        for kind in dict.fromkeys([*known, *sorted(set(kinds) - set(known))]):
            members = [i for i in range(n) if kinds[i] == kind and i not in chosen]
            if members:
                by_verdict.append((kind, points(members, [""] * len(members))))
    return MapData(
        step=t,
        method=projection.method,
        query=query,
        picked=picked,
        candidates=candidates,
        unfit=unfit,
        winner=winner,
        winner_xy=None if winner is None else (float(xy[winner, 0]), float(xy[winner, 1])),
        winner_accepted=accepted,
        stop_reason=None if accepted or not shown else selection.stop_reason.value,
        color_by=color_by,
        ineligible=barred,
        by_verdict=tuple(by_verdict),
    )


def away_from(points: Any, query: tuple[float, float] | None) -> tuple[str, ...]:
    """A text position for each point's label on the side away from the query (the most
    relevant picks lie around the query's star, and a label above each would sit on it):
    above or below when the point is more above or below the query than beside it, else
    right or left.

    >>> away_from(np.array([[0.0, 1.0], [0.0, -1.0], [2.0, 0.5], [-2.0, 0.0]]), (0.0, 0.0))
    ('top center', 'bottom center', 'middle right', 'middle left')
    """
    xy = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    if query is None:
        return ("top center",) * len(xy)
    dx, dy = xy[:, 0] - query[0], xy[:, 1] - query[1]
    return tuple(
        ("top center" if y >= 0 else "bottom center")
        if abs(y) >= abs(x)
        else ("middle right" if x > 0 else "middle left")
        for x, y in zip(dx.tolist(), dy.tolist(), strict=True)
    )


def pool_map(
    projection: Projection,
    selection: Selection,
    step: int,
    *,
    ids: Sequence[Any],
    texts: Sequence[str],
    titles: Sequence[str] | None = None,
    color_by: str = "score",
    selected_color: str = PALETTE["selected"],
    winner_color: str = PALETTE["winner"],
    query_color: str = PALETTE["query"],
    unfit_color: str = PALETTE["did_not_fit"],
    colorscale: str = GAIN_SCALE,
    marker_size: int = 9,
    title: str | None = None,
    height: int | None = 600,
    svg: bool = False,
    max_labels: int = MAX_PICK_LABELS,
) -> go.Figure:
    """The pool's 2-D map at step ``step`` (see :func:`map_data` for what is shown).

    ``svg`` draws SVG (``go.Scatter``) instead of WebGL (``go.Scattergl``): faster without a
    GPU up to several thousand points. The query is a star; picks are numbered in pick order
    (on the side away from the star) while there are at most ``max_labels`` of them, else
    only in their hover. The step's winner is ringed, the candidates are coloured by their
    score at the step (with a colour bar), chunks that no longer fit are grey crosses.
    Hover: id, title, tokens, relevance, gain and final verdict, then a snippet of the text
    (escaped, so chunk text is plain text). Every chunk's point carries its pool position
    as ``customdata`` (the star has none), so a click event names the chunk without relying
    on the order of the traces.
    """
    data = map_data(
        projection, selection, step, ids=ids, texts=texts, titles=titles, color_by=color_by
    )
    kind = go.Scatter if svg else go.Scattergl
    fig = go.Figure()

    def add(layer: MapPoints, name: str, marker: dict[str, Any], **extra: Any) -> None:
        # numpy arrays, not lists: plotly checks a list element by element (about 14 ms for
        # 2,000 points against 1.3 ms) and sends numbers as typed arrays, a smaller message.
        trace = kind(
            x=np.asarray(layer.x, dtype=np.float64),
            y=np.asarray(layer.y, dtype=np.float64),
            customdata=np.asarray(layer.indices, dtype=np.int64),
            name=name,
            hovertext=np.asarray(layer.hover, dtype=object),
            hoverinfo="text",
            marker={"size": marker_size, **marker},
            **{"mode": "markers", **extra},
        )
        fig.add_trace(trace)

    c = data.candidates
    scale = {"colorscale": colorscale, "showscale": bool(c.indices)}
    scale["colorbar"] = {"title": {"text": data.color_by}, "thickness": 14}
    edge = {"color": "#777777", "width": 0.5}  # light colours stay visible
    add(c, "candidates", {"color": list(c.values or ()), **scale, "line": edge})
    add(data.unfit, "does not fit", {"color": unfit_color, "symbol": "x"})
    if data.ineligible.indices:
        color, symbol = VERDICT_MARKERS["duplicate"]
        add(data.ineligible, "fits, may not be taken", {"color": color, "symbol": symbol})
    for verdict, group in data.by_verdict:
        color, symbol = VERDICT_MARKERS.get(verdict, VERDICT_MARKERS["other"])
        look = {"color": color, "symbol": symbol, "line": {"color": "#555555", "width": 0.5}}
        add(group, f"{plain_name(verdict)} ({len(group.indices)})", look)
    if data.winner_xy is not None:
        stopped = plain_name(data.stop_reason)
        ring_name = "winner" if data.winner_accepted else f"next best (stopped: {stopped})"
        ring = _ring(marker_size + 14, winner_color, 3)
        fig.add_trace(
            one_point(data.winner_xy, ring_name, ring, kind=kind, customdata=[data.winner])
        )
    if data.query is not None:
        star = {"size": 18, "color": query_color, "symbol": "star"}
        star["line"] = {"color": "white", "width": 1}
        hover = {"hovertext": ["<b>query</b>"], "hoverinfo": "text"}
        fig.add_trace(one_point(data.query, "query", star, kind=kind, **hover))
    p = data.picked
    numbered = len(p.indices) <= max_labels
    labels: dict[str, Any] = {
        "mode": "markers+text",
        "text": list(p.labels or ()),
        "textposition": list(p.label_positions or ()),
        "textfont": {"color": selected_color, "size": 13},
    }
    diamond = {"size": marker_size + 5, "color": selected_color, "symbol": "diamond"}
    diamond["line"] = {"color": "black", "width": 1}
    add(p, "selected", diamond, **(labels if numbered else {"mode": "markers"}))
    # A click on a point selects it (the pages open its verdict), and plotly would then dim
    # every other point to a fifth until the selection is cleared; the pages ring the chunk
    # they inspect instead, so a selection dims nothing.
    fig.update_traces(unselected=UNDIMMED)
    if numbered:
        fig.update_traces(unselected_textfont_color=selected_color, selector={"name": "selected"})
    if title is None:
        n_steps = len(selection.steps)
        # Two short lines: the map shares its row with the timeline, and a long title line
        # would run past a narrow map's edge (the step first, what happened second).
        if data.step == 0:
            title = "Pool before the first pick"
        elif data.winner_accepted and data.winner is not None:
            title = f"Step {data.step} of {n_steps}: pick {data.step}<br>{escape(ids[data.winner])}"
        else:
            title = f"Step {data.step} of {n_steps}: stopped<br>{plain_name(data.stop_reason)}"
        title += f" · {data.method.upper()} map"
    map_layout(fig, title=title, height=height)
    return fig


def mark_chunk(
    figure: go.Figure,
    point: tuple[float, float],
    chunk: int,
    *,
    name: Any,
    color: str = PALETTE["stop"],
    svg: bool = False,
) -> go.Figure:
    """A copy of the map ``figure`` with the chunk at pool position ``chunk`` ringed at
    ``point`` (the chunk inspected on "Why dropped"); the ring names it in the legend, has no
    hover of its own and keeps its full opacity when the map's lasso dims the rest."""
    marked = go.Figure(figure)
    kind = go.Scatter if svg else go.Scattergl
    name = f"inspected: {escape(name)}"
    ring = _ring(30, color, 4)
    marked.add_trace(
        one_point(point, name, ring, kind=kind, customdata=[int(chunk)], unselected=UNDIMMED)
    )
    return marked


def _ring(size: int, color: str, width: int) -> dict[str, Any]:
    return {
        "size": size,
        "color": color,
        "symbol": "circle-open",
        "line": {"width": width, "color": color},
    }
