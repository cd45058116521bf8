"""The exact solver's problem after its proven reductions (:func:`reduce`), and incumbents.

:func:`reduce` turns a pool, a budget and the terms into a :class:`Problem`: the chunks an
optimum may need, a_i = α·r_i, the pair weights W and the tokens. :func:`local_search` and
:func:`incumbent` find good sets of it, which the branch and bound of
:mod:`adagres.optimum.exact` has to beat: the better the incumbent, the more nodes it cuts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..core.loop import Terms
from ..core.prepared import PreparedPool
from .bounds import ABS_TOL, count_fit, max_gain

__all__ = ["INCUMBENT_KICKS", "Problem", "Search", "incumbent", "local_search", "reduce"]

#: Perturbations of :func:`incumbent`'s iterated local search (each: a few chunks out, one
#: in at random, then :func:`local_search`); a fixed count keeps the result deterministic.
INCUMBENT_KICKS = 300


@dataclass(frozen=True, eq=False)
class Problem:
    """The reduced problem: candidates (pool positions), a, W, tokens, budget, k_max."""

    positions: np.ndarray  # pool positions of the candidates, ascending
    relevance_term: np.ndarray  # a_i = α·r_i
    weights: np.ndarray  # W, float64, symmetric, zero diagonal
    tokens: np.ndarray
    budget: int
    k_max: int  # largest number of candidates that fit together
    n_fit: int  # chunks no longer than the budget, before the other reductions


class Search(NamedTuple):
    """What a search of a :class:`Problem` leaves: the best set (candidate positions), its F,
    a proven upper bound on the optimum, the nodes bounded (or the feasible sets enumerated)
    and whether it finished (not stopped by a limit)."""

    best: list[int]
    value: float
    upper_bound: float
    nodes: int
    finished: bool


def reduce(pool: PreparedPool, budget: int, terms: Terms) -> Problem:
    """The candidates of the problem after two proven reductions.

    1. A chunk with ℓ_i > T is in no feasible set.
    2. A chunk whose marginal gain is ≤ 0 in every feasible set (:func:`max_gain` at
       k_max) is dropped: for S ∋ i feasible, F(S) − F(S∖{i}) = a_i − Σ_{j∈S∖i} w_ij ≤ 0
       and S∖{i} is feasible, so some optimum avoids i. Negative-relevance chunks with no
       negative pair weight are the common case. Repeated until nothing changes (k_max
       shrinks with the candidates), each round applying the same argument to the rest.
    """
    lam, alpha, tau = terms
    live = np.flatnonzero(pool.tokens <= budget)
    n_fit = len(live)
    sub = pool.chunks[live]
    gram = (sub @ sub.T).astype(np.float64)
    if tau is not None:
        gram = np.maximum(gram - tau, 0.0)
    weights = lam * gram
    np.fill_diagonal(weights, 0.0)
    a = alpha * pool.relevance[live].astype(np.float64)
    tokens = pool.tokens[live].astype(np.int64)
    while True:
        k = count_fit(tokens, budget)
        keep = max_gain(weights, a, k) > 0
        if keep.all():
            break
        live, a, tokens = live[keep], a[keep], tokens[keep]
        weights = weights[np.ix_(keep, keep)]
    return Problem(
        positions=live,
        relevance_term=a,
        weights=weights,
        tokens=tokens,
        budget=budget,
        k_max=k,
        n_fit=n_fit,
    )


def local_search(p: Problem, start: Iterable[int]) -> tuple[list[int], float]:
    """Best-improvement add / drop / swap from ``start`` (candidate positions, a set that
    fits) until no move improves F; returns the set and its F (as computed from ``p``)."""
    a, w, tok, b = p.relevance_term, p.weights, p.tokens, p.budget
    x = np.zeros(len(a), dtype=bool)
    x[list(start)] = True
    gain = a - w[:, x].sum(axis=1)  # for i in S: its gain against S∖{i} (W_ii = 0)
    value = float(a[x].sum() - 0.5 * w[np.ix_(x, x)].sum())
    used = int(tok[x].sum())
    while True:
        best = ABS_TOL
        move: tuple[int | None, int | None] | None = None  # (put in, taken out)
        add = ~x & (tok <= b - used)
        if add.any():
            i = int(np.argmax(np.where(add, gain, -np.inf)))
            if gain[i] > best:
                best, move = float(gain[i]), (i, None)
        if x.any():
            i = int(np.argmax(np.where(x, -gain, -np.inf)))
            if -gain[i] > best:
                best, move = float(-gain[i]), (None, i)
        ins, outs = np.flatnonzero(x), np.flatnonzero(~x)
        if len(ins) and len(outs):  # swap o ∈ S for i ∉ S: gain_i + w_io − gain_o
            delta = gain[outs][None, :] + w[np.ix_(ins, outs)] - gain[ins][:, None]
            fits = tok[outs][None, :] - tok[ins][:, None] <= b - used
            delta = np.where(fits, delta, -np.inf)
            row, col = (int(v) for v in np.unravel_index(int(np.argmax(delta)), delta.shape))
            if delta[row, col] > best:
                best, move = float(delta[row, col]), (int(outs[col]), int(ins[row]))
        if move is None:
            return [int(i) for i in np.flatnonzero(x)], value
        put, take = move
        if put is not None:
            x[put], used = True, used + int(tok[put])
            gain -= w[:, put]
        if take is not None:
            x[take], used = False, used - int(tok[take])
            gain += w[:, take]
        value += best


def incumbent(
    p: Problem, starts: Iterable[Iterable[int]], kicks: int = INCUMBENT_KICKS, seed: int = 0
) -> tuple[list[int], float]:
    """The best local optimum found from ``starts`` (sets that fit), from every single
    candidate, and by an iterated local search from the best: ``kicks`` times, up to three
    of its chunks out and a random fitting one in (``numpy.random.default_rng(seed)``),
    then :func:`local_search`, moving on to the result when it is no worse. Returns the
    best set (candidate positions) and its F; the empty set (F = 0) when nothing beats it.
    """
    best: list[int] = []
    value = 0.0
    singles = ([i] for i in range(len(p.positions)))
    for start in (*starts, *singles):
        found, f = local_search(p, start)
        if f > value + ABS_TOL:
            best, value = found, f
    rng = np.random.default_rng(seed)
    here, f_here = best, value
    for _ in range(kicks if len(p.positions) > 1 else 0):
        kept = list(here)
        for _ in range(min(len(kept), int(rng.integers(1, 4)))):
            kept.pop(int(rng.integers(len(kept))))
        room = p.budget - int(p.tokens[kept].sum())
        outside = np.setdiff1d(np.flatnonzero(p.tokens <= room), kept)
        if len(outside):
            kept.append(int(rng.choice(outside)))
        found, f = local_search(p, kept)
        if f >= f_here - ABS_TOL:
            here, f_here = found, f
        if f > value + ABS_TOL:
            best, value = found, f
    return best, value
