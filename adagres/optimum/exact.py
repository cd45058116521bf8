"""The exact optimum of F within the budget: branch and bound, seeded by the greedy.

Maximise F(S) = Σ_{i∈S} a_i − Σ_{i<j∈S} w_ij subject to Σ_{i∈S} ℓ_i ≤ T, with a_i = α·r_i
and w_ij = λ·s̃_ij (s̃ = max(0, s − τ) with a floor τ, else the signed cosine s); with x ∈
{0,1}^N and W symmetric with a zero diagonal, F(x) = a·x − ½·xᵀWx. :func:`solve` applies the
proven reductions of :func:`reduce`, takes :func:`incumbent` (local search from the greedy
runs and from every chunk, then an iterated local search) as the incumbent, then branches
one chunk in or out at a time, taking the open node with the largest bound and diving from
it. A node (a set S in, a set U open) is cut off when an upper bound on its completions is
no better than the incumbent: :func:`split_bound` (cheap) first, then :func:`convex_bound`
(a concave relaxation over the knapsack polytope with the weights W − N, N ≥ 0 the pair
multipliers of :func:`~adagres.optimum.nonnegative.pair_multipliers`, and the per-chunk
diagonal of :func:`diagonal`: together the doubly non-negative bound). When a limit
(:func:`solve`) stops the search, the largest bound still open bounds the optimum: the
result carries the proven gap (:class:`ExactResult`); ``proven`` is True only when nothing
open can beat the set by more than max(1e-9, rel_gap·|F|).
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..core.loop import POLICY_RULES, Rule, Terms, objective_value
from ..core.prepared import PreparedPool
from ..core.selection import greedy
from ..errors import SolverError
from .bounds import ABS_TOL, convex_bound, count_fit, diagonal, rounded, shift, split_bound
from .enumeration import ENUMERATE_MAX_SETS, enumerate_best
from .nonnegative import pair_multipliers
from .problem import Problem, Search, incumbent, local_search, reduce

__all__ = ["EXACT_MAX_CHUNKS", "EXACT_MAX_NODES", "ExactResult", "solve", "solve_exact"]

#: Most candidates (after :func:`reduce`) the solver takes. The refusal rule is this size
#: alone: a node costs O(N²) plus an N × N eigenvalue step now and then, and the time limit
#: bounds the rest. A rule on candidates × k_max refused real 100-chunk pools at 1,200
#: tokens (k_max 29–32), 11 of 12 of which the search proves in 0.3–4.8 s
#: (bench/bench_exact.py), while synthetic pools at k_max 17 stop at a gap: the search
#: size does not predict the time.
EXACT_MAX_CHUNKS = 200
#: Nodes the search bounds before it reports the proven gap instead of an optimum: the
#: default limit is work, not time, so a run gives the same answer on any machine at any
#: load. A node takes about 1 ms at 100 chunks on 2 cores, so this is seconds of work;
#: every bundled pool, synthetic and FanOutQA 100-chunk pool of ``bench/bench_exact.py``
#: at up to 1,200 tokens is proven within it (bench/exact_results.json has the counts).
EXACT_MAX_NODES = 10_000


@dataclass(frozen=True)
class ExactResult:
    """The best set found (pool positions, ascending), its F and a proven upper bound on
    the optimum; ``proven``: the set is optimal (within the tolerance)."""

    indices: tuple[int, ...]
    objective: float
    upper_bound: float
    proven: bool
    nodes: int
    seconds: float
    n_fit: int
    n_candidates: int
    k_max: int
    #: True when every feasible set was visited (:mod:`~adagres.optimum.enumeration`);
    #: ``nodes`` is then the number of sets.
    enumerated: bool = False

    @property
    def gap(self) -> float:
        """upper_bound − objective; ``relative_gap`` divides it by |objective|."""
        return max(0.0, self.upper_bound - self.objective)

    @property
    def relative_gap(self) -> float:
        return relative(self.gap, self.objective)


def relative(gap: float, of: float) -> float:
    return 0.0 if gap == 0 else (gap / abs(of) if of != 0 else math.inf)


class Node(NamedTuple):
    """A search node: the chunks in S, the open chunks U, their gains, F(S), the tokens
    left, the relaxation's warm start, the diagonal shift d on U, |U| when d was set, and
    an upper bound on F over the node's subtree."""

    chosen: tuple[int, ...]
    open_chunks: np.ndarray
    gain: np.ndarray
    value: float
    left: int
    warm: np.ndarray | None
    shift: np.ndarray
    n_shift: int
    bound: float


