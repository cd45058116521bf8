"""Property-based tests (hypothesis) of the invariants every strategy must keep."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from reference import brute_force_optimum, mean_pairwise, naive_objective

from adagres import baselines as b
from adagres import mean_pairwise_similarity, select

finite = st.floats(-1.0, 1.0, allow_nan=False, width=64)


@st.composite
def pools(draw, max_n=8):
    n = draw(st.integers(1, max_n))
    d = draw(st.integers(2, 5))
    C = draw(arrays(np.float64, (n, d), elements=finite))
    q = draw(arrays(np.float64, (d,), elements=finite))
    # Directions only: rows too short to normalise are not pools anyone retrieves.
    C = C[np.linalg.norm(C, axis=1) > 1e-3]
    if len(C) == 0 or np.linalg.norm(q) < 1e-3:
        return None
    tokens = draw(arrays(np.int64, (len(C),), elements=st.integers(0, 60)))
    budget = draw(st.integers(0, 200))
    lam = draw(st.sampled_from([0.0, 0.1, 0.5, 1.0, 2.5, "adaptive"]))
    return q, C, tokens, budget, lam


SETTINGS = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.filter_too_much]
)


@SETTINGS
@given(pools(), st.sampled_from(["skip", "stop", "ratio", "fill"]))
def test_budget_holds_and_fast_equals_traced(pool, policy):
    assume(pool is not None)
    q, C, tokens, budget, lam = pool
    traced = select(q, C, tokens, budget, lam=lam, policy=policy)
    fast = select(q, C, tokens, budget, lam=lam, policy=policy, trace=False)
    assert traced.indices == fast.indices
    assert traced.tokens_used <= budget
    assert len(set(traced.indices)) == len(traced.indices)
    gains = sum(s.gain for s in traced.steps if s.accepted and s.gain is not None)
    assert gains == pytest.approx(traced.objective, abs=1e-9)
    assert traced.objective == pytest.approx(
        naive_objective(q, C, traced.indices, traced.lam), abs=1e-9
    )
    assert len(traced.verdicts) == len(C)


@SETTINGS
@given(pools())
def test_every_strategy_respects_the_budget(pool):
    assume(pool is not None)
    q, C, tokens, budget, lam = pool
    texts = ["w" * (5 + int(t)) for t in tokens]
    for name in b.STRATEGIES:
        s = b.run(name, q, C, tokens, budget, texts=texts, lam=lam)
        assert s.tokens_used <= budget, name
        assert s.tokens_used == int(np.asarray(tokens)[list(s.indices)].sum())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(pools(max_n=7))
def test_exact_is_the_brute_force_optimum_and_bounds_greedy(pool):
    assume(pool is not None)
    q, C, tokens, budget, lam = pool
    exact = b.exact(q, C, tokens, budget, lam=lam)
    best, _ = brute_force_optimum(q, C, list(tokens), budget, exact.lam)
    assert exact.objective == pytest.approx(best, abs=1e-7)
    for policy in ("skip", "stop", "ratio", "fill"):
        greedy = select(q, C, tokens, budget, lam=exact.lam, policy=policy)
        assert greedy.objective <= exact.objective + 1e-9


@settings(max_examples=80, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(2, 30), st.integers(1, 6)), elements=finite))
def test_mean_similarity_identity(C):
    C = C[np.linalg.norm(C, axis=1) > 1e-3]
    assume(len(C) >= 2)
    unit = C / np.linalg.norm(C, axis=1, keepdims=True)
    assert mean_pairwise_similarity(unit) == pytest.approx(mean_pairwise(C), abs=1e-10)
