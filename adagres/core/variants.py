"""Redundancy-aware variants beyond the paper, each a named strategy with one idea.

The paper's objective (relevance minus λ times every pairwise cosine) turns its gains
negative on real pools, so it stops early and loses answers to top-k filling the budget.
Each variant here changes one thing, says why in its docstring, and returns the same
:class:`~adagres.Selection` as every other strategy: its steps and F are recorded at the
λ and τ of the given settings (:func:`~adagres.core.replay.replay`), so numbers compare.

:data:`VARIANTS` maps each name to ``fn(pool, budget, texts) -> Selection``, the form the
evaluation harness registers; :func:`run_variant` runs one with chosen settings.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import InputError
from .greedy import POLICY_RULES, finish
from .guard import Duplicate, guard_for
from .prepared import PreparedPool, build
from .records import StopReason
from .replay import replay
from .result import Selection
from .selection import greedy, resolve_terms, select_prepared
from .settings import Settings
from .validate import normalise_rows

__all__ = [
    "NEAR_DUPLICATE_FLOOR",
    "STRATEGY_FUNCTIONS",
    "VARIANTS",
    "coverage",
    "near_duplicates",
    "orthogonal",
    "orthogonal_pool",
    "run_variant",
]

#: Cosine above which two chunks count as near-duplicates for :func:`near_duplicates`.
NEAR_DUPLICATE_FLOOR = 0.85
#: λ of :func:`near_duplicates`: steep enough that one near-duplicate pair (cosine 0.95,
#: 0.1 above the floor) costs 0.5, more than the relevance of most retrieved chunks.
NEAR_DUPLICATE_LAM = 5.0


def named(selection: Selection, name: str, **params: object) -> Selection:
    """``selection`` under the variant's name, with its parameters recorded."""
    return dataclasses.replace(selection, strategy=name, params={**selection.params, **params})


def near_duplicates(
    pool: PreparedPool,
    budget: int,
    settings: Settings | None = None,
    *,
    floor: float = NEAR_DUPLICATE_FLOOR,
    lam: float = NEAR_DUPLICATE_LAM,
    trace: bool = True,
    texts: Sequence[str] | None = None,
) -> Selection:
    """Penalise only near-duplicates, steeply, and spend the budget (policy ``fill``).

    What it changes: τ = ``floor`` (only similarity above it counts) with a large fixed λ.
    Why: chunks on one topic share a cosine of 0.3–0.6 with each other; the paper counts
    that shared topicality as redundancy, so every gain turns negative after a few picks.
    Counting only what is above ``floor`` removes the repeats (the same fact twice) and
    leaves the rest in relevance order, so the budget buys what top-k would have bought,
    less its duplicates.
    """
    base = Settings() if settings is None else settings
    own = base.replace(lam=lam, redundancy_floor=floor, policy="fill")
    picked = select_prepared(pool, budget, own, trace=False, texts=texts)
    result = recorded("near_duplicates", pool, budget, picked.indices, picked.stop_reason,
                      base, trace, floor=floor, lam_near_duplicates=lam)  # fmt: skip
    return guarded(result, picked.duplicates)


def guarded(selection: Selection, duplicates: tuple[Duplicate, ...]) -> Selection:
    """``selection`` with the near-duplicate guard's record of the run that made its picks."""
    return dataclasses.replace(selection, duplicates=duplicates) if duplicates else selection


def recorded(
    name: str,
    pool: PreparedPool,
    budget: int,
    picks: Sequence[int],
    reason: StopReason,
    settings: Settings,
    trace: bool,
    **params: object,
) -> Selection:
    """A variant's picks recorded at the λ and τ that ``settings`` give AdaGReS, so its F
    and step gains compare with every other strategy run with those settings."""
    terms, calibration = resolve_terms(pool, budget, settings)
    run = replay(pool, budget, list(picks), terms, trace, reason)
    result = finish(name, pool, budget, run, terms, calibration=calibration,
                    settings=settings, policy=settings.policy)  # fmt: skip
    return named(result, name, **params)