def search(
    p: Problem,
    start: list[int],
    value: float,
    deadline: float,
    rel_gap: float,
    max_nodes: int | None = None,
) -> Search:
    """Branch and bound from the incumbent ``start`` (F = ``value``), best bound first.

    The branch chunk (of a :class:`Node`, gains g_i = a_i − Σ_{j∈S} w_ij on U) is the one
    the relaxation values most; the search dives into "in" when its relaxed value is ≥ ½
    (else "out") and queues the other child by its bound; when a dive ends, the queued node
    with the largest bound is next, so the largest open bound (the proven upper bound when
    a limit stops it) keeps falling while dives find incumbents. The relaxation uses W − N
    (the root's pair multipliers; N_U ≥ 0 on any U) with the shift d, lowered
    (:func:`reshift`) when U has shrunk by 40 % (λ_min of a principal submatrix is never
    lower, so the relaxation only tightens). The :class:`Search` upper bound is F itself
    when an exact search finished, F + rel_gap·|F| when a search with a relative gap did
    (it cut nodes that could beat F by that much).
    """
    w, tok = p.weights, p.tokens
    tok_f = tok.astype(np.float64)

    def slack(f: float) -> float:
        """What the pruned nodes may still exceed F by: up to rel_gap·|F| (their bounds were
        at most F plus that when they were cut, and F only grows); 0 for an exact search,
        whose ABS_TOL is the solver's tolerance on every F."""
        return max(ABS_TOL, rel_gap * abs(f)) if rel_gap > 0 else 0.0

    # The relaxation's weights W − N (N ≥ 0: the pair multipliers of the doubly
    # non-negative bound) and its diagonal, both fitted once at the root.
    relaxed_w = w - pair_multipliers(p.relevance_term, w, tok, p.budget, deadline=deadline)
    d0 = diagonal(relaxed_w, p.relevance_term, tok, p.budget, p.k_max)
    # The step is 1/lipschitz; a floor keeps it finite when Q ≈ 0 (then the bound is exact).
    lipschitz = max(float(np.linalg.eigvalsh(relaxed_w + np.diag(d0))[-1]), 1e-3) if len(w) else 1.0
    root = Node(
        chosen=(),
        open_chunks=np.arange(len(w)),
        gain=p.relevance_term.copy(),
        value=0.0,
        left=p.budget,
        warm=None,
        shift=d0,
        n_shift=len(w),
        bound=math.inf,
    )
    heap: list[tuple[float, int, Node]] = []  # nodes by decreasing bound, then by age
    dive: Node | None = root
    best, nodes = list(start), 0
    tried = useful = 0  # relaxations computed, and those that cut or dropped something
    while dive is not None or heap:
        # The root is always bounded; a node limit stops a rerun at the same node.
        out_of_nodes = max_nodes is not None and nodes >= max_nodes
        if nodes and (out_of_nodes or time.perf_counter() > deadline):
            open_bounds = [-b for b, _, _ in heap] + ([dive.bound] if dive is not None else [])
            upper = max(value + slack(value), *open_bounds)
            return Search(best=best, value=value, upper_bound=upper, nodes=nodes, finished=False)
        if dive is None:
            dive = heapq.heappop(heap)[2]
        chosen, open_, gain, f, left, warm, d, n_shift, parent = dive
        dive = None
        tol = max(ABS_TOL, rel_gap * abs(value))
        if parent <= value + tol:
            continue
        nodes += 1
        if f > value:
            value, best = f, list(chosen)
        target = value + tol - f
        if not len(open_):
            continue
        q = w[np.ix_(open_, open_)]  # W on U: +inf on the diagonal for the split bound
        np.fill_diagonal(q, np.inf)
        cheap = split_bound(q, gain, tok[open_], left, target)
        if cheap <= target:
            continue
        with_ = without = np.full(len(open_), cheap)
        x = warm if warm is not None else np.clip(gain / max(gain.max(), 1e-300), 0.0, 1.0)
        # The relaxation costs ~10x the cheap bound: used while it cuts (or drops chunks
        # from) at least a quarter of the nodes it is tried on, and on every 16th node.
        if 4 * useful >= tried - 8 or nodes % 16 == 0:
            tried += 1
            q = relaxed_w[np.ix_(open_, open_)]  # W − N on U, zero diagonal
            if len(open_) <= 0.6 * n_shift and len(open_) > 1:
                d, n_shift = reshift(q, d), len(open_)
            q[np.diag_indices_from(q)] = d  # Q = W_U + D_U
            k = count_fit(tok[open_], left)
            r = convex_bound(gain + d / 2, q, tok_f[open_], left, k, warm, lipschitz, target)
            if r.bound <= target:
                useful += 1
                continue
            if nodes == 1:  # the root's relaxed optimum, rounded and improved: an incumbent
                found, f_found = local_search(p, rounded(r.x, tok, p.budget))
                if f_found > value:
                    value, best = f_found, found
            # A chunk whose completions are all bounded by the target is dropped from this
            # subtree; one whose avoiding completions are is forced in (no "out" branch).
            keep = r.with_ > target
            useful += int(not keep.all())
            open_, gain, x, d = open_[keep], gain[keep], r.x[keep], d[keep]
            with_, without = np.minimum(r.with_[keep], cheap), np.minimum(r.without[keep], cheap)
            if not len(open_):
                continue
        forced = without <= target
        j = int(np.argmax(forced)) if forced.any() else int(np.argmax(x))
        i = int(open_[j])
        rest, rest_gain, rest_x = np.delete(open_, j), np.delete(gain, j), np.delete(x, j)
        rest_d = np.delete(d, j)
        fits = tok[rest] <= left - tok[i]
        inside = rest[fits]
        # A child's completions are among its parent's: its bound is at most the parent's.
        take = Node(
            chosen=(*chosen, i),
            open_chunks=inside,
            gain=rest_gain[fits] - w[i, inside],
            value=f + float(gain[j]),
            left=left - int(tok[i]),
            warm=rest_x[fits],
            shift=rest_d[fits],
            n_shift=n_shift,
            bound=min(parent, f + float(with_[j])),
        )
        skip = Node(
            chosen=chosen,
            open_chunks=rest,
            gain=rest_gain,
            value=f,
            left=left,
            warm=rest_x,
            shift=rest_d,
            n_shift=n_shift,
            bound=min(parent, f + float(without[j])),
        )
        # Dive into the child the relaxation prefers; the other waits in the heap.
        dive, other = (take, skip) if forced[j] or x[j] >= 0.5 else (skip, take)
        if not forced[j]:
            heapq.heappush(heap, (-other.bound, nodes, other))
    return Search(
        best=best, value=value, upper_bound=value + slack(value), nodes=nodes, finished=True
    )


