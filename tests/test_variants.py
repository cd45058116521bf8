"""Variants beyond the paper: each checked against a direct computation of what it claims."""

from __future__ import annotations

import numpy as np
import pytest
from reference import random_pool, select_inputs

import adagres
from adagres import Settings, objective
from adagres.core.baselines import run_prepared
from adagres.core.strategies import STRATEGIES
from adagres.core.variants import coverage, near_duplicates, orthogonal, orthogonal_pool

VARIANTS = [name for name, entry in STRATEGIES.items() if entry.family == "variant"]
#: The settings the orthogonal strategy is meant for (those the evaluation runs it with).
FILL_DERIVED = Settings(policy="fill", formula="derived")


def twins_pool(seed: int = 0, n: int = 12, d: int = 16):
    """A pool where chunk 2k+1 is a near-copy of chunk 2k (cosine > 0.99)."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(n // 2, d)) + 1.0
    chunks = np.repeat(base, 2, axis=0) + 0.01 * rng.normal(size=(n, d))
    query = base[:3].mean(axis=0) + rng.normal(size=d)
    return adagres.prepare(query, chunks, np.full(n, 10))


def test_near_duplicates_never_takes_both_twins_while_others_fit():
    pool = twins_pool()
    s = near_duplicates(pool, 60, Settings())  # room for 6 of 12: one of each pair
    assert s.size == 6 and s.tokens_used == 60
    assert sorted(i // 2 for i in s.indices) == list(range(6))  # one chunk of every pair
    assert s.strategy == "near_duplicates" and s.params["floor"] == 0.85


def test_near_duplicates_is_topk_when_no_pair_is_near():
    rng = np.random.default_rng(3)
    C, q = rng.normal(size=(20, 64)), rng.normal(size=64)  # cosines near 0, none near 0.85
    pool = adagres.prepare(q, C, rng.integers(10, 80, 20))
    sims = pool.chunks @ pool.chunks.T
    np.fill_diagonal(sims, 0.0)
    assert sims.max() < 0.85
    topk = run_prepared("topk_budget", pool, 400, Settings())
    picked = near_duplicates(pool, 400, Settings())
    assert set(picked.indices) == set(topk.indices)


def test_orthogonal_pool_removes_the_query_direction_and_keeps_relevance():
    rng = np.random.default_rng(4)
    q, C, tokens = random_pool(rng, n=15, d=10)
    pool = adagres.prepare(q, C, tokens)
    residual = orthogonal_pool(pool)
    assert np.allclose(residual.chunks @ pool.query, 0.0, atol=1e-12)
    assert np.allclose(np.linalg.norm(residual.chunks, axis=1), 1.0, atol=1e-12)
    assert np.array_equal(residual.relevance, pool.relevance)


def brute_coverage_gain(pool, picks, i, weight):
    sims = np.maximum(pool.chunks @ pool.chunks.T, 0.0)
    w = np.maximum(pool.relevance, 0.0)
    w = w / w.sum()

    def value(subset):
        cover = sims[subset].max(axis=0) if subset else np.zeros(pool.n_chunks)
        return pool.relevance[subset].sum() + weight * (cover @ w)

    return value([*picks, i]) - value(list(picks))


@pytest.mark.parametrize("seed", range(6))
def test_coverage_picks_the_largest_marginal_gain_among_fitting_chunks(seed):
    rng = np.random.default_rng(seed)
    q, C, tokens = random_pool(rng, n=14, d=8)
    pool = adagres.prepare(np.abs(q), np.abs(C), tokens)  # positive relevance and cosines
    budget = int(rng.integers(100, 500))
    s = coverage(pool, budget, Settings(), weight=2.0)
    picks: list[int] = []
    used = 0
    for chosen in s.indices:
        fits = [i for i in range(14) if i not in picks and used + tokens[i] <= budget]
        gains = {i: brute_coverage_gain(pool, picks, i, 2.0) for i in fits}
        assert gains[chosen] == pytest.approx(max(gains.values()), abs=1e-12)
        picks.append(chosen)
        used += int(tokens[chosen])
    left = [i for i in range(14) if i not in picks and used + tokens[i] <= budget]
    assert left == []  # monotone: it stops only when nothing fits
    assert s.tokens_used <= budget


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_every_variant_keeps_the_budget_and_reports_f_at_its_settings(name):
    rng = np.random.default_rng(11)
    q, C, tokens = random_pool(rng, n=30, d=12)
    pool = adagres.prepare(q, C, tokens)
    s = run_prepared(name, pool, 500, Settings())
    assert s.strategy == name and s.tokens_used <= 500
    settings = s.settings or Settings()
    tau = None if settings.redundancy_floor is None else s.redundancy_floor
    expected = objective(q, C, s.indices, s.lam, alpha=settings.alpha, redundancy_floor=tau)
    assert s.objective == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_orthogonal_is_the_fill_greedy_on_residual_cosines(seed):
    """A direct re-computation: residuals by hand, gains r_i − λ·Σ s⊥_ij, policy fill."""
    pool = twins_pool(seed=seed)
    s = orthogonal(pool, 70, FILL_DERIVED)
    q = pool.query
    residual = pool.chunks - np.outer(pool.chunks @ q, q)
    residual /= np.linalg.norm(residual, axis=1, keepdims=True)
    sims = residual @ residual.T
    lam = adagres.calibrate(pool.query, pool.chunks, pool.tokens, 70, formula="derived").lam
    assert s.lam == pytest.approx(lam, rel=1e-12)
    picks: list[int] = []
    while len(picks) < 7:  # 7 chunks of 10 tokens fit in 70
        rest = [i for i in range(12) if i not in picks]
        gains = {i: pool.relevance[i] - lam * sims[i, picks].sum() for i in rest}
        picks.append(max(rest, key=lambda i: (gains[i], -i)))
    assert list(s.indices) == picks


def test_unknown_strategy_and_bad_weight_are_named():
    pool = twins_pool()
    with pytest.raises(adagres.InputError, match="strategy: expected one of"):
        run_prepared("best", pool, 10, Settings())
    with pytest.raises(adagres.InputError, match="weight: must be >= 0"):
        coverage(pool, 10, Settings(), weight=-1.0)


def test_presets_name_a_strategy_and_settings_and_the_cli_takes_them(capsys):
    import json
    from pathlib import Path

    from adagres.cli import main

    demo = Path(__file__).parents[1] / "data" / "open_domain_scattered.json"
    pool = adagres.load_pool(demo)
    arrays = (*select_inputs(pool), 600)
    for name, chosen in adagres.PRESETS.items():
        expected = adagres.baselines.run(
            chosen.strategy, *arrays, settings=chosen.settings, texts=pool.texts
        )
        got = adagres.run_preset(name, *arrays, texts=pool.texts)
        assert got.indices == expected.indices and got.strategy == chosen.strategy
        assert main(["select", str(demo), "--budget", "600", "--preset", name, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["selected"] == [pool.ids[i] for i in expected.indices]
        assert out["settings"] == chosen.settings.as_dict()
    # An option the user names overrides the preset's value, and only that one.
    assert (
        main(
            [
                "select",
                str(demo),
                "--budget",
                "600",
                "--preset",
                "recommended",
                "--formula",
                "derived",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["strategy"] == "topk_budget" and out["settings"]["formula"] == "derived"
    assert out["settings"]["duplicate_guard"] is None and out["settings"]["packing"]
    paper = adagres.run_preset("paper", *arrays)
    assert paper.indices == adagres.select(*arrays).indices
