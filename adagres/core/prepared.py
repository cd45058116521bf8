"""A pool validated once: unit embeddings, unit query, int64 tokens and what follows from them.

Every public function of the core turns its arrays into a :class:`PreparedPool` with
:func:`prepare` at its boundary and passes that inward; nothing inside the core checks or
normalises the matrix again. The same prepared value serves any number of budgets and
settings (the sweeps, the app), so the statistics that λ is derived from are computed once
and are the same numbers whichever function reads them.

>>> import numpy as np
>>> p = prepare([2.0, 0.0], [[3.0, 4.0], [1.0, 0.0]], [10, 20])
>>> p.relevance.tolist(), p.n_chunks, round(p.mean_similarity, 6)
([0.6, 1.0], 2, 0.6)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import InputError
from . import validate as v
from .arrays import FloatArray, frozen
from .overlaps import Spans

__all__ = [
    "PRODUCT_MEMO_BYTES",
    "PreparedPool",
    "build",
    "column_sum_and_squares",
    "pair_mean",
    "prepare",
    "unit_chunks",
]


#: Bytes of cosine rows C·c_w one prepared pool keeps (:meth:`PreparedPool.similarities`):
#: every row of a 2,000-chunk float32 pool, 400 rows of a 20,000-chunk one.
PRODUCT_MEMO_BYTES = 32 * 2**20


@dataclass(frozen=True, eq=False)
class PreparedPool:
    """Validated inputs of the core, read-only.

    ``chunks`` (N, d) unit rows, float32 or float64 as given; ``query`` (d,) unit float64;
    ``tokens`` (N,) int64 >= 0; ``relevance`` (N,) float64, r_i = q·c_i (signed cosine).
    ``column_sum`` is Σ_i c_i and ``squares`` Σ_i ‖c_i‖² (both float64), from which ρ̄
    follows exactly in O(d). ``spans`` (optional) places the chunks in their sources, for
    overlap-aware packing (:mod:`adagres.core.packing`; :meth:`with_spans`).
    """

    chunks: FloatArray
    query: NDArray[np.float64]
    tokens: NDArray[np.int64]
    relevance: NDArray[np.float64]
    column_sum: NDArray[np.float64]
    squares: float
    spans: Spans | None = None

    def with_spans(self, spans: Spans | None) -> PreparedPool:
        """The same pool with ``spans`` (their texts must be the pool's, one per chunk)."""
        if spans is not None and len(spans.texts) != self.n_chunks:
            raise InputError(
                f"spans: {len(spans.texts)} texts for a pool of {self.n_chunks} chunks"
            )
        return dataclasses.replace(self, spans=spans)

    def with_texts(
        self,
        texts: Sequence[str],
        sources: Sequence[Hashable | None] | None = None,
        offsets: Sequence[int | None] | None = None,
    ) -> PreparedPool:
        """The same pool with its chunk texts, for packing: ``sources`` and ``offsets`` (one
        per chunk, None where unknown) place chunks in their sources; chunks without both are
        placed by the text they share at their edges. Stitched text is counted with the
        estimate of :mod:`adagres.core.packing` (no tokenizer is named here).
        """
        texts = tuple(v.texts(texts, self.n_chunks))
        keys, starts = v.placements(sources, offsets, self.n_chunks)
        return self.with_spans(Spans(texts, keys, starts))

    def packing_ready(self, packing: bool, texts: Sequence[str] | None) -> PreparedPool:
        """The pool a run with ``packing`` needs: with its spans, made from ``texts`` if it
        has none; a one-line error where packing is asked for and no text is known."""
        if not packing or self.spans is not None:
            return self
        if texts is None:
            raise InputError(
                "packing: needs the chunk texts to pay once for repeated text; pass texts= "
                "(and sources=/offsets= where known), or packing=False"
            )
        return self.with_texts(texts)

    @property
    def n_chunks(self) -> int:
        """N, the number of chunks."""
        return int(self.chunks.shape[0])

    @property
    def dim(self) -> int:
        """d, the embedding dimension."""
        return int(self.chunks.shape[1])

    @cached_property
    def mean_similarity(self) -> float:
        """ρ̄, the mean cosine over ordered pairs i ≠ j (nan below two chunks).

        ‖Σc‖² = Σ‖c_i‖² + Σ_{i≠j} c_i·c_j, so no N×N matrix is formed.
        """
        return pair_mean(self.column_sum, self.squares, self.n_chunks)

    @cached_property
    def product_memo(self) -> dict[int, FloatArray]:
        """The cosine rows :meth:`similarities` has kept, by chunk position."""
        return {}

    def similarities(self, chunk: int) -> FloatArray:
        """C·c_chunk: every chunk's cosine with chunk ``chunk`` (read-only; the chunks'
        dtype), the one product per pick of the greedy loop.

        Kept per pool while the rows take at most :data:`PRODUCT_MEMO_BYTES`, so the runs
        of a λ sweep (60 selections whose picks repeat) and the app's reruns compute each
        chunk's row once. A kept row is the product computed the first time, so a run gives
        the same bits whether its rows come from the memo or not.
        """
        memo = self.product_memo
        row = memo.get(chunk)
        if row is None:
            row = self.chunks @ self.chunks[chunk]
            if (len(memo) + 1) * row.nbytes <= PRODUCT_MEMO_BYTES:
                row.flags.writeable = False
                memo[chunk] = row
        return row

    def top(self, count: int) -> PreparedPool:
        """The ``count`` most relevant chunks (ties: pool order), for the paper's top-N pool."""
        if count >= self.n_chunks:
            return self
        keep = np.sort(np.argsort(-self.relevance, kind="stable")[:count])
        pool = build(self.chunks[keep], self.query, self.tokens[keep])
        # Relevance is sliced, not recomputed: a product over fewer rows may round differently.
        return dataclasses.replace(pool, relevance=frozen(self.relevance[keep]))


def pair_mean(column_sum: NDArray[np.float64], squares: float, n: int) -> float:
    """Mean of c_i·c_j over ordered pairs i ≠ j from Σc and Σ‖c‖² (nan for n < 2)."""
    if n < 2:
        return float("nan")
    return (float(column_sum @ column_sum) - squares) / (n * (n - 1))


def column_sum_and_squares(
    chunks: FloatArray, row_squares: FloatArray | None = None
) -> tuple[NDArray[np.float64], float]:
    """Σ_i c_i and Σ_i ‖c_i‖², both in float64 (``row_squares``: ‖c_i‖² if already known)."""
    # Σc as one BLAS product (a float64 reduction over the matrix is ~5x slower).
    column_sum = (np.ones(chunks.shape[0], dtype=chunks.dtype) @ chunks).astype(np.float64)
    if row_squares is None:
        row_squares = np.vecdot(chunks, chunks)
    return column_sum, float(row_squares.sum(dtype=np.float64))


def build(
    chunks: FloatArray,
    query: NDArray[np.float64],
    tokens: NDArray[np.int64],
    row_squares: FloatArray | None = None,
) -> PreparedPool:
    """A :class:`PreparedPool` from arrays that are already valid (unit rows, unit query)."""
    relevance = (chunks @ query.astype(chunks.dtype)).astype(np.float64)
    column_sum, squares = column_sum_and_squares(chunks, row_squares)
    return PreparedPool(
        chunks=frozen(chunks),
        query=frozen(query),
        tokens=frozen(tokens),
        relevance=frozen(relevance),
        column_sum=frozen(column_sum),
        squares=squares,
    )


def unit_chunks(value: ArrayLike | PreparedPool, name: str = "chunk_embeddings") -> FloatArray:
    """The unit rows of a :class:`PreparedPool` as they are, or of an array, validated."""
    return value.chunks if isinstance(value, PreparedPool) else v.unit_rows(value, name)


def prepare(
    query_embedding: ArrayLike, chunk_embeddings: ArrayLike, token_counts: ArrayLike
) -> PreparedPool:
    """Validate and normalise a pool once (SPEC.md: embeddings are normalised at load).

    ``chunk_embeddings`` (N, d) and ``query_embedding`` (d,) may be unnormalised; a zero,
    NaN or infinite vector raises :class:`~adagres.InputError` naming the chunk.
    Normalising is idempotent, so a pool prepared from already-unit vectors holds the very
    same numbers. ``token_counts`` (N,) are whole numbers >= 0.
    """
    chunks, row_squares = v.unit_rows_and_squares(chunk_embeddings)
    query = v.unit_vector(query_embedding, chunks.shape[1])
    tokens = v.token_counts(token_counts, chunks.shape[0])
    return build(chunks, query, tokens, row_squares)