def reshift(q: np.ndarray, d: np.ndarray) -> np.ndarray:
    """The smaller in sum of two shifts that keep Q_U = W_U + D_U ⪰ 0 on a node's open
    chunks (``q``: the relaxation's weights on U, zero diagonal): d lowered by
    λ_min(W_U + D_U), or the uniform :func:`shift` of W_U (both ⪰ 0 by construction,
    whatever d was)."""
    margin = 1e-9 * (1.0 + float(d.max()))
    q[np.diag_indices_from(q)] = d
    lowered = np.maximum(d - max(float(np.linalg.eigvalsh(q)[0]) - margin, 0.0), 0.0)
    q[np.diag_indices_from(q)] = 0.0
    uniform = np.full(len(d), shift(q))
    return uniform if uniform.sum() < lowered.sum() else lowered


def solve(
    pool: PreparedPool,
    budget: int,
    terms: Terms,
    *,
    max_nodes: int | None = EXACT_MAX_NODES,
    time_limit: float | None = None,
    max_chunks: int = EXACT_MAX_CHUNKS,
    rel_gap: float = 0.0,
    max_sets: int = ENUMERATE_MAX_SETS,
) -> ExactResult:
    """The best set within ``budget`` at ``terms``, or the best found with a proven gap.

    Refuses with :class:`SolverError` (before searching) when more than ``max_chunks``
    chunks remain after :func:`reduce`. When at most ``max_sets`` sets fit, it visits them
    all (``enumerated``). Otherwise it never raises: a search stopped by ``max_nodes``
    (nodes bounded; None: no limit) or, only when given, ``time_limit`` (seconds) returns
    with ``proven`` False and its upper bound. The node limit is deterministic (a rerun
    stops at the same node whatever the machine's speed or load); a time limit is not, so
    nothing in the library sets one by default. ``rel_gap`` > 0 cuts every node
    that cannot beat the best set by more than that share of its F: ``proven`` then means
    proven within ``rel_gap``, and ``upper_bound`` is at least F·(1 + rel_gap).

    >>> import numpy as np
    >>> from adagres import prepare
    >>> pool = prepare([1.0, 0.0], [[1.0, 0.0], [0.99, 0.14], [0.6, 0.8]], [10, 15, 10])
    >>> r = solve(pool, 20, Terms(0.5, 1.0, None))  # 0 and 1 do not fit together
    >>> r.indices, r.proven
    ((0, 2), True)
    """
    started = time.perf_counter()
    fit = pool.tokens[pool.tokens <= budget]
    if len(fit) > 4 * max_chunks:  # refused before their N × N pair matrix is built
        raise SolverError(refusal(budget, len(fit), len(fit), count_fit(fit, budget), max_chunks))
    p = reduce(pool, budget, terms)
    n = len(p.positions)
    if n > max_chunks:
        raise SolverError(refusal(budget, p.n_fit, n, p.k_max, max_chunks))
    found = enumerate_best(p, max_sets)  # every feasible set seen: proven without a bound
    enumerated = found is not None
    if found is None:
        where = {int(pos): i for i, pos in enumerate(p.positions)}
        rules = [
            POLICY_RULES["skip"],
            POLICY_RULES["ratio"],
            Rule(score="relevance", budget="skip", stop_nonpositive=False),
        ]
        starts = [
            [where[i] for i in greedy(pool, budget, terms, rule, False).picks if i in where]
            for rule in rules
        ]
        best, value = incumbent(p, starts)
        deadline = math.inf if time_limit is None else started + time_limit
        found = search(p, best, value, deadline, rel_gap, max_nodes)
    best, value, upper, nodes, finished = found
    indices = tuple(sorted(int(p.positions[i]) for i in best))
    objective = objective_value(pool, list(indices), terms)
    upper = objective if enumerated else max(upper, objective)  # enumerated: F is the optimum
    # Finished: optimal (within rel_gap); stopped: proven only if every open bound is close.
    proven = finished or upper - value <= max(ABS_TOL, rel_gap * abs(value))  # value ≈ objective
    return ExactResult(
        indices=indices,
        objective=objective,
        upper_bound=upper,
        proven=bool(proven),
        nodes=nodes,
        seconds=time.perf_counter() - started,
        n_fit=p.n_fit,
        n_candidates=n,
        k_max=p.k_max,
        enumerated=enumerated,
    )


