"""AdaGReS on a large pool: exact top-two of the gain from a proven shortlist (τ off).

Without the redundancy floor the redundancy term is linear in the picked set,
R_i(S) = c_i·V with V = Σ_{j∈S} c_j, so the gain of chunk i is α·r_i − c_i·(λ·V). Each step
evaluates that exactly on a shortlist of the best candidates only, and proves that no chunk
outside it can win or come second: since the chunks are unit vectors, a chunk's gain can
have risen by at most ‖λ·(V − V_ref)‖ since the last full evaluation at V_ref (plus a bound
on rounding). When that proof fails, the pool is evaluated in full again and the shortlist
rebuilt. A run of k picks therefore costs a few full products instead of k.
"""

from __future__ import annotations

import math
from typing import TypeAlias

import numpy as np
from numpy.typing import NDArray

from .arrays import FloatArray, frozen
from .engine import NEG, NO_PICK, Pick, Rows, accumulate_rows, top_two
from .prepared import PreparedPool
from .records import Terms

__all__ = ["SHORTLIST_MIN_CHUNKS", "Shortlist", "shortlist_size"]

#: What one traced step decided with: the shortlist (pool positions), its gains and, for the
#: ratio score, its scores.
Decision: TypeAlias = tuple[NDArray[np.intp], FloatArray, FloatArray | None]

#: Pools of at least this many chunks are scored from a shortlist. Below it one product per
#: pick costs less than the proofs: the gains of a retrieved pool lie close together, so a
#: shortlist of a small pool must be rebuilt at almost every step.
SHORTLIST_MIN_CHUNKS = 10_000


def shortlist_size(n: int) -> int:
    """Candidates evaluated exactly at each step: all of a small pool, ~3·√N of a large one."""
    return n if n <= 96 else max(48, int(3 * math.sqrt(n)))


