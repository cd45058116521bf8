"""The pages' tables as pandas frames, built from a pool and finished results (no drawing).

Chunk texts go into frames as they are: a dataframe shows them as plain text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from adagres.core.records import Verdict
from adagres.core.result import Selection
from adagres.core.sweep import BudgetSweep, LamSweep
from adagres.figures import PAIR_METRICS
from adagres.pools.pool import Pool

from .text import plain_name

if TYPE_CHECKING:
    import pandas as pd

    from .compute import NearDuplicates

__all__ = [
    "Context",
    "as_percent",
    "context_frame",
    "context_text",
    "difference_frame",
    "duplicate_groups_frame",
    "exact_sets_frame",
    "heatmap_rows_frame",
    "history_frame",
    "lam_changes_frame",
    "pairs_frame",
    "pick_frame",
    "pool_frame",
    "sources_frame",
    "sweep_frame",
]

SNIPPET_CHARS = 80


def _frame(*args: Any, **kwargs: Any) -> pd.DataFrame:
    """``pandas.DataFrame(...)``. pandas (0.4 s to import here) is imported at the first
    table, not with this module: a new server's first page sends its first chart while
    pandas loads, instead of after."""
    import pandas

    return pandas.DataFrame(*args, **kwargs)


def _numeric(values: Any) -> Any:
    import pandas

    return pandas.to_numeric(values)


def plain_snippet(text: str, limit: int = SNIPPET_CHARS) -> str:
    """The start of a chunk's text on one line (plain text, for a table cell)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit].rstrip() + "…"


# --------------------------------------------------------------------------- the pool


def pool_frame(pool: Pool, selection: Selection) -> pd.DataFrame:
    """One row per chunk, in pool order, the key columns first (they stay in view in a
    narrow window); ``gold`` only when the pool marks gold chunks, ``duplicate of`` (the pick
    a duplicate duplicates, from its verdict) only when the near-duplicate guard dropped one.
    """
    verdicts = selection.verdict_kinds
    frame = _frame(
        {
            "id": list(pool.ids),
            "verdict": [plain_name(kind) for kind, _ in verdicts],
            "step": [step for _, step in verdicts],
            "tokens": np.asarray(pool.token_counts),
            "relevance": np.round(selection.relevance, 4),
            "title": [chunk.title or "" for chunk in pool.chunks],
            "position": np.arange(len(pool)),
            "text": list(pool.texts),
        }
    )
    if pool.gold_ids:
        frame.insert(5, "gold", [chunk.gold for chunk in pool.chunks])
    if selection.duplicates:  # the pick each duplicate duplicates, from its verdict
        holders = [""] * len(pool)
        for duplicate in selection.duplicates:
            holder = selection.verdict(duplicate.chunk).duplicate_of
            holders[duplicate.chunk] = "" if holder is None else str(pool.ids[holder])
        frame.insert(frame.columns.get_loc("title"), "duplicate of", holders)
    return frame


def duplicate_groups_frame(frame: pd.DataFrame, groups: Sequence[Sequence[int]]) -> pd.DataFrame:
    """The rows of ``frame`` (a :func:`pool_frame`) of each group, numbered from 1."""
    rows = frame.iloc[[i for group in groups for i in group]].copy()
    rows.insert(0, "group", [n + 1 for n, group in enumerate(groups) for _ in group])
    return rows


#: The context after a step, as ``Selection.context`` gives it: (pool positions, text,
#: tokens paid) of each passage, in order.
Context = Sequence[tuple[tuple[int, ...], str, int]]


def context_frame(pool: Pool, context: Context) -> pd.DataFrame:
    """The context in pick order, one row a passage: its chunks (more than one where
    overlap-aware packing stitched them), the tokens paid and the total."""
    tokens = np.array([paid for _, _, paid in context], dtype=np.int64)
    return _frame(
        {
            "order": np.arange(1, len(context) + 1),
            "id": [" + ".join(pool.ids[i] for i in chunks) for chunks, _, _ in context],
            "tokens": tokens,
            "total": np.cumsum(tokens),
            "text": [text for _, text, _ in context],
        }
    )


