"""The exact solver: brute-force equality, each reduction's and bound's invariant, refusals.

Every reference here enumerates subsets (n <= 12), so the checks are exact up to float
rounding (F to 1e-7: the solver sums F in another order than the reference).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from reference import brute_force_optimum, random_pool, sdp_case

from adagres import InputError, Settings, SolverError, StopReason, prepare, select
from adagres import baselines as b
from adagres.core.guarantee import guarantee
from adagres.core.loop import Terms, objective_value
from adagres.core.selection import resolve_terms, select_prepared
from adagres.optimum import bounds, exact, gap, problem


def random_case(seed: int):
    """A small pool with negative cosines (no shared direction half of the time)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 13))
    if seed % 2:
        q, C, tokens = random_pool(rng, n=n, d=6)
    else:
        q, C, tokens = rng.normal(size=5), rng.normal(size=(n, 5)), rng.integers(0, 60, n)
    total = int(np.sum(tokens))
    budget = [0, int(np.min(tokens)), total, int(rng.integers(0, total + 1))][seed % 4]
    lam = float(rng.choice([0.0, 0.3, 1.0, 4.0]))
    alpha = float(rng.choice([0.5, 1.0, 2.0]))
    tau = [None, 0.1, -0.2, "pool"][seed % 4 if seed % 3 else 0]
    return q, C, np.asarray(tokens), budget, lam, alpha, tau


def subsets(n):
    return itertools.chain.from_iterable(itertools.combinations(range(n), m) for m in range(n + 1))


@pytest.mark.parametrize("seed", range(60))
def test_exact_equals_brute_force_and_bounds_every_greedy(seed):
    q, C, tokens, budget, lam, alpha, tau = random_case(seed)
    s = b.run("exact", q, C, tokens, budget, lam=lam, alpha=alpha, redundancy_floor=tau)
    best, _ = brute_force_optimum(q, C, list(tokens), budget, lam, alpha, s.redundancy_floor)
    assert s.objective == pytest.approx(best, abs=1e-7)
    assert s.stop_reason is StopReason.OPTIMAL and s.tokens_used <= budget
    for policy in ("skip", "stop", "ratio", "fill"):
        greedy = select(
            q, C, tokens, budget, lam=lam, alpha=alpha, redundancy_floor=tau, policy=policy
        )
        assert greedy.objective <= s.objective + 1e-9


def test_budgets_where_nothing_one_or_all_fit():
    q, C = np.array([1.0, 0.0]), np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
    assert b.exact(q, C, [10, 20, 30], 9, lam=0.5).indices == ()
    assert b.exact(q, C, [10, 20, 30], 10, lam=0.5).indices == (0,)
    # All fit: {0, 1} is worth 1 + 0.8 − 0.5·0.8 = 1.4; adding 2 costs 0.5·0.6 for r = 0.
    assert b.exact(q, C, [10, 20, 30], 60, lam=0.5).indices == (0, 1)


@pytest.mark.parametrize("seed", range(30))
def test_reduction_drops_only_chunks_no_optimum_needs(seed):
    q, C, tokens, budget, lam, alpha, tau = random_case(seed)
    pool = prepare(q, C, tokens)
    terms = Terms(lam, alpha, None if tau == "pool" else tau)
    p = problem.reduce(pool, budget, terms)
    kept = set(p.positions.tolist())
    assert p.n_fit == int((tokens <= budget).sum())
    assert all(tokens[i] <= budget for i in kept)
    feasible = [S for S in subsets(len(C)) if tokens[list(S)].sum() <= budget]
    # A dropped chunk that fits never has a positive marginal gain in a feasible set.
    for i in set(np.flatnonzero(tokens <= budget).tolist()) - kept:
        for S in (S for S in feasible if i in S):
            rest = [j for j in S if j != i]
            gain = objective_value(pool, list(S), terms) - objective_value(pool, rest, terms)
            assert gain <= 1e-9
    best = max(objective_value(pool, list(S), terms) for S in feasible)
    inside = max(objective_value(pool, list(S), terms) for S in feasible if set(S) <= kept)
    assert inside == pytest.approx(best, abs=1e-9)
    assert p.k_max == max(len(S) for S in feasible if set(S) <= kept)


