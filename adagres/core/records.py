"""The record of a selection, as plain frozen data (the ground floor of the core).

A run of the greedy loop leaves one :class:`Step` per pick plus a final step that shows why
it stopped; each step may carry the per-candidate numbers (:class:`Candidates`). A
:class:`Verdict` says why one chunk was selected or not. Nothing here computes a selection:
:mod:`adagres.core.verdicts` derives verdicts from a finished record and
:mod:`adagres.core.result` holds the :class:`~adagres.Selection` that carries it all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from enum import StrEnum
from functools import cached_property
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from .arrays import frozen

__all__ = [
    "Candidates",
    "GainAtStep",
    "Scoring",
    "Step",
    "StopReason",
    "Terms",
    "Verdict",
    "VerdictKind",
]


class Terms(NamedTuple):
    """The numbers F and the gains are evaluated with: λ, α and the floor τ (None: off)."""

    lam: float
    alpha: float
    tau: float | None


class StopReason(StrEnum):
    """Why a selection ended."""

    BUDGET_EXHAUSTED = "budget_exhausted"
    NO_POSITIVE_GAIN = "no_positive_gain"
    POOL_EXHAUSTED = "pool_exhausted"
    K_REACHED = "k_reached"  # baselines with a fixed number of picks
    OPTIMAL = "optimal"  # the exact solver's set


class VerdictKind(StrEnum):
    """The fate of one chunk of the pool (SPEC.md, "Why was this chunk dropped?")."""

    SELECTED = "selected"
    DID_NOT_FIT = "did_not_fit"
    OUTSCORED = "outscored"
    NON_POSITIVE_GAIN = "non_positive_gain"
    NOT_IN_OPTIMUM = "not_in_optimum"
    DUPLICATE = "duplicate"  # the near-duplicate guard dropped it (adagres.core.guard)


@dataclass(frozen=True)
class Scoring:
    """What a strategy's rule maximises at each step, in words: score = relevance − redundancy.

    ``relevance`` and ``redundancy`` name the two terms every record holds (for coverage the
    redundancy is the coverage a chunk no longer adds because the picks cover it already).
    ``similarity`` names the number its redundancy reads between a chunk and a pick ("cos",
    "cos beyond the query"); only similarity above ``floor`` counts (None: all).
    ``competes``: ``"fits"`` (only chunks that fit the tokens left compete) or
    ``"in_play"`` (every chunk not yet picked competes: the budget is checked after).
    ``greedy`` is False where the steps only list a set found otherwise (the optimum).
    ``fills``: the rule keeps adding after its scores turn ≤ 0 (policy ``fill``).
    ``sources``: how many picks a verdict names as where the redundancy came from (1 where
    only the most similar pick counts, 0 where there is no redundancy term).
    """

    relevance: str
    redundancy: str
    similarity: str = "cos"
    floor: float | None = None
    per_token: bool = False
    competes: Literal["fits", "in_play"] = "fits"
    stops_nonpositive: bool = False
    greedy: bool = True
    fills: bool = False
    sources: int = 3

    @property
    def formula(self) -> str:
        """The score as one line: "score = relevance − λ·redundancy beyond the query"; a rule
        without a redundancy term (top-k) reads "score = relevance"."""
        body = self.relevance if self.sources == 0 else f"{self.relevance} − {self.redundancy}"
        return f"score = ({body}) / tokens" if self.per_token else f"score = {body}"


@dataclass(frozen=True, eq=False)
class Candidates:
    """Per-chunk numbers at one step, as arrays over the whole pool (length N).

    ``in_play`` marks chunks not yet selected; ``eligible`` those that also fit the tokens
    left (for strategies that ignore the budget it equals ``in_play``). ``score`` is what the
    strategy maximised (the gain for AdaGReS, gain per token for ``ratio``, the MMR score,
    relevance for top-k, …), the sum of its two terms ``score_relevance − score_redundancy``
    (named by the selection's :class:`Scoring`); ``score_base`` is the relevance term of
    every chunk (one vector shared by the steps; the terms are read from it on demand, so
    a run pays for them only where they are read). ``gain`` and ``redundancy_term`` are the
    marginal F gain and its redundancy at the shared λ and τ. Values of chunks not in play
    are NaN.
    """

    redundancy_term: NDArray[np.float64]
    gain: NDArray[np.float64]
    score: NDArray[np.float64]
    eligible: NDArray[np.bool_]
    in_play: NDArray[np.bool_]
    score_base: NDArray[np.float64]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Candidates):
            return NotImplemented
        return all(
            np.array_equal(getattr(self, f.name), getattr(other, f.name), equal_nan=True)
            for f in fields(Candidates)
        )

    __hash__ = None  # type: ignore[assignment]

    @property
    def relevance_term(self) -> NDArray[np.float64]:
        """α·r_i for every chunk (NaN where not in play): gain + redundancy term."""
        return self.gain + self.redundancy_term

    @cached_property
    def score_relevance(self) -> NDArray[np.float64]:
        """The relevance term of the score (NaN where not in play)."""
        return frozen(np.where(self.in_play, self.score_base, np.nan))

    @cached_property
    def score_redundancy(self) -> NDArray[np.float64]:
        """The redundancy term of the score: relevance term − score (NaN where not in play)."""
        return frozen(self.score_relevance - self.score)


class Step(NamedTuple):
    """One step of a selection: the best candidate, its terms and the tokens around it.

    ``accepted`` is False only for the last step, where the run stopped (``winner`` is then
    the best candidate left, "next best", or None if nothing was in play or eligible).
    ``score``, ``gain`` and their terms are the winner's, as in :class:`Candidates`.
    ``tokens_used`` and ``tokens_left`` are after the step; ``tokens_available`` is what was
    left when the step was decided. ``candidates`` holds the per-chunk numbers when the run
    was traced (and always for the last step). A named tuple: the loop makes one per step,
    on the fast path too, so it must be cheap.
    """

    number: int
    winner: int | None
    accepted: bool
    tokens_used: int
    tokens_left: int
    winner_tokens: int | None = None
    relevance_term: float | None = None
    redundancy_term: float | None = None
    gain: float | None = None
    score: float | None = None
    runner_up: int | None = None
    runner_up_gain: float | None = None
    runner_up_score: float | None = None
    candidates: Candidates | None = None
    score_relevance: float | None = None
    score_redundancy: float | None = None

    @classmethod
    def stop(cls, number: int, used: int, budget: int, candidates: Candidates | None) -> Step:
        """The last step of a run that stopped with nothing in play or eligible: no winner."""
        return cls(
            number=number,
            winner=None,
            accepted=False,
            tokens_used=used,
            tokens_left=budget - used,
            candidates=candidates,
        )

    @property
    def tokens_available(self) -> int:
        """Tokens left when this step was decided (before its pick)."""
        taken = self.winner_tokens if self.accepted and self.winner_tokens is not None else 0
        return self.tokens_left + taken

    @property
    def positive(self) -> bool:
        """Whether the winner's marginal gain was > 0."""
        return self.gain is not None and self.gain > 0


@dataclass(frozen=True)
class GainAtStep:
    """A chunk's numbers at one step, next to the winner's."""

    step: int
    gain: float
    score: float
    eligible: bool
    winner: int | None
    winner_gain: float | None
    winner_score: float | None


@dataclass(frozen=True)
class Verdict:
    """Why chunk ``chunk`` was selected or not, with the numbers behind it.

    ``step`` is the step of the pick (selected), the first step at which the rule would
    have taken it but it did not fit (did_not_fit), the step where it came closest to the
    winner (outscored) or the last step (non-positive gain, not in the optimum). ``score``,
    ``score_relevance`` and ``score_redundancy`` are its score and terms at that step (the
    selection's ``scoring`` names them); ``winner`` and ``winner_score`` the chunk it lost
    to there. ``gain``, ``relevance_term`` and ``redundancy_term`` are its marginal F gain
    and terms at the shared λ and τ. A pick's ``runner_up`` is the chunk that came second
    at its step, with that chunk's ``runner_up_score`` (the rule's score) and
    ``runner_up_gain`` (its marginal F gain). ``history`` lists its gain and score against the
    winner's at every step it was in play (traced runs only). ``redundancy_sources`` lists
    the picks made before ``step`` whose similarity (as the rule reads it) made most of its
    redundancy, as (chunk, similarity), largest first. ``fill_from`` is the step from
    which a ``fill`` run kept adding chunks whose score was ≤ 0 (None otherwise). A
    duplicate's ``step`` is the step of the pick it duplicated, ``duplicate_of`` names that
    pick, with their cosine and shared text.
    """

    chunk: int
    kind: VerdictKind
    step: int | None
    tokens: int
    tokens_left: int | None = None
    relevance_term: float | None = None
    redundancy_term: float | None = None
    gain: float | None = None
    runner_up: int | None = None
    runner_up_gain: float | None = None
    history: tuple[GainAtStep, ...] = ()
    redundancy_sources: tuple[tuple[int, float], ...] = ()
    scoring: Scoring | None = None
    score: float | None = None
    score_relevance: float | None = None
    score_redundancy: float | None = None
    winner: int | None = None
    winner_score: float | None = None
    fill_from: int | None = None
    duplicate_of: int | None = None
    duplicate_cosine: float | None = None
    duplicate_shared_text: float | None = None
    duplicate_inside: bool = False  # packing found it adds nothing new, not the guard
    runner_up_score: float | None = None
    #: packing: (holder, sentence) of each sentence left out of this pick's text, the
    #: context already holding it (the pick ``holder`` put it there)
    left_out: tuple[tuple[int, str], ...] = ()

    def summary(self, ids: Sequence[object] | None = None) -> str:
        """One sentence with the numbers; ``ids`` maps pool positions to chunk ids (checked:
        anything else is an InputError naming it)."""
        if ids is not None and (isinstance(ids, str | bytes) or not hasattr(ids, "__len__")):
            raise InputError(f"ids: expected a sequence of chunk ids, got {ids!r:.60}")

        def name(i: int | None) -> str:
            if ids is not None and i is not None and not 0 <= i < len(ids):
                raise InputError(f"ids: has {len(ids)} ids; the summary names chunk {i}")
            return "none" if i is None else repr(ids[i]) if ids is not None else f"#{i}"

        scoring = self.scoring
        similarity = "cos" if scoring is None else scoring.similarity
        sources = " and ".join(
            f"{name(j)} ({similarity} {s:.3f})" for j, s in self.redundancy_sources
        )
        repeats = f"; repeats {sources}" if sources else ""
        rule = "" if scoring is None else f" ({scoring.formula})"
        if self.kind is VerdictKind.SELECTED:
            text = (
                f"selected at step {self.step}: gain {self.gain:+.4f} = relevance "
                f"{self.relevance_term:.4f} − redundancy {self.redundancy_term:.4f}"
            )
            # The runner-up is named with the quantity the pick's own number is given in:
            # its score where the rule's score is not F's gain, else its gain.
            by_score = self.score is not None and (
                self.score != self.gain or self.runner_up_score != self.runner_up_gain
            )
            if by_score:
                text += f"; score {self.score:+.4f}{rule}"
            if self.runner_up is not None:
                text += f"; runner-up {name(self.runner_up)}"
                second = self.runner_up_score if by_score else self.runner_up_gain
                if second is not None:
                    text += f" ({'score' if by_score else 'gain'} {second:+.4f})"
            return text + repeats + self.left_out_note(name) + self.fill_note()
        if self.kind is VerdictKind.DUPLICATE:
            if self.duplicate_inside:
                return (
                    f"adds nothing new at step {self.step}: every sentence of its text is "
                    f"already in the context, which {name(self.duplicate_of)} put there; "
                    "packing pays once for repeated text, so it was not taken"
                )
            shared = self.duplicate_shared_text
            text_part = "" if shared is None else f", shares {shared:.0%} of its word 8-grams"
            return (
                f"duplicate of {name(self.duplicate_of)} (picked at step {self.step}): "
                f"cosine {self.duplicate_cosine:.3f}{text_part}; the near-duplicate guard "
                "made it ineligible"
            )
        if self.kind is VerdictKind.DID_NOT_FIT:
            text = (
                f"did not fit at step {self.step}: needs {self.tokens} tokens, "
                f"{self.tokens_left} were left"
            )
            if self.score is not None:
                text += f"; its score {self.score:+.4f} would have won there{rule}"
            return text + repeats + self.fill_note()
        if self.kind is VerdictKind.NON_POSITIVE_GAIN:
            return (
                f"non-positive gain at the stop (step {self.step}): redundancy "
                f"{self.score_redundancy:.4f} ≥ relevance {self.score_relevance:.4f}{rule}"
                f"{repeats}"
            )
        if self.kind is VerdictKind.NOT_IN_OPTIMUM:
            return f"not in the optimal set; adding it would change F by {self.gain:+.4f}"
        if self.winner is None or self.score is None:
            return f"outscored until the stop (step {self.step}){repeats}" + self.fill_note()
        return (
            f"outscored: closest at step {self.step}, score {self.score:+.4f} against "
            f"{self.winner_score:+.4f} for {name(self.winner)}{rule}{repeats}" + self.fill_note()
        )

    def left_out_note(self, name: Callable[[int], str]) -> str:
        """The sentence that names what packing left out of a pick's text, and who holds it."""
        if not self.left_out:
            return ""
        holders = sorted({h for h, _ in self.left_out})
        held = " and ".join(name(h) for h in holders)
        count = len(self.left_out)
        sentences = "sentence" if count == 1 else "sentences"
        return f"; {count} repeated {sentences} left out ([…]), already held by {held}"

    def fill_note(self) -> str:
        """The sentence that says what ``fill`` did after the scores turned non-positive."""
        if self.fill_from is None:
            return ""
        return (
            f". From step {self.fill_from} every score was ≤ 0 and policy fill kept adding the "
            "best-scoring chunk that fit, until nothing fit"
        )
