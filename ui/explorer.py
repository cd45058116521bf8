"""The Pool page's map explorer: colour by a field, find text, lasso chunks, export them.

Every choice is in the address: ``find`` and ``color`` (one of :func:`color_fields`) are
widgets Streamlit binds; ``picked`` (the positions lassoed, ``3,17,22``) is a page option,
since a chart's selection is no widget Streamlit can bind.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from adagres.core.result import Selection
from adagres.pools.pool import Pool

from . import render, state
from .text import plain_name

__all__ = [
    "color_fields",
    "color_values",
    "export_text",
    "facets",
    "matches",
    "picked",
    "record_facet_pick",
    "record_pick",
]


def _positions(raw: str) -> tuple[int, ...]:
    values = tuple(int(part) for part in raw.split(",") if part)  # ValueError: not numbers
    if any(v < 0 for v in values) or len(values) > 100_000:
        raise ValueError("expected pool positions, e.g. 3,17,22")
    return values


PICKED = state.Option("picked", _positions, lambda v: ",".join(str(i) for i in v))


def color_fields(pool: Pool) -> list[str]:
    """What the map can be coloured by, for this pool: the verdict, then the fields some
    chunk has (source, gold), token length, relevance and each metadata key."""
    fields = ["verdict"]
    if any(chunk.source for chunk in pool.chunks):
        fields.append("source")
    if pool.gold_ids:
        fields.append("gold")
    fields += ["tokens", "relevance"]
    keys = sorted({k for chunk in pool.chunks for k in (chunk.metadata or {})})
    return fields + [f"meta:{key}" for key in keys]


def color_values(pool: Pool, selection: Selection, field: str) -> tuple[list[Any], bool]:
    """Each chunk's value of ``field`` and whether it is a number (drawn on a scale)."""
    if field == "verdict":
        return [plain_name(kind) for kind, _ in selection.verdict_kinds], False
    if field == "source":
        return [chunk.source or "(none)" for chunk in pool.chunks], False
    if field == "gold":
        return ["gold" if chunk.gold else "not gold" for chunk in pool.chunks], False
    if field == "tokens":
        counts = pool.token_counts
        assert counts is not None  # the app's pools are counted before any page draws them
        return [int(n) for n in counts], True
    if field == "relevance":
        return [float(r) for r in selection.relevance], True
    key = field.removeprefix("meta:")
    raw = [(chunk.metadata or {}).get(key) for chunk in pool.chunks]
    numeric = all(isinstance(v, int | float) and not isinstance(v, bool) for v in raw)
    return (raw if numeric else ["(none)" if v is None else str(v) for v in raw]), numeric


def facets(
    pool: Pool, selection: Selection, color_by: str, chosen: tuple[int, ...]
) -> tuple[Any, ...]:
    """The linked views' facets: relevance, tokens, verdict, and one more column of the
    chunks (the map's colour if it is another field, else the first metadata key, else the
    source), with the chunks ``chosen`` counted in each bin."""
    from adagres import figures

    others = [f for f in color_fields(pool) if f not in ("verdict", "tokens", "relevance")]
    extra = (
        color_by
        if color_by in others
        else next((f for f in others if f.startswith("meta:")), others[0] if others else None)
    )
    names = ["relevance", "tokens", "verdict", *([extra] if extra else [])]
    specs = [(name, *color_values(pool, selection, name)) for name in names]
    return figures.facets_data(specs, chosen=chosen)


def record_facet_pick(key: str, facets: tuple[Any, ...]) -> None:
    """The facets chart's ``on_select``: choose on the map the chunks in the bars clicked or
    boxed (a history entry); an empty selection keeps the current choice."""
    from adagres import figures

    points = st.session_state[key]["selection"]["points"]
    bars = [tuple(p["customdata"]) for p in points if isinstance(p.get("customdata"), list)]
    if bars:
        state.set_option(PICKED, figures.facet_positions(facets, bars))


def matches(pool: Pool, text: str) -> tuple[int, ...] | None:
    """The positions whose text, title or id contains ``text`` (any case); None: no
    search."""
    wanted = text.strip().casefold()
    if not wanted:
        return None
    return tuple(
        i
        for i, chunk in enumerate(pool.chunks)
        if wanted in chunk.text.casefold()
        or wanted in (chunk.title or "").casefold()
        or wanted in chunk.id.casefold()
    )


def picked(pool: Pool) -> tuple[int, ...]:
    """The positions the user lassoed or boxed on the map (kept in the address; the
    chart's callback, :func:`record_pick`, records a new choice)."""
    chosen = state.option(PICKED, ())
    return tuple(sorted({i for i in chosen if 0 <= i < len(pool)}))


def export_text(pool: Pool, positions: tuple[int, ...]) -> str:
    """The chunks at ``positions`` as a pool file (JSON, the pool's query and embeddings
    kept), which the Pool page and ``adagres`` load back."""
    import json

    return json.dumps(pool.subset([pool.ids[i] for i in positions]).to_dict(), ensure_ascii=False)


def record_pick(key: str) -> None:
    """The chart's ``on_select``: keep the chosen positions (a history entry)."""
    positions = render.clicked_positions(st.session_state[key]["selection"]["points"])
    state.set_option(PICKED, tuple(sorted(set(positions))))
