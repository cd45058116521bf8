"""Why each chunk was selected or not, read from a finished record (SPEC.md, "Why was this
chunk dropped?").

Every function here reads a :class:`~adagres.Selection` and never reruns the algorithm:
the step record holds all the numbers, in the terms of the rule that made the selection
(``selection.scoring``). The kinds, for a chunk that was not selected:

- did not fit: at some step it did not fit the tokens left while the rule would have taken
  it (its score beat the winner's or, where nothing fitted, it was the best in play of the
  chunks that fit the whole budget; and
  was > 0 where the rule stops at a non-positive score), or it is larger than the whole
  budget; the first such step;
- non-positive gain: the rule stopped because no score was > 0, and its score was ≤ 0;
- outscored: otherwise, with the step where it came closest to the winner (where nothing
  fitted, the best chunk in play), among the steps it competed in; if none, those it was
  in play and not ahead of the winner;
- not in the optimum: for the exact solver's set;
- duplicate: the near-duplicate guard made it ineligible (unless it did not fit before).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray

from .records import Candidates, GainAtStep, Step, StopReason, Verdict, VerdictKind

if TYPE_CHECKING:
    from .result import Selection

__all__ = ["Fates", "fates", "final_kind", "verdict_kinds", "verdict_of", "would_take"]


KINDS = list(VerdictKind)
KIND_INDEX = {kind: i for i, kind in enumerate(KINDS)}


class Fates(NamedTuple):
    """Every chunk's verdict kind (an index into ``VerdictKind``) and step, and the step
    from which a ``fill`` run kept adding chunks of score ≤ 0 (None if it never did)."""

    kind: NDArray[np.int64]
    step: NDArray[np.int64]
    fill_from: int | None


def final_kind(reason: StopReason) -> VerdictKind:
    """The verdict of a chunk that was in play and fitting when the run stopped."""
    if reason is StopReason.OPTIMAL:
        return VerdictKind.NOT_IN_OPTIMUM
    if reason is StopReason.NO_POSITIVE_GAIN:
        return VerdictKind.NON_POSITIVE_GAIN
    return VerdictKind.OUTSCORED


def leader(selection: Selection, step: Step, c: Candidates) -> tuple[int | None, float | None]:
    """The chunk a step measured the others against: its winner, or where nothing could be
    taken the best-scoring chunk in play that fits the whole budget (ties: the lowest
    position), with its score."""
    if step.winner is not None:
        return step.winner, step.score
    possible = c.in_play & (selection.token_counts <= selection.budget)
    if not possible.any():
        return None, None
    best = int(np.argmax(np.where(possible, c.score, -np.inf)))
    return best, float(c.score[best])


def would_take(selection: Selection, step: Step, c: Candidates) -> NDArray[np.bool_]:
    """The chunks that did not fit at ``step`` although the rule would have taken them: in
    play, not fitting, and scoring above the step's leader (ties: the lower position) or
    being it; never at a stop where the rule takes nothing more (k reached, or a score ≤ 0
    for a rule that stops there). A chunk larger than the whole budget never fits at all:
    it did not fit from the first step, whatever its score."""
    # not eligible for want of tokens (a duplicate the guard dropped is ineligible too)
    unfit = c.in_play & ~c.eligible & (selection.token_counts > step.tokens_available)
    chunk, score = leader(selection, step, c)
    beats = np.zeros_like(unfit)
    if chunk is not None:
        assert score is not None  # a leader has a score
        position = np.arange(len(unfit))
        beats = (c.score > score) | ((c.score == score) & (position < chunk))
        beats[chunk] = True
    if selection.scoring.stops_nonpositive:
        beats &= c.score > 0
    if not step.accepted and selection.stop_reason is StopReason.K_REACHED:
        beats[:] = False
    never = selection.token_counts > selection.budget
    taken: NDArray[np.bool_] = unfit & (beats | never)
    return taken


def fates(selection: Selection) -> Fates:
    """Every chunk's verdict kind and step, for the whole pool at once (O(k·N))."""
    steps, n, reason = selection.steps, selection.n_chunks, selection.stop_reason
    scoring = selection.scoring
    kind = np.full(n, KIND_INDEX[final_kind(reason)])
    step = np.full(n, len(steps))
    if scoring.greedy and reason is not StopReason.OPTIMAL:
        first = np.zeros(n, dtype=np.int64)  # the first step it would have been taken (0: none)
        # where it came closest to the winner: among the steps it competed in, else among
        # those it was in play (and not ahead of the winner)
        margin, closest = np.full((2, n), np.inf), np.zeros((2, n), dtype=np.int64)
        for s in steps:
            c = s.candidates
            if c is None:
                continue
            newly = would_take(selection, s, c) & (first == 0)
            first[newly] = s.number
            chunk, score = leader(selection, s, c)
            if chunk is not None:
                assert score is not None  # a leader has a score
                competing = c.in_play if scoring.competes == "in_play" else c.eligible
                with np.errstate(invalid="ignore"):
                    gap = score - c.score  # NaN out of play: never below a margin
                    behind = c.in_play & (gap >= 0)
                for row, among in enumerate((competing, behind)):
                    nearer = among & (gap < margin[row])
                    nearer[chunk] = False
                    margin[row, nearer] = gap[nearer]
                    closest[row, nearer] = s.number
        closest = np.where(closest[0] > 0, closest[0], closest[1])
        last = steps[-1].candidates
        if reason is StopReason.NO_POSITIVE_GAIN and last is not None:
            with np.errstate(invalid="ignore"):
                positive = ~(last.score <= 0)
            kind[positive] = KIND_INDEX[VerdictKind.OUTSCORED]
        outscored = (kind == KIND_INDEX[VerdictKind.OUTSCORED]) & (closest > 0)
        step[outscored] = closest[outscored]
        did = first > 0
        kind[did] = KIND_INDEX[VerdictKind.DID_NOT_FIT]
        step[did] = first[did]
    for d in selection.duplicates:  # dropped by the guard, unless it did not fit before
        if not (kind[d.chunk] == KIND_INDEX[VerdictKind.DID_NOT_FIT] and step[d.chunk] <= d.step):
            kind[d.chunk], step[d.chunk] = KIND_INDEX[VerdictKind.DUPLICATE], d.step
    for number, chunk in enumerate(selection.indices, start=1):
        kind[chunk], step[chunk] = KIND_INDEX[VerdictKind.SELECTED], number
    return Fates(kind, step, fill_start(selection))


