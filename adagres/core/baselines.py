"""Baseline strategies on the same pool, budget and tokenizer (SPEC.md, "Baselines").

Every strategy returns the same :class:`~adagres.Selection` as :func:`adagres.select`, with
a step record, so every metric and view works on any of them. Every strategy takes the same
:class:`~adagres.Settings` and reports F and its step gains at the λ, α and τ those settings
give AdaGReS (:func:`~adagres.core.selection.resolve_terms`): the numbers of two strategies
run with one settings value compare. :func:`run` runs any strategy of the registry
(:data:`~adagres.core.strategies.STRATEGIES`) by name; the CLI, the app and the sweeps all
go through it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, cast

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError
from . import validate as v
from .classic import reference_lam
from .prepared import PreparedPool, prepare
from .result import Selection
from .selection import checked_settings
from .settings import Settings
from .strategies import STRATEGIES, strategy

__all__ = [
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


def run_prepared(
    strategy_name: str,
    pool: PreparedPool,
    budget: int,
    settings: Settings,
    *,
    texts: Sequence[str] | None = None,
    trace: bool = True,
    **options: object,
) -> Selection:
    """Run the strategy ``strategy_name`` on a prepared pool (trusted: validated when
    prepared) with one settings value; the name, the budget and the settings are checked.
    ``options`` are the strategy's own (:attr:`Strategy.options`, as :func:`run` takes them):
    one it does not take is an :class:`InputError` naming those it does.
    """
    named = strategy_name if isinstance(strategy_name, str) else repr(strategy_name)
    chosen = strategy(named)
    own = chosen.options_of(options)
    budget = v.budget(budget)
    checked_settings(settings)
    pool = pool.packing_ready(settings.packing, texts)
    return chosen.run(pool, budget, settings, trace=trace, texts=texts, options=own)


def run(
    strategy_name: str,
    query_embedding: ArrayLike,
    chunk_embeddings: ArrayLike,
    token_counts: ArrayLike,
    budget: int,
    *,
    settings: Settings | None = None,
    texts: Sequence[str] | None = None,
    k: int | None = None,
    reference: Selection | None = None,
    max_chunks: int | None = None,
    max_nodes: int | None = None,
    time_limit: float | None = None,
    enforce_budget: bool = True,
    trace: bool = True,
    sources: Sequence[Hashable | None] | None = None,
    offsets: Sequence[int | None] | None = None,
    **options: object,
) -> Selection:
    """Run any strategy by name; ``settings`` or its fields as keywords say how.

    F and the step gains of every strategy are reported at the λ and τ that these settings
    give AdaGReS, so two strategies compare; ``topk_same_k`` takes k from AdaGReS with the
    same settings (``reference``, if the caller has that run, saves computing it again).
    ``texts`` are needed by ``reference_code`` (it counts characters) and by
    ``packing=True`` (with ``sources``/``offsets`` where known, as :func:`adagres.select`).

    >>> q = np.array([1.0, 0.0]); C = np.array([[0.9, 0.1], [0.95, 0.05], [0.5, 0.5]])
    >>> run("topk_budget", q, C, [60, 60, 30], 100).indices
    (1, 2)
    """
    strategy(strategy_name)
    settings = Settings.of(settings, **options)
    pool = prepare(query_embedding, chunk_embeddings, token_counts)
    if texts is not None:
        pool = pool.with_texts(texts, sources, offsets)
        texts = pool.spans.texts if pool.spans is not None else None
    elif sources is not None or offsets is not None:
        raise InputError("sources/offsets: place chunk texts; pass texts= with them")
    if k is not None and (isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0):
        raise InputError(f"k: expected a whole number >= 0, got {k!r}")
    given = {
        "k": None if k is None else int(k),
        "reference": reference,
        "max_chunks": max_chunks,
        "max_nodes": None if max_nodes is None else v.whole(max_nodes, "max_nodes", minimum=1),
        "time_limit": None if time_limit is None else v.real(time_limit, "time_limit", minimum=0.0),
        "enforce_budget": None if enforce_budget else False,
    }
    own = {name: value for name, value in given.items() if value is not None}
    return run_prepared(
        strategy_name, pool, v.budget(budget), settings, texts=texts, trace=trace, **own
    )


def _by_name(strategy: str, doc: str) -> Callable[..., Selection]:
    def function(
        query_embedding: ArrayLike,
        chunk_embeddings: ArrayLike,
        token_counts: ArrayLike,
        budget: int,
        **options: object,
    ) -> Selection:
        given = cast(dict[str, Any], options)  # run's keywords, checked there
        return run(strategy, query_embedding, chunk_embeddings, token_counts, budget, **given)

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

    :mod:`adagres.optimum.exact` holds the solver, its reductions and bounds. A problem with
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
