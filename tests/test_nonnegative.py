"""The pair multipliers of the doubly non-negative bound: valid against brute force, as low
as a conic solver's value of the same relaxation, and what the search proves with them."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from reference import random_pool, sdp_case

from adagres import prepare
from adagres.core.loop import Terms, objective_value
from adagres.optimum import bounds, exact, problem
from adagres.optimum.nonnegative import pair_multipliers


def relaxed_bound(g, w, tokens, budget, pairs):
    """The concave relaxation's bound with W − N and the diagonal fitted to it."""
    k = bounds.count_fit(tokens, budget)
    effective = w - pairs
    d = bounds.diagonal(effective, g, tokens, budget, k)
    q = effective + np.diag(d)
    lipschitz = max(float(np.linalg.eigvalsh(q)[-1]), 1e-3)
    return bounds.convex_bound(
        g + d / 2,
        q,
        np.asarray(tokens, float),
        budget,
        k,
        None,
        lipschitz,
        -np.inf,
        5000,
        patient=True,
    ).bound


def best_subset(g, w, tokens, budget):
    n, best = len(g), 0.0
    for m in range(1, n + 1):
        for subset in itertools.combinations(range(n), m):
            s = list(subset)
            if tokens[s].sum() <= budget:
                best = max(best, g[s].sum() - 0.5 * w[np.ix_(s, s)].sum())
    return best


@pytest.mark.parametrize("seed", range(12))
def test_pairs_are_symmetric_non_negative_with_a_zero_diagonal(seed):
    g, w, tokens, budget = sdp_case(seed)
    pairs = pair_multipliers(g, w, tokens, budget, iterations=50 + 10 * seed)
    assert (pairs >= 0).all()
    np.testing.assert_array_equal(pairs, pairs.T)
    assert (np.diag(pairs) == 0).all()


@pytest.mark.parametrize("seed", range(30))
def test_bound_with_pairs_is_never_below_the_brute_force_optimum(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 11))
    _, C, tokens = random_pool(rng, n=n, d=4, low=5, high=60)
    cos = C @ C.T
    tau = [None, 0.2][seed % 2]
    w = float(rng.choice([0.3, 1.0, 3.0])) * (cos if tau is None else np.maximum(cos - tau, 0))
    np.fill_diagonal(w, 0.0)
    g = rng.uniform(-0.2, 1.0, n)
    budget = int(rng.integers(int(tokens.min()), int(tokens.sum()) + 1))
    pairs = pair_multipliers(g, w, tokens, budget, iterations=[5, 50, 300][seed % 3])
    # Valid for any N ≥ 0, however few rounds found it (1e-9: the solver's tolerance).
    assert relaxed_bound(g, w, tokens, budget, pairs) >= best_subset(g, w, tokens, budget) - 1e-9


#: The doubly non-negative bound of each sdp_case: the Shor relaxation of
#: tests/test_exact.py's SHOR_BOUNDS with X ≥ 0 added, from CVXPY 1.9 with Clarabel and with
#: SCS (outside the pins), which agreed to 1e-7. With a floor (seed 1) W ≥ 0 and X ≥ 0 adds
#: nothing: the same value as the Shor bound.
DNN_BOUNDS = {0: 1.2351792, 1: 1.5472025, 2: 1.1900834}
SHOR_BOUNDS = {0: 1.2393084, 1: 1.5472025, 2: 1.2079727}


@pytest.mark.parametrize("seed", sorted(DNN_BOUNDS))
def test_pairs_reach_the_doubly_non_negative_bound(seed):
    g, w, tokens, budget = sdp_case(seed)
    ours = relaxed_bound(g, w, tokens, budget, pair_multipliers(g, w, tokens, budget))
    # Within 0.1 % of the conic solver's value and never below it (weak duality).
    assert DNN_BOUNDS[seed] - 1e-6 <= ours <= DNN_BOUNDS[seed] * (1 + 1e-3)
    if seed != 1:  # below the semidefinite bound, which N = 0 gives
        assert ours < SHOR_BOUNDS[seed] - 1e-3


def test_pairs_tighten_the_root_of_a_signed_cosine_pool_and_the_search_proves_it():
    """60 chunks around one direction with signed cosines (λ = 0.6): the semidefinite root
    bound is 11.9 % above the optimum, the doubly non-negative one 4.5 %."""
    rng = np.random.default_rng(1)
    C = rng.normal(size=(60, 16)) + 0.8 * rng.normal(size=16)
    pool = prepare(C.mean(axis=0) + rng.normal(size=16), C, rng.integers(40, 160, 60))
    terms = Terms(0.6, 1.0, None)
    result = exact.solve(pool, 900, terms, max_nodes=3000, max_sets=0)
    assert result.proven and result.nodes < 3000
    assert pool.tokens[list(result.indices)].sum() <= 900
    assert result.objective == pytest.approx(objective_value(pool, list(result.indices), terms))
    p = problem.reduce(pool, 900, terms)
    args = (p.relevance_term, p.weights, p.tokens, p.budget)
    shor = relaxed_bound(*args, np.zeros_like(p.weights))
    dnn = relaxed_bound(*args, pair_multipliers(*args))
    assert result.objective - 1e-9 <= dnn <= 1.05 * result.objective
    assert shor >= 1.10 * result.objective
