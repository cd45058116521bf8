"""The fast path (trace=False) and the traced path make the same decisions, bit for bit.

Seeded pools with ties (duplicated rows), chunks that stop fitting, float32 and float64
rows, every policy, the redundancy floor on and off, and every strategy of
``adagres.baselines``. Each step's winner, runner-up, gain, score and tokens must be equal
(not close), and so must the stop's per-candidate record, which both paths carry. The
shortlist engine (large pools) is checked against the one-product-per-pick engine on the
same pools with the size threshold lowered.
"""

from __future__ import annotations

import numpy as np
import pytest

import adagres
from adagres import baselines as b
from adagres.core import loop as loop_module
from adagres.core.shortlist import SHORTLIST_MIN_CHUNKS

POLICIES = ("skip", "stop", "ratio", "fill")
FIELDS = (
    "winner",
    "accepted",
    "winner_tokens",
    "relevance_term",
    "redundancy_term",
    "gain",
    "score",
    "runner_up",
    "runner_up_gain",
    "runner_up_score",
    "tokens_used",
    "tokens_left",
)


def seeded_pool(seed: int, dtype: type) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """A pool around a few topics, some rows duplicated (exact ties), varied lengths."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 90))
    d = int(rng.choice([3, 16, 48]))
    topics = rng.normal(size=(4, d))
    C = topics[rng.integers(0, 4, n)] + 0.7 * rng.normal(size=(n, d))
    for i in range(2, n, 7):  # exact duplicates: ties that must go to the lower position
        C[i] = C[i - 1]
    q = topics[0] + 0.5 * rng.normal(size=d)
    tokens = rng.integers(0, 120, n)
    budget = int(rng.integers(0, 1500))
    return q.astype(dtype), C.astype(dtype), tokens, budget


def assert_same_run(fast: adagres.Selection, traced: adagres.Selection) -> None:
    assert fast.indices == traced.indices
    assert fast.stop_reason == traced.stop_reason
    assert fast.objective == traced.objective
    assert len(fast.steps) == len(traced.steps)
    for a, t in zip(fast.steps, traced.steps, strict=True):
        assert [getattr(a, f) for f in FIELDS] == [getattr(t, f) for f in FIELDS]
    last_fast, last_traced = fast.steps[-1].candidates, traced.steps[-1].candidates
    assert last_fast is not None and last_fast == last_traced  # NaN-aware array equality
    assert all(s.candidates is None for s in fast.steps[:-1])
    assert traced.pick_similarity is not None and fast.pick_similarity is None


def assert_record_agrees(traced: adagres.Selection) -> None:
    """Each step's candidate arrays hold the numbers the step itself reports."""
    for step in traced.steps:
        c = step.candidates
        assert c is not None
        if step.winner is None:
            continue
        assert c.gain[step.winner] == step.gain and c.score[step.winner] == step.score
        assert c.in_play[step.winner]
        if step.runner_up is not None:
            assert c.gain[step.runner_up] == step.runner_up_gain
        # nobody that competed scored above the winner
        competing = c.eligible if traced.policy != "stop" else c.in_play
        assert np.nanmax(np.where(competing, c.score, -np.inf)) == step.score


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("floor", [None, 0.2, "pool"])
def test_every_policy_fast_equals_traced(policy, floor, dtype):
    for seed in range(12):
        q, C, tokens, budget = seeded_pool(seed, dtype)
        for lam in ("adaptive", 0.0, 0.3, 1.5):
            settings = adagres.Settings(policy=policy, lam=lam, redundancy_floor=floor)
            fast = adagres.select(q, C, tokens, budget, settings=settings, trace=False)
            traced = adagres.select(q, C, tokens, budget, settings=settings, trace=True)
            assert_same_run(fast, traced)
            assert_record_agrees(traced)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("strategy", [s for s in b.STRATEGIES if s != "adagres"])
def test_every_baseline_fast_equals_traced(strategy, dtype):
    for seed in range(10):
        q, C, tokens, budget = seeded_pool(100 + seed, dtype)
        if strategy == "exact":
            C, tokens, q = C[:12], tokens[:12], q
        texts = [f"chunk {i} " + "x" * int(t) for i, t in enumerate(tokens)]
        for settings in (adagres.Settings(), adagres.Settings(lam=0.4, redundancy_floor=0.1)):
            runs = [
                b.run(strategy, q, C, tokens, budget, settings=settings, texts=texts, trace=t)
                for t in (False, True)
            ]
            assert_same_run(*runs)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("policy", POLICIES)
def test_shortlist_engine_picks_what_one_product_per_pick_picks(policy, dtype, monkeypatch):
    """Large pools are scored from a proven shortlist; on the same pools, forced to that
    engine, the picks and stop equal the small-pool engine's, and gains agree to rounding."""
    rng = np.random.default_rng(7)
    for _ in range(6):
        n, d = int(rng.integers(150, 700)), int(rng.choice([8, 64]))
        q, C = rng.normal(size=d), rng.normal(size=(n, d)) + 0.8 * rng.normal(size=d)
        C[5] = C[4]  # a tie
        q, C = q.astype(dtype), C.astype(dtype)
        tokens = rng.integers(1, 80, n)
        budget = int(rng.integers(100, 3000))
        settings = adagres.Settings(policy=policy, lam=float(rng.choice([0.05, 0.3, 1.0])))
        plain = adagres.select(q, C, tokens, budget, settings=settings, trace=True)
        monkeypatch.setattr(loop_module, "SHORTLIST_MIN_CHUNKS", 0)
        fast = adagres.select(q, C, tokens, budget, settings=settings, trace=False)
        traced = adagres.select(q, C, tokens, budget, settings=settings, trace=True)
        monkeypatch.setattr(loop_module, "SHORTLIST_MIN_CHUNKS", SHORTLIST_MIN_CHUNKS)
        assert_same_run(fast, traced)
        assert_record_agrees(traced)
        assert traced.indices == plain.indices and traced.stop_reason == plain.stop_reason
        tol = 1e-4 if dtype is np.float32 else 1e-10
        assert [s.gain for s in traced.steps] == pytest.approx(
            [s.gain for s in plain.steps], abs=tol
        )
        if len(plain.steps) > 3:
            mine, theirs = traced.steps[3].candidates, plain.steps[3].candidates
            assert mine is not None and theirs is not None  # both runs are traced
            both = np.isfinite(theirs.gain)
            np.testing.assert_allclose(mine.gain[both], theirs.gain[both], atol=tol)
