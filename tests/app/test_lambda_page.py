"""AppTest tests of the λ derivation page: Eq. 7 with the pool's numbers, the λ sweep, the
paper's bound against the exact optimum. References come from the core (``calibrate``,
``guarantee``, ``baselines.exact``)."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_support import (
    DEMO,
    LAMBDA,
    PAPER,
    array,
    figures,
    frame,
    metric,
    no_error,
    page,
    pool_of,
)
from apptest_support import paper_selection as adagres_selection
from reference import select_inputs

from adagres import PRESETS, baselines
from adagres.core.calibration import calibrate
from adagres.core.guarantee import guarantee

pytestmark = pytest.mark.usefixtures("data_dir")
TITLES = {"paper": "paper: Eq. 7 as printed", "derived": "derived: what Eqs. 5–6 give"}


@pytest.mark.parametrize("preset", ["recommended", "paper"])
@pytest.mark.parametrize("pool_name", ["tiny", "medium", DEMO])
def test_lambda_page_shows_the_calibration(data_dir, pool_name, preset):
    """The pool's numbers, both readings of Eq. 7, and the λ of the preset's formula in use
    (both presets read Eq. 7 as printed; under recommended, top-k, the page says whose λ it
    is)."""
    budget = 900
    params = {"pool": pool_name, "budget": str(budget)}
    at = page(LAMBDA, **(params if preset == "recommended" else {**params, **PAPER}))
    no_error(at)
    pool = pool_of(data_dir, pool_name)
    q, C, tokens = select_inputs(pool)
    args = (q, C, tokens, budget)
    paper = calibrate(*args, formula="paper")
    derived = calibrate(*args, formula="derived")
    used = calibrate(*args, formula=PRESETS[preset].settings.formula)
    # Both presets read Eq. 7 as printed (recommended selects by relevance, not with λ).
    assert PRESETS[preset].settings.formula == "paper" and used.lam == paper.lam
    assert any(f"**{TITLES[used.formula]}** · in use" == m.value for m in at.markdown)
    # Under the recommended preset the page says whose λ this is.
    said = any("topk_budget" in c.value and "does not select with λ" in c.value for c in at.caption)
    assert said == (preset == "recommended")
    assert metric(at, "L̄ (mean tokens)") == f"{paper.mean_tokens:.2f}"
    assert metric(at, "k̄ = T / L̄") == f"{paper.expected_k:.3f}"
    assert metric(at, "r̄ (mean relevance)") == f"{paper.mean_relevance:.4f}"
    assert metric(at, "ρ̄ (mean pair cosine)") == f"{paper.mean_similarity:.4f}"
    assert metric(at, "λ* (paper)") == f"{paper.lam_star:.4f}"
    assert metric(at, "λ* (derived)") == f"{derived.lam_star:.4f}"
    assert metric(at, "λ used") == f"{used.lam:.4f}"
    # The same numbers are filled into the formulas.
    latex = " ".join(element.value for element in at.latex)
    for number in (
        f"{paper.mean_tokens:.2f}",
        f"{paper.expected_k:.3f}",
        f"{paper.mean_relevance:.4f}",
        f"{paper.mean_similarity:.4f}",
        f"{paper.lam_star:.4f}",
        f"{derived.lam_star:.4f}",
        f"{(paper.expected_k - 1) / 2:.4f}",
        f"{paper.expected_k - 1:.4f}",
    ):
        assert number in latex
    # The paper's ε = λ·k·δ for the λ in use.
    terms = guarantee(C, tokens, budget, used.lam)
    assert metric(at, "δ (max pair cosine)") == f"{terms.delta:.4f}"
    assert metric(at, "k (largest set that fits)") == str(terms.k_max)
    assert metric(at, "ε = λ·k·δ") == f"{terms.epsilon:.4f}"


def test_lambda_fallback_is_explained(data_dir):
    at = page(LAMBDA, pool="medium", budget="60")  # k̄ = 60 / 113 < 1
    no_error(at)
    assert metric(at, "λ used") == "0.0100"
    assert metric(at, "λ* (paper)") == "–"
    warning = " ".join(w.value for w in at.warning)
    assert "Fallback" in warning and "k̄ = T / L̄ ≤ 1" in warning and "0.01" in warning


def test_sensitivity_plot_marks_lambdas_and_lists_changes(data_dir):
    at = page(LAMBDA, pool="medium", budget="1500", lam="0.4", **PAPER)
    no_error(at)
    pool = pool_of(data_dir, "medium")
    adaptive = calibrate(*select_inputs(pool), 1500).lam
    figure = figures(at)[0]
    lines = sorted({s["x0"] for s in figure["layout"]["shapes"] if s["type"] == "line"})
    assert lines == pytest.approx(sorted([adaptive, 0.4]))  # one line per panel, same λ
    f_trace = figure["data"][0]
    lams, f_values = array(f_trace["x"]), array(f_trace["y"])
    assert lams[0] == 0.0 and lams[-1] == pytest.approx(round(max(3 * adaptive, 1.25 * 0.4), 3))
    assert np.isclose(lams, adaptive).any() and np.isclose(lams, 0.4).any()
    # F at each λ is what select gives at that λ.
    for k in (0, len(lams) // 2, len(lams) - 1):
        expected = adagres_selection(pool, 1500, lam=float(lams[k]), trace=False).objective
        assert f_values[k] == pytest.approx(expected, abs=1e-9)
    changes = frame(at, "added")
    assert len(changes) >= 2
    for lam_value, added, removed in zip(
        changes["λ"], changes["added"], changes["removed"], strict=True
    ):
        before = lams[np.searchsorted(lams, lam_value) - 1]
        old = set(adagres_selection(pool, 1500, lam=float(before), trace=False).indices)
        new = set(adagres_selection(pool, 1500, lam=float(lam_value), trace=False).indices)
        assert old != new
        assert {pool.ids[i] for i in new - old} == set(filter(None, added.split(", ")))
        assert {pool.ids[i] for i in old - new} == set(filter(None, removed.split(", ")))


@pytest.mark.parametrize("budget", [100, 500])  # the paper's bound: 0.56, then −5.17
def test_exact_optimum_and_bound_on_a_small_pool(data_dir, budget):
    at = page(LAMBDA, pool="tiny", budget=str(budget), **PAPER)
    no_error(at)
    pool = pool_of(data_dir, "tiny")
    greedy = adagres_selection(pool, budget)
    optimum = baselines.exact(*select_inputs(pool), budget, lam=greedy.lam)
    bound = guarantee(pool.prepared, pool.prepared.tokens, budget, greedy.lam).bound(
        optimum.objective
    )
    assert metric(at, "F(greedy)") == f"{greedy.objective:.4f}"
    assert metric(at, "F(optimum)") == f"{optimum.objective:.4f}"
    assert float(metric(at, "F(optimum)")) >= float(metric(at, "F(greedy)"))
    assert metric(at, "paper's bound") == f"{bound:.4f}"
    verdict = "vacuous" if bound <= 0 else "yes" if greedy.objective >= bound else "no"
    assert metric(at, "bound held") == verdict
    said = " ".join(e.value for e in [*at.info, *at.success, *at.warning])
    # A bound of at most 0 holds for any selection: the page says so instead of "held".
    assert ("says nothing about the greedy" in said) == (bound <= 0)
    assert ("The bound held" in said) == (0 < bound <= greedy.objective + 1e-9)
    sets = frame(at, "optimum")
    assert set(sets.loc[sets["optimum"], "id"]) == {pool.ids[i] for i in optimum.indices}
    assert set(sets.loc[sets["greedy"], "id"]) == {pool.ids[i] for i in greedy.indices}


def test_exact_on_a_button_for_mid_sized_problems(data_dir):
    pool = pool_of(data_dir, "medium")
    budget = 55
    assert pool.token_counts is not None
    fit = int((pool.token_counts <= budget).sum())
    assert 20 < fit <= 40
    at = page(LAMBDA, pool="medium", budget=str(budget), **PAPER)
    no_error(at)
    assert not any(m.label == "F(optimum)" for m in at.metric)
    at.button(key="lam_solve_exact").click().run()
    no_error(at)
    greedy = adagres_selection(pool, budget)
    optimum = baselines.exact(*select_inputs(pool), budget, lam=greedy.lam)
    assert metric(at, "F(optimum)") == f"{optimum.objective:.4f}"
    assert optimum.objective >= greedy.objective - 1e-9


def test_a_stopped_search_shows_what_it_proved(data_dir, monkeypatch):
    # The solver's node limit at 1 and no enumeration: it stops after the root node.
    from adagres.optimum import exact

    real = exact.solve_exact
    monkeypatch.setattr(
        exact,
        "solve_exact",
        lambda pool, budget, terms, max_chunks, _nodes, _limit: real(
            pool, budget, terms, max_chunks, 1, None, max_sets=0
        ),
    )
    pool = pool_of(data_dir, "medium")
    budget = 100  # 85 chunks fit: the page solves on a button
    greedy = adagres_selection(pool, budget)
    terms = exact.Terms(greedy.lam, greedy.alpha, greedy.redundancy_floor)
    stopped = exact.solve(pool.prepared, budget, terms, max_nodes=1, max_sets=0)
    assert not stopped.proven  # else this pool and budget no longer test a stopped search
    at = page(LAMBDA, pool="medium", budget=str(budget), **PAPER)
    at.button(key="lam_solve_exact").click().run()
    no_error(at)
    assert metric(at, "best F found") == f"{stopped.objective:.4f}"
    assert metric(at, "upper bound on F(optimum)") == f"{stopped.upper_bound:.4f}"
    share = 100 * greedy.objective / stopped.upper_bound
    assert metric(at, "greedy ≥ share of optimum") == f"{share:.1f}%"
    assert not any(m.label == "F(optimum)" for m in at.metric)
    text = " ".join(e.value for e in [*at.info, *at.success, *at.warning])
    assert f"lies between {stopped.objective:.4f} and {stopped.upper_bound:.4f}" in text
    held = (
        greedy.objective
        >= guarantee(pool.prepared, pool.prepared.tokens, budget, greedy.lam).bound(
            stopped.upper_bound
        )
        - 1e-9
    )
    assert ("The bound held for every optimum in that range" in text) == held


def test_exact_refused_for_a_large_problem(data_dir):
    at = page(LAMBDA, pool="large", budget="1500")
    no_error(at)
    # Each fits on its own; far fewer fit together.
    assert any(
        "Not solved exactly: 2,000 chunks each fit within 1500 tokens on their own" in info.value
        for info in at.info
    )
    assert not any(m.label == "F(optimum)" for m in at.metric)
