"""Adaptive λ: Eq. 7 of the AdaGReS paper, computed from the pool's own statistics.

See SPEC.md, "Adaptive λ". Everything the formula uses is kept in a frozen
:class:`Calibration` so a view can print the formula with the pool's numbers filled in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from . import validate as v
from .prepared import PreparedPool, column_sum_and_squares, pair_mean, prepare
from .settings import FORMULAS, MAX_WEIGHT, Formula, Settings

__all__ = [
    "FALLBACK_LAM",
    "FORMULAS",
    "Calibration",
    "Formula",
    "calibrate",
    "calibrate_prepared",
    "mean_pairwise_similarity",
]

#: λ used when the closed form cannot be evaluated (the value in the authors' code).
FALLBACK_LAM = 0.01


@dataclass(frozen=True)
class Calibration:
    """Every number of the adaptive-λ derivation for one pool, budget and setting.

    ``lam_star`` is the closed form (None when a fallback case applied); ``lam`` is the value
    used after ``scale``, ``offset``, the floor at 0, the optional ``lam_max`` clip or the
    fallback; ``clipped`` says λ was cut to ``lam_max`` or to the largest weight accepted
    (:data:`~adagres.core.settings.MAX_WEIGHT`, when ρ̄ is just above 0). ``fallback`` is None
    or one of ``"pool_too_small"`` (N < 2), ``"expected_k_at_most_one"`` (k̄ <= 1) and
    ``"mean_similarity_not_positive"`` (ρ̄ <= 0).
    ``n_chunks`` is the number of chunks the statistics were taken over: the whole pool, or
    its ``top_n`` most relevant chunks when that was asked for.
    """

    n_chunks: int
    budget: int
    alpha: float
    formula: str
    mean_tokens: float
    expected_k: float
    mean_relevance: float
    mean_similarity: float
    denominator: float | None
    lam_star: float | None
    scale: float
    offset: float
    lam_max: float | None
    lam: float
    fallback: str | None
    clipped: bool
    top_n: int | None = None

    @property
    def k_factor(self) -> float:
        """The factor multiplying ρ̄ in the denominator: (k̄-1)/2 (paper) or k̄-1 (derived)."""
        k1 = self.expected_k - 1.0
        return k1 / 2.0 if self.formula == "paper" else k1

    def describe(self) -> str:
        """One line: the formula with this pool's numbers, or the fallback case."""
        if self.fallback is not None:
            return f"fallback ({self.fallback.replace('_', ' ')}): λ = {self.lam:g}"
        k_text = "(k̄ − 1)/2" if self.formula == "paper" else "(k̄ − 1)"
        return (
            f"λ* = α·r̄ / ({k_text}·ρ̄) = {self.alpha:g}·{self.mean_relevance:.4f} / "
            f"({self.k_factor:.4f}·{self.mean_similarity:.4f}) = {self.lam_star:.4f}; "
            f"λ = max(0, {self.scale:g}·λ* + {self.offset:g}) = {self.lam:.4f}"
        )


def mean_pairwise_similarity(chunk_embeddings: ArrayLike) -> float:
    """ρ̄: the mean cosine over ordered pairs i != j, exactly, in O(N·d) time (nan for N < 2).

    >>> round(mean_pairwise_similarity([[1.0, 0.0], [0.6, 0.8], [0.0, 2.0]]), 4)
    0.4667
    """
    chunks = v.unit_rows(chunk_embeddings)
    column_sum, squares = column_sum_and_squares(chunks)
    return pair_mean(column_sum, squares, chunks.shape[0])