def fill_start(selection: Selection) -> int | None:
    """The first accepted step of a ``fill`` rule whose score was ≤ 0."""
    nonpositive = (
        s.number for s in selection.steps if s.accepted and s.score is not None and s.score <= 0
    )
    return next(nonpositive, None) if selection.scoring.fills else None


def verdict_of(selection: Selection, i: int) -> Verdict:
    """The verdict of the chunk at pool position ``i``, with its history and sources."""
    found = selection.fates
    kind, number = KINDS[int(found.kind[i])], int(found.step[i])
    s = selection.steps[number - 1]
    fill_from = found.fill_from
    if fill_from is not None and number < fill_from:
        fill_from = None
    verdict = functools.partial(
        Verdict,
        chunk=i,
        kind=kind,
        step=number,
        tokens=int(selection.token_counts[i]),
        history=history_of(selection.steps, i),
        scoring=selection.scoring,
    )
    if kind is VerdictKind.SELECTED:
        return verdict(
            tokens_left=s.tokens_available,
            relevance_term=s.relevance_term,
            redundancy_term=s.redundancy_term,
            gain=s.gain,
            runner_up=s.runner_up,
            runner_up_gain=s.runner_up_gain,
            runner_up_score=s.runner_up_score,
            redundancy_sources=redundancy_sources(selection, i, number - 1),
            score=s.score,
            score_relevance=s.score_relevance,
            score_redundancy=s.score_redundancy,
            fill_from=fill_from,
            left_out=tuple(  # (holder, sentence): what packing left out of its text
                (o.holder, o.text) for p in selection.passages for o in p.omissions if o.chunk == i
            ),
        )
    relevance_term = float(selection.alpha * selection.relevance[i])
    if kind is VerdictKind.DUPLICATE:
        d = next(d for d in selection.duplicates if d.chunk == i)
        return verdict(
            relevance_term=relevance_term,
            duplicate_of=d.of,
            duplicate_cosine=d.cosine,
            duplicate_shared_text=d.shared_text,
            duplicate_inside=d.inside,
        )
    c = s.candidates
    numbers: tuple[float | None, ...] = (None, None, None, None)
    if c is not None:
        numbers = tuple(
            float(a[i]) for a in (c.gain, c.score, c.score_relevance, c.score_redundancy)
        )
    gain, score, score_relevance, score_redundancy = numbers
    lost_to, lost_to_score = None, None
    if kind is VerdictKind.OUTSCORED and c is not None:
        lost_to, lost_to_score = leader(selection, s, c)
        if lost_to == i:
            lost_to, lost_to_score = None, None
    return verdict(
        tokens_left=s.tokens_available,
        relevance_term=relevance_term,
        redundancy_term=None if gain is None else relevance_term - gain,
        gain=gain,
        redundancy_sources=redundancy_sources(selection, i, min(number - 1, selection.size)),
        score=score,
        score_relevance=score_relevance,
        score_redundancy=score_redundancy,
        winner=lost_to,
        winner_score=lost_to_score,
        fill_from=fill_from,
    )


def history_of(steps: tuple[Step, ...], i: int) -> tuple[GainAtStep, ...]:
    """Chunk i's gain and score against the winner's at each step it was in play."""
    return tuple(
        GainAtStep(
            step=s.number,
            gain=float(c.gain[i]),
            score=float(c.score[i]),
            eligible=bool(c.eligible[i]),
            winner=s.winner,
            winner_gain=s.gain,
            winner_score=s.score,
        )
        for s in steps
        if (c := s.candidates) is not None and c.in_play[i]
    )


def redundancy_sources(selection: Selection, i: int, n_picks: int) -> tuple[tuple[int, float], ...]:
    """The picks made before the verdict's step whose similarity to chunk i (as the rule
    reads it) is largest and counts (above the floor τ, or above 0)."""
    rows = selection.source_similarity
    top = selection.scoring.sources
    if rows is None or n_picks == 0 or top == 0:
        return ()
    sims = rows[:n_picks, i]
    floor = selection.scoring.floor
    order = np.argsort(-sims, kind="stable")[:top]
    counted = [k for k in order if sims[k] > (0.0 if floor is None else max(floor, 0.0))]
    return tuple((selection.indices[k], float(sims[k])) for k in counted)


def verdict_kinds(selection: Selection) -> tuple[tuple[VerdictKind, int | None], ...]:
    """(kind, step) of every chunk's verdict, computed for the whole pool at once."""
    found = selection.fates
    return tuple((KINDS[k], int(t)) for k, t in zip(found.kind, found.step, strict=True))
