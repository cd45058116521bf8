"""Upper bounds for the exact solver's branch and bound (:mod:`adagres.core.exact`).

Each function bounds max_{T⊆U, ℓ(T)≤b} Σ_{i∈T} g_i − Σ_{i<j∈T} w_ij, the best completion
of a node whose open chunks are U, from above; each docstring says why the bound holds. A
bound only has to be valid: how close it comes to the optimum decides the search's speed,
never its answer.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["ABS_TOL", "convex_bound", "count_fit", "knapsack_lp", "project", "shift", "split_bound"]

#: Absolute tolerance of the solver on F (a node is cut off when it cannot win by more).
ABS_TOL = 1e-9


def count_fit(tokens: np.ndarray, budget: float) -> int:
    return int(np.searchsorted(np.cumsum(np.sort(tokens)), budget, side="right"))


def split_bound(w_inf: np.ndarray, gain: np.ndarray, tokens: np.ndarray, budget: int) -> float:
    """Upper bound on max_{T⊆U, ℓ(T)≤b} Σ_{i∈T} g_i − Σ_{i<j∈T} w_ij (``w_inf``: W on U,
    +inf on the diagonal).

    For |T| = m, Σ_{i<j∈T} w_ij = ½·Σ_{i∈T} Σ_{j∈T∖i} w_ij ≥ ½·Σ_{i∈T} L_i(m − 1), with
    L_i(q) the sum of the q smallest w_ij (j ∈ U∖i); so the best T of size m is worth at most
    the sum of the m largest positive v_i(m) = g_i − ½·L_i(m − 1). m ≤ k (the most that fit).
    """
    k = count_fit(tokens, budget)
    if k == 0:
        return 0.0
    values = np.empty((len(gain), k))
    values[:, 0] = gain
    if k > 1:
        lightest = np.sort(w_inf, axis=1)[:, : k - 1]
        values[:, 1:] = gain[:, None] - 0.5 * np.cumsum(lightest, axis=1)
    tops = np.cumsum(np.maximum(-np.sort(-values, axis=0), 0.0), axis=0)
    return max(0.0, float(tops[np.arange(k), np.arange(k)].max()))


def knapsack_lp(c: np.ndarray, tokens: np.ndarray, budget: float, k: int) -> float:
    """Upper bound on max c·s over s ∈ [0,1]^U, ℓ·s ≤ b, Σs ≤ k (the LP's value or above).

    For any ν ≥ 0 the LP is at most ν·k + max (c − ν)·s over the box and the budget alone,
    which is the fractional knapsack (exact, items by c/ℓ). ν = 0 and ν = the (k+1)-th
    largest c are tried and the smaller bound kept.
    """

    def fractional(c: np.ndarray) -> float:
        keep = c > 0
        cs, ls = c[keep], tokens[keep]
        order = np.argsort(-cs / np.maximum(ls, 1e-300), kind="stable")
        cs, ls = cs[order], ls[order]
        cum = np.cumsum(ls)
        full = int(np.searchsorted(cum, budget, side="right"))
        total = float(cs[:full].sum())
        if full < len(cs):
            total += (budget - (cum[full - 1] if full else 0.0)) / ls[full] * cs[full]
        return total

    best = fractional(c)
    if k < len(c):
        nu = float(np.partition(c, len(c) - k - 1)[len(c) - k - 1])
        if nu > 0:
            best = min(best, nu * k + fractional(c - nu))
    return best


def project(v: np.ndarray, tokens: np.ndarray, budget: float) -> np.ndarray:
    """Euclidean projection of v onto {x ∈ [0,1]^U : ℓ·x ≤ b} (ℓ ≥ 0), by its breakpoints."""
    y = np.minimum(np.maximum(v, 0.0), 1.0)
    if tokens @ y <= budget:
        return y
    pos = (v > 0) & (tokens > 0)  # the others are fixed at clip(v) and cost nothing
    vp, lp = v[pos], tokens[pos]
    points = np.concatenate((np.maximum((vp - 1.0) / lp, 0.0), vp / lp))
    slopes = np.concatenate((lp * lp, -(lp * lp)))
    order = np.argsort(points, kind="stable")
    points, slopes = points[order], np.cumsum(slopes[order])
    h = float(lp @ y[pos]) - np.concatenate(([0.0], np.cumsum(slopes[:-1] * np.diff(points))))
    j = max(int(np.searchsorted(-h, -budget, side="right")) - 1, 0)
    theta = points[j] + (h[j] - budget) / slopes[j] if slopes[j] > 0 else points[j]
    return np.minimum(np.maximum(v - theta * tokens, 0.0), 1.0)


def convex_bound(
    c: np.ndarray,
    q: np.ndarray,
    tokens: np.ndarray,
    budget: float,
    k: int,
    start: np.ndarray | None,
    lipschitz: float,
    target: float,
    iterations: int = 60,
) -> tuple[float, np.ndarray]:
    """Upper bound on max f(x) = c·x − ½·xᵀQx over P = {[0,1]^U, ℓ·x ≤ b, Σx ≤ k}, Q ⪰ 0.

    Used with Q = W_U + e·I and c = g + e/2, e ≥ −λ_min(W_U): for binary x (x_i² = x_i),
    f(x) = g·x − ½·xᵀW_Ux exactly, so max_P f bounds every completion. f is concave, so
    at any point x̄, f(x) ≤ f(x̄) + ∇f(x̄)·(x − x̄) and max_P f ≤ f(x̄) − ∇f(x̄)·x̄ +
    :func:`knapsack_lp` (∇f(x̄)): valid whatever x̄ is; accelerated projected gradient
    (FISTA, restarted when f drops) only brings x̄ close to the maximiser. Stops early once
    the bound is ≤ ``target`` (the node is cut off). Returns the bound and x̄.
    """
    x = np.zeros(len(c)) if start is None else start
    y, t, best, last = x, 1.0, math.inf, -math.inf
    for step in range(1, iterations + 1):
        new = project(y + (c - q @ y) / lipschitz, tokens, budget)
        t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        y, x, t = new + ((t - 1.0) / t_new) * (new - x), new, t_new
        if step % 5 == 0 or step == iterations:
            qx = q @ x
            grad = c - qx
            value = float(c @ x - 0.5 * (x @ qx))
            best = min(best, value - float(grad @ x) + knapsack_lp(grad, tokens, budget, k))
            if best <= target or best - value <= ABS_TOL:
                break
            if value < last:
                y, t = x, 1.0
            last = value
    return best, x


def shift(weights: np.ndarray) -> float:
    """e = −λ_min(W) (≥ 0), with a margin for rounding, so W + e·I ⪰ 0."""
    if len(weights) < 2:
        return 0.0
    low = float(np.linalg.eigvalsh(weights)[0])
    return max(-low, 0.0) + 1e-12 * (1.0 + float(np.abs(weights).max()))