def left_out_frame(pool: Pool, selection: Selection, step: int) -> pd.DataFrame:
    """The sentences packing left out of the first ``step`` picks (``[…]`` in the context),
    one row each: the sentence, the pick it was left out of and the pick that holds it."""
    taken = set(selection.indices[:step])
    rows = [o for p in selection.passages for o in p.omissions if o.chunk in taken]
    return _frame(
        {
            "left out of": [pool.ids[o.chunk] for o in rows],
            "already held by": [pool.ids[o.holder] for o in rows],
            "sentence": [o.text for o in rows],
        }
    )


def context_text(context: Context) -> str:
    """The context as plain text: its passages, a blank line apart."""
    return "\n\n".join(text for _, text, _ in context)


# --------------------------------------------------------------------------- similarity


def heatmap_rows_frame(pool: Pool, selection: Selection, shown: Sequence[int]) -> pd.DataFrame:
    """The chunks of the heatmap in row order, with their pick number (if picked)."""
    pick = {chunk: k for k, chunk in enumerate(selection.indices, start=1)}
    return _frame(
        {
            "row": range(1, len(shown) + 1),
            "id": [pool.ids[i] for i in shown],
            "pick": [pick.get(i) for i in shown],
            "relevance": [float(selection.relevance[i]) for i in shown],
            "tokens": [int(selection.token_counts[i]) for i in shown],
            "text": [pool.texts[i] for i in shown],
        }
    )


def pairs_frame(pool: Pool, duplicates: NearDuplicates, picked: Iterable[int]) -> pd.DataFrame:
    """Near-duplicate pairs, most similar first: ids, cosine, which are selected ("both",
    the selected one's id, or "neither"), snippets."""
    chosen = set(picked)

    def selected(i: int, j: int) -> str:  # which of the pair is picked, by its id
        if i in chosen and j in chosen:
            return "both"
        return pool.ids[i] if i in chosen else pool.ids[j] if j in chosen else "neither"

    pairs = duplicates.pairs
    return _frame(
        {
            "id A": [pool.ids[i] for i, _, _ in pairs],
            "id B": [pool.ids[j] for _, j, _ in pairs],
            "cosine": [s for _, _, s in pairs],
            "selected": [selected(i, j) for i, j, _ in pairs],
            "text A": [plain_snippet(pool.texts[i]) for i, _, _ in pairs],
            "text B": [plain_snippet(pool.texts[j]) for _, j, _ in pairs],
        }
    )


# --------------------------------------------------------------------------- λ derivation


def lam_changes_frame(pool: Pool, sweep: LamSweep) -> pd.DataFrame:
    """One row per λ of the sweep where the picked set (not just its order) changes."""
    rows = []
    for k in sweep.change_positions:
        before, after = set(sweep.indices[k - 1]), set(sweep.indices[k])
        rows.append(
            {
                "λ": float(sweep.lams[k]),
                "chunks": int(sweep.size[k]),
                "tokens": int(sweep.tokens[k]),
                "F": float(sweep.objective[k]),
                "added": ", ".join(pool.ids[i] for i in sweep.indices[k] if i not in before),
                "removed": ", ".join(pool.ids[i] for i in sweep.indices[k - 1] if i not in after),
            }
        )
    return _frame(rows)


def exact_sets_frame(pool: Pool, greedy: Selection, optimum: Selection) -> pd.DataFrame:
    """The chunks of either set: whether the greedy and the optimum picked each."""
    chosen = sorted(set(greedy.indices) | set(optimum.indices))
    return _frame(
        {
            "id": [pool.ids[i] for i in chosen],
            "greedy": [i in greedy.indices for i in chosen],
            "optimum": [i in optimum.indices for i in chosen],
            "tokens": [int(greedy.token_counts[i]) for i in chosen],
            "relevance": [float(greedy.relevance[i]) for i in chosen],
        }
    )