#: Each prepared pool's orthogonal pool, while the pool lives: the app reruns the orthogonal
#: strategy on one pool at every control change, and a kept pool keeps its cosine rows.
ORTHOGONAL_POOLS: weakref.WeakKeyDictionary[PreparedPool, PreparedPool] = (
    weakref.WeakKeyDictionary()
)


def orthogonal_pool(pool: PreparedPool) -> PreparedPool:
    """The pool with every chunk replaced by its unit component orthogonal to the query.

    Relevance is kept as it is (r_i = q·c_i of the original chunks); only the similarity
    between chunks changes: s⊥_ij = cos(c_i − r_i·q, c_j − r_j·q). A chunk parallel to the
    query (no orthogonal component) keeps its own direction. Made once per pool
    (:data:`ORTHOGONAL_POOLS`; prepared pools are read-only, so a kept one is still right).
    """
    kept = ORTHOGONAL_POOLS.get(pool)
    if kept is None:
        kept = ORTHOGONAL_POOLS[pool] = orthogonal_of(pool)
    return kept


def orthogonal_of(pool: PreparedPool) -> PreparedPool:
    """:func:`orthogonal_pool`, computed."""
    q = pool.query.astype(pool.chunks.dtype)
    residual = pool.chunks - np.outer(pool.relevance.astype(pool.chunks.dtype), q)
    norms = np.sqrt(np.vecdot(residual, residual))
    flat = norms <= 1e-6
    residual[flat] = pool.chunks[flat]
    residual = normalise_rows(residual)
    prepared = build(residual, pool.query, np.asarray(pool.tokens))
    return dataclasses.replace(prepared, relevance=pool.relevance)


def orthogonal(
    pool: PreparedPool,
    budget: int,
    settings: Settings | None = None,
    *,
    trace: bool = True,
    texts: Sequence[str] | None = None,
) -> Selection:
    """Redundancy measured on what two chunks share beyond their relevance to the query.

    What it changes: s_ij becomes the cosine of the chunks' components orthogonal to q
    (:func:`orthogonal_pool`); λ and τ are those the settings give on the pool itself (Eq. 7
    with the plain ρ̄: the orthogonal ρ̄ is near 0 or negative on most pools, where Eq. 7
    has no value). Why: two relevant chunks are similar partly because both point at the
    query; that part is not redundancy. The picks are recorded at the plain cosine, and the
    near-duplicate guard compares the plain cosine too.
    """
    base = Settings(policy="fill", formula="derived") if settings is None else settings
    terms, _ = resolve_terms(pool, budget, base)
    rule = POLICY_RULES[base.policy]
    guard = guard_for(pool, base.duplicate_guard, texts)
    picked = greedy(orthogonal_pool(pool), budget, terms, rule, False, guard)
    result = recorded("orthogonal", pool, budget, picked.picks, picked.reason, base, trace)
    return guarded(result, picked.duplicates)


