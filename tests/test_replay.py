"""The record of a given pick order (:func:`adagres.core.replay.replay`).

The replay builds every step's arrays at the end, from the picks' cosine rows; these tests
hold it to a replay written one step at a time (the same float operations, so the bits
must agree), to F itself (each accepted step's gain is F's marginal gain, within 1e-9 for
float64 rows),
and to what a fast replay keeps. They also check the orthogonal strategy's pool is made
once per prepared pool.
"""

from __future__ import annotations

import numpy as np
import pytest
from reference import naive_objective

from adagres.core.engine import accumulate_rows
from adagres.core.loop import Terms
from adagres.core.prepared import prepare
from adagres.core.records import StopReason
from adagres.core.replay import replay
from adagres.core.variants import orthogonal_pool

FLOORS = (None, 0.0, 0.3, -0.2)


def case(seed: int):
    """A seeded pool with duplicated rows, an order of some of its chunks, a budget, terms."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1, 50)), int(rng.integers(2, 24))
    dtype = np.float32 if seed % 2 else np.float64
    C = rng.normal(size=(n, d))
    C[1::5] = C[0]  # exact duplicates
    q = rng.normal(size=d)
    tokens = rng.integers(0, 60, n)
    order = [int(i) for i in rng.permutation(n)[: int(rng.integers(0, n + 1))]]
    terms = Terms(float(rng.uniform(0, 2)), float(rng.uniform(0.5, 2)), FLOORS[seed % 4])
    return q.astype(dtype), C.astype(dtype), tokens, order, int(rng.integers(0, 1500)), terms


def step_by_step(pool, budget, order, terms):
    """Each step's (redundancy term, gain, eligible, in play) as a loop over the picks."""
    relevance_term = terms.alpha * pool.relevance
    redundancy = np.zeros(pool.n_chunks)
    in_play = np.ones(pool.n_chunks, dtype=bool)
    used, out = 0, []
    for chunk in [*order, None]:
        gain = relevance_term - terms.lam * redundancy
        eligible = in_play & (pool.tokens <= budget - used)
        out.append((terms.lam * redundancy, gain, eligible, in_play.copy()))
        if chunk is None:
            return out
        used += int(pool.tokens[chunk])
        in_play[chunk] = False
        row = (pool.chunks @ pool.chunks[chunk]).astype(np.float64)
        redundancy += row if terms.tau is None else np.maximum(row - terms.tau, 0.0)


@pytest.mark.parametrize("seed", range(40))
def test_every_step_holds_the_bits_of_a_step_by_step_replay(seed):
    q, C, tokens, order, budget, terms = case(seed)
    pool = prepare(q, C, tokens)
    run = replay(pool, budget, order, terms, True, StopReason.OPTIMAL)
    expected = step_by_step(pool, budget, order, terms)
    assert run.picks == order and len(run.steps) == len(order) + 1
    for step, (term, gain, eligible, in_play) in zip(run.steps, expected, strict=True):
        c = step.candidates
        assert c is not None  # a traced replay records them
        assert np.array_equal(c.in_play, in_play) and np.array_equal(c.eligible, eligible)
        assert np.array_equal(c.gain, np.where(in_play, gain, np.nan), equal_nan=True)
        assert np.array_equal(c.redundancy_term, np.where(in_play, term, np.nan), equal_nan=True)
        assert np.array_equal(c.score, c.gain, equal_nan=True) and c.gain.dtype == np.float64
        if step.winner is not None:
            assert step.gain == gain[step.winner] == step.score
            assert step.relevance_term is not None and step.gain is not None
            assert step.relevance_term - step.gain == step.redundancy_term
    last = expected[-1]
    # next best: the eligible chunk with the largest gain (a chunk that does not fit is no
    # candidate of the next step)
    left = np.where(last[2], last[1], -np.inf)
    assert run.steps[-1].winner == (int(np.argmax(left)) if last[2].any() else None)
    assert not run.steps[-1].accepted
    spent = int(pool.tokens[order].sum())
    assert [s.tokens_used for s in run.steps[:-1]] == np.cumsum(pool.tokens[order]).tolist()
    assert run.steps[-1].tokens_used == spent and run.steps[-1].tokens_left == budget - spent
    rows = run.pick_similarity
    assert rows is not None
    assert rows.shape == (len(order), pool.n_chunks) and not rows.flags.writeable


@pytest.mark.parametrize("seed", range(40, 60))
def test_each_accepted_gain_is_the_marginal_gain_of_f(seed):
    q, C, tokens, order, budget, terms = case(seed)
    run = replay(prepare(q, C, tokens), budget, order, terms, True, StopReason.OPTIMAL)
    # float32 rows: each cosine is off by ~1e-7, summed over up to 50 picks at λ ≤ 2
    tolerance = 1e-9 if C.dtype == np.float64 else 1e-5
    for t, step in enumerate(run.steps[:-1]):
        before = naive_objective(q, C, order[:t], terms.lam, terms.alpha, terms.tau)
        after = naive_objective(q, C, order[: t + 1], terms.lam, terms.alpha, terms.tau)
        assert step.gain == pytest.approx(after - before, abs=tolerance)


@pytest.mark.parametrize("seed", range(60, 80))
def test_a_fast_replay_keeps_the_same_steps_and_only_the_last_record(seed):
    q, C, tokens, order, budget, terms = case(seed)
    pool = prepare(q, C, tokens)
    traced = replay(pool, budget, order, terms, True, StopReason.BUDGET_EXHAUSTED)
    fast = replay(pool, budget, order, terms, False, StopReason.BUDGET_EXHAUSTED)
    assert fast.picks == traced.picks and fast.reason == traced.reason
    for a, b in zip(fast.steps, traced.steps, strict=True):
        assert a._replace(candidates=None) == b._replace(candidates=None)
    assert all(s.candidates is None for s in fast.steps[:-1])
    assert fast.steps[-1].candidates == traced.steps[-1].candidates
    assert fast.pick_similarity is None


def test_the_orthogonal_pool_is_made_once_per_prepared_pool():
    q, C, tokens, *_ = case(3)
    pool, again = prepare(q, C, tokens), prepare(q, C, tokens)
    kept = orthogonal_pool(pool)
    assert orthogonal_pool(pool) is kept
    other = orthogonal_pool(again)
    assert other is not kept and np.array_equal(other.chunks, kept.chunks)
    assert not kept.chunks.flags.writeable


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", [np.add, np.subtract])
@pytest.mark.parametrize("shape", [(0, 7), (1, 7), (2, 1), (21, 200), (5, 3001)])
def test_accumulate_rows_holds_the_bits_of_the_ufuncs_accumulate(op, dtype, shape):
    """The traced records' running sums are built a row at a time instead of by
    ``ufunc.accumulate(axis=0)``: the same operations in the same order, so the same bits."""
    rng = np.random.default_rng(shape[0] * 7919 + shape[1])
    rows = (rng.normal(size=shape) * rng.uniform(1e-3, 1e3, size=shape)).astype(dtype)
    expected = op.accumulate(rows, axis=0)
    got = accumulate_rows(op, rows.copy())
    assert got.dtype == dtype
    assert got.tobytes() == expected.tobytes()
