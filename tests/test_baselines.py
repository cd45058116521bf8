"""Baselines: brute force for `exact`, hand cases for the others, the authors' rule."""

from __future__ import annotations

from typing import cast

import numpy as np
import pytest
from reference import brute_force_optimum, mean_pairwise, naive_objective, random_pool, unit

from adagres import InputError, Settings, SolverError, StopReason, VerdictKind, objective, select
from adagres import baselines as b


def angle(deg):
    return [np.cos(np.deg2rad(deg)), np.sin(np.deg2rad(deg))]


E2 = np.array([1.0, 0.0])


@pytest.mark.parametrize("seed", range(25))
def test_exact_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 11))
    q, C, tokens = random_pool(rng, n=n, d=6)
    budget = int(rng.integers(0, 300))
    lam = float(rng.choice([0.0, 0.2, 1.0, 4.0]))
    best, _ = brute_force_optimum(q, C, list(tokens), budget, lam)
    got = b.exact(q, C, tokens, budget, lam=lam)
    assert got.objective == pytest.approx(best, abs=1e-7)
    assert got.tokens_used <= budget
    assert got.stop_reason is StopReason.OPTIMAL
    greedy = select(q, C, tokens, budget, lam=lam)
    assert greedy.objective <= got.objective + 1e-9


def test_exact_with_negative_pairs_and_floor():
    rng = np.random.default_rng(99)
    q, C, tokens = rng.normal(size=5), rng.normal(size=(9, 5)), rng.integers(5, 40, 9)
    for floor in (None, 0.1):
        best, _ = brute_force_optimum(q, C, list(tokens), 120, 0.7, tau=floor)
        got = b.exact(q, C, tokens, 120, lam=0.7, redundancy_floor=floor)
        assert got.objective == pytest.approx(best, abs=1e-7)


def test_exact_refuses_large_pools():
    rng = np.random.default_rng(0)
    q, C, tokens = random_pool(rng, n=60)
    with pytest.raises(SolverError, match="60 chunks fit the budget of 10000 tokens"):
        b.exact(q, C, tokens, 10_000, max_chunks=50)
    # Chunks that cannot fit are not counted against the limit.
    tokens = np.where(np.arange(60) < 20, 10, 20_000)
    assert b.exact(q, C, tokens, 10_000, lam=0.5, max_chunks=50).tokens_used <= 10_000


def test_exact_verdicts_and_steps():
    rng = np.random.default_rng(1)
    q, C, tokens = random_pool(rng, n=8)
    s = b.exact(q, C, tokens, 150, lam=0.5)
    gains = [st.gain for st in s.steps if st.accepted]
    assert sum(g for g in gains if g is not None) == pytest.approx(s.objective)
    assert None not in gains
    kinds = {v.kind for v in s.verdicts}
    assert kinds <= {VerdictKind.SELECTED, VerdictKind.NOT_IN_OPTIMUM}


def test_topk_budget_skips_what_does_not_fit():
    C = np.array([angle(0), angle(10), angle(20), angle(30)])
    s = b.topk_budget(E2, C, [50, 80, 30, 10], 100)
    assert s.indices == (0, 2, 3)
    assert s.stop_reason is StopReason.BUDGET_EXHAUSTED
    assert s.verdict(1).kind is VerdictKind.DID_NOT_FIT


def test_topk_same_k_takes_the_adagres_size():
    rng = np.random.default_rng(3)
    q, C, tokens = random_pool(rng, n=30)
    ada = select(q, C, tokens, 400)
    top = b.topk_same_k(q, C, tokens, 400)
    assert top.size == ada.size and top.params["k"] == ada.size
    order = np.argsort(-(unit(C) @ unit(q)), kind="stable")
    fitting: list[int] = []
    used = 0
    for i in order:
        if len(fitting) == ada.size:
            break
        if used + tokens[i] <= 400:
            fitting.append(int(i))
            used += tokens[i]
    assert list(top.indices) == fitting
    assert b.topk_same_k(q, C, tokens, 400, k=2).indices == tuple(fitting[:2])
    with pytest.raises(InputError, match="k: expected a whole number"):
        b.topk_same_k(q, C, tokens, 400, k=-1)


