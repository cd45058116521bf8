"""The exact optimum of F within the budget: an optional package of its own.

Importing it registers the strategy ``exact`` in :data:`adagres.core.strategies.STRATEGIES`
(``import adagres`` does so when the package is present). :mod:`~adagres.optimum.exact`
holds the branch and bound, :mod:`~adagres.optimum.bounds` its upper bounds,
:mod:`~adagres.optimum.nonnegative` the multipliers of the concave relaxation,
:mod:`~adagres.optimum.problem` the reductions and the incumbent, and
:mod:`~adagres.optimum.enumeration` the direct enumeration of few feasible sets.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.guard import without_duplicates
from ..core.loop import finish
from ..core.prepared import PreparedPool
from ..core.records import Scoring, StopReason
from ..core.replay import replay
from ..core.result import Selection
from ..core.selection import resolve_terms
from ..core.settings import RunInputs, Settings
from ..core.strategies import STRATEGIES, Strategy, register
from . import exact as solver

__all__ = ["EXACT", "ExactLimits", "exact_strategy"]

#: The optimal set's steps are no greedy rule: they list the set in relevance order.
OPTIMUM_SCORING = Scoring(relevance="α·relevance", redundancy="λ·Σ cos to the picks", greedy=False)


@dataclass(frozen=True)
class ExactLimits:
    """The options of ``exact``: the solver's limits (None: its defaults, :data:`EXACT_MAX_CHUNKS`
    chunks and :data:`EXACT_MAX_NODES` nodes; no time limit unless given, in seconds)."""

    max_chunks: int | None = None
    time_limit: float | None = None
    max_nodes: int | None = None


def exact_strategy(
    pool: PreparedPool, budget: int, settings: Settings, trace: bool, inputs: RunInputs
) -> Selection:
    """The subset with the largest F within the budget, proven by branch and bound; its
    steps list the set in relevance order with each chunk's marginal gain in that order
    (the solver's limits, :class:`ExactLimits`, left None are its defaults)."""
    options = inputs.options
    assert isinstance(options, ExactLimits)
    terms, calibration = resolve_terms(pool, budget, settings)
    max_chunks = solver.EXACT_MAX_CHUNKS if options.max_chunks is None else options.max_chunks
    max_nodes = solver.EXACT_MAX_NODES if options.max_nodes is None else options.max_nodes
    chosen = solver.solve_exact(pool, budget, terms, max_chunks, max_nodes, options.time_limit)
    order = sorted(chosen, key=lambda i: (-pool.relevance[i], i))
    # The guard does not change the search: a later duplicate in the optimal set is
    # removed from it (adagres.core.guard.without_duplicates), nothing replaces it.
    order, dropped = without_duplicates(pool, order, settings.duplicate_guard, inputs.texts)
    run = replay(pool, budget, order, terms, trace, StopReason.OPTIMAL)._replace(duplicates=dropped)
    return finish(
        "exact",
        pool,
        budget,
        run,
        terms,
        calibration=calibration,
        settings=settings,
        scoring=OPTIMUM_SCORING,
    )


EXACT = Strategy(
    name="exact",
    family="optimum",
    description="the best F within the budget (branch and bound)",
    score="none: the set with the largest F = α·Σ relevance − λ·Σ pairwise cos, listed in "
    "relevance order",
    fn=exact_strategy,
    label="optimum, small pools",
    short="the optimum",
    options=ExactLimits,
    working="Solving exactly…",
    proves_optimum=True,
)

if EXACT.name not in STRATEGIES:
    register(EXACT, before="reference_code")
