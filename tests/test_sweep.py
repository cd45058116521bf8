"""λ and budget sweeps: checked against brute force and against single runs."""

from __future__ import annotations

import itertools
from typing import cast

import numpy as np
import pytest

import adagres
from adagres.core.sweep import BUDGET_COLUMNS, budget_sweep, default_lams, lam_sweep
from adagres.errors import InputError


def make_pool(n: int = 30, d: int = 12, seed: int = 3):
    """Clustered embeddings around a shared direction (positive cosines, as real models give),
    with near-duplicates so redundancy matters."""
    rng = np.random.default_rng(seed)
    common = rng.normal(size=d)
    centers = common + rng.normal(size=(4, d))
    chunks = centers[rng.integers(0, 4, n)] + 0.4 * rng.normal(size=(n, d))
    chunks[1] = chunks[0] + 0.01 * rng.normal(size=d)  # a near-twin of chunk 0
    query = centers[0] + 0.3 * rng.normal(size=d)
    tokens = rng.integers(20, 120, n)
    unit = chunks / np.linalg.norm(chunks, axis=1, keepdims=True)
    return query / np.linalg.norm(query), unit, tokens


def relevance_order_within_budget(relevance, tokens, budget):
    """Brute force of λ = 0 with policy skip: scan by relevance, take what fits, stop at r <= 0."""
    picks, used = [], 0
    for i in sorted(range(len(relevance)), key=lambda i: (-relevance[i], i)):
        if relevance[i] <= 0:
            break
        if used + tokens[i] <= budget:
            picks.append(i)
            used += tokens[i]
    return tuple(picks)


def test_lam_zero_selects_in_relevance_order():
    q, C, tok = make_pool()
    sweep = lam_sweep(q, C, tok, 400)
    assert sweep.lams[0] == 0.0
    assert sweep.indices[0] == relevance_order_within_budget(C @ q, tok, 400)


def test_each_grid_point_matches_a_single_run_and_brute_force_sums():
    q, C, tok = make_pool()
    sweep = lam_sweep(q, C, tok, 400, [0.0, 0.3, 0.9, 2.0])
    for k, lam in enumerate(sweep.lams):
        s = adagres.select(q, C, tok, 400, lam=float(lam))
        assert sweep.indices[k] == s.indices
        assert sweep.objective[k] == pytest.approx(s.objective)
        picks = s.indices
        pairs = [float(C[i] @ C[j]) for i, j in itertools.combinations(picks, 2)]
        assert sweep.redundancy_sum[k] == pytest.approx(sum(pairs))
        assert sweep.redundancy_mean[k] == pytest.approx(np.mean(pairs) if pairs else 0.0)
        assert sweep.relevance_sum[k] == pytest.approx(sum(float(C[i] @ q) for i in picks))
        assert sweep.size[k] == len(picks)
        assert sweep.tokens[k] == sum(int(tok[i]) for i in picks) <= 400


def test_changes_are_where_the_set_differs_between_neighbours():
    """Changes come from independent single runs at each grid value, not the sweep itself."""
    q, C, tok = make_pool()
    sweep = lam_sweep(q, C, tok, 400)
    sets = [
        set(adagres.select(q, C, tok, 400, lam=float(lam), trace=False).indices)
        for lam in sweep.lams
    ]
    expected = tuple(float(sweep.lams[k]) for k in range(1, len(sets)) if sets[k] != sets[k - 1])
    assert sweep.changes == expected
    assert len(expected) >= 1  # the near-twin makes the set depend on λ
    # A change of pick order alone is not a change: λ = 0 and a tiny λ pick the same set.
    assert lam_sweep(q, C, tok, 400, [0.0, 1e-9]).changes == ()