def test_mmr_by_hand():
    # A (20°) first; then B (25°) scores 0.7·cos25 - 0.3·cos5, C (-40°) 0.7·cos40 - 0.3·cos60.
    C = np.array([angle(20), angle(25), angle(-40)])
    s = b.mmr(E2, C, [10, 10, 10], 30, lambda_mmr=0.7)
    cos = lambda deg: float(np.cos(np.deg2rad(deg)))  # noqa: E731
    assert s.indices[0] == 0 and s.steps[0].score == pytest.approx(0.7 * cos(20))
    candidates = s.steps[1].candidates
    assert candidates is not None  # a traced run records them
    assert candidates.score[1] == pytest.approx(0.7 * cos(25) - 0.3 * cos(5))
    assert candidates.score[2] == pytest.approx(0.7 * cos(40) - 0.3 * cos(60))
    assert s.indices == (0, 2, 1)
    assert s.params["lambda_mmr"] == 0.7
    with pytest.raises(InputError, match=r"lambda_mmr: must be in \[0, 1\]"):
        b.mmr(E2, C, [10, 10, 10], 30, lambda_mmr=1.5)


def test_mmr_prefers_diversity_over_a_near_duplicate():
    C = np.array([angle(20), angle(22), angle(-25)])
    s = b.mmr(E2, C, [10, 10, 10], 20, lambda_mmr=0.5)
    assert s.indices == (0, 2)
    assert b.topk_budget(E2, C, [10, 10, 10], 20).indices == (0, 1)


