"""The classic baselines on the same pool, budget and settings: top-k, MMR, the authors' code.

Each is a strategy function of the registry (:mod:`adagres.core.strategies`):
``fn(pool, budget, settings, trace, inputs) -> Selection``, recorded at the λ, α and τ that
the settings give AdaGReS (:func:`~adagres.core.selection.resolve_terms`) so F and the step
gains compare across strategies, while ``step.score`` holds what each rule maximised.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .calibration import FALLBACK_LAM
from .loop import Rule, Terms, scoring_of
from .prepared import PreparedPool
from .result import Selection
from .selection import greedy, greedy_selection, select_prepared
from .settings import RunInputs, Settings
from .variants import guard_of, rescored

__all__ = [
    "ReferenceCodeOptions",
    "SameK",
    "mmr",
    "reference_code",
    "reference_lam",
    "topk_budget",
    "topk_same_k",
]


@dataclass(frozen=True)
class SameK:
    """The options of :func:`topk_same_k`: its size ``k``, or the AdaGReS run with the same
    pool, budget and settings to take it from (``reference``; neither: that run is made)."""

    k: int | None = None
    reference: Selection | None = None


@dataclass(frozen=True)
class ReferenceCodeOptions:
    """The option of :func:`reference_code`: ``enforce_budget`` stops at the first pick
    that would overflow the budget (False: the authors' code as released, which does not)."""

    enforce_budget: bool = True


def topk_budget(
    pool: PreparedPool, budget: int, settings: Settings, trace: bool, inputs: RunInputs
) -> Selection:
    """Chunks in relevance order, skipping any that does not fit, until nothing fits."""
    rule = Rule(score="relevance", budget="skip", stop_nonpositive=False)
    return greedy_selection("topk_budget", pool, budget, settings, rule, trace, inputs.texts)


def topk_same_k(
    pool: PreparedPool, budget: int, settings: Settings, trace: bool, inputs: RunInputs
) -> Selection:
    """The ``k`` most relevant chunks that fit; k defaults to the AdaGReS selection's size."""
    options = inputs.options
    assert isinstance(options, SameK)
    k = options.k
    if k is None:
        reference = options.reference
        if reference is None:
            reference = select_prepared(pool, budget, settings, trace=False, texts=inputs.texts)
        k = reference.size
    rule = Rule(score="relevance", budget="skip", stop_nonpositive=False, max_picks=k)
    texts = inputs.texts
    return greedy_selection("topk_same_k", pool, budget, settings, rule, trace, texts, k=k)


def mmr(
    pool: PreparedPool, budget: int, settings: Settings, trace: bool, inputs: RunInputs
) -> Selection:
    """Maximal marginal relevance under the budget: λ_mmr·r_i − (1 − λ_mmr)·max_{j∈S} s_ij."""
    rule = Rule(score="mmr", budget="skip", stop_nonpositive=False, lambda_mmr=settings.lambda_mmr)
    return greedy_selection(
        "mmr", pool, budget, settings, rule, trace, inputs.texts, lambda_mmr=settings.lambda_mmr
    )


def reference_code(
    pool: PreparedPool, budget: int, settings: Settings, trace: bool, inputs: RunInputs
) -> Selection:
    """What the authors' released code does: k = max(1, ⌊T / mean character length⌋) picks
    by the gain at their β, with no gain check (and, unless ``enforce_budget`` is False, a
    stop at the first pick that would overflow the budget)."""
    options = inputs.options
    assert isinstance(options, ReferenceCodeOptions)
    texts = inputs.texts
    if texts is None:
        raise InputError("reference_code: needs the chunk texts (it counts characters)")
    mean_chars = float(np.mean([len(t) for t in texts]))
    k = max(1, int(budget // mean_chars)) if mean_chars > 0 else 1
    lam = settings.lam  # a fixed λ replaces β
    beta = reference_lam(pool, k, settings.alpha) if lam == "adaptive" else float(lam)
    rule = Rule(
        score="gain",
        budget="stop" if options.enforce_budget else "ignore",
        stop_nonpositive=False,
        max_picks=k,
    )
    own_terms = Terms(lam=beta, alpha=settings.alpha, tau=None)
    own = greedy(pool, budget, own_terms, rule, trace, guard_of(pool, settings, inputs))
    scoring = scoring_of(rule, own_terms)  # the gain at their β, with no floor and no stop
    scoring = dataclasses.replace(scoring, redundancy=scoring.redundancy.replace("λ", "β"))
    return rescored(
        "reference_code",
        pool,
        budget,
        own,
        scoring,
        settings,
        trace,
        respects_budget=options.enforce_budget,
        k=k,
        mean_chars=mean_chars,
        beta=beta,
    )


def reference_lam(pool: PreparedPool, k: int, alpha: float) -> float:
    """β as the authors' code computes it: integer k, fallback 0.01 only when ρ̄ == 0 or k <= 1."""
    rho = pool.mean_similarity if pool.n_chunks >= 2 else 0.0
    if rho == 0 or k <= 1:
        return FALLBACK_LAM
    return float(alpha * pool.relevance.mean() / (((k - 1) / 2) * rho))
