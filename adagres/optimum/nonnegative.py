"""Pair multipliers N ≥ 0 for the exact solver's relaxation: the doubly non-negative bound.

For binary x, x_i·x_j ≥ 0, so for any symmetric N ≥ 0 with a zero diagonal

    F(x) = a·x − ½·xᵀWx ≤ a·x − ½·xᵀ(W − N)x,

and the concave relaxation of :func:`adagres.optimum.bounds.convex_bound` may use W − N in
place of W: a bound for every N ≥ 0 and every diagonal d with W − N + D ⪰ 0. N lowers the
diagonal that W needs to be made concave, and that diagonal is what lets a relaxed point
spread over many chunks at fractional values; the best pair of (N, d) is the dual of the
doubly non-negative (DNN) relaxation, the semidefinite one with X ≥ 0 added. On synthetic
100-chunk pools without a floor it brings the root gap from 17.6 % (the semidefinite bound)
to 1.5 %, where a general conic solver needs 70 s for the same relaxation
(README, "Exact optimum").

:func:`pair_multipliers` finds N by ADMM on the primal of that relaxation: Y = [1 xᵀ; x X]
alternately projected onto the semidefinite cone and onto {Y₀₀ = 1, diag X = x, x in the
knapsack set, X ≥ 0}; its scaled dual U gives the semidefinite multiplier S = ρU − G, whose
off-diagonal part below W is N. ADMM only has to come close: the bound is checked by
whoever uses N (:func:`adagres.optimum.bounds.diagonal` makes W − N + D ⪰ 0 by construction,
and :func:`~adagres.optimum.bounds.convex_bound` is valid at any point).
"""

from __future__ import annotations

import time

import numpy as np

from .bounds import project

__all__ = ["ITERATIONS", "pair_multipliers"]

#: ADMM rounds: 300 take about 0.25 s at 100 chunks. On synthetic 100-chunk pools 1,000
#: rounds came within 0.03 point of the relaxation's value, 500 within 0.1, 200 within
#: 0.3–0.5. In the search, 200, 300 and 500 rounds each proved 30 synthetic and FanOutQA
#: cases optimal within 3.1 s; 300 is the middle.
ITERATIONS = 300


def pair_multipliers(
    gain: np.ndarray,
    weights: np.ndarray,
    tokens: np.ndarray,
    budget: float,
    iterations: int = ITERATIONS,
    deadline: float = float("inf"),
) -> np.ndarray:
    """N ≥ 0 (symmetric, zero diagonal) for the bound with W − N; zeros when n < 2.

    ``gain``: a (the linear term), ``weights``: W (zero diagonal), ``tokens`` and
    ``budget``: the knapsack (the size constraint Σx ≤ k is left to the bound that uses
    N). Stops after ``iterations`` rounds, when both residuals are below 1e-6 (Y's entries
    lie in [0, 1]), or at ``deadline`` (a ``time.perf_counter`` value): rounds, not the
    clock, decide the answer unless the clock runs out first.
    """
    n = len(gain)
    if n < 2:
        return np.zeros((n, n))
    g = np.zeros((n + 1, n + 1))  # ⟨G, Y⟩ = a·x − ½⟨W, X⟩
    g[0, 1:] = g[1:, 0] = gain / 2
    g[1:, 1:] = -weights / 2
    scale = max(float(np.abs(g).max()), 1e-12)
    z = np.zeros_like(g)
    z[0, 0] = 1.0
    u = np.zeros_like(g)
    rho = scale
    diag = np.arange(1, n + 1)
    tok = tokens.astype(np.float64)
    for step in range(1, iterations + 1):
        values, vectors = np.linalg.eigh(z - u + g / rho)
        positive = values > 0
        y = (vectors[:, positive] * values[positive]) @ vectors[:, positive].T
        v = y + u
        previous = z
        z = np.maximum(v, 0.0)  # X ≥ 0 off the diagonal; the border and diagonal below
        x = project((v[0, 1:] + v[1:, 0] + v[diag, diag]) / 3.0, tok, budget)
        z[0, 0] = 1.0
        z[0, 1:] = z[1:, 0] = z[diag, diag] = x
        u += y - z
        if step % 10 == 0:  # keep the two residuals within a factor 10 of each other
            primal = float(np.linalg.norm(y - z))
            dual = rho * float(np.linalg.norm(z - previous))
            if max(primal, dual / rho) < 1e-6 or time.perf_counter() > deadline:
                break
            if primal > 10.0 * dual:
                rho, u = 2.0 * rho, u / 2.0
            elif dual > 10.0 * primal:
                rho, u = rho / 2.0, 2.0 * u
    multiplier = 2.0 * (rho * u[1:, 1:] - g[1:, 1:])  # ≈ W − N where X = 0
    pairs = np.maximum(weights - multiplier, 0.0)
    pairs = 0.5 * (pairs + pairs.T)
    np.fill_diagonal(pairs, 0.0)
    return pairs
