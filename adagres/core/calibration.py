"""Adaptive λ: Eq. 7 of the AdaGReS paper, computed from the pool's own statistics.

See SPEC.md, "Adaptive λ". Everything the formula uses is kept in a frozen
:class:`Calibration` so a view can print the formula with the pool's numbers filled in.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from . import validate as v

__all__ = ["FALLBACK_LAM", "Calibration", "calibrate", "mean_pairwise_similarity"]

#: λ used when the closed form cannot be evaluated (the value in the authors' code).
FALLBACK_LAM = 0.01

Formula = Literal["paper", "derived"]
FORMULAS: tuple[str, ...] = ("paper", "derived")


@dataclass(frozen=True)
class Calibration:
    """Every number of the adaptive-λ derivation for one pool, budget and setting.

    ``lam_star`` is the closed form (None when a fallback case applied); ``lam`` is the value
    used after ``scale``, ``offset``, the floor at 0, the optional ``lam_max`` clip or the
    fallback. ``fallback`` is None or one of ``"pool_too_small"`` (N < 2),
    ``"expected_k_at_most_one"`` (k̄ <= 1) and ``"mean_similarity_not_positive"`` (ρ̄ <= 0).
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


def mean_pairwise_similarity(unit_embeddings: np.ndarray, squares: float | None = None) -> float:
    """Mean cosine over ordered pairs i != j, exactly, in O(N·d) time.

    Uses ‖Σc‖² = Σ‖c_i‖² + Σ_{i≠j} c_i·c_j, so no N×N matrix is formed. ``squares`` is
    Σ‖c_i‖² if the caller already has it. Returns nan for N < 2.
    """
    n = unit_embeddings.shape[0]
    if n < 2:
        return float("nan")
    # The column sum as one BLAS product (a float64 reduction over the matrix is ~5x slower).
    total = (np.ones(n, dtype=unit_embeddings.dtype) @ unit_embeddings).astype(np.float64)
    if squares is None:
        squares = float(np.einsum("ij,ij->", unit_embeddings, unit_embeddings, dtype=np.float64))
    return (float(total @ total) - squares) / (n * (n - 1))


def _calibrate(
    relevance: np.ndarray,
    unit_embeddings: np.ndarray,
    tokens: np.ndarray,
    budget: int,
    *,
    alpha: float,
    formula: str,
    scale: float,
    offset: float,
    lam_max: float | None,
    squares: float | None = None,
    top_n: int | None = None,
) -> Calibration:
    """Calibrate on validated arrays (the core's entry point; no checks here)."""
    if top_n is not None and top_n < relevance.shape[0]:
        # The paper's "top-N pool": the N most relevant chunks (ties: pool order).
        keep = np.argsort(-relevance, kind="stable")[:top_n]
        relevance, unit_embeddings, tokens = relevance[keep], unit_embeddings[keep], tokens[keep]
        squares = None
    n = int(relevance.shape[0])
    mean_tokens = float(tokens.sum()) / n
    expected_k = budget / mean_tokens if mean_tokens > 0 else float("inf")
    mean_relevance = float(relevance.sum()) / n
    rho = mean_pairwise_similarity(unit_embeddings, squares)
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
        lam = max(0.0, scale * lam_star + offset)
        if lam_max is not None and lam > lam_max:
            lam, clipped = lam_max, True
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
        scale=scale,
        offset=offset,
        lam_max=lam_max,
        lam=float(lam),
        fallback=fallback,
        clipped=clipped,
        top_n=top_n,
    )


def calibrate(
    query_embedding: Any,
    chunk_embeddings: Any,
    token_counts: Any,
    budget: int,
    *,
    alpha: float = 1.0,
    formula: Formula = "paper",
    scale: float = 1.0,
    offset: float = 0.0,
    lam_max: float | None = None,
    top_n: int | None = None,
) -> Calibration:
    """Derive λ from the pool's statistics (SPEC.md, Eq. 7), with every number recorded.

    λ* = α·r̄ / (((k̄ − 1)/2)·ρ̄) for ``formula="paper"`` (as printed) or
    α·r̄ / ((k̄ − 1)·ρ̄) for ``"derived"``, where k̄ = budget / mean tokens, r̄ the mean
    query–chunk cosine and ρ̄ the mean pairwise chunk cosine. λ = max(0, scale·λ* + offset),
    clipped to ``lam_max`` if given. When N < 2, k̄ <= 1 or ρ̄ <= 0, λ falls back to 0.01
    (the authors' code) and ``fallback`` names the case; scale and offset are then not applied.
    The statistics are taken over the whole pool, or over its ``top_n`` most relevant chunks
    (the paper's "top-N" pool) when ``top_n`` is given.

    >>> import numpy as np
    >>> q = np.array([1.0, 0.0]); C = np.array([[1.0, 0.0], [0.6, 0.8], [0.8, 0.6]])
    >>> c = calibrate(q, C, [100, 100, 100], 500)
    >>> round(c.expected_k, 3), round(c.mean_relevance, 3), round(c.mean_similarity, 3)
    (5.0, 0.8, 0.787)
    >>> round(c.lam, 4)  # 0.8 / (((5 - 1) / 2) * (0.6 + 0.8 + 0.96) / 3)
    0.5085
    """
    chunks, squares = v.unit_rows_and_squares(chunk_embeddings)
    query = v.unit_vector(query_embedding, chunks.shape[1])
    tokens = v.token_counts(token_counts, chunks.shape[0])
    relevance = chunks @ query.astype(chunks.dtype)
    return _calibrate(
        relevance.astype(np.float64),
        chunks,
        tokens,
        v.budget(budget),
        alpha=v.real(alpha, "alpha", minimum=0.0),
        formula=v.choice(formula, "formula", FORMULAS),
        scale=v.real(scale, "scale"),
        offset=v.real(offset, "offset"),
        lam_max=None if lam_max is None else v.real(lam_max, "lam_max", minimum=0.0),
        squares=squares,
        top_n=_top_n(top_n),
    )


def _top_n(value: Any) -> int | None:
    """Validate the size of the calibration pool: None (the whole pool) or an integer >= 2."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 2:
        raise v.InputError(f"top_n: expected a whole number >= 2 (or None), got {value!r}")
    return int(value)