def test_reference_code_reproduces_the_authors_rule():
    rng = np.random.default_rng(5)
    q, C, tokens = random_pool(rng, n=20)
    texts = ["x" * int(n) for n in rng.integers(20, 60, size=20)]
    budget = 200
    mean_chars = np.mean([len(t) for t in texts])
    k = max(1, int(budget // mean_chars))
    s = b.reference_code(q, C, tokens, budget, texts=texts, enforce_budget=False)
    assert s.params["k"] == k and s.size == k
    r = unit(C) @ unit(q)
    beta = r.mean() / (((k - 1) / 2) * mean_pairwise(C))
    assert s.params["beta"] == pytest.approx(beta, rel=1e-12)
    # Their greedy: k times, the chunk that maximises F(S + c), no gain or budget check.
    picks: list[int] = []
    for _ in range(k):
        rest = [i for i in range(20) if i not in picks]
        picks.append(max(rest, key=lambda i: (naive_objective(q, C, [*picks, i], beta), -i)))
    assert list(s.indices) == picks
    assert s.stop_reason is StopReason.K_REACHED


def test_reference_code_fallback_and_negative_beta():
    C = np.array([angle(10), angle(-10)])
    s = b.reference_code(E2, C, [5, 5], 10, texts=["abcdefghij", "abcdefghij"])
    assert s.params["k"] == 1 and s.params["beta"] == 0.01  # k <= 1 falls back
    opposed = np.array([angle(80), angle(-100), angle(0)])  # mean pairwise cosine < 0
    s = b.reference_code(E2, opposed, [1, 1, 1], 20, texts=["abcde"] * 3)
    assert s.params["k"] == 4 and cast(float, s.params["beta"]) < 0


def test_reference_code_respects_the_budget_by_default():
    C = np.array([angle(0), angle(30), angle(60)])
    texts = ["a" * 10] * 3  # k = 100 // 10 = 10 picks wanted
    raw = b.reference_code(E2, C, [60, 60, 60], 100, texts=texts, enforce_budget=False)
    assert raw.indices == (0, 1, 2) and raw.tokens_used == 180 and not raw.respects_budget
    kept = b.reference_code(E2, C, [60, 60, 60], 100, texts=texts)
    assert kept.indices == (0,) and kept.stop_reason is StopReason.BUDGET_EXHAUSTED
    with pytest.raises(InputError, match="got 2 texts, the pool has 3 chunks"):
        b.reference_code(E2, C, [60, 60, 60], 100, texts=texts[:2])


@pytest.mark.parametrize("strategy", b.STRATEGIES)
def test_run_dispatches_every_strategy(strategy):
    rng = np.random.default_rng(8)
    q, C, tokens = random_pool(rng, n=12)
    s = b.run(strategy, q, C, tokens, 200, texts=["t" * 40] * 12, lam="adaptive")
    assert s.strategy == strategy and s.tokens_used <= 200
    with pytest.raises(InputError, match="strategy: expected one of"):
        b.run("random", q, C, tokens, 200)


@pytest.mark.parametrize("strategy", b.STRATEGIES)
def test_every_strategy_reports_f_and_gains_at_the_shared_settings(strategy):
    """F of every strategy is objective(...) of its picks at the λ and τ AdaGReS gets."""
    rng = np.random.default_rng(21)
    q, C, tokens = random_pool(rng, n=14)
    settings = Settings(
        scale=2.0,
        offset=0.05,
        policy="fill",
        formula="derived",
        redundancy_floor=0.3,
        calibration_top_n=8,
    )
    ada = select(q, C, tokens, 300, settings=settings)
    s = b.run(strategy, q, C, tokens, 300, settings=settings, texts=["t" * 40] * 14)
    assert s.lam == pytest.approx(ada.lam, rel=1e-15) and s.redundancy_floor == 0.3
    assert s.settings == settings
    expected = objective(q, C, s.indices, ada.lam, redundancy_floor=0.3)
    assert s.objective == pytest.approx(expected, rel=1e-9, abs=1e-12)
    accepted = [st.gain for st in s.steps if st.accepted]
    gains = [g for g in accepted if g is not None]
    assert len(gains) == len(accepted)  # every pick records its gain
    assert sum(gains) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    if strategy == "topk_same_k":
        assert s.params["k"] == ada.size
    if strategy == "adagres":
        assert s.indices == ada.indices


def test_settings_keywords_and_value_give_the_same_run():
    rng = np.random.default_rng(22)
    q, C, tokens = random_pool(rng, n=14)
    by_value = b.run("mmr", q, C, tokens, 300, settings=Settings(lam=0.4, lambda_mmr=0.7))
    by_keywords = b.run("mmr", q, C, tokens, 300, lam=0.4, lambda_mmr=0.7)
    assert by_value.indices == by_keywords.indices and by_value.objective == by_keywords.objective
    with pytest.raises(InputError, match="settings: unknown setting 'lamda'"):
        b.run("mmr", q, C, tokens, 300, lamda=0.4)


def test_a_strategy_carries_its_own_options():
    """Options belong to the strategy that takes them: topk_same_k's k, reference_code's
    enforce_budget, and an option another strategy does not take is a one-line error that
    names the ones it does."""
    from adagres.core.strategies import STRATEGIES

    q = np.array([1.0, 0.0])
    chunks = np.array([[0.9, 0.1], [0.95, 0.05], [0.5, 0.5], [0.8, 0.6]])
    tokens = [20, 20, 20, 20]
    assert b.run("topk_same_k", q, chunks, tokens, 100, k=2).indices == (1, 0)
    assert STRATEGIES["topk_same_k"].option_names == ("k", "reference")
    assert STRATEGIES["mmr"].option_names == ()
    with pytest.raises(
        InputError, match=r"^strategy 'mmr': takes no option 'k' \(it takes none\)$"
    ):
        b.run("mmr", q, chunks, tokens, 100, k=2)
    with pytest.raises(InputError, match=r"'topk_budget': takes no option 'max_nodes'"):
        b.run("topk_budget", q, chunks, tokens, 100, max_nodes=5)
    with pytest.raises(InputError, match=r"takes no option 'k' \(it takes 'enforce_budget'\)"):
        b.run("reference_code", q, chunks, tokens, 100, k=2, texts=["a"] * 4)


def test_callers_read_capabilities_not_names():
    """What the app, the sweeps and the evaluation need of a strategy is on its entry."""
    from adagres.core.strategies import ADAGRES, STRATEGIES

    assert STRATEGIES["topk_same_k"].reference == ADAGRES.name
    assert STRATEGIES["topk_same_k"].lam_changes_picks  # its k comes from AdaGReS's run
    assert not STRATEGIES["topk_budget"].lam_changes_picks
    exact = STRATEGIES["exact"]
    assert exact.proves_optimum and exact.working == "Solving exactly…"
    assert exact.option_names == ("max_chunks", "time_limit", "max_nodes")
    assert [n for n, s in STRATEGIES.items() if s.proves_optimum] == ["exact"]
    assert STRATEGIES["orthogonal"].tuned is not None
    assert STRATEGIES["orthogonal"].tuned.policy == "fill"
