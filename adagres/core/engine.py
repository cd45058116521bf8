"""The protocol between the greedy loop and a score: what an engine answers at each step.

An engine scores the pool for one rule (:mod:`adagres.core.loop` names them; the coverage
variant has its own). At each step it answers with a :class:`Pick`, the named numbers the
loop decides with and records as they are.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any, NamedTuple, Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray

from .arrays import FloatArray, frozen

__all__ = ["NEG", "NO_PICK", "Engine", "Pick", "Rows", "accumulate_rows", "pick_rows", "top_two"]

#: An array of float32 or float64, kept as it is by a function that works in place.
FloatArrayT = TypeVar("FloatArrayT", NDArray[np.float32], NDArray[np.float64], FloatArray)

#: (gains, scores or None for "the gains", pick rows or None) of the steps with candidates.
Rows = tuple[NDArray[np.float64], NDArray[np.float64] | None, NDArray[np.float64] | None]

NEG = -np.inf


class Pick(NamedTuple):
    """What an engine found at one step (SPEC step 4): the competing chunk with the largest
    score and the runner-up, each with its marginal gain and its score (None: no such chunk).

    The loop decides with it and records it as it is: ``Step.gain`` is ``winner_gain``,
    ``Step.score`` is ``winner_score``, and so on (:meth:`Loop.finish`).
    """

    winner: int | None = None
    runner_up: int | None = None
    winner_gain: float | None = None
    winner_score: float | None = None
    runner_gain: float | None = None
    runner_score: float | None = None


#: The pick of a step with nothing in play or eligible.
NO_PICK = Pick()


def top_two(
    winner: int,
    winner_gain: float,
    winner_score: float,
    runner_up: int | None,
    runner_gain: float,
    runner_score: float,
) -> Pick:
    """The :class:`Pick` of ``winner`` and ``runner_up`` (None: nothing else competes, and
    the runner's numbers, read at a masked chunk, are left out)."""
    second = runner_up is not None
    return Pick(
        winner=winner,
        runner_up=runner_up,
        winner_gain=winner_gain,
        winner_score=winner_score,
        runner_gain=runner_gain if second else None,
        runner_score=runner_score if second else None,
    )


class Engine(Protocol):
    """How the greedy loop scores the pool: one engine per kind of score.

    The loop calls :meth:`dropped` with the chunks that stop fitting, :meth:`best` once a
    step (and again if it rejects the winner, after :meth:`release`), :meth:`take` with each
    pick, :meth:`trace_step` after each step when traced, and :meth:`candidate_rows` once at
    the end for the record. The loop reads nothing else of an engine.
    """

    def best(self) -> Pick:
        """The competing chunk with the largest score and the runner-up (ties: lowest)."""
        ...

    def release(self, winner: int) -> None:
        """``winner`` of the last :meth:`best` is out for good without being taken (the loop
        rejected it): forget anything held for it (the loop then calls :meth:`dropped`)."""
        ...

    def dropped(self, gone: NDArray[np.intp]) -> None:
        """The chunks ``gone`` no longer fit."""
        ...

    def take(self, winner: int) -> None:
        """Add ``winner`` to the picks and update every score."""
        ...

    def trace_step(self) -> object:
        """What the record of this step needs (None where it is rebuilt at the end)."""
        ...

    def candidate_rows(self, steps: list[Any], picks: list[int]) -> Rows:
        """(gains, scores or None, pick rows or None) of the steps with candidates."""
        ...

    def score_relevance(self) -> NDArray[np.float64]:
        """The relevance term of the score for every chunk, float64 (the score is this
        minus the redundancy term)."""
        ...


def pick_rows(rows: Sequence[FloatArray], n: int) -> NDArray[np.float64]:
    """The cosine of each pick to every chunk as one read-only (k, N) float64 array."""
    return frozen(np.array(rows, dtype=np.float64).reshape(len(rows), n))


def accumulate_rows(op: np.ufunc, rows: FloatArrayT) -> FloatArrayT:
    """``op.accumulate(rows, axis=0)`` in place, a row at a time: row t becomes
    ``op(row t−1, row t)``, for t = 1, 2, … in turn.

    The same float operations in the same order as the ufunc's accumulate, so the same bits;
    on a few rows over many chunks it is 5–10× faster (numpy's accumulate along axis 0
    walks the columns one by one: 161 µs against 16 µs for 21 × 2,000 float32).
    """
    for before, row in pairwise(rows):  # views: ``before`` holds its new values
        op(before, row, out=row)
    return rows