def test_negative_relevance_without_rewards_is_dropped():
    q = np.array([1.0, 0.0, 0.0])
    C = np.array([[1.0, 0.3, 0.0], [-0.2, 1.0, 0.3], [0.5, 0.5, 0.7]])  # all pairs >= 0
    assert (unit_rows(C) @ unit_rows(C).T >= 0).all()
    p = problem.reduce(prepare(q, C, [5, 5, 5]), 15, Terms(0.5, 1.0, None))
    assert p.positions.tolist() == [0, 2]


def unit_rows(C):
    return C / np.linalg.norm(C, axis=1, keepdims=True)


def small_problem(seed: int):
    """Open chunks of a node: gains g, pair weights W (zero diagonal), tokens, budget."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 10))
    vectors = unit_rows(rng.normal(size=(n, 4)) + rng.normal(size=4))
    w = rng.choice([0.2, 1.0]) * (vectors @ vectors.T)
    if seed % 2:
        w = np.maximum(w - 0.2, 0.0)
    np.fill_diagonal(w, 0.0)
    g = rng.normal(0.3, 0.5, n)
    tokens = rng.integers(0, 40, n)
    return g, w, tokens, int(rng.integers(0, 120))


def completions(g, w, tokens, budget, which=lambda T: True):
    values = [
        float(g[list(T)].sum() - 0.5 * w[np.ix_(T, T)].sum())
        for T in subsets(len(g))
        if tokens[list(T)].sum() <= budget and which(T)
    ]
    return max(values, default=-np.inf)


def best_completion(g, w, tokens, budget):
    return completions(g, w, tokens, budget)


@pytest.mark.parametrize("seed", range(40))
def test_split_and_convex_bounds_are_upper_bounds(seed):
    g, w, tokens, budget = small_problem(seed)
    best = best_completion(g, w, tokens, budget)
    w_inf = w.copy()
    np.fill_diagonal(w_inf, np.inf)
    for target in (-np.inf, best - 0.1, best, best + 0.1):  # the target only saves work
        assert bounds.split_bound(w_inf, g, tokens, budget, target) >= best - 1e-12
    e = bounds.shift(w)
    assert np.linalg.eigvalsh(w + e * np.eye(len(g)))[0] >= -1e-12
    k = bounds.count_fit(tokens, budget)
    q = w + e * np.eye(len(g))
    lipschitz = max(float(np.linalg.eigvalsh(q)[-1]), 1e-3)  # as the solver floors it
    rng = np.random.default_rng(seed)
    # Valid from any point and after any number of steps, not only at convergence.
    for start, steps in ((None, 60), (rng.random(len(g)), 1), (rng.random(len(g)), 5)):
        r = bounds.convex_bound(
            g + e / 2,
            q,
            tokens.astype(float),
            budget,
            k,
            start,
            lipschitz,
            target=-np.inf,
            iterations=steps,
        )
        assert r.bound >= best - 1e-9
        assert ((r.x >= 0) & (r.x <= 1)).all() and tokens @ r.x <= budget + 1e-9
        for i in range(len(g)):  # the bounds on completions with and without each chunk
            assert r.with_[i] >= completions(g, w, tokens, budget, lambda T, i=i: i in T) - 1e-9
            assert (
                r.without[i] >= completions(g, w, tokens, budget, lambda T, i=i: i not in T) - 1e-9
            )


@pytest.mark.parametrize("seed", range(30))
def test_knapsack_lp_bounds_the_lp_and_each_fixing(seed):
    from scipy.optimize import linprog

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 15))
    c, tokens = rng.normal(size=n), rng.integers(0, 30, n).astype(float)
    budget, k = float(rng.integers(0, 100)), int(rng.integers(0, n + 1))
    rows = np.vstack([tokens, np.ones(n)])

    def lp(fixed=None):
        box = [(0, 1)] * n
        if fixed is not None:
            box[fixed[0]] = (fixed[1], fixed[1])
        out = linprog(-c, A_ub=rows, b_ub=[budget, k], bounds=box, method="highs")
        return -out.fun if out.status == 0 else -np.inf  # infeasible: nothing to bound

    dual = bounds.knapsack_lp(c, tokens, budget, k)
    assert dual.value >= lp() - 1e-9
    for i in range(n):
        assert dual.with_()[i] >= lp((i, 1)) - 1e-9
        assert dual.without()[i] >= lp((i, 0)) - 1e-9
    free = linprog(-c, A_ub=tokens[None, :], b_ub=[budget], bounds=(0, 1), method="highs")
    assert bounds.knapsack_lp(c, tokens, budget, n).value == pytest.approx(-free.fun, abs=1e-9)


@pytest.mark.parametrize("seed", range(30))
def test_projection_is_the_nearest_feasible_point(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 20))
    v, tokens = rng.normal(0.3, 1.0, n), rng.integers(0, 30, n).astype(float)
    budget = float(rng.uniform(0, tokens.sum() + 1))
    x = bounds.project(v, tokens, budget)
    assert ((x >= 0) & (x <= 1)).all() and tokens @ x <= budget + 1e-9
    for _ in range(200):  # no random feasible point is nearer (the set is convex)
        y = rng.random(n) * rng.random()
        if tokens @ y <= budget:
            assert np.linalg.norm(v - x) <= np.linalg.norm(v - y) + 1e-9


@pytest.mark.parametrize("seed", range(60))
def test_projection_from_a_guess_equals_the_sorted_one(seed):
    """Newton steps from any guess of θ (0, the answer, near it, far off) land on the same
    point as the breakpoint sort, to rounding; a chain of nearby v, as FISTA makes, too."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    tokens = rng.integers(0, 30, n).astype(float)
    budget = float(rng.uniform(0, tokens.sum() + 1))
    v = rng.normal(0.3, 1.0, n)
    theta = bounds.threshold(v, tokens, budget)
    for guess in (0.0, theta, theta * 1.01 + 1e-3, theta * 0.5, 10.0 * theta + 1.0):
        x, found = bounds.project_near(v, tokens, tokens * tokens, budget, guess)
        np.testing.assert_allclose(x, bounds.project(v, tokens, budget), rtol=0, atol=1e-12)
        assert abs(found - theta) <= 1e-9 * (1 + theta) or tokens @ x < budget  # θ unique
    guess = 0.0
    for _ in range(20):
        v = v + rng.normal(0, 0.05, n)
        x, guess = bounds.project_near(v, tokens, tokens * tokens, budget, guess)
        np.testing.assert_allclose(x, bounds.project(v, tokens, budget), rtol=0, atol=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_local_search_ends_at_a_local_optimum(seed):
    rng = np.random.default_rng(seed)
    q, C, tokens = random_pool(rng, n=10, d=6)
    pool = prepare(q, C, tokens)
    terms = Terms(float(rng.choice([0.1, 0.5])), 1.0, None)
    p = problem.reduce(pool, 200, terms)
    found, value = problem.local_search(p, [])
    positions = [int(p.positions[i]) for i in found]
    assert value == pytest.approx(objective_value(pool, positions, terms), abs=1e-9)
    here, n = set(found), len(p.positions)
    neighbours = [here | {i} for i in range(n)] + [here - {i} for i in here]
    neighbours += [(here - {o}) | {i} for o in here for i in range(n) if i not in here]
    for S in neighbours:
        if p.tokens[list(S)].sum() <= 200:
            other = objective_value(pool, [int(p.positions[i]) for i in S], terms)
            assert other <= value + 1e-9


def test_refusal_names_the_numbers_and_the_limit():
    rng = np.random.default_rng(0)
    q, C, tokens = random_pool(rng, n=60)
    with pytest.raises(SolverError) as error:
        b.exact(q, C, tokens, 10_000, lam=0.5, max_chunks=50)
    message = str(error.value)
    assert "60 chunks fit the budget of 10000 tokens" in message
    assert "60 of them are candidates and up to 60 fit together" in message
    assert "limits: 50 chunks" in message and "max_chunks" in message
    # The rule is the candidates alone: 60 × 60 is searched (and a node limit is a gap).
    pool = prepare(q, C, tokens)
    result = exact.solve(pool, 10_000, Terms(0.5, 1.0, None), max_nodes=50)
    assert result.n_candidates * result.k_max > 2500
    assert result.objective <= result.upper_bound and result.proven == (result.gap <= 1e-9)
    # Above 4 x max_chunks that fit, refused before the pair matrix is built (no reduction).
    with pytest.raises(SolverError, match=r"60 of them are candidates .* \(limits: 5 chunks"):
        exact.solve(pool, 300, Terms(0.5, 1.0, None), max_chunks=5)


def test_a_stopped_search_reports_a_valid_gap():
    rng = np.random.default_rng(7)
    q, C, tokens = random_pool(rng, n=12, d=6)
    pool = prepare(q, C, tokens)
    terms = Terms(0.3, 1.0, None)
    best, _ = brute_force_optimum(q, C, list(tokens), 300, 0.3)
    r = exact.solve(pool, 300, terms, max_nodes=1, max_sets=0)  # the root only
    assert r.objective <= best + 1e-9 <= r.upper_bound + 2e-9
    assert r.gap == pytest.approx(max(0.0, r.upper_bound - r.objective))
    assert r.proven == (r.gap <= 1e-9)
    if not r.proven:
        with pytest.raises(SolverError, match="proven gap"):
            exact.solve_exact(pool, 300, terms, 200, max_nodes=1, max_sets=0)
    assert exact.solve(pool, 300, terms).proven


@pytest.mark.parametrize("seed", range(6))
def test_a_relative_gap_search_bounds_the_optimum(seed):
    """With ``rel_gap`` the search cuts nodes that cannot beat its best set by more than that
    share: its upper bound must still bound the optimum (it claimed F itself before), and
    "proven" means within the gap."""
    rng = np.random.default_rng(100 + seed)
    q, C, tokens = random_pool(rng, n=12, d=6)
    pool = prepare(q, C, tokens)
    terms = Terms(1.0, 1.0, None)
    optimum, _ = brute_force_optimum(q, C, list(tokens), 300, 1.0)
    for rel_gap in (0.01, 0.3, 2.0):
        r = exact.solve(pool, 300, terms, rel_gap=rel_gap, max_sets=0)  # the search itself
        assert r.proven
        assert r.objective <= optimum + 1e-9 <= r.upper_bound + 2e-9
        assert r.upper_bound >= r.objective + rel_gap * abs(r.objective) - 1e-12
        assert optimum <= r.objective + max(1e-9, rel_gap * abs(r.objective)) + 1e-9


def test_a_node_limit_stops_every_rerun_at_the_same_node():
    rng = np.random.default_rng(1)
    q, C, tokens = random_pool(rng, n=24)  # its search takes 26 nodes
    pool = prepare(q, C, tokens)
    terms = Terms(0.3, 1.0, None)
    full = exact.solve(pool, 300, terms, max_sets=0)
    assert full.proven and full.nodes > 10  # the search needs more than the limit below
    runs = [exact.solve(pool, 300, terms, max_nodes=10, max_sets=0) for _ in range(2)]
    for r in runs:
        assert r.nodes == 10 and not r.proven
        assert r.objective <= full.objective + 1e-12 <= r.upper_bound + 2e-12
    same = ("indices", "objective", "upper_bound", "nodes")
    assert [getattr(runs[0], f) for f in same] == [getattr(runs[1], f) for f in same]
    with pytest.raises(SolverError, match="no proven optimum within 10 nodes") as error:
        exact.solve_exact(pool, 300, terms, 200, max_nodes=10, max_sets=0)
    proved = error.value.result
    assert proved is not None and proved.upper_bound == runs[0].upper_bound
    assert exact.solve(pool, 300, terms, max_nodes=full.nodes, max_sets=0).proven


def test_optimality_gap_report():
    rng = np.random.default_rng(3)
    q, C, tokens = random_pool(rng, n=11, d=6)
    pool = prepare(q, C, tokens)
    settings = Settings(redundancy_floor="pool")
    greedy = select_prepared(pool, 250, settings, trace=False)
    report = gap.optimality_gap(pool, 250, settings, greedy)
    terms = resolve_terms(pool, 250, settings)[0]
    best, _ = brute_force_optimum(q, C, list(tokens), 250, terms.lam, tau=terms.tau)
    assert report.proven and report.optimum == pytest.approx(best, abs=1e-7)
    assert report.upper_bound == pytest.approx(report.optimum, abs=1e-9)
    assert report.greedy == greedy.objective
    assert report.absolute_gap == pytest.approx(report.optimum - greedy.objective)
    assert report.relative_gap == pytest.approx(report.absolute_gap / report.optimum)
    paper = guarantee(pool.chunks, pool.tokens, 250, terms.lam).bound(report.optimum)
    assert report.paper_bound == pytest.approx(paper)
    assert report.bound_held == (greedy.objective >= paper)
    other = select_prepared(pool, 250, Settings(lam=0.9), trace=False)
    with pytest.raises(InputError, match="selection: made at"):
        gap.optimality_gap(pool, 250, settings, other)


@pytest.mark.parametrize("seed", range(40))
def test_per_chunk_diagonal_keeps_the_relaxation_an_upper_bound(seed):
    g, w, tokens, budget = small_problem(seed)
    k = bounds.count_fit(tokens, budget)
    d = bounds.diagonal(w, g, tokens, budget, k)
    assert (d >= 0).all() and np.linalg.eigvalsh(w + np.diag(d))[0] >= -1e-12
    assert bounds.is_psd(w + np.diag(d)) or len(g) < 2
    q = w + np.diag(d)
    lipschitz = max(float(np.linalg.eigvalsh(q)[-1]), 1e-3)
    best = best_completion(g, w, tokens, budget)
    for steps in (1, 5, 60):
        r = bounds.convex_bound(
            g + d / 2,
            q,
            tokens.astype(float),
            budget,
            k,
            None,
            lipschitz,
            target=-np.inf,
            iterations=steps,
        )
        assert r.bound >= best - 1e-9
        for i in range(len(g)):
            assert r.with_[i] >= completions(g, w, tokens, budget, lambda T, i=i: i in T) - 1e-9
    # A principal submatrix keeps it (the search reuses d on a node's open chunks), and the
    # re-shift of a node keeps W_U + D_U ⪰ 0 too.
    keep = np.arange(len(g)) % 2 == 0
    sub = w[np.ix_(keep, keep)]
    assert len(sub) < 1 or np.linalg.eigvalsh(sub + np.diag(d[keep]))[0] >= -1e-12
    if keep.sum() > 1:
        again = exact.reshift(sub.copy(), d[keep])
        assert (again >= 0).all() and np.linalg.eigvalsh(sub + np.diag(again))[0] >= -1e-12


#: The semidefinite (Shor) bound of each sdp_case: max g·x − ½⟨W, X⟩ over [[1, xᵀ], [x, X]]
#: ⪰ 0, diag(X) = x, x ∈ [0, 1], ℓ·x ≤ b, Σx ≤ k, from two conic solvers (CVXPY 1.9 with
#: Clarabel and with SCS, outside the pins), which agreed to 2e-7. No d can bring the
#: concave relaxation below it, and the best d reaches it.
SHOR_BOUNDS = {0: 1.2393084, 1: 1.5472025, 2: 1.2079727}


@pytest.mark.parametrize("seed", sorted(SHOR_BOUNDS))
def test_per_chunk_diagonal_reaches_the_semidefinite_bound(seed):
    g, w, tokens, budget = sdp_case(seed)
    k = bounds.count_fit(tokens, budget)

    def relaxed(d):
        q = w + np.diag(d)
        lipschitz = float(np.linalg.eigvalsh(q)[-1])
        return bounds.convex_bound(
            g + d / 2,
            q,
            tokens.astype(float),
            budget,
            k,
            None,
            lipschitz,
            -np.inf,
            5000,
            patient=True,
        ).bound

    shor = SHOR_BOUNDS[seed]
    ours = relaxed(bounds.diagonal(w, g, tokens, budget, k))
    uniform = relaxed(np.full(30, bounds.shift(w)))
    # Within 0.1 % of the bound (the uniform shift is 0.3-1.0 % above it), never below it.
    assert shor - 1e-6 <= ours <= shor * (1 + 1e-3)
    assert uniform > shor * (1 + 3e-3)


def test_is_psd_tells_a_psd_matrix_from_one_that_is_not():
    assert bounds.is_psd(np.array([[2.0, 1.0], [1.0, 2.0]]))
    assert not bounds.is_psd(np.array([[1.0, 2.0], [2.0, 1.0]]))  # eigenvalues 3 and −1


@pytest.mark.parametrize("seed", range(20))
def test_incumbent_is_a_feasible_set_no_worse_than_its_starts(seed):
    q, C, tokens, budget, lam, alpha, tau = random_case(seed)
    pool = prepare(q, C, tokens)
    terms = Terms(lam, alpha, None if tau == "pool" else tau)
    p = problem.reduce(pool, budget, terms)
    found, value = problem.incumbent(p, [[]], kicks=50)
    positions = [int(p.positions[i]) for i in found]
    assert p.tokens[found].sum() <= budget
    assert value == pytest.approx(objective_value(pool, positions, terms), abs=1e-9)
    singles = [problem.local_search(p, [i])[1] for i in range(len(p.positions))]
    assert value >= max(singles, default=0.0) - 1e-9
    assert value >= 0.0  # the empty set
    best = max(
        objective_value(pool, list(S), terms)
        for S in subsets(len(C))
        if tokens[list(S)].sum() <= budget
    )
    assert value <= best + 1e-9
    # Deterministic: the same seed gives the same set.
    assert problem.incumbent(p, [[]], kicks=50) == (found, value)