def coverage(
    pool: PreparedPool,
    budget: int,
    settings: Settings | None = None,
    *,
    weight: float = 1.0,
    trace: bool = True,
    texts: Sequence[str] | None = None,
) -> Selection:
    """Budgeted facility location: relevance plus how well the set covers the pool.

    F_cov(S) = Σ_{i∈S} r_i + weight · Σ_j w_j · max(0, max_{i∈S} s_ij), w_j = max(r_j, 0) / Σ
    max(r, 0) (chunks count as much as they are relevant). What it changes: a monotone
    submodular objective instead of a pairwise penalty. Why: its gains never turn negative,
    so it spends the budget like top-k, while a chunk that repeats a selected one adds no
    coverage and loses to one that covers something new. Greedy by gain among the chunks
    that fit (ties: lowest position), until nothing fits; O(k·N²) with the N×N cosines, so
    meant for retrieved pools (hundreds to a few thousand chunks). The near-duplicate guard
    takes a chunk out of play when it duplicates a pick, as in the greedy loop.
    """
    if not weight >= 0:
        raise InputError(f"weight: must be >= 0, got {weight!r}")
    base = Settings() if settings is None else settings
    guard = guard_for(pool, base.duplicate_guard, texts)
    chunks, tokens, relevance = pool.chunks, pool.tokens, pool.relevance
    sims = np.maximum((chunks @ chunks.T).astype(np.float64), 0.0)
    w = np.maximum(relevance, 0.0)
    w = w / w.sum() if w.sum() > 0 else np.full(pool.n_chunks, 1.0 / pool.n_chunks)
    covered = np.zeros(pool.n_chunks)
    in_play = np.ones(pool.n_chunks, dtype=bool)
    picks: list[int] = []
    used = 0
    while True:
        fits = in_play & (tokens <= budget - used)
        if not fits.any():
            break
        gain = relevance + weight * (np.maximum(sims - covered, 0.0) @ w)
        best = int(np.argmax(np.where(fits, gain, -np.inf)))
        if gain[best] <= 0:
            break
        if guard is not None and guard.rejects(best):  # repeats a pick's text
            in_play[best] = False
            continue
        picks.append(best)
        used += int(tokens[best])
        in_play[best] = False
        if guard is not None:
            in_play[guard.after_pick(best, len(picks), in_play)] = False
        covered = np.maximum(covered, sims[best])
    reason = StopReason.POOL_EXHAUSTED if not in_play.any() else StopReason.BUDGET_EXHAUSTED
    value = float(relevance[picks].sum() + weight * (covered @ w)) if picks else 0.0
    result = recorded("coverage", pool, budget, picks, reason, base, trace, weight=weight,
                      coverage_objective=value)  # fmt: skip
    return guarded(result, tuple(guard.dropped) if guard is not None else ())


Variant = Callable[[PreparedPool, int, Sequence[str]], Selection]

#: Every named strategy beyond the baselines, in the form the evaluation harness takes.
VARIANTS: dict[str, Variant] = {
    "paper": lambda pool, budget, texts: named(select_prepared(pool, budget, Settings()), "paper"),
    "fill_derived_pool_floor": lambda pool, budget, texts: named(
        select_prepared(
            pool, budget, Settings(policy="fill", formula="derived", redundancy_floor="pool")
        ),
        "fill_derived_pool_floor",
    ),
    "near_duplicates": lambda pool, budget, texts: near_duplicates(pool, budget),
    "orthogonal": lambda pool, budget, texts: orthogonal(pool, budget),
    "coverage": lambda pool, budget, texts: coverage(pool, budget),
}

#: The variants that take any settings value, as strategies of :func:`adagres.baselines.run`.
#: The last argument is the chunk texts or None (the near-duplicate guard's text part).
STRATEGY_FUNCTIONS: dict[
    str, Callable[[PreparedPool, int, Settings, bool, Sequence[str] | None], Selection]
] = {
    "orthogonal": lambda pool, budget, settings, trace, texts: orthogonal(
        pool, budget, settings, trace=trace, texts=texts
    ),
    "near_duplicates": lambda pool, budget, settings, trace, texts: near_duplicates(
        pool, budget, settings, trace=trace, texts=texts
    ),
    "coverage": lambda pool, budget, settings, trace, texts: coverage(
        pool, budget, settings, trace=trace, texts=texts
    ),
}


def run_variant(name: str, pool: PreparedPool, budget: int, texts: Sequence[str] = ()) -> Selection:
    """Run the variant ``name`` of :data:`VARIANTS`."""
    if name not in VARIANTS:
        raise InputError(f"variant: expected one of {', '.join(map(repr, VARIANTS))}, got {name!r}")
    return VARIANTS[name](pool, budget, texts)
