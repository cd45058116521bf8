"""Why each chunk was selected or not, read from a finished record (SPEC.md, "Why was this
chunk dropped?").

Every function here reads a :class:`~adagres.Selection` and never reruns the algorithm:
the step record holds all the numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .records import GainAtStep, Step, StopReason, Verdict, VerdictKind

if TYPE_CHECKING:
    from .result import Selection

__all__ = ["final_kind", "verdict_kinds", "verdict_of"]


KIND_INDEX = {kind: i for i, kind in enumerate(VerdictKind)}


def final_kind(reason: StopReason) -> VerdictKind:
    """The verdict of a chunk that was in play and fitting when the run stopped."""
    if reason is StopReason.OPTIMAL:
        return VerdictKind.NOT_IN_OPTIMUM
    if reason is StopReason.NO_POSITIVE_GAIN:
        return VerdictKind.NON_POSITIVE_GAIN
    return VerdictKind.OUTSCORED


def verdict_of(selection: Selection, i: int) -> Verdict:
    """The verdict of the chunk at pool position ``i``, with its history and sources."""
    steps = selection.steps
    tokens = int(selection.token_counts[i])
    picked = {s.winner: s for s in steps if s.accepted}
    history = history_of(steps, i)
    if i in picked:
        s = picked[i]
        sources = redundancy_sources(selection, i, s.number - 1)
        return Verdict(i, VerdictKind.SELECTED, s.number, tokens, s.tokens_available,
                       s.relevance_term, s.redundancy_term, s.gain, s.runner_up,
                       s.runner_up_gain, history, sources)  # fmt: skip
    last = steps[-1]
    relevance_term = float(selection.alpha * selection.relevance[i])
    duplicate = next((d for d in selection.duplicates if d.chunk == i), None)
    if selection.respects_budget and selection.stop_reason is not StopReason.OPTIMAL:
        for s in steps:
            if duplicate is not None and s.number > duplicate.step:
                break  # it was a duplicate before it stopped fitting
            if tokens > s.tokens_available:
                return Verdict(i, VerdictKind.DID_NOT_FIT, s.number, tokens, s.tokens_available,
                               relevance_term, None, None, None, None, history, ())  # fmt: skip
    if duplicate is not None:
        return Verdict(i, VerdictKind.DUPLICATE, duplicate.step, tokens, None, relevance_term,
                       None, None, None, None, history, (), duplicate.of, duplicate.cosine,
                       duplicate.shared_text)  # fmt: skip
    c = last.candidates
    gain = float(c.gain[i]) if c is not None else None
    redundancy_term = float(c.redundancy_term[i]) if c is not None else None
    kind = final_kind(selection.stop_reason)
    return Verdict(i, kind, last.number, tokens, last.tokens_available, relevance_term,
                   redundancy_term, gain, None, None, history,
                   redundancy_sources(selection, i, len(selection.indices)))  # fmt: skip


def history_of(steps: tuple[Step, ...], i: int) -> tuple[GainAtStep, ...]:
    rows = []
    for s in steps:
        c = s.candidates
        if c is None or not c.in_play[i]:
            continue
        rows.append(
            GainAtStep(s.number, float(c.gain[i]), float(c.score[i]), bool(c.eligible[i]),
                       s.winner, s.gain, s.score)
        )  # fmt: skip
    return tuple(rows)


def redundancy_sources(
    selection: Selection, i: int, n_picks: int, top: int = 3
) -> tuple[tuple[int, float], ...]:
    """The picks made before the verdict's step that are most similar to chunk i."""
    if selection.pick_similarity is None or n_picks == 0:
        return ()
    sims = selection.pick_similarity[:n_picks, i]
    order = np.argsort(-sims, kind="stable")[:top]
    return tuple((selection.indices[k], float(sims[k])) for k in order)


def verdict_kinds(selection: Selection) -> tuple[tuple[VerdictKind, int | None], ...]:
    """(kind, step) of every chunk's verdict, computed for the whole pool at once.

    The same kinds and steps as :func:`verdict_of` (a test checks it), without building
    each chunk's history: O(N log k) array work instead of O(N·k) Python objects.
    """
    n = selection.n_chunks
    kinds = np.full(n, KIND_INDEX[final_kind(selection.stop_reason)])
    steps = np.full(n, len(selection.steps))
    if selection.respects_budget and selection.stop_reason is not StopReason.OPTIMAL:
        # Tokens available only go down over the steps: the first step at which a chunk
        # no longer fits is a binary search on the negated sequence.
        available = -np.array([s.tokens_available for s in selection.steps])
        first = np.searchsorted(available, -selection.token_counts, side="right")
        unfit = first < len(selection.steps)
        kinds[unfit] = KIND_INDEX[VerdictKind.DID_NOT_FIT]
        steps[unfit] = first[unfit] + 1
    for d in selection.duplicates:  # dropped by the guard, unless it stopped fitting first
        if not (kinds[d.chunk] == KIND_INDEX[VerdictKind.DID_NOT_FIT] and steps[d.chunk] <= d.step):
            kinds[d.chunk], steps[d.chunk] = KIND_INDEX[VerdictKind.DUPLICATE], d.step
    for number, chunk in enumerate(selection.indices, start=1):
        kinds[chunk], steps[chunk] = KIND_INDEX[VerdictKind.SELECTED], number
    members = list(VerdictKind)
    return tuple((members[k], int(t)) for k, t in zip(kinds, steps, strict=True))
