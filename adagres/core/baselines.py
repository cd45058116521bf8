"""Baseline strategies on the same pool, budget and tokenizer (SPEC.md, "Baselines").

Every baseline returns the same :class:`~adagres.Selection` as :func:`adagres.select`, with
a step record, so every metric and view works on any of them. Every strategy takes the same
:class:`~adagres.Settings` and reports F and its step gains at the λ, α and τ those settings
give AdaGReS (:func:`~adagres.core.selection.resolve_terms`): the numbers of two strategies
run with one settings value compare. :func:`run` runs any strategy by name; the CLI, the
app and the sweeps all go through it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import InputError
from . import validate as v
from .calibration import FALLBACK_LAM
from .exact import EXACT_MAX_CHUNKS, EXACT_MAX_NODES, solve_exact
from .greedy import Rule, Terms, finish
from .guard import guard_for, without_duplicates
from .metrics import checked_texts
from .prepared import PreparedPool, prepare
from .records import StopReason
from .replay import replay
from .result import Selection
from .selection import checked_settings, greedy, resolve_terms, select_prepared
from .settings import Settings
from .variants import STRATEGY_FUNCTIONS

__all__ = [
    "EXACT_MAX_CHUNKS",
    "EXACT_MAX_NODES",
    "STRATEGIES",
    "exact",
    "mmr",
    "reference_code",
    "reference_lam",
    "run",
    "run_prepared",
    "topk_budget",
    "topk_same_k",
]

#: Every strategy by name, as the CLI and the app offer them.
STRATEGIES: tuple[str, ...] = (
    "adagres", "topk_same_k", "topk_budget", "mmr", "exact", "reference_code",
    *STRATEGY_FUNCTIONS,
)  # fmt: skip


def run_prepared(
    strategy: str,
    pool: PreparedPool,
    budget: int,
    settings: Settings,
    *,
    texts: Sequence[str] | None = None,
    k: int | None = None,
    reference: Selection | None = None,
    max_chunks: int = EXACT_MAX_CHUNKS,
    max_nodes: int | None = EXACT_MAX_NODES,
    time_limit: float | None = None,
    enforce_budget: bool = True,
    trace: bool = True,
) -> Selection:
    """Run ``strategy`` on a prepared pool with one settings value (inputs trusted).

    ``reference`` is the AdaGReS run with the same pool, budget and settings if the caller
    has it (``topk_same_k`` takes its size as k unless ``k`` is given). The pool is trusted
    (validated when prepared); the strategy, budget and settings are checked.
    """
    v.choice(strategy if isinstance(strategy, str) else repr(strategy), "strategy", STRATEGIES)
    budget = v.budget(budget)
    checked_settings(settings)
    if strategy == "adagres":
        return select_prepared(pool, budget, settings, trace=trace, texts=texts)
    if strategy in STRATEGY_FUNCTIONS:  # the variants beyond the paper (core/variants.py)
        return STRATEGY_FUNCTIONS[strategy](pool, budget, settings, trace, texts)
    terms, calibration = resolve_terms(pool, budget, settings)
    guard = guard_for(pool, settings.duplicate_guard, texts)  # None when the guard is off

    def done(run_: Any, **extra: Any) -> Selection:
        return finish(strategy, pool, budget, run_, terms, calibration=calibration,
                      settings=settings, **extra)  # fmt: skip

    if strategy == "topk_budget":
        rule = Rule(score="relevance", budget="skip", stop_nonpositive=False)
        return done(greedy(pool, budget, terms, rule, trace, guard))
    if strategy == "topk_same_k":
        if k is None:
            if reference is None:
                reference = select_prepared(pool, budget, settings, trace=False, texts=texts)
            k = reference.size
        rule = Rule(score="relevance", budget="skip", stop_nonpositive=False, max_picks=k)
        return done(greedy(pool, budget, terms, rule, trace, guard), params={"k": k})
    if strategy == "mmr":
        rule = Rule(score="mmr", budget="skip", stop_nonpositive=False,
                    lambda_mmr=settings.lambda_mmr)  # fmt: skip
        return done(greedy(pool, budget, terms, rule, trace, guard),
                    params={"lambda_mmr": settings.lambda_mmr})  # fmt: skip
    if strategy == "exact":
        chosen = solve_exact(pool, budget, terms, max_chunks, max_nodes, time_limit)
        order = sorted(chosen, key=lambda i: (-pool.relevance[i], i))
        # The guard does not change the search: a later duplicate in the optimal set is
        # removed from it (adagres.core.guard.without_duplicates), nothing replaces it.
        order, dropped = without_duplicates(pool, order, settings.duplicate_guard, texts)
        run_ = replay(pool, budget, order, terms, trace, StopReason.OPTIMAL)
        return done(run_._replace(duplicates=dropped))
    if strategy == "reference_code":
        if texts is None:
            raise InputError("reference_code: needs the chunk texts (it counts characters)")
        mean_chars = float(np.mean([len(t) for t in texts]))
        k = max(1, int(budget // mean_chars)) if mean_chars > 0 else 1
        beta = reference_lam(pool, k, settings.alpha) if settings.lam == "adaptive" else terms.lam
        rule = Rule(score="gain", budget="stop" if enforce_budget else "ignore",
                    stop_nonpositive=False, max_picks=k)  # fmt: skip
        own = greedy(pool, budget, Terms(beta, settings.alpha, None), rule, False, guard)
        # Its picks, recorded at the shared λ and τ so that F and the gains compare.
        run_ = replay(pool, budget, own.picks, terms, trace, own.reason)
        run_ = run_._replace(duplicates=own.duplicates)
        return done(run_, respects_budget=enforce_budget,
                    params={"k": k, "mean_chars": mean_chars, "beta": beta})  # fmt: skip
    v.choice(strategy, "strategy", STRATEGIES)
    raise AssertionError(strategy)  # every strategy is handled above


def run(
    strategy: str,
    query_embedding: Any,
    chunk_embeddings: Any,
    token_counts: Any,
    budget: int,
    *,
    settings: Settings | None = None,
    texts: Sequence[str] | None = None,
    k: int | None = None,
    reference: Selection | None = None,
    max_chunks: int = EXACT_MAX_CHUNKS,
    max_nodes: int | None = EXACT_MAX_NODES,
    time_limit: float | None = None,
    enforce_budget: bool = True,
    trace: bool = True,
    **options: Any,
) -> Selection:
    """Run any strategy by name; ``settings`` or its fields as keywords say how.

    F and the step gains of every strategy are reported at the λ and τ that these settings
    give AdaGReS, so two strategies compare; ``topk_same_k`` takes k from AdaGReS with the
    same settings (``reference``, if the caller has that run, saves computing it again).
    ``texts`` are needed by ``reference_code`` (it counts characters).

    >>> q = np.array([1.0, 0.0]); C = np.array([[0.9, 0.1], [0.95, 0.05], [0.5, 0.5]])
    >>> run("topk_budget", q, C, [60, 60, 30], 100).indices
    (1, 2)
    """
    v.choice(strategy, "strategy", STRATEGIES)
    settings = Settings.of(settings, **options)
    pool = prepare(query_embedding, chunk_embeddings, token_counts)
    if texts is not None:
        texts = checked_texts(texts, pool.n_chunks)
    if k is not None and (isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0):
        raise InputError(f"k: expected a whole number >= 0, got {k!r}")
    return run_prepared(
        strategy, pool, v.budget(budget), settings, texts=texts,
        k=None if k is None else int(k), reference=reference, max_chunks=max_chunks,
        max_nodes=None if max_nodes is None else v.whole(max_nodes, "max_nodes", minimum=1),
        time_limit=None if time_limit is None else v.real(time_limit, "time_limit", minimum=0.0),
        enforce_budget=enforce_budget, trace=trace,
    )  # fmt: skip


def _by_name(strategy: str, doc: str) -> Callable[..., Selection]:
    def function(
        query_embedding: Any, chunk_embeddings: Any, token_counts: Any, budget: int,
        **options: Any,
    ) -> Selection:  # fmt: skip
        return run(strategy, query_embedding, chunk_embeddings, token_counts, budget, **options)

    function.__name__ = function.__qualname__ = strategy
    function.__doc__ = doc
    return function


topk_budget = _by_name(
    "topk_budget",
    """Chunks in relevance order, skipping any that does not fit, until nothing fits.

    Takes the arguments of :func:`run`.

    >>> q = np.array([1.0, 0.0]); C = np.array([[0.9, 0.1], [0.95, 0.05], [0.5, 0.5]])
    >>> topk_budget(q, C, [60, 60, 30], 100).indices
    (1, 2)
    """,
)
topk_same_k = _by_name(
    "topk_same_k",
    """The paper's "simple" baseline: the ``k`` most relevant chunks that fit the budget.

    ``k`` defaults to the size of the AdaGReS selection for the same query, budget and
    settings. A chunk that would break the budget is skipped, as in :func:`topk_budget`.
    """,
)
mmr = _by_name(
    "mmr",
    """Maximal marginal relevance under the budget: λ_mmr·r_i − (1 − λ_mmr)·max_{j∈S} s_ij.

    λ_mmr is ``Settings.lambda_mmr`` (0.5). The first pick scores λ_mmr·r_i (nothing
    selected yet). Only chunks that fit compete; the run continues until nothing fits (MMR
    has no stopping score). ``step.score`` is the MMR score; ``step.gain`` the marginal F
    gain at the shared λ.
    """,
)
exact = _by_name(
    "exact",
    """The subset with the largest F within the budget, proven optimal by branch and bound.

    :mod:`adagres.core.exact` holds the solver, its reductions and bounds. A problem with
    more than ``max_chunks`` candidates (chunks that can improve a set) is refused with
    :class:`SolverError`, as is a search that does not prove optimality within
    ``max_nodes`` nodes (a work limit: the same answer on any machine; ``time_limit``
    seconds too, only when given; the message gives the proven gap). The empty set (F = 0) is a
    candidate, so F(exact) >= 0. The steps list the optimal set in relevance order with
    each chunk's marginal gain in that order.
    """,
)
reference_code = _by_name(
    "reference_code",
    """What the authors' released code does: k = max(1, ⌊T / mean character length⌋) picks.

    Their rule divides the token budget by the mean length of the chunks in *characters*,
    computes β from the pool with that integer k (falling back to 0.01 only when the mean
    pairwise cosine is exactly 0 or k <= 1, so a negative ρ̄ gives a negative β), then adds
    the chunk with the largest gain at β k times with no gain check and no budget check.
    Their code samples 500 chunks for the mean length when the pool is larger; here the
    whole pool is used, so the result is deterministic. A fixed ``lam`` replaces β. The
    picks are recorded at the shared λ and τ (F and step gains compare with the other
    strategies); β and k are in ``params``.

    This project never lets a strategy exceed the budget: with ``enforce_budget=True`` (the
    default) the run stops, with reason ``budget_exhausted``, at the first pick that would
    overflow it. ``enforce_budget=False`` reproduces the authors' output as is (then
    ``Selection.respects_budget`` is False and ``tokens_used`` may exceed ``budget``).
    """,
)


def reference_lam(pool: PreparedPool, k: int, alpha: float) -> float:
    """β as the authors' code computes it: integer k, fallback 0.01 only when ρ̄ == 0 or k <= 1."""
    rho = pool.mean_similarity if pool.n_chunks >= 2 else 0.0
    if rho == 0 or k <= 1:
        return FALLBACK_LAM
    return float(alpha * pool.relevance.mean() / (((k - 1) / 2) * rho))
