"""Greedy, redundancy-aware context selection under a token budget (SPEC.md).

Read this file first. :func:`select` validates its input once (:func:`~adagres.prepare`),
derives λ (:func:`~adagres.calibrate`) and runs :func:`greedy`, the one loop every greedy
strategy shares, whose steps are labelled with SPEC.md's numbers. The objective and the
marginal gain of a chunk i given the selected set S are

    F(S)      = α · Σ_{i∈S} r_i  −  λ · Σ_{i<j; i,j∈S} s_ij
    gain_i(S) = α · r_i  −  λ · R_i(S),   R_i(S) = Σ_{j∈S} s_ij

(with the redundancy floor τ, s_ij counts as max(0, s_ij − τ)). The per-step machinery is
in :mod:`adagres.core.loop`; the result and its record in :mod:`adagres.core.result`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError
from . import validate as v
from .calibration import Calibration, calibrate_prepared
from .guard import Guard, guard_for
from .loop import POLICY_RULES, Loop, Rule, Run, Terms, finish, objective_value, scoring_of
from .packing import packer_for
from .prepared import PreparedPool, prepare
from .replay import replay
from .result import Selection
from .settings import Settings

__all__ = [
    "floor_value",
    "greedy",
    "greedy_selection",
    "objective",
    "ratio_safeguard",
    "resolve_terms",
    "select",
    "select_prepared",
]


def greedy(
    pool: PreparedPool,
    budget: int,
    terms: Terms,
    rule: Rule,
    trace: bool,
    guard: Guard | None = None,
    packing: bool = False,
) -> Run:
    """SPEC.md, "Greedy selection under the budget", for every greedy strategy.

    AdaGReS scores by the gain (``rule.score == "gain"``); the baselines swap the score
    (relevance, MMR, gain per token) and the stop rule, never the steps. With a near-duplicate
    ``guard`` (:mod:`adagres.core.guard`), step 6 also makes the chunks that duplicate the
    pick ineligible, as step 2 does for those that no longer fit. With ``packing`` (and a pool
    whose chunks overlap, :mod:`adagres.core.packing`), a pick is charged only the tokens
    it adds to the passages already taken, so costs ℓ_i may fall from step to step.
    """
    packer = packer_for(pool.spans, packing, pool.tokens, pool.similarities)
    if guard is not None and packer is not None:  # stitched, not duplicates (core.guard)
        guard.stitched = packer.stitches
    loop = Loop(pool, budget, terms, rule, trace, guard, packer)  # 1. used = 0, S = ∅, R = 0
    while True:
        loop.drop_unfit()  # 2. eligible: not in S and ℓ_i ≤ T − used ("did not fit" for good)
        pick = loop.best()  # 4. the largest score and the runner-up; ties: lowest position
        while pick.winner is not None and loop.rejects(pick.winner):  # repeats a pick / no fit
            pick = loop.best()
        # 3. nothing eligible: budget_exhausted (pool_exhausted if all are selected);
        # 5. the best gain ≤ 0: no_positive_gain, and the chunk is not added.
        reason = loop.stop_reason(pick)
        loop.record(pick, accepted=reason is None)
        if reason is not None:
            return loop.finish(reason)
        assert pick.winner is not None  # a step without a winner always has a stop reason
        loop.take(pick.winner)  # 6. add it; used += ℓ_w; R += C·c_w; go to 2


def resolve_terms(pool: PreparedPool, budget: int, settings: Settings) -> tuple[Terms, Calibration]:
    """λ, α and τ of a run: λ adaptive (Eq. 7) or fixed, τ a cosine or ρ̄ (``"pool"``).

    Every strategy run with the same settings gets the same terms, so every reported F and
    step gain is comparable.
    """
    calibration = calibrate_prepared(pool, budget, settings)
    lam = calibration.lam if settings.lam == "adaptive" else float(settings.lam)
    tau = floor_value(settings.redundancy_floor, calibration.mean_similarity)
    return Terms(lam=lam, alpha=settings.alpha, tau=tau), calibration


def floor_value(floor: float | str | None, mean_similarity: float) -> float | None:
    """τ as a number: ``"pool"`` is ρ̄ (0 when ρ̄ is undefined, below two chunks)."""
    if floor == "pool":
        return float(mean_similarity) if math.isfinite(mean_similarity) else 0.0
    return None if floor is None else float(floor)


def select_prepared(
    pool: PreparedPool,
    budget: int,
    settings: Settings,
    *,
    trace: bool = True,
    texts: Sequence[str] | None = None,
) -> Selection:
    """:func:`select` on a prepared pool with a settings value: the pool is trusted (it was
    validated when prepared); the budget and the settings are checked here too. ``texts``
    (the chunk texts) let the near-duplicate guard compare text too."""
    budget = v.budget(budget)
    checked_settings(settings)
    pool = pool.packing_ready(settings.packing, texts)
    rule, policy = POLICY_RULES[settings.policy], settings.policy
    result = greedy_selection("adagres", pool, budget, settings, rule, trace, texts, policy=policy)
    return ratio_safeguard(pool, budget, result, trace) if policy == "ratio" else result


def greedy_selection(
    name: str,
    pool: PreparedPool,
    budget: int,
    settings: Settings,
    rule: Rule,
    trace: bool,
    texts: Sequence[str] | None,
    *,
    policy: str | None = None,
    **params: object,
) -> Selection:
    """The Selection of strategy ``name``: a :func:`greedy` run of ``rule`` with the terms,
    the near-duplicate guard and the packing ``settings`` give (``params``: its own numbers,
    kept with it)."""
    terms, calibration = resolve_terms(pool, budget, settings)
    guard = guard_for(pool, settings.duplicate_guard, texts)
    run = greedy(pool, budget, terms, rule, trace, guard, settings.packing)
    return finish(
        name,
        pool,
        budget,
        run,
        terms,
        calibration=calibration,
        settings=settings,
        policy=policy,
        params=params,
        scoring=scoring_of(rule, terms),
    )


def checked_settings(settings: object) -> Settings:
    """``settings`` if it is a :class:`Settings` value; an InputError otherwise."""
    if not isinstance(settings, Settings):
        raise InputError(f"settings: expected an adagres.Settings value, got {settings!r:.60}")
    return settings


def ratio_safeguard(pool: PreparedPool, budget: int, result: Selection, trace: bool) -> Selection:
    """Keep the best single fitting chunk instead of the ratio-greedy set if it scores higher
    (the usual safeguard of knapsack greedy, SPEC.md policy ``ratio``)."""
    terms = result.terms
    fits = pool.tokens <= budget
    if not fits.any():
        return result
    single_value = np.where(fits, terms.alpha * pool.relevance, -np.inf)
    best = int(np.argmax(single_value))
    if single_value[best] <= result.objective or (best,) == result.indices:
        return result
    forced = replay(pool, budget, [best], terms, trace, result.stop_reason)
    note = (
        f"ratio safeguard: the best single chunk (position {best}, F = {single_value[best]:.4f}) "
        f"beats the gain-per-token set (F = {result.objective:.4f}, {result.size} chunks)"
    )
    return finish(
        "adagres",
        pool,
        budget,
        forced,
        terms,
        calibration=result.calibration,
        settings=result.settings,
        policy="ratio",
        note=note,
    )


def select(
    query_embedding: ArrayLike,
    chunk_embeddings: ArrayLike,
    token_counts: ArrayLike,
    budget: int,
    *,
    settings: Settings | None = None,
    trace: bool = True,
    texts: Sequence[str] | None = None,
    sources: Sequence[Hashable | None] | None = None,
    offsets: Sequence[int | None] | None = None,
    **options: object,
) -> Selection:
    """Select chunks greedily by α·relevance − λ·redundancy within ``budget`` tokens.

    ``query_embedding`` (d,) and ``chunk_embeddings`` (N, d) may be unnormalised; they are
    normalised once (a zero, NaN or infinite vector raises :class:`InputError` naming the
    chunk). ``token_counts`` (N,) are tokens of the tokenizer the budget is in. The pool's
    order is the retriever's rank order: ties go to the lowest position.

    ``settings`` (an :class:`adagres.Settings`) says how to select; its fields may also be
    given as keywords (``lam``, ``alpha``, ``policy``, ``formula``, ``scale``, ``offset``,
    ``lam_max``, ``redundancy_floor``, ``calibration_top_n``), which override it.
    ``lam="adaptive"`` (the default) derives λ from the pool, Eq. 7; a number ≥ 0 fixes it.
    ``policy`` is ``"skip"`` (stop only when nothing fits or no gain is positive),
    ``"stop"`` (the paper's Algorithm 1: stop when the best chunk does not fit),
    ``"ratio"`` (gain per token, with the best-single-chunk safeguard) or ``"fill"`` (keep
    adding the least redundant chunks after the gains turn non-positive, until nothing
    fits). ``trace=False`` skips the per-candidate record of each step (the fast path; it
    picks the same chunks).

    ``texts`` (the chunk texts) let ``packing=True`` pay once for repeated text and the
    near-duplicate guard compare text; ``sources`` and ``offsets`` (one per chunk, None
    where unknown) say where each chunk sits in its document. ``packing=True`` without
    ``texts`` is an :class:`InputError`.

    >>> import numpy as np
    >>> q = np.array([1.0, 0.0])
    >>> C = np.array([[0.94, 0.34], [0.91, 0.42], [0.87, -0.5]])  # 0 and 1 are near-twins
    >>> s = select(q, C, [50, 50, 50], 100, lam=1.0)
    >>> s.indices, s.stop_reason.value, s.tokens_used
    ((0, 2), 'budget_exhausted', 100)
    >>> s.verdict(1).kind.value  # behind its near-twin 0 at step 1, then redundant with it
    'outscored'
    """
    settings = Settings.of(settings, **options)
    pool = prepare(query_embedding, chunk_embeddings, token_counts)
    if texts is not None:
        pool = pool.with_texts(texts, sources, offsets)
        texts = pool.spans.texts if pool.spans is not None else None
    elif sources is not None or offsets is not None:
        raise InputError("sources/offsets: place chunk texts; pass texts= with them")
    return select_prepared(pool, v.budget(budget), settings, trace=trace, texts=texts)


def objective(
    query_embedding: ArrayLike,
    chunk_embeddings: ArrayLike,
    indices: ArrayLike,
    lam: float,
    *,
    alpha: float = 1.0,
    redundancy_floor: float | Literal["pool"] | None = None,
) -> float:
    """F(S) = α·Σ_{i∈S} r_i − λ·Σ_{i<j∈S} s_ij for the chunks at pool positions ``indices``.

    ``redundancy_floor`` τ counts only similarity above it (a cosine, or ``"pool"`` for ρ̄).

    >>> import numpy as np
    >>> q = np.array([1.0, 0.0]); C = np.array([[1.0, 0.0], [0.6, 0.8]])
    >>> round(objective(q, C, [0, 1], 0.5), 6)  # (1.0 + 0.6) - 0.5 * 0.6
    1.3
    """
    settings = Settings(lam=lam, alpha=alpha, redundancy_floor=redundancy_floor)
    chunks = v.unit_rows(chunk_embeddings)
    pool = prepare(query_embedding, chunks, np.zeros(chunks.shape[0], dtype=np.int64))
    picks = v.indices(indices, pool.n_chunks)
    tau = floor_value(settings.redundancy_floor, pool.mean_similarity)
    return objective_value(pool, picks, Terms(lam=float(lam), alpha=settings.alpha, tau=tau))
