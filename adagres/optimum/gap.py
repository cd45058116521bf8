"""How far a greedy selection is from the optimum at the same λ, α and τ (the exact
solver's report on a run, :func:`optimality_gap`)."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.guarantee import guarantee
from ..core.prepared import PreparedPool
from ..core.result import Selection
from ..core.selection import resolve_terms
from ..core.settings import Settings
from ..errors import InputError
from .exact import EXACT_MAX_NODES, relative, solve

__all__ = ["GapReport", "optimality_gap"]


@dataclass(frozen=True)
class GapReport:
    """The greedy's real gap. ``optimum``: the best F found; ``upper_bound``: a proven bound
    on the optimum (equal when ``proven``), so the true gap is in [absolute_gap, upper_bound
    − greedy]; ``relative_gap`` = absolute_gap / |optimum|; ``paper_bound``: (1 − 1/e)·OPT −
    k·ε/e at OPT = ``optimum`` (:func:`adagres.guarantee`)."""

    optimum: float
    upper_bound: float
    greedy: float
    absolute_gap: float
    relative_gap: float
    proven: bool
    seconds: float
    paper_bound: float
    #: Search nodes bounded, or feasible sets visited when ``enumerated``.
    nodes: int = 0
    enumerated: bool = False

    @property
    def bound_held(self) -> bool:
        return self.greedy >= self.paper_bound


def optimality_gap(
    pool: PreparedPool,
    budget: int,
    settings: Settings,
    selection: Selection,
    *,
    max_nodes: int | None = EXACT_MAX_NODES,
    time_limit: float | None = None,
    rel_gap: float = 0.0,
) -> GapReport:
    """How far ``selection`` (run on ``pool`` at ``budget`` with ``settings``) is from the
    optimum at the same λ, α and τ; a search stopped by its node (or time) limit gives ``proven``
    False (with ``rel_gap`` > 0, ``proven`` means within that share, as in :func:`solve`).
    Refusals raise :class:`SolverError`; a selection made at other terms InputError.
    """
    terms = resolve_terms(pool, budget, settings)[0]
    mine = (selection.lam, selection.alpha, selection.redundancy_floor, selection.budget)
    if mine != (terms.lam, terms.alpha, terms.tau, budget):
        raise InputError(
            f"selection: made at λ, α, τ, budget = {mine}; the settings give "
            f"{(terms.lam, terms.alpha, terms.tau, budget)}"
        )
    r = solve(pool, budget, terms, max_nodes=max_nodes, time_limit=time_limit, rel_gap=rel_gap)
    greedy_f = selection.objective
    paper = guarantee(pool.chunks, pool.tokens, budget, terms.lam).bound(r.objective)
    return GapReport(
        optimum=r.objective,
        upper_bound=r.upper_bound,
        greedy=greedy_f,
        absolute_gap=r.objective - greedy_f,
        relative_gap=relative(r.objective - greedy_f, r.objective),
        proven=r.proven,
        seconds=r.seconds,
        paper_bound=paper,
        nodes=r.nodes,
        enumerated=r.enumerated,
    )