def test_default_grid_contains_zero_adaptive_and_included_values():
    q, C, tok = make_pool()
    adaptive = adagres.calibrate(q, C, tok, 400).lam
    sweep = lam_sweep(q, C, tok, 400, include=[0.1234])
    assert sweep.adaptive_lam == adaptive  # one source: the same prepared numbers
    assert adaptive in sweep.lams.tolist() and 0.1234 in sweep.lams.tolist()
    assert sweep.lams[0] == 0.0
    assert sweep.lams[-1] == pytest.approx(3 * max(adaptive, 0.1), rel=1e-12)
    assert len(sweep.lams) >= 60 and np.all(np.diff(sweep.lams) > 0)
    assert default_lams(0.01, points=3).tolist() == pytest.approx([0.0, 0.01, 0.15, 0.3])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("scaled", [False, True])
def test_lambda_is_the_same_number_on_every_path(dtype, scaled):
    """calibrate, select, lam_sweep and budget_sweep give λ bit for bit, whether or not the
    caller normalised the vectors first (the prepared pool normalises idempotently)."""
    q, C, tok = make_pool()
    rng = np.random.default_rng(9)
    if scaled:  # unnormalised input: every path must normalise it the same way
        C = C * rng.uniform(0.5, 3.0, size=(C.shape[0], 1))
        q = q * 2.5
    C = C.astype(dtype)
    settings = adagres.Settings(scale=1.3, offset=0.02, formula="derived")
    lam = adagres.calibrate(q, C, tok, 400, settings=settings).lam
    prepared = adagres.prepare(q, C, tok)
    again = adagres.calibrate(prepared.query, prepared.chunks, tok, 400, settings=settings)
    assert again.lam == lam
    assert adagres.select(q, C, tok, 400, settings=settings).lam == lam
    assert lam_sweep(q, C, tok, 400, settings=settings).adaptive_lam == lam
    rows = budget_sweep(q, C, tok, [400], settings=settings).rows
    assert {row["lam"] for row in rows} == {lam}


def test_lam_sweep_progress_and_validation():
    q, C, tok = make_pool()
    seen: list[float] = []
    lam_sweep(q, C, tok, 400, [0.0, 0.5, 1.0], progress=seen.append)
    assert seen == pytest.approx([1 / 3, 2 / 3, 1.0])
    with pytest.raises(InputError, match="lams"):
        lam_sweep(q, C, tok, 400, [-1.0])
    with pytest.raises(InputError, match="policy"):
        lam_sweep(q, C, tok, 400, policy="greedy")


def test_budget_sweep_rows_respect_budget_and_report_f_at_the_adaptive_lam():
    q, C, tok = make_pool()
    budgets = [60, 200, 450, 900]
    strategies = ("adagres", "topk_same_k", "topk_budget", "mmr")
    seen: list[float] = []
    gold = [0, 2, 5]
    sweep = budget_sweep(q, C, tok, budgets, strategies=strategies, gold=gold, progress=seen.append)
    assert len(sweep.rows) == len(budgets) * len(strategies)
    assert seen[-1] == 1.0 and len(seen) == len(sweep.rows)
    for row in sweep.rows:
        assert set(row) == set(BUDGET_COLUMNS)
        assert row["error"] is None
        picks, budget = cast("list[int]", row["indices"]), cast(int, row["budget"])
        assert row["tokens_used"] == sum(int(tok[i]) for i in picks) <= budget
        lam = adagres.calibrate(q, C, tok, budget).lam
        assert row["lam"] == pytest.approx(lam)
        assert row["objective"] == pytest.approx(adagres.objective(q, C, picks, lam))
        assert row["recall"] == pytest.approx(len(set(gold) & set(picks)) / len(gold))
    budgets_in_order = [cast(int, r["budget"]) for r in sweep.rows]
    assert budgets_in_order == sorted(budgets_in_order)
    series = sweep.series("size")
    assert list(series) == list(strategies)
    assert all(len(v) == len(budgets) for v in series.values())


def test_budget_sweep_records_a_refusal_instead_of_failing():
    q, C, tok = make_pool(n=900)  # 900 chunks fit: more than the solver takes
    sweep = budget_sweep(q, C, tok, [5000], strategies=("adagres", "exact"))
    adagres_row, exact_row = sweep.rows
    assert adagres_row["error"] is None
    assert "exact: 900 chunks fit" in cast(str, exact_row["error"])
    assert exact_row["objective"] is None