def refusal(budget: int, n_fit: int, n: int, k: int, max_chunks: int) -> str:
    return (
        f"exact: {n_fit} chunks fit the budget of {budget} tokens; {n} of them are candidates "
        f"and up to {k} fit together (limits: {max_chunks} chunks, the size whose search "
        f"steps stay cheap enough for {EXACT_MAX_NODES:,} nodes in seconds). Use a "
        "smaller pool or budget, or raise max_chunks of adagres.optimum.exact.solve."
    )


def solve_exact(
    pool: PreparedPool,
    budget: int,
    terms: Terms,
    max_chunks: int = EXACT_MAX_CHUNKS,
    max_nodes: int | None = EXACT_MAX_NODES,
    time_limit: float | None = None,
    max_sets: int = ENUMERATE_MAX_SETS,
) -> list[int]:
    """The optimal set of ``exact`` (pool positions); :class:`SolverError` when refused or
    when no optimum is proven within ``max_nodes`` nodes (or ``time_limit`` seconds, when
    given; the message gives the gap, and the error's ``result`` the :class:`ExactResult`
    with the proven upper bound)."""
    r = solve(
        pool,
        budget,
        terms,
        time_limit=time_limit,
        max_chunks=max_chunks,
        max_nodes=max_nodes,
        max_sets=max_sets,
    )
    if not r.proven:
        by_nodes = max_nodes is not None and r.nodes >= max_nodes
        limit = f"{max_nodes:,} nodes" if by_nodes else f"{time_limit:g} s"
        raise SolverError(
            f"exact: no proven optimum within {limit} for {r.n_candidates} chunks "
            f"(up to {r.k_max} fit together): best F = {r.objective:.6g}, upper bound "
            f"{r.upper_bound:.6g}, proven gap {r.gap:.3g} ({r.relative_gap:.2%}) after "
            f"{r.nodes} nodes. Raise the limit, or use a smaller pool or budget.",
            result=r,
        )
    return list(r.indices)
