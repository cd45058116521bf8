"""Adaptive λ (SPEC.md, Eq. 7): hand-computed values, fallbacks, the O(N·d) ρ̄."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference import mean_pairwise, random_pool

from adagres import FALLBACK_LAM, calibrate, mean_pairwise_similarity, select
from adagres.core.guarantee import guarantee, largest_set_size

Q = np.array([1.0, 0.0])
# r = (1, 0.6, 0.8); pairwise cosines 0.6, 0.8, 0.96 -> ρ̄ = 2.36 / 3.
C = np.array([[1.0, 0.0], [0.6, 0.8], [0.8, 0.6]])
RHO = 2.36 / 3


def test_paper_formula_by_hand():
    c = calibrate(Q, C, [100, 100, 100], 500)
    assert c.mean_tokens == 100 and c.expected_k == 5.0
    assert c.mean_relevance == pytest.approx(0.8)
    assert c.mean_similarity == pytest.approx(RHO)
    assert c.lam_star == pytest.approx(0.8 / (2.0 * RHO))  # (k̄ - 1) / 2 = 2
    assert c.lam == c.lam_star and c.fallback is None


def test_derived_formula_is_half_the_paper_value():
    c = calibrate(Q, C, [100, 100, 100], 500, formula="derived")
    assert c.lam_star == pytest.approx(0.8 / (4.0 * RHO))  # k̄ - 1 = 4
    assert "(k̄ − 1)·ρ̄" in c.describe()


def test_expected_k_is_not_rounded():
    c = calibrate(Q, C, [100, 100, 150], 450)
    assert c.mean_tokens == pytest.approx(350 / 3)
    assert c.expected_k == pytest.approx(450 / (350 / 3))
    assert c.lam_star == pytest.approx(0.8 / ((c.expected_k - 1) / 2 * RHO))


def test_scale_offset_floor_and_clip():
    base = calibrate(Q, C, [100] * 3, 500).lam_star
    assert base is not None
    assert calibrate(Q, C, [100] * 3, 500, scale=2.0, offset=0.1).lam == pytest.approx(
        2 * base + 0.1
    )
    assert calibrate(Q, C, [100] * 3, 500, offset=-10.0).lam == 0.0
    clipped = calibrate(Q, C, [100] * 3, 500, lam_max=0.1)
    assert clipped.lam == 0.1 and clipped.clipped


@pytest.mark.parametrize(
    ("chunks", "tokens", "budget", "case"),
    [
        (C[:1], [100], 500, "pool_too_small"),
        (C, [100, 100, 100], 100, "expected_k_at_most_one"),  # k̄ = 1 exactly
        (C, [100, 100, 100], 50, "expected_k_at_most_one"),
        (np.array([[1.0, 1.0], [1.0, -1.0]]), [10, 10], 100, "mean_similarity_not_positive"),
        (np.array([[1.0, 0.2], [-1.0, 0.2]]), [10, 10], 100, "mean_similarity_not_positive"),
    ],
)
def test_fallback_cases(chunks, tokens, budget, case):
    c = calibrate(Q, chunks, tokens, budget, scale=5.0)
    assert c.fallback == case
    assert c.lam == FALLBACK_LAM and c.lam_star is None
    assert case.replace("_", " ") in c.describe()
    assert select(Q, chunks, tokens, budget).lam == FALLBACK_LAM


def test_negative_mean_relevance_floors_lambda_at_zero():
    c = calibrate(-Q, C, [100] * 3, 500)
    assert c.lam_star is not None and c.lam_star < 0 and c.lam == 0.0


def test_mean_similarity_equals_the_pairwise_mean():
    rng = np.random.default_rng(0)
    for n in (2, 3, 17, 60):
        _, chunks, _ = random_pool(rng, n=n, d=12)
        unit = chunks / np.linalg.norm(chunks, axis=1, keepdims=True)
        assert mean_pairwise_similarity(unit) == pytest.approx(mean_pairwise(chunks), abs=1e-12)
        f32 = unit.astype(np.float32)
        assert mean_pairwise_similarity(f32) == pytest.approx(mean_pairwise(chunks), abs=1e-6)


def test_selection_carries_the_calibration_even_with_manual_lambda():
    s = select(Q, C, [100] * 3, 500, lam=0.3)
    assert s.lam == 0.3
    assert s.calibration is not None
    assert s.calibration.lam == pytest.approx(0.8 / (2.0 * RHO))


def test_guarantee_quantities_by_hand():
    g = guarantee(C, [10, 20, 30], 35, 0.5)
    assert g.delta == pytest.approx(0.96) and g.k_max == 2
    assert g.epsilon == pytest.approx(0.5 * 2 * 0.96)
    assert g.bound(1.0) == pytest.approx((1 - np.exp(-1)) - 2 * g.epsilon / math.e)
    assert largest_set_size([5, 5, 5], 4) == 0
    assert largest_set_size([5, 5, 5], 15) == 3


def test_top_n_calibration_uses_the_most_relevant_chunks():
    rng = np.random.default_rng(3)
    q, chunks, tokens = random_pool(rng, n=30, d=8)
    unit = chunks / np.linalg.norm(chunks, axis=1, keepdims=True)
    relevance = unit @ (q / np.linalg.norm(q))
    top = np.argsort(-relevance, kind="stable")[:10]
    whole = calibrate(q, chunks, tokens, 400)
    sub = calibrate(q, chunks, tokens, 400, top_n=10)
    direct = calibrate(q, chunks[top], tokens[top], 400)
    assert sub.n_chunks == 10 and sub.top_n == 10 and whole.top_n is None
    assert sub.mean_relevance == pytest.approx(direct.mean_relevance)
    assert sub.mean_similarity == pytest.approx(direct.mean_similarity)
    assert sub.mean_tokens == pytest.approx(direct.mean_tokens)
    assert sub.lam == pytest.approx(direct.lam)
    assert sub.mean_relevance > whole.mean_relevance  # the top-N are the more relevant
    assert calibrate(q, chunks, tokens, 400, top_n=500).lam == whole.lam  # N >= pool: all
    s = select(q, chunks, tokens, 400, calibration_top_n=10)
    assert s.calibration is not None
    assert s.lam == pytest.approx(direct.lam) and s.calibration.top_n == 10
    from adagres import InputError

    with pytest.raises(InputError, match="top_n: expected a whole number >= 2"):
        calibrate(q, chunks, tokens, 400, top_n=1)
