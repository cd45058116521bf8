"""The paper's approximation guarantee, computed for a pool so it can be checked.

The paper states F is ε-approximately submodular with ε = λ·k·δ (δ bounds the pairwise
similarity, k is the largest set the budget allows) and quotes
F(greedy) >= (1 − 1/e)·OPT − k·ε/e. Its proof covers neither the knapsack constraint nor
the non-monotone objective, so this module only computes the quantities; the app puts
them next to the exact optimum to show the real gap (SPEC.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from . import validate as v
from .arrays import FloatArray
from .prepared import PreparedPool, unit_chunks

__all__ = ["Guarantee", "guarantee", "largest_set_size", "max_pairwise_similarity"]


@dataclass(frozen=True)
class Guarantee:
    """δ, k, ε of the paper's bound for one pool, budget and λ."""

    delta: float
    k_max: int
    lam: float
    epsilon: float

    def bound(self, optimum: float) -> float:
        """The paper's lower bound on F(greedy) given the optimum F: (1−1/e)·OPT − k·ε/e."""
        return (1.0 - 1.0 / math.e) * optimum - self.k_max * self.epsilon / math.e


def largest_set_size(token_counts: ArrayLike, budget: int) -> int:
    """Largest number of chunks whose tokens fit together in ``budget`` (smallest first).

    >>> largest_set_size([50, 10, 30, 20], 60)
    3
    """
    tokens = np.sort(np.asarray(token_counts, dtype=np.int64))
    return int(np.searchsorted(np.cumsum(tokens), budget, side="right"))


def max_pairwise_similarity(unit_chunks: FloatArray, block: int = 1024) -> float:
    """Largest cosine between two different chunks, in row blocks (no N×N matrix)."""
    n = unit_chunks.shape[0]
    best = -np.inf
    for start in range(0, n, block):
        rows = unit_chunks[start : start + block]
        sims = (rows @ unit_chunks.T).astype(np.float64)
        idx = np.arange(rows.shape[0])
        sims[idx, start + idx] = -np.inf
        best = max(best, float(sims.max()))
    return best


def guarantee(
    chunk_embeddings: ArrayLike | PreparedPool, token_counts: ArrayLike, budget: int, lam: float
) -> Guarantee:
    """δ = max(0, largest pairwise cosine), k = :func:`largest_set_size`, ε = λ·k·δ
    (``chunk_embeddings``: the pool's embeddings, or its :class:`~adagres.PreparedPool`).

    >>> import numpy as np
    >>> g = guarantee(np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]]), [10, 10, 10], 20, 0.5)
    >>> g.delta, g.k_max, g.epsilon
    (0.8, 2, 0.8)
    """
    chunks = unit_chunks(chunk_embeddings)
    tokens = v.token_counts(token_counts, chunks.shape[0])
    lam = v.real(lam, "lam", minimum=0.0)
    delta = max(0.0, max_pairwise_similarity(chunks)) if chunks.shape[0] > 1 else 0.0
    k_max = largest_set_size(tokens, v.budget(budget))
    return Guarantee(delta=delta, k_max=k_max, lam=lam, epsilon=lam * k_max * delta)