class Shortlist:
    """Exact top-two of the gain (or gain per token) from a proven shortlist (τ off).

    ``penalty`` (owned by the loop) is 0 for the chunks that compete and -inf for the
    others. After :meth:`best`, ``pos`` is the winner's place in the shortlist.
    """

    def __init__(self, pool: PreparedPool, terms: Terms, ratio: bool, penalty: FloatArray) -> None:
        chunks, lam, alpha = pool.chunks, terms.lam, terms.alpha
        self.relevance_term = alpha * pool.relevance
        dtype = chunks.dtype
        self.chunks, self.penalty, self.ratio = chunks, penalty, ratio
        self.n: int = chunks.shape[0]
        self.dim: int = chunks.shape[1]
        self.lam = dtype.type(lam)
        self.abs_lam = abs(float(lam))
        self.alpha = abs(float(alpha))
        self.eps = float(np.finfo(dtype).eps)
        self.relevance = (alpha * pool.relevance).astype(dtype)  # α·r_i in the gains' dtype
        self.per_token = np.maximum(pool.tokens, 1).astype(dtype)  # ℓ_i, at least 1
        self.min_tokens = float(self.per_token.min()) if ratio and self.n else 1.0
        self.lv = np.zeros(self.dim, dtype)  # λ·V, V = Σ of the picked rows
        self.scaled = np.empty(self.dim, dtype)
        self.picks = 0
        self.size = shortlist_size(self.n)
        self.pos = -1
        self.refresh()

    def error(self, picks: int) -> float:
        """A bound on the rounding error of one computed gain after ``picks`` picks."""
        spread = 1.01 * self.dim * self.abs_lam * picks + 2 * (self.alpha + self.abs_lam * picks)
        return self.eps * spread + 1e-300

    def full_products(self) -> FloatArray:
        """c_i·(λ·V) for every chunk (zeros before the first pick, with no product)."""
        if self.picks == 0:
            return np.zeros(self.n, self.chunks.dtype)
        return self.chunks @ self.lv

    def refresh(self) -> None:
        """Evaluate the whole pool and keep the ``size`` best competing chunks."""
        products = self.full_products()
        gains = self.relevance - products
        scores = gains / self.per_token if self.ratio else gains
        masked = scores + self.penalty
        competing = int(np.count_nonzero(masked > NEG))
        if competing <= self.size:
            index = np.arange(self.n) if competing == self.n else np.flatnonzero(masked > NEG)
            self.outside = NEG
        else:
            cut = self.n - self.size
            part = np.argpartition(masked, cut - 1)
            index = np.sort(part[cut:])
            self.outside = float(masked[part[cut - 1]])  # the best score left outside
        self.index = index
        whole = len(index) == self.n
        self.rows = self.chunks if whole else self.chunks[index]
        self.rel_in = self.relevance if whole else self.relevance[index]
        self.tok_in = self.per_token[index]
        self.pen_in = self.penalty[index]
        self.prod_in = products[index]  # this step's products: no second evaluation
        self.gain_in = np.empty(len(index), self.chunks.dtype)
        self.score_in = np.empty(len(index), self.chunks.dtype) if self.ratio else self.gain_in
        self.masked_in = np.empty(len(index), self.chunks.dtype)
        self.fresh = True
        self.ref_products = products
        self.ref_error = self.error(self.picks)
        self.drift2 = 0.0  # ‖λ·V − λ·V_ref‖², bounded from above
        self.drift_picks = 0

    def score_relevance(self) -> NDArray[np.float64]:
        """α·r_i (per token with the ratio score), float64."""
        if self.ratio:
            return self.relevance_term / self.per_token.astype(np.float64)
        return self.relevance_term

    def dropped(self, gone: NDArray[np.intp]) -> None:
        """Chunks stopped competing (they no longer fit): mask them in the shortlist."""
        self.pen_in = self.penalty[self.index]

    def best(self) -> Pick:
        """SPEC step 4 on the shortlist, re-evaluating the pool until the answer is proven."""
        while True:
            if self.fresh:
                self.fresh = False
            else:
                np.matmul(self.rows, self.lv, out=self.prod_in)
            gain = np.subtract(self.rel_in, self.prod_in, out=self.gain_in)
            score = np.divide(gain, self.tok_in, out=self.score_in) if self.ratio else gain
            masked = np.add(score, self.pen_in, out=self.masked_in)
            first = int(masked.argmax()) if len(masked) else 0
            top = masked[first] if len(masked) else NEG
            if top == NEG:
                if self.outside == NEG:
                    return NO_PICK
            else:
                masked[first] = NEG
                second = int(masked.argmax())
                runner_score = masked[second]
                if self.proven(float(runner_score)):
                    self.pos = first
                    runner = None if runner_score == NEG else int(self.index[second])
                    winner, gains = int(self.index[first]), gain.item
                    return top_two(
                        winner, gains(first), float(top), runner, gains(second), float(runner_score)
                    )
            if self.drift_picks == 0:  # proof failed right after a full evaluation
                self.size = min(self.n, 4 * self.size)
            self.refresh()

    def release(self, winner: int) -> None:
        """Nothing held: the loop's penalty masks the winner (:meth:`dropped`)."""

    def proven(self, runner_score: float) -> bool:
        """Whether no chunk outside the shortlist can reach the runner-up's score."""
        if self.outside == NEG:
            return True
        if runner_score == NEG:
            return False
        drift = math.sqrt(max(self.drift2, 0.0)) + 2 * self.eps * self.abs_lam * (self.picks + 1)
        # |c_i·d| ≤ ‖c_i‖·‖d‖, and unit rows are unit to 1e-5 at worst (float32).
        rise = (drift * (1 + 1e-4) + self.ref_error) / self.min_tokens
        slack = self.error(self.picks) + 2 * self.eps * (abs(runner_score) + abs(self.outside))
        return runner_score - slack > self.outside + rise

    def take(self, winner: int) -> None:
        """V += c_w (as λ·V), and the bound on the drift since V_ref grows."""
        self.penalty[winner] = NEG
        self.pen_in[self.pos] = NEG
        lam = float(self.lam)
        # ‖d + λc_w‖² = ‖d‖² + 2λ·c_w·d + λ², with c_w·d read off this step's products.
        along = float(self.prod_in[self.pos]) - float(self.ref_products[winner])
        rounding = 2 * self.abs_lam * (self.error(self.picks) + self.ref_error) + 1e-4 * lam * lam
        self.drift2 += 2 * lam * along + lam * lam + rounding
        np.multiply(self.chunks[winner], self.lam, out=self.scaled)
        self.lv += self.scaled
        self.picks += 1
        self.drift_picks += 1

    def trace_step(self) -> Decision:
        """(shortlist, its gains, its scores) as this step decided them (for the record)."""
        scores = self.score_in.copy() if self.ratio else None
        return self.index, self.gain_in.copy(), scores

    def candidate_rows(self, steps: list[Decision], picks: list[int]) -> Rows:
        """The stop's gains from one full product (the shortlist's as the step decided
        them); traced, every earlier step's from the pick rows (one matrix product)."""
        final = (self.relevance - self.full_products()).astype(np.float64)  # α·r − c·(λ·V)
        n, relevance = self.n, self.relevance_term
        pick_similarity = None
        if steps:
            steps[-1] = self.trace_step()
            rows = np.zeros((0, n))
            if picks:
                rows = np.ascontiguousarray((self.chunks @ self.chunks[picks].T).T, np.float64)
            gains = np.empty((len(steps), n))
            gains[0] = relevance
            sums = accumulate_rows(np.add, rows[: len(steps) - 1].copy())  # np.cumsum(axis=0)
            gains[1:] = relevance - float(self.lam) * sums
            gains[-1] = final
            pick_similarity = frozen(rows)
        else:
            steps = [self.trace_step()]
            gains = final[None]
        scores = gains / self.per_token.astype(np.float64) if self.ratio else None
        for row, (index, gain, score) in enumerate(steps):
            gains[row, index] = gain
            if scores is not None:
                scores[row, index] = score
        return gains, scores, pick_similarity
