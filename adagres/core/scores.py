"""How the greedy loop scores the pool at each step: one product per pick.

:class:`Gains` serves AdaGReS (the gain, with or without the redundancy floor τ) and
:class:`Scores` the other scores (gain per token, MMR, relevance order): both keep every
chunk's gain and update it with one product C·c_w per pick, as SPEC.md states it. Large
pools with τ off are scored by :class:`~adagres.core.shortlist.Shortlist` instead.

Every engine takes the arithmetic of a decision from the same place on the traced and the
fast path, so the two paths give bit-identical picks, gains and runner-ups.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

import numpy as np

from .prepared import PreparedPool

if TYPE_CHECKING:
    from .packing import Packer

__all__ = [
    "NEG",
    "NOTHING",
    "Engine",
    "Fit",
    "Gains",
    "Rows",
    "Scores",
    "Values",
    "accumulate_rows",
    "pick_rows",
    "values_of",
]

#: (gains, scores or None for "the gains", pick rows or None) of the steps with candidates.
Rows = tuple[np.ndarray, np.ndarray | None, np.ndarray | None]

NEG = -np.inf


class Values(NamedTuple):
    """The winner's and the runner-up's gain and score at one step (None: no such chunk)."""

    winner_gain: Any = None
    winner_score: Any = None
    runner_gain: Any = None
    runner_score: Any = None


#: The values of a step with no winner.
NOTHING = Values()


def values_of(
    winner_gain: Any, winner_score: Any, runner_gain: Any = None, runner_score: Any = None
) -> Values:
    """A :class:`Values` made as a plain tuple is (a third of the named constructor's cost,
    once a step on the fast path)."""
    return tuple.__new__(Values, (winner_gain, winner_score, runner_gain, runner_score))


class Engine(Protocol):
    """How the greedy loop scores the pool: one engine per kind of score.

    ``values`` holds the numbers of the last :meth:`best`. The loop calls :meth:`dropped`
    with the chunks that stop fitting, :meth:`best` once a step, :meth:`take` with each
    pick, :meth:`trace_step` after each step when traced, and :meth:`candidate_rows` once
    at the end for the record.
    """

    values: Values

    def best(self) -> tuple[int | None, int | None]:
        """The competing chunk with the largest score and the runner-up (ties: lowest)."""
        ...

    def dropped(self, gone: np.ndarray) -> None:
        """The chunks ``gone`` no longer fit."""
        ...

    def take(self, winner: int) -> None:
        """Add ``winner`` to the picks and update every score."""
        ...

    def trace_step(self) -> Any:
        """What the record of this step needs (None where it is rebuilt at the end)."""
        ...

    def candidate_rows(self, steps: list[Any], picks: list[int]) -> Rows:
        """(gains, scores or None, pick rows or None) of the steps with candidates."""
        ...

    def score_relevance(self) -> np.ndarray:
        """The relevance term of the score for every chunk, float64 (the score is this
        minus the redundancy term)."""
        ...


class Fit:
    """Which chunks still fit, updated in O(changes) as the tokens left shrink.

    Chunks are sorted by token count once; since the tokens left only go down, the chunks
    that stop fitting at a step are a contiguous run at the top of that order.
    """

    def __init__(self, tokens: np.ndarray) -> None:
        self.tokens = tokens
        self.end = len(tokens)  # chunks order[end:] no longer fit
        self.largest = int(tokens.max()) if len(tokens) else 0  # the largest that fits
        self.order: np.ndarray | None = None  # sorted when a chunk first stops fitting

    def shrink(self, left: int) -> np.ndarray:
        """The chunks that stop fitting now that ``left`` tokens are left."""
        if self.order is None:
            self.order = np.argsort(self.tokens, kind="stable")
            self.sorted_tokens = self.tokens[self.order]
        end = int(np.searchsorted(self.sorted_tokens, left, side="right"))
        self.largest = int(self.sorted_tokens[end - 1]) if end else -1
        gone = self.order[end : self.end]
        self.end = end
        return gone


class PackedFit:
    """Which chunks still fit when packing lets a chunk's cost change (O(N) a step).

    ``packer.cost`` holds what each chunk cost when it was last counted; a chunk over the
    tokens left whose context changed since is counted again (exact) before it is dropped."""

    def __init__(self, packer: Packer) -> None:
        self.packer = packer
        self.gone = np.zeros(len(packer.cost), dtype=bool)
        self.largest = int(packer.cost.max()) if len(packer.cost) else 0

    def shrink(self, left: int) -> np.ndarray:
        """The chunks that stop fitting now that ``left`` tokens are left."""
        packer = self.packer
        over = ~self.gone & (packer.cost > left)
        for i in np.flatnonzero(over).tolist():
            if i not in packer.passage_of and packer.stale(i):
                over[i] = packer.exact(i) > left
        gone = np.flatnonzero(over)
        self.gone[gone] = True
        self.settle()
        return gone

    def drop(self, chunk: int) -> None:
        """``chunk`` stops fitting (its exact cost, counted as it was about to win)."""
        self.gone[chunk] = True
        self.settle()

    def settle(self) -> None:
        rest = self.packer.cost[~self.gone]
        self.largest = int(rest.max()) if rest.size else -1


class Gains:
    """AdaGReS's gain, kept in place for every chunk and updated with one product per pick.

    Chunks out of play hold -inf, so the argmax needs no mask: a pick is set to -inf once
    (it stays -inf under every update), and a chunk that stops fitting moves to a small
    ``benched`` store whose gains are still updated, for the record. With τ the update is
    gain −= λ·max(0, s − τ). The winner is held at -inf while the runner-up is found and
    put back if the run stops at it.

    Traced, a step keeps nothing but the pick's cosine row: :meth:`history` rebuilds every
    step's gains at the end with the same float operations in the same order, so the
    record holds the very numbers each decision was made with.
    """

    def __init__(
        self, pool: PreparedPool, lam: float, alpha: float, tau: float | None, trace: bool
    ) -> None:
        chunks = pool.chunks
        dtype, n = chunks.dtype, chunks.shape[0]
        self.pool, self.chunks, self.tau, self.trace = pool, chunks, tau, trace
        self.lam = dtype.type(lam)
        self.gain = (alpha * pool.relevance).astype(dtype)
        self.start = self.gain.copy() if trace else self.gain  # the gains before any pick
        self.work = np.empty(n, dtype)
        self.bench_index = np.zeros(0, np.intp)
        self.bench_gain = np.zeros(0, dtype)
        self.held: tuple[int, float] | None = None
        self.values = NOTHING
        self.sims: list[np.ndarray] = []
        self.relevance_term = alpha * pool.relevance

    def score_relevance(self) -> np.ndarray:
        return self.relevance_term

    def best(self) -> tuple[int | None, int | None]:
        gain = self.gain
        winner = int(gain.argmax())
        top = gain.item(winner)  # a Python float: the record needs no conversion
        if top == NEG:
            self.values = NOTHING
            return None, None
        gain[winner] = NEG
        self.held = (winner, top)
        second = int(gain.argmax())
        runner = gain.item(second)
        if runner == NEG:
            self.values = values_of(top, top)
            return winner, None
        self.values = values_of(top, top, runner, runner)
        return winner, second

    def dropped(self, gone: np.ndarray) -> None:
        gone = gone[self.gain[gone] > NEG]  # picks are out already
        if len(gone):
            self.bench_index = np.concatenate([self.bench_index, gone])
            self.bench_gain = np.concatenate([self.bench_gain, self.gain[gone]])
            self.gain[gone] = NEG

    def take(self, winner: int) -> None:
        self.held = None
        similarity = self.pool.similarities(winner)  # C·c_w, once per pool and chunk
        work = self.work
        if self.tau is None:
            np.multiply(similarity, self.lam, out=work)
        else:
            np.subtract(similarity, self.tau, out=work)
            np.maximum(work, 0.0, out=work)
            work *= self.lam
        self.gain -= work
        if len(self.bench_index):
            self.bench_gain -= work[self.bench_index]
        if self.trace:
            self.sims.append(similarity)  # read-only: the memo's row or this product

    def history(self) -> np.ndarray:
        """Every chunk's gain before each pick and after the last, (k + 1, N) float64.

        Row t is α·r − w_1 − … − w_t with w the update :meth:`take` subtracted, computed
        as :meth:`take` computes it (the same dtype, operations and order: one subtraction
        per pick, left to right), so each row holds the bits the loop's vector held.
        """
        rows = np.empty((len(self.sims) + 1, len(self.start)), self.start.dtype)
        rows[0] = self.start
        if self.sims:
            work = rows[1:]
            if self.tau is None:
                np.multiply(self.sims, self.lam, out=work)
            else:
                np.subtract(self.sims, self.tau, out=work)
                np.maximum(work, 0.0, out=work)
                work *= self.lam
            accumulate_rows(np.subtract, rows)
        return rows.astype(np.float64)

    def row(self) -> np.ndarray:
        """Every chunk's gain now, float64 (-inf for the picks)."""
        row = self.gain.astype(np.float64)
        if len(self.bench_index):
            row[self.bench_index] = self.bench_gain
        if self.held is not None:
            row[self.held[0]] = self.held[1]
        return row

    def trace_step(self) -> None:
        return None  # the rows are rebuilt at the end (:meth:`history`)

    def candidate_rows(self, steps: list, picks: list[int]) -> Rows:
        if not self.trace:
            return self.row()[None], None, None
        gains = self.history()
        assert len(gains) == len(steps)  # one row per record: a record per pick and the stop
        return gains, None, pick_rows(self.sims, self.chunks.shape[0])