def calibrate_prepared(pool: PreparedPool, budget: int, settings: Settings) -> Calibration:
    """Eq. 7 on a prepared pool (the core's entry point; its inputs are trusted)."""
    top_n = settings.calibration_top_n
    if top_n is not None:
        pool = pool.top(top_n)  # the paper's "top-N pool": the N most relevant chunks
    alpha, formula = settings.alpha, settings.formula
    n = pool.n_chunks
    mean_tokens = float(pool.tokens.sum()) / n
    # L̄ = 0: the whole pool fits in any budget, so the budget buys N chunks (SPEC.md)
    expected_k = budget / mean_tokens if mean_tokens > 0 else float(n)
    mean_relevance = float(pool.relevance.sum()) / n
    rho = pool.mean_similarity
    fallback = None
    if n < 2:
        fallback = "pool_too_small"
    elif not expected_k > 1.0 or not np.isfinite(expected_k):
        fallback = "expected_k_at_most_one"
    elif not rho > 0.0:
        fallback = "mean_similarity_not_positive"
    denominator = lam_star = None
    clipped = False
    if fallback is None:
        k_factor = (expected_k - 1.0) / 2.0 if formula == "paper" else expected_k - 1.0
        denominator = k_factor * rho
        lam_star = alpha * mean_relevance / denominator
        lam = max(0.0, settings.scale * lam_star + settings.offset)
        if settings.lam_max is not None and lam > settings.lam_max:
            lam, clipped = settings.lam_max, True
        if not lam <= MAX_WEIGHT:  # a ρ̄ just above 0 makes λ* huge (or inf): clip it
            lam, clipped = MAX_WEIGHT, True
            if not math.isfinite(lam_star):
                lam_star = None  # the closed form overflowed: no finite value to show
    else:
        lam = FALLBACK_LAM
    return Calibration(
        n_chunks=n,
        budget=budget,
        alpha=alpha,
        formula=formula,
        mean_tokens=mean_tokens,
        expected_k=expected_k,
        mean_relevance=mean_relevance,
        mean_similarity=rho,
        denominator=denominator,
        lam_star=lam_star,
        scale=settings.scale,
        offset=settings.offset,
        lam_max=settings.lam_max,
        lam=float(lam),
        fallback=fallback,
        clipped=clipped,
        top_n=top_n,
    )


def calibrate(
    query_embedding: ArrayLike,
    chunk_embeddings: ArrayLike,
    token_counts: ArrayLike,
    budget: int,
    *,
    settings: Settings | None = None,
    top_n: int | None = None,
    **options: object,
) -> Calibration:
    """Derive λ from the pool's statistics (SPEC.md, Eq. 7), with every number recorded.

    λ* = α·r̄ / (((k̄ − 1)/2)·ρ̄) for ``formula="paper"`` (as printed) or
    α·r̄ / ((k̄ − 1)·ρ̄) for ``"derived"``, where k̄ = budget / mean tokens, r̄ the mean
    query–chunk cosine and ρ̄ the mean pairwise chunk cosine. λ = max(0, scale·λ* + offset),
    clipped to ``lam_max`` if given. When N < 2, k̄ <= 1 or ρ̄ <= 0, λ falls back to 0.01
    (the authors' code) and ``fallback`` names the case; scale and offset are then not applied.
    The statistics are taken over the whole pool, or over its ``top_n`` most relevant chunks
    (the paper's "top-N" pool; ``Settings.calibration_top_n``) when given. ``settings`` (an
    :class:`adagres.Settings`) or its fields as keywords (``alpha``, ``formula``, ``scale``,
    ``offset``, ``lam_max``) shape the result.

    >>> import numpy as np
    >>> q = np.array([1.0, 0.0]); C = np.array([[1.0, 0.0], [0.6, 0.8], [0.8, 0.6]])
    >>> c = calibrate(q, C, [100, 100, 100], 500)
    >>> round(c.expected_k, 3), round(c.mean_relevance, 3), round(c.mean_similarity, 3)
    (5.0, 0.8, 0.787)
    >>> round(c.lam, 4)  # 0.8 / (((5 - 1) / 2) * (0.6 + 0.8 + 0.96) / 3)
    0.5085
    """
    if top_n is not None:
        options["calibration_top_n"] = top_n
    settings = Settings.of(settings, **options)
    pool = prepare(query_embedding, chunk_embeddings, token_counts)
    return calibrate_prepared(pool, v.budget(budget), settings)