def test_budget_sweep_validation():
    q, C, tok = make_pool()
    with pytest.raises(InputError, match="reference_code"):
        budget_sweep(q, C, tok, [100], strategies=("reference_code",))
    with pytest.raises(InputError, match="strategies"):
        budget_sweep(q, C, tok, [100], strategies=("bm25",))
    with pytest.raises(InputError, match="budget"):
        budget_sweep(q, C, tok, [-5])


def test_budget_sweep_applies_the_settings_to_every_strategy():
    """Every row's F is objective(...) of its picks at the λ and τ of the AdaGReS run."""
    rng = np.random.default_rng(5)
    C = rng.normal(size=(20, 6)) + 2.0
    q = C[:3].mean(axis=0)
    tokens = rng.integers(20, 60, size=20)
    settings = adagres.Settings(scale=1.5, offset=0.1, redundancy_floor=0.3, calibration_top_n=12)
    texts = ["x" * 30] * 20
    sweep = budget_sweep(
        q,
        C,
        tokens,
        [200],
        settings=settings,
        texts=texts,
        strategies=tuple(adagres.baselines.STRATEGIES),
    )
    reference = adagres.select(q, C, tokens, 200, settings=settings)
    for row in sweep.rows:
        assert row["error"] is None, row["error"]
        assert row["lam"] == reference.lam, row["strategy"]
        picks = cast("list[int]", row["indices"])
        expected = adagres.objective(q, C, picks, reference.lam, redundancy_floor=0.3)
        assert row["objective"] == pytest.approx(expected, rel=1e-9, abs=1e-12), row["strategy"]
    by_name = {row["strategy"]: row for row in sweep.rows}
    assert by_name["adagres"]["indices"] == list(reference.indices)
    assert by_name["topk_same_k"]["size"] == reference.size


@pytest.mark.parametrize("limit_rows", [None, 3])
def test_the_product_memo_changes_no_bit_and_stays_bounded(monkeypatch, limit_rows):
    """A sweep on one prepared pool reuses each chunk's cosine row (PreparedPool.similarities):
    every grid point is bit-identical to a run on a freshly prepared pool, a second sweep
    gives the same arrays, and the memo never holds more than its byte limit."""
    from adagres.core import prepared as prepared_module
    from adagres.core.selection import select_prepared
    from adagres.core.settings import Settings
    from adagres.core.sweep import lam_sweep_prepared

    rng = np.random.default_rng(5)
    q = rng.normal(size=16)
    C = (rng.normal(size=(300, 16)) + 0.8 * q).astype(np.float32)
    tokens = rng.integers(5, 30, 300)
    row_bytes = 300 * 4
    if limit_rows is not None:
        monkeypatch.setattr(prepared_module, "PRODUCT_MEMO_BYTES", limit_rows * row_bytes)
    settings = Settings(policy="fill")
    pool = adagres.prepare(q, C, tokens)
    first = lam_sweep_prepared(pool, 900, settings)
    again = lam_sweep_prepared(pool, 900, settings)
    assert len(pool.product_memo) == (limit_rows or len(pool.product_memo))
    assert len(pool.product_memo) * row_bytes <= prepared_module.PRODUCT_MEMO_BYTES
    assert sum(first.size) > 3 * len(pool.product_memo)  # rows were reused
    for name in ("objective", "relevance_sum", "redundancy_sum", "size", "tokens"):
        assert np.array_equal(getattr(first, name), getattr(again, name)), name
    assert first.indices == again.indices
    for lam, picks, objective in zip(first.lams, first.indices, first.objective, strict=True):
        fresh = adagres.prepare(q, C, tokens)  # an empty memo: every row computed anew
        alone = select_prepared(fresh, 900, settings.replace(lam=float(lam)), trace=False)
        # Tolerance 0 on purpose: a kept row is the very product computed the first time,
        # so the claim is bit-identity, not closeness.
        assert alone.indices == picks and alone.objective == objective
        traced = select_prepared(pool, 900, settings.replace(lam=float(lam)), trace=True)
        assert traced.indices == picks and traced.objective == objective
