"""The record of a selection, as plain frozen data (the ground floor of the core).

A run of the greedy loop leaves one :class:`Step` per pick plus a final step that shows why
it stopped; each step may carry the per-candidate numbers (:class:`Candidates`). A
:class:`Verdict` says why one chunk was selected or not. Nothing here computes a selection:
:mod:`adagres.core.verdicts` derives verdicts from a finished record and
:mod:`adagres.core.result` holds the :class:`~adagres.Selection` that carries it all.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

import numpy as np

from ..errors import InputError

__all__ = [
    "Candidates",
    "GainAtStep",
    "Step",
    "StopReason",
    "Verdict",
    "VerdictKind",
]


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


@dataclass(frozen=True, eq=False)
class Candidates:
    """Per-chunk numbers at one step, as arrays over the whole pool (length N).

    ``in_play`` marks chunks not yet selected; ``eligible`` those that also fit the tokens
    left (for strategies that ignore the budget it equals ``in_play``). ``score`` is what the
    strategy maximised (the gain for AdaGReS, gain per token for ``ratio``, the MMR score,
    relevance for top-k). Values of chunks not in play are NaN.
    """

    redundancy_term: np.ndarray
    gain: np.ndarray
    score: np.ndarray
    eligible: np.ndarray
    in_play: np.ndarray

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Candidates):
            return NotImplemented
        return all(
            np.array_equal(getattr(self, f), getattr(other, f), equal_nan=True)
            for f in ("redundancy_term", "gain", "score", "eligible", "in_play")
        )

    __hash__ = None  # type: ignore[assignment]

    @property
    def relevance_term(self) -> np.ndarray:
        """α·r_i for every chunk (NaN where not in play): gain + redundancy term."""
        return self.gain + self.redundancy_term


class Step(NamedTuple):
    """One step of a selection: the best candidate, its terms and the tokens around it.

    ``accepted`` is False only for the last step, where the run stopped (``winner`` is then
    the candidate that would have come next, or None if nothing was in play or eligible).
    ``tokens_used`` and ``tokens_left`` are after the step; ``tokens_available`` is what was
    left when the step was decided. ``candidates`` holds the per-chunk numbers when the run
    was traced (and always for the last step). A named tuple: the loop makes one per step,
    on the fast path too, so it must be cheap.
    """

    number: int
    winner: int | None
    accepted: bool
    winner_tokens: int | None
    relevance_term: float | None
    redundancy_term: float | None
    gain: float | None
    score: float | None
    runner_up: int | None
    runner_up_gain: float | None
    runner_up_score: float | None
    tokens_used: int
    tokens_left: int
    candidates: Candidates | None = None

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

    ``step`` is the step of the pick (selected), the first step at which it no longer fit
    (did_not_fit), the step of the pick it duplicated (duplicate: ``duplicate_of`` names that
    pick, with their cosine and shared text) or the last step (the other kinds).
    ``history`` lists its gain against the winner's at every step it was in play (traced runs
    only). ``redundancy_sources`` lists the selected chunks that contributed most to its
    redundancy term, as (chunk, cosine), largest first (traced runs only).
    """

    chunk: int
    kind: VerdictKind
    step: int | None
    tokens: int
    tokens_left: int | None
    relevance_term: float | None
    redundancy_term: float | None
    gain: float | None
    runner_up: int | None
    runner_up_gain: float | None
    history: tuple[GainAtStep, ...]
    redundancy_sources: tuple[tuple[int, float], ...]
    duplicate_of: int | None = None
    duplicate_cosine: float | None = None
    duplicate_shared_text: float | None = None

    def summary(self, ids: Any = None) -> str:
        """One sentence with the numbers; ``ids`` maps pool positions to chunk ids."""
        if ids is not None and (isinstance(ids, str | bytes) or not hasattr(ids, "__len__")):
            raise InputError(f"ids: expected a sequence of chunk ids, got {ids!r:.60}")

        def name(i: int | None) -> str:
            if ids is not None and i is not None and not 0 <= i < len(ids):
                raise InputError(f"ids: has {len(ids)} ids; the summary names chunk {i}")
            return "none" if i is None else repr(ids[i]) if ids is not None else f"#{i}"

        if self.kind is VerdictKind.SELECTED:
            text = (
                f"selected at step {self.step}: gain {self.gain:+.4f} = relevance "
                f"{self.relevance_term:.4f} − redundancy {self.redundancy_term:.4f}"
            )
            if self.runner_up is not None:
                text += f"; runner-up {name(self.runner_up)} ({self.runner_up_gain:+.4f})"
            return text
        if self.kind is VerdictKind.DUPLICATE:
            shared = self.duplicate_shared_text
            text_part = "" if shared is None else f", shares {shared:.0%} of its word 8-grams"
            return (
                f"duplicate of {name(self.duplicate_of)} (picked at step {self.step}): "
                f"cosine {self.duplicate_cosine:.3f}{text_part}; the near-duplicate guard "
                "made it ineligible"
            )
        if self.kind is VerdictKind.DID_NOT_FIT:
            return (
                f"did not fit at step {self.step}: needs {self.tokens} tokens, "
                f"{self.tokens_left} were left"
            )
        sources = ", ".join(f"{name(j)} (cos {s:.3f})" for j, s in self.redundancy_sources)
        because = f"; most redundant with {sources}" if sources else ""
        if self.kind is VerdictKind.NON_POSITIVE_GAIN:
            return (
                f"non-positive gain at the stop (step {self.step}): redundancy "
                f"{self.redundancy_term:.4f} ≥ relevance {self.relevance_term:.4f}{because}"
            )
        if self.kind is VerdictKind.NOT_IN_OPTIMUM:
            return f"not in the optimal set; adding it would change F by {self.gain:+.4f}"
        return f"outscored until the stop (step {self.step}): gain {self.gain:+.4f}{because}"
