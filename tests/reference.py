"""Slow, literal implementations of SPEC.md used as references by the tests.

Written for clarity, not speed: plain Python loops over chunks, every gain recomputed from
scratch at every step, every subset enumerated for the optimum.
"""

from __future__ import annotations

import base64
import itertools
import math
from typing import Any

import numpy as np

from adagres.pools.pool import Pool


def unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def pair_weight(ci: np.ndarray, cj: np.ndarray, tau: float | None) -> float:
    s = float(ci @ cj)
    return s if tau is None else max(0.0, s - tau)


def naive_objective(q, C, S, lam, alpha=1.0, tau=None) -> float:
    q, C = unit(q), unit(C)
    rel = sum(float(q @ C[i]) for i in S)
    red = sum(pair_weight(C[i], C[j], tau) for i, j in itertools.combinations(S, 2))
    return alpha * rel - lam * red


def naive_select(q, C, tokens, budget, lam, alpha=1.0, policy="skip", tau=None):
    """SPEC.md's greedy, step by step. Returns (picks, stop_reason)."""
    q, C = unit(q), unit(C)
    n = len(C)
    r = [float(q @ C[i]) for i in range(n)]
    S: list[int] = []
    used = 0

    def gain(i: int) -> float:
        return alpha * r[i] - lam * sum(pair_weight(C[i], C[j], tau) for j in S)

    while True:
        remaining = [i for i in range(n) if i not in S]
        left = budget - used
        if policy == "stop":
            if not remaining:
                return S, "pool_exhausted"
            best = max(remaining, key=lambda i: (gain(i), -i))
            if gain(best) <= 0:
                return S, "no_positive_gain"
            if tokens[best] > left:
                return S, "budget_exhausted"
        else:
            eligible = [i for i in remaining if tokens[i] <= left]
            if not eligible:
                return S, "pool_exhausted" if not remaining else "budget_exhausted"
            if policy == "ratio":
                best = max(eligible, key=lambda i: (gain(i) / max(tokens[i], 1), -i))
                score = gain(best) / max(tokens[best], 1)
            else:
                best = max(eligible, key=lambda i: (gain(i), -i))
                score = gain(best)
            if policy != "fill" and score <= 0:
                return S, "no_positive_gain"
        S.append(best)
        used += tokens[best]


def brute_force_optimum(q, C, tokens, budget, lam, alpha=1.0, tau=None):
    """The best F over every subset within the budget (the empty set included)."""
    n = len(C)
    best_value, best_set = 0.0, tuple[int, ...]()
    for size in range(1, n + 1):
        for subset in itertools.combinations(range(n), size):
            if sum(tokens[i] for i in subset) > budget:
                continue
            value = naive_objective(q, C, subset, lam, alpha, tau)
            if value > best_value + 1e-12:
                best_value, best_set = value, subset
    return best_value, best_set


def mean_pairwise(C) -> float:
    C = unit(C)
    n = len(C)
    values = [float(C[i] @ C[j]) for i in range(n) for j in range(n) if i != j]
    return sum(values) / len(values) if values else math.nan


def random_pool(rng: np.random.Generator, n: int, d: int = 8, low: int = 10, high: int = 80):
    q = rng.normal(size=d)
    # A shared direction makes chunks correlate with the query and each other, as real pools do.
    base = rng.normal(size=d)
    C = rng.normal(size=(n, d)) + 1.5 * base
    q = q + 1.5 * base
    tokens = rng.integers(low, high, size=n)
    return q, C, tokens


def sdp_case(seed: int):
    """30 open chunks around a shared direction (signed cosines, or with a floor 0.3 for odd
    seeds): gains g, pair weights W (zero diagonal), tokens, budget 400."""
    rng = np.random.default_rng(seed)
    vectors = unit(rng.normal(size=(30, 8)) + 1.5 * rng.normal(size=8))
    cos = vectors @ vectors.T
    w = 0.3 * (np.maximum(cos - 0.3, 0.0) if seed % 2 else cos)
    np.fill_diagonal(w, 0.0)
    return rng.uniform(0.2, 0.6, 30), w, rng.integers(20, 80, 30), 400


def typed_array(value: dict[str, Any]) -> np.ndarray:
    """A plotly typed array ({"dtype", "bdata"[, "shape"]}, base64: what a numpy input
    becomes in a figure's dict and JSON) as a numpy array."""
    flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    shape = value.get("shape")
    if shape:
        flat = flat.reshape([int(x) for x in str(shape).split(",")])
    return flat


def select_inputs(pool: Pool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A pool's query vector, chunk vectors and token counts, the first three arguments of
    ``select`` and ``baselines.run`` (every pool these tests select from has all three)."""
    q, C, tokens = pool.query_embedding, pool.embeddings, pool.token_counts
    assert q is not None and C is not None and tokens is not None, pool.query
    return q, C, tokens