# --------------------------------------------------------------------------- compare


def pick_frame(pool: Pool, selection: Selection) -> pd.DataFrame:
    """The picks in order with their tokens and the marginal gain they had when picked."""
    accepted = [step for step in selection.steps if step.accepted]
    return _frame(
        {
            "order": range(1, len(accepted) + 1),
            "id": [pool.ids[i] for i in selection.indices],  # the accepted steps' winners
            "tokens": [int(selection.token_counts[i]) for i in selection.indices],
            "gain": [step.gain for step in accepted],
        }
    )


def difference_frame(pool: Pool, a: Selection, b: Selection) -> pd.DataFrame:
    """The chunks of A or B: A only first, then both, then B only (pool order within)."""
    in_a, in_b = set(a.indices), set(b.indices)
    where = {
        i: "both" if i in in_a and i in in_b else "A only" if i in in_a else "B only"
        for i in in_a | in_b
    }
    rank = {"A only": 0, "both": 1, "B only": 2}
    union = sorted(where, key=lambda i: (rank[where[i]], i))
    return _frame(
        {
            "id": [pool.ids[i] for i in union],
            "in": [where[i] for i in union],
            "tokens": [int(a.token_counts[i]) for i in union],
            "relevance": [float(a.relevance[i]) for i in union],
            "text": [pool.texts[i] for i in union],
        }
    )


def sweep_frame(sweep: BudgetSweep) -> pd.DataFrame:
    """The budget sweep's rows without the pick lists; budget use in percent."""
    frame = _frame([{k: v for k, v in row.items() if k != "indices"} for row in sweep.rows])
    # A mean or max over pairs of picks is undefined below two picks: blank, not 0.
    pairs = [m for m in PAIR_METRICS if m in frame.columns]
    if pairs and "size" in frame.columns:
        frame.loc[_numeric(frame["size"]) < 2, pairs] = float("nan")
    return as_percent(frame, "budget_use")


def as_percent(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """``frame`` with the fractions of ``column`` (if there) as percentages (×100), the way
    every table of the app shows a share ("97.4%" with ``format="%.1f%%"``)."""
    if column in frame.columns:
        frame = frame.assign(**{column: _numeric(frame[column]) * 100.0})
    return frame


# --------------------------------------------------------------------------- why dropped


def history_frame(pool: Pool, selection: Selection, verdict: Verdict) -> pd.DataFrame:
    """A chunk's score (what the rule maximised) and marginal F gain at every step it was in
    play, against the winner's; ``fits``: it fitted the tokens left then; ``could be taken``: "yes",
    or why the rule could not take it (the words of the verdict chart's hover)."""
    from adagres.figures import verdict_data

    history = verdict.history
    data = verdict_data(selection, verdict.chunk, ids=pool.ids)
    return _frame(
        {
            "step": [h.step for h in history],
            "its score": [round(h.score, 4) for h in history],
            "winner score": [
                None if h.winner_score is None else round(h.winner_score, 4) for h in history
            ],
            "fits": list(data.fits),
            "could be taken": [why or "yes" for why in data.barred],
            "winner": [None if h.winner is None else pool.ids[h.winner] for h in history],
            "its gain": [round(h.gain, 4) for h in history],
            "winner gain": [
                None if h.winner_gain is None else round(h.winner_gain, 4) for h in history
            ],
        }
    )


def sources_frame(pool: Pool, verdict: Verdict) -> pd.DataFrame:
    """The selected chunks that made a chunk redundant, with their similarity to it as the
    rule reads it (column "cosine"; the orthogonal strategy's is beyond the query)."""
    return _frame(
        {
            "selected chunk": [pool.ids[j] for j, _ in verdict.redundancy_sources],
            "cosine": [round(s, 4) for _, s in verdict.redundancy_sources],
        }
    )
