"""Upper bounds for the exact solver's branch and bound (:mod:`adagres.optimum.exact`).

Each function bounds max_{T⊆U, ℓ(T)≤b} Σ_{i∈T} g_i − Σ_{i<j∈T} w_ij, the best completion
of a node whose open chunks are U, from above; each docstring says why the bound holds. A
bound only has to be valid: how close it comes to the optimum decides the search's speed,
never its answer.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

__all__ = [
    "ABS_TOL",
    "Dual",
    "Relaxation",
    "convex_bound",
    "count_fit",
    "diagonal",
    "knapsack_lp",
    "max_gain",
    "project",
    "project_near",
    "rounded",
    "shift",
    "split_bound",
    "threshold",
]


class Dual(NamedTuple):
    """A bound of :func:`knapsack_lp` and its reduced values r_j = c_j − μ·ℓ_j − ν."""

    value: float
    reduced: np.ndarray

    def with_(self) -> np.ndarray:
        """The bound with each s_i fixed at 1."""
        return np.asarray(self.value + np.minimum(self.reduced, 0.0))

    def without(self) -> np.ndarray:
        """The bound with each s_i fixed at 0."""
        return np.asarray(self.value - np.maximum(self.reduced, 0.0))


class Relaxation(NamedTuple):
    """What :func:`convex_bound` proves: a bound on the node, the point x̄ it stopped at,
    and bounds on the completions that contain (``with_``) or avoid (``without``) each
    open chunk, from the tangent plane at x̄."""

    bound: float
    x: np.ndarray
    with_: np.ndarray
    without: np.ndarray


#: Absolute tolerance of the solver on F (a node is cut off when it cannot win by more).
ABS_TOL = 1e-9


def count_fit(tokens: np.ndarray, budget: float) -> int:
    return int(np.searchsorted(np.cumsum(np.sort(tokens)), budget, side="right"))


def rounded(x: np.ndarray, tokens: np.ndarray, budget: int) -> list[int]:
    """Chunks by decreasing x, each taken while it fits (a relaxed point made a set)."""
    chosen, used = [], 0
    for i in np.argsort(-x, kind="stable"):
        if x[i] > 0 and used + tokens[i] <= budget:
            chosen.append(int(i))
            used += int(tokens[i])
    return chosen


def max_gain(weights: np.ndarray, a: np.ndarray, k: int) -> np.ndarray:
    """Upper bound on each chunk's marginal gain a_i − Σ_{j∈S} w_ij over sets |S| < k:
    a_i minus its k − 1 most negative pair weights (only the negative parts count)."""
    if k <= 1 or len(a) < 2:
        return a.copy()
    rewards = np.sort(np.minimum(weights, 0.0), axis=1)[:, : k - 1]
    return np.asarray(a - rewards.sum(axis=1))


def split_bound(
    w_inf: np.ndarray, gain: np.ndarray, tokens: np.ndarray, budget: int, target: float = -math.inf
) -> float:
    """Upper bound on max_{T⊆U, ℓ(T)≤b} Σ_{i∈T} g_i − Σ_{i<j∈T} w_ij (``w_inf``: W on U,
    +inf on the diagonal), the larger over m = |T| ≤ k (the most that fit) of two bounds:

    - split: Σ_{i<j∈T} w_ij = ½·Σ_{i∈T} Σ_{j∈T∖i} w_ij ≥ ½·Σ_{i∈T} L_i(m − 1), with L_i(q)
      the sum of the q smallest w_ij (j ∈ U∖i); so T is worth at most the sum of the m
      largest positive v_i = g_i − ½·L_i(m − 1);
    - pairs (m ≥ 2): F(T) = Σ_{i<j∈T} h_ij with h_ij = (g_i + g_j)/(m − 1) − w_ij, which is
      ½·Σ_{i∈T} Σ_{j∈T∖i} h_ij ≤ ½·(the m largest H_i), H_i the sum of row i's m − 1
      largest h_ij: it sees that a chunk's partners must be worth something themselves.

    Either sum over T of per-chunk shares v_i is also at most the LP bound
    :func:`knapsack_lp` (v, ℓ, b, m), which sees the budget; that refinement is tried while
    it can bring every size below ``target``; once one size stays above it, the others keep
    their split bound (the bound is valid whatever the target).
    """
    k = count_fit(tokens, budget)
    if k == 0:
        return 0.0
    u = len(gain)
    values = np.empty((u, k))
    values[:, 0] = gain
    if k > 1:
        lightest = np.sort(w_inf, axis=1)[:, : k - 1]
        values[:, 1:] = gain[:, None] - 0.5 * np.cumsum(lightest, axis=1)
    tops = np.cumsum(np.maximum(-np.sort(-values, axis=0), 0.0), axis=0)
    per_size = tops[np.arange(k), np.arange(k)]  # index m − 1
    pair_sum = gain[:, None] + gain[None, :]
    lengths, refine = tokens.astype(np.float64), True
    for m in np.argsort(-per_size, kind="stable") + 1:  # the loosest sizes first
        if per_size[m - 1] <= max(target, 0.0):
            break  # so are all the sizes after it
        shares = [values[:, m - 1]]
        if m >= 2:
            h = pair_sum / (m - 1) - w_inf  # −inf on the diagonal
            rows = 0.5 * -np.partition(-h, m - 2, axis=1)[:, : m - 1].sum(axis=1)
            shares.append(rows)
            top = -np.partition(-rows, m - 1)[:m].sum() if m < u else rows.sum()
            per_size[m - 1] = min(per_size[m - 1], top)
        if refine and per_size[m - 1] > target:  # the budget too, while it may cut
            for share in shares:
                per_size[m - 1] = min(per_size[m - 1], knapsack_lp(share, lengths, budget, m).value)
            refine = per_size[m - 1] <= target
        if per_size[m - 1] > target:
            break  # the node stands: the other sizes keep their split bounds (still valid)
    return max(0.0, float(per_size.max()))


def knapsack_lp(c: np.ndarray, tokens: np.ndarray, budget: float, k: int) -> Dual:
    """Upper bound on max c·s over s ∈ [0,1]^U, ℓ·s ≤ b, Σs ≤ k, from LP duality.

    For any μ, ν ≥ 0 and s in that set, c·s = Σ_j r_j·s_j + μ·ℓ·s + ν·Σs ≤ Σ_j max(0, r_j)
    + μ·b + ν·k with r = c − μ·ℓ − ν; with s_i fixed at 1 the bound drops by
    max(0, r_i) − r_i, at 0 by max(0, r_i) (``Dual.with_``, ``Dual.without``). μ is the
    critical ratio c/ℓ of the fractional knapsack (which makes the bound its exact value when
    ν = 0); ν = 0 and ν = the (k+1)-th largest c are tried and the smaller bound kept.
    """

    def dual(nu: float) -> Dual:
        cs = c - nu
        keep = cs > 0
        ratio = cs[keep] / np.maximum(tokens[keep], 1e-300)
        order = np.argsort(-ratio, kind="stable")
        full = int(np.searchsorted(np.cumsum(tokens[keep][order]), budget, side="right"))
        mu = float(ratio[order[full]]) if full < len(order) else 0.0
        reduced = cs - mu * tokens
        return Dual(float(np.maximum(reduced, 0.0).sum()) + mu * budget + nu * k, reduced)

    best = dual(0.0)
    if k < len(c):
        nu = float(np.partition(c, len(c) - k - 1)[len(c) - k - 1])
        if nu > 0:
            other = dual(nu)
            best = other if other.value < best.value else best
    return best


def project(v: np.ndarray, tokens: np.ndarray, budget: float) -> np.ndarray:
    """Euclidean projection of v onto {x ∈ [0,1]^U : ℓ·x ≤ b} (ℓ ≥ 0), by its breakpoints."""
    return np.minimum(np.maximum(v - threshold(v, tokens, budget) * tokens, 0.0), 1.0)


def threshold(v: np.ndarray, tokens: np.ndarray, budget: float) -> float:
    """The θ ≥ 0 of :func:`project`: x = clip(v − θ·ℓ, 0, 1) (0 when clip(v) fits), found
    on the piecewise-linear h(θ) = ℓ·clip(v − θ·ℓ, 0, 1) between its sorted breakpoints."""
    y = np.minimum(np.maximum(v, 0.0), 1.0)
    if tokens @ y <= budget:
        return 0.0
    pos = (v > 0) & (tokens > 0)  # the others are fixed at clip(v) and cost nothing
    vp, lp = v[pos], tokens[pos]
    points = np.concatenate((np.maximum((vp - 1.0) / lp, 0.0), vp / lp))
    slopes = np.concatenate((lp * lp, -(lp * lp)))
    order = np.argsort(points, kind="stable")
    points, slopes = points[order], np.cumsum(slopes[order])
    h = float(lp @ y[pos]) - np.concatenate(([0.0], np.cumsum(slopes[:-1] * np.diff(points))))
    j = max(int(np.searchsorted(-h, -budget, side="right")) - 1, 0)
    return float(points[j] + (h[j] - budget) / slopes[j] if slopes[j] > 0 else points[j])


def project_near(
    v: np.ndarray, tokens: np.ndarray, squares: np.ndarray, budget: float, theta: float
) -> tuple[np.ndarray, float]:
    """:func:`project` of v and its θ, from a guess of θ (the previous FISTA step's).

    Newton steps on h(θ) − b (``squares``: ℓ²): a step is exact once no v_i − θ·ℓ_i
    crosses 0 or 1 on its way (each moves monotonically with θ, so h is linear there);
    after three steps that were not, :func:`threshold` sorts the breakpoints. The search
    calls this about 20 times per relaxation with nearby v, where one step usually lands.
    """
    z = v - theta * tokens
    low, high = z <= 0.0, z >= 1.0
    for _ in range(3):
        x = np.minimum(np.maximum(z, 0.0), 1.0)
        excess = float(tokens @ x) - budget
        if theta == 0.0 and excess <= 0.0:
            return x, 0.0
        slope = float(squares @ ~(low | high))
        if slope <= 0.0:
            break
        new = max(theta + excess / slope, 0.0)
        z = v - new * tokens
        # Every z_i moves the same way with θ, so equal counts mean equal sets: no crossing.
        counts = np.count_nonzero(low), np.count_nonzero(high)
        low, high = z <= 0.0, z >= 1.0
        if (np.count_nonzero(low), np.count_nonzero(high)) == counts:
            return np.minimum(np.maximum(z, 0.0), 1.0), new
        theta = new
    theta = threshold(v, tokens, budget)
    return np.minimum(np.maximum(v - theta * tokens, 0.0), 1.0), theta


def convex_bound(
    c: np.ndarray,
    q: np.ndarray,
    tokens: np.ndarray,
    budget: float,
    k: int,
    start: np.ndarray | None,
    lipschitz: float,
    target: float,
    iterations: int = 20,
    patient: bool = False,
) -> Relaxation:
    """Upper bound on max f(x) = c·x − ½·xᵀQx over P = {[0,1]^U, ℓ·x ≤ b, Σx ≤ k}, Q ⪰ 0.

    Used with Q = W_U + e·I and c = g + e/2, e ≥ −λ_min(W_U): for binary x (x_i² = x_i),
    f(x) = g·x − ½·xᵀW_Ux exactly, so max_P f bounds every completion. f is concave, so
    at any point x̄, f(x) ≤ f(x̄) + ∇f(x̄)·(x − x̄) and max_P f ≤ f(x̄) − ∇f(x̄)·x̄ +
    :func:`knapsack_lp` (∇f(x̄)): valid whatever x̄ is; accelerated projected gradient
    (FISTA, restarted when f drops) only brings x̄ close to the maximiser. Stops early once
    the bound is ≤ ``target`` (the node is cut off) or falls too slowly to get there. The
    per-chunk bounds apply :class:`Dual`'s fixing to the same tangent plane (f(x̄) −
    ∇f(x̄)·x̄ is a constant). ``patient``: run all the iterations unless the bound meets f.
    """
    x = np.zeros(len(c)) if start is None else start
    y, t, best, last = x, 1.0, math.inf, -math.inf
    at = Dual(math.inf, np.zeros(len(c)))
    offset = theta = 0.0
    squares = tokens * tokens
    for step in range(1, iterations + 1):
        new, theta = project_near(y + (c - q @ y) / lipschitz, tokens, squares, budget, theta)
        t_new = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        y, x, t = new + ((t - 1.0) / t_new) * (new - x), new, t_new
        if step % 5 == 0 or step == iterations:
            qx = q @ x
            grad = c - qx
            value = float(c @ x - 0.5 * (x @ qx))
            at, offset = knapsack_lp(grad, tokens, budget, k), value - float(grad @ x)
            before, best = best, min(best, offset + at.value)
            if best <= target or best - value <= ABS_TOL:
                break
            # At the rate it has been falling the bound will not reach the target: stop.
            if not patient and (before - best) * (iterations - step) / 5 < best - target:
                break
            if value < last:
                y, t = x, 1.0
            last = value
    return Relaxation(best, x, offset + at.with_(), offset + at.without())


def shift(weights: np.ndarray) -> float:
    """e = −λ_min(W) (≥ 0), with a margin for rounding, so W + e·I ⪰ 0."""
    if len(weights) < 2:
        return 0.0
    low = float(np.linalg.eigvalsh(weights)[0])
    return max(-low, 0.0) + 1e-12 * (1.0 + float(np.abs(weights).max()))


def is_psd(q: np.ndarray) -> bool:
    """Q ⪰ 0, checked by a Cholesky factorisation (it exists only for Q ≻ 0)."""
    try:
        np.linalg.cholesky(q)
    except np.linalg.LinAlgError:
        return False
    return True


def diagonal(
    weights: np.ndarray, gain: np.ndarray, tokens: np.ndarray, budget: float, k: int
) -> np.ndarray:
    """A per-chunk shift d ≥ 0 with W + diag(d) ≻ 0 (checked by Cholesky) for
    :func:`convex_bound`, chosen to make its relaxed bound as low as it goes.

    Any such d gives a valid bound: for binary x, (g + d/2)·x − ½·xᵀ(W + D)x is F. The
    relaxed maximum B(d) is convex in d with slope ½·(x̄ − x̄²) (x̄ the relaxed maximiser);
    its minimum over W + D ⪰ 0 is the semidefinite (Shor) bound of the problem. This finds
    it by a barrier method on the dual: B(d) − μ·log det(W + D) for falling μ, each step a
    Newton step of the barrier term (Hessian μ·(M⁻¹ ∘ M⁻¹), M = W + D) against the slope
    of B, cut back to 90 % of the way to the boundary so that M stays positive definite.
    On real 100-chunk pools it comes within 0.1 point of the bound an SDP solver gives, in
    0.1–0.3 s, where lowering d where x̄ is fractional (then adding back a uniform shift)
    stalled at 1.3–2.3× that gap (README, "Exact optimum"). The uniform :func:`shift` is
    kept when its relaxed bound is no higher. The same d stays valid for every node (a
    principal submatrix of a matrix ⪰ 0 is ⪰ 0).
    """
    n = len(gain)
    uniform = np.full(n, shift(weights))
    if n < 2:
        return uniform
    scale = 1.0 + float(np.abs(weights).max())
    tok = tokens.astype(np.float64)

    def relaxed(
        d: np.ndarray, iterations: int, x: np.ndarray | None = None, top: float | None = None
    ) -> Relaxation:
        """convex_bound at d; ``top``: λ_max(W + D) when the caller has it already."""
        q = weights + np.diag(d)
        lipschitz = max(float(np.linalg.eigvalsh(q)[-1]) if top is None else top, 1e-3)
        return convex_bound(
            gain + d / 2, q, tok, budget, k, x, lipschitz, -math.inf, iterations, patient=True
        )

    d = uniform + 0.05 * scale  # strictly inside: the barrier needs M ≻ 0
    x: np.ndarray | None = None
    mu = 0.1 * scale / n
    for _ in range(12):  # barrier levels, μ halved after each
        for _ in range(4):  # Newton steps per level
            values, vectors = np.linalg.eigh(weights + np.diag(d))
            inverse = (vectors / values) @ vectors.T
            x = relaxed(d, 40, x, float(values[-1])).x
            slope = 0.5 * (x - x * x) - mu * np.diag(inverse)
            hessian = mu * (inverse * inverse)  # ≻ 0: a Hadamard product of two M⁻¹ ≻ 0
            hessian[np.diag_indices_from(hessian)] += 1e-12 * float(hessian.max())
            move = -np.linalg.solve(hessian, slope)
            t = 1.0
            while t > 1e-12 and not is_psd(weights + np.diag(d + t * move)):
                t *= 0.5
            d = np.maximum(d + 0.9 * t * move, 0.0)  # raising a diagonal keeps M ≻ 0
        mu *= 0.5
    margin = 1e-9 * scale
    d = d + max(0.0, margin - float(np.linalg.eigvalsh(weights + np.diag(d))[0]))
    if not is_psd(weights + np.diag(d)):
        return uniform
    # Both bounds again, close to their maxima, for the choice.
    return d if relaxed(d, 300, x).bound < relaxed(uniform, 300).bound else uniform
