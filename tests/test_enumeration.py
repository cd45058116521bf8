"""Direct enumeration, the exact solver's way when few sets fit the budget: it equals brute
force and the branch and bound, and a node limit never stops it."""

from __future__ import annotations

from pathlib import Path

import pytest
from reference import brute_force_optimum
from test_exact import random_case, subsets

from adagres import Settings, load_pools, prepare
from adagres.core.loop import objective_value
from adagres.core.selection import resolve_terms
from adagres.optimum import exact, problem


@pytest.mark.parametrize("seed", range(40))
def test_enumeration_and_search_both_equal_brute_force(seed):
    """Both ways to the optimum, forced one at a time: direct enumeration (few feasible
    sets) and the branch and bound (``max_sets=0``) reach the brute-force optimum, and a
    limit below the number of feasible sets hands the problem to the search."""
    q, C, tokens, budget, lam, alpha, tau = random_case(seed)
    pool = prepare(q, C, tokens)
    terms = resolve_terms(pool, budget, Settings(lam=lam, alpha=alpha, redundancy_floor=tau))[0]
    best, _ = brute_force_optimum(q, C, list(tokens), budget, lam, alpha, terms.tau)
    n_sets = sum(1 for s in subsets(len(tokens)) if s and sum(tokens[list(s)]) <= budget)
    listed = exact.solve(pool, budget, terms)
    searched = exact.solve(pool, budget, terms, max_sets=0)
    for r in (listed, searched):
        assert r.proven and r.objective == pytest.approx(best, abs=1e-7)
        assert pool.tokens[list(r.indices)].sum() <= budget
    reduced = len(problem.reduce(pool, budget, terms).positions)
    assert listed.enumerated and searched.enumerated == (listed.nodes == 0)  # 0: no set fits
    if reduced == len(tokens):  # no chunk dropped: every feasible set is visited
        assert listed.nodes == n_sets
    if listed.nodes:
        assert not exact.solve(pool, budget, terms, max_sets=listed.nodes - 1).enumerated


def test_few_feasible_sets_are_enumerated_whatever_the_node_limit():
    """An 88-chunk pool where at most two chunks fit together (3,828 pairs): the answer
    needs no search node, so a node limit of one cannot stop it (the suite once failed
    here when a wall clock stopped the search on a busy machine)."""
    data = Path(__file__).resolve().parents[1] / "data"
    pool = load_pools(data / "biomedical_redundant.json")[0].prepared
    terms = resolve_terms(pool, 150, Settings())[0]
    r = exact.solve(pool, 150, terms, max_nodes=1)
    assert r.proven and r.enumerated and r.k_max == 2
    pairs = [
        (i, j)
        for i in range(88)
        for j in range(i + 1, 88)
        if pool.tokens[i] + pool.tokens[j] <= 150
    ]
    values = [objective_value(pool, list(s), terms) for s in [*pairs, *[(i,) for i in range(88)]]]
    assert r.objective == pytest.approx(max(0.0, *values), abs=1e-9)