class Scores:
    """Every chunk's gain as a vector updated with one product per pick, and a score that
    is not the gain: gain per token (with τ), MMR (which also keeps max_j s_ij) or relevance.
    ``penalty`` (owned by the loop) is 0 for the chunks that compete and -inf for the others.
    """

    def __init__(
        self,
        pool: PreparedPool,
        lam: float,
        alpha: float,
        tau: float | None,
        score: str,
        lambda_mmr: float,
        penalty: np.ndarray,
        trace: bool,
    ) -> None:
        chunks = pool.chunks
        dtype = chunks.dtype
        n = chunks.shape[0]
        self.chunks, self.penalty, self.kind, self.tau = chunks, penalty, score, tau
        self.trace = trace
        self.lam = dtype.type(lam)
        self.gain = (alpha * pool.relevance).astype(dtype)
        self.masked, self.work = np.empty(n, dtype), np.empty(n, dtype)
        self.similarity, self.update = np.empty(n, dtype), np.empty(n, dtype)
        self.per_token = np.maximum(pool.tokens, 1).astype(dtype)  # ℓ_i, at least 1
        self.max_sim = np.zeros(n, dtype) if score == "mmr" else None
        self.lambda_mmr = lambda_mmr
        self.mmr_relevance = lambda_mmr * pool.relevance  # float64, added into the scores
        self.relevance = pool.relevance
        self.relevance_term = alpha * pool.relevance
        self.values = NOTHING
        self.score_now = self.gain
        self.sims: list[np.ndarray] = []

    def score(self) -> np.ndarray:
        kind = self.kind
        if kind == "ratio":
            return np.divide(self.gain, self.per_token, out=self.work)
        if kind == "mmr":
            assert self.max_sim is not None
            np.multiply(self.max_sim, self.lambda_mmr - 1.0, out=self.work)
            self.work += self.mmr_relevance
            return self.work
        if kind == "gain":
            return self.gain
        return self.relevance

    def best(self) -> tuple[int | None, int | None]:
        self.score_now = score = self.score()
        masked = np.add(score, self.penalty, out=self.masked)
        winner = int(masked.argmax())
        top = masked[winner]
        if top == NEG:
            self.values = NOTHING
            return None, None
        masked[winner] = NEG
        second = int(masked.argmax())
        runner = int(second) if masked[second] > NEG else None
        gain = self.gain
        self.values = values_of(
            gain.item(winner),
            score.item(winner),
            None if runner is None else gain.item(second),
            None if runner is None else score.item(second),
        )
        return winner, runner

    def score_relevance(self) -> np.ndarray:
        kind = self.kind
        if kind == "ratio":
            return self.relevance_term / self.per_token.astype(np.float64)
        if kind == "mmr":
            return self.mmr_relevance
        if kind == "gain":
            return self.relevance_term
        return self.relevance

    def dropped(self, gone: np.ndarray) -> None:
        """Nothing to do: the gains stay, the penalty (already set) masks the chunks."""

    def take(self, winner: int) -> None:
        """Update every gain with C·c_w (the one product of the step)."""
        self.penalty[winner] = NEG
        similarity = np.matmul(self.chunks, self.chunks[winner], out=self.similarity)
        update = self.update
        if self.tau is None:
            np.multiply(similarity, self.lam, out=update)
        else:
            np.subtract(similarity, self.tau, out=update)
            np.maximum(update, 0.0, out=update)
            update *= self.lam
        self.gain -= update
        if self.max_sim is not None:
            np.maximum(self.max_sim, similarity, out=self.max_sim)
        if self.trace:
            self.sims.append(similarity.astype(np.float64))

    def trace_step(self) -> tuple[np.ndarray, np.ndarray]:
        return self.gain.astype(np.float64), np.array(self.score_now, np.float64)

    def candidate_rows(self, steps: list, picks: list[int]) -> Rows:
        if not self.trace:
            gain, score = self.trace_step()
            return gain[None], score[None], None
        gains = np.array([s[0] for s in steps])
        scores = np.array([s[1] for s in steps])
        return gains, scores, pick_rows(self.sims, self.chunks.shape[0])


def pick_rows(rows: list[np.ndarray], n: int) -> np.ndarray:
    """The cosine of each pick to every chunk as one read-only (k, N) float64 array."""
    array = np.array(rows, dtype=np.float64).reshape(len(rows), n)
    array.flags.writeable = False
    return array


def accumulate_rows(op: np.ufunc, rows: np.ndarray) -> np.ndarray:
    """``op.accumulate(rows, axis=0)`` in place, a row at a time: row t becomes
    ``op(row t−1, row t)``, for t = 1, 2, … in turn.

    The same float operations in the same order as the ufunc's accumulate, so the same bits;
    on a few rows over many chunks it is 5–10× faster (numpy's accumulate along axis 0
    walks the columns one by one: 161 µs against 16 µs for 21 × 2,000 float32).
    """
    for before, row in pairwise(rows):  # views: ``before`` holds its new values
        op(before, row, out=row)
    return rows
