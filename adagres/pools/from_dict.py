"""A whole pool: from one canonical dict to a validated :class:`~adagres.pools.pool.Pool`.

The checks that span chunks live here (unique ids, all embeddings or none and of one
dimension, a way to embed the query, all token counts or none); each chunk's own fields
are checked by :mod:`adagres.pools.chunk_fields`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from adagres.errors import PoolError
from adagres.pools.chunk_fields import (
    Location,
    check_kept,
    check_string,
    optional_field,
    parse_chunk,
    parse_vector,
    type_name,
)
from adagres.pools.formats.frameworks import normalise_pool
from adagres.pools.load_limits import DEFAULT_LIMITS, Limits
from adagres.pools.pool import GIVEN, Chunk, Pool

__all__ = ["build_pool", "pool_from_dict"]

_POOL_FIELDS = ("query", "query_embedding", "embedding_model", "answers", "tokenizer", "chunks")


def pool_from_dict(
    obj: Any,
    *,
    name: str = "<pool>",
    query: str | None = None,
    max_chunks: int | None = None,
    limits: Limits | None = None,
) -> Pool:
    """Validate a canonical pool object (or a document list with ``query``) and return a Pool.

    The :class:`~adagres.pools.load_limits.Limits` on strings, nesting and chunks apply as they do
    to files; every value kept must be a JSON value, so the pool saves and loads back.

    >>> pool_from_dict({"query": "q", "chunks": [{"id": "a", "text": "x"}]}).texts
    ('x',)
    """
    chosen = (limits or DEFAULT_LIMITS).replace(max_chunks=max_chunks)
    raw = normalise_pool(obj, Location(name), query)
    return build_pool(raw, Location(name), chosen)


def build_pool(raw: dict[str, Any], ctx: Location, limits: Limits = DEFAULT_LIMITS) -> Pool:
    """Check a canonical pool dict (as the readers produce it) and return the Pool."""
    query = raw.get("query")
    if query is None:
        raise ctx.fail("missing field 'query'")
    if not isinstance(query, str) or not query.strip():
        raise ctx.fail(
            f"must be a non-empty string, got {type_name(query)} {query!r:.60}", field="query"
        )
    check_string(query, ctx, "query", limits=limits, text=True)
    items = raw.get("chunks")
    if not isinstance(items, list):
        raise ctx.fail(f"must be a list of chunks, got {type_name(items)}", field="chunks")
    if not items:
        raise ctx.fail("the pool is empty: 'chunks' has no chunk", field="chunks")
    if len(items) > limits.max_chunks:
        raise ctx.fail(
            f"the pool has {len(items):,} chunks, over the limit of "
            f"{limits.max_chunks:,} (raise max_chunks to load it)",
            field="chunks",
        )
    chunks, vectors = _parse_chunks(items, ctx, limits)
    model = optional_field(raw, "embedding_model", str, "a string", ctx)
    if model is not None:
        check_string(model, ctx, "embedding_model", limits=limits)
    extra = {k: v for k, v in raw.items() if k not in _POOL_FIELDS}
    if extra and not ctx.plain:
        check_kept(extra, ctx, limits, level=1)  # keys of the pool object itself
    return Pool(
        query=query,
        chunks=tuple(chunks),
        raw_embeddings=_embedding_matrix(chunks, vectors, ctx),
        raw_query_embedding=_query_vector(raw, vectors, ctx),
        embedding_model=model,
        answers=tuple(_answers(raw, ctx, limits)),
        tokenizer=_tokenizer_name(raw, chunks, ctx, limits),
        extra=extra,
        name=ctx.file,
    )


def _parse_chunks(items: list[Any], ctx: Location, limits: Limits) -> tuple[list[Chunk], list[Any]]:
    chunks: list[Chunk] = []
    vectors: list[Any] = []
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        chunk, vector = parse_chunk(item, index, ctx, limits)
        if chunk.id in first:
            raise ctx.fail(
                f"duplicate chunk id, first used by chunks[{first[chunk.id]}]",
                index=index,
                chunk=chunk.id,
                field="id",
            )
        first[chunk.id] = index
        chunks.append(chunk)
        vectors.append(vector)
    return chunks, vectors


def _embedding_matrix(chunks: list[Chunk], vectors: list[Any], ctx: Location) -> np.ndarray | None:
    given = [i for i, vector in enumerate(vectors) if vector is not None]
    if not given:
        return None

    def fail(problem: str, index: int) -> PoolError:
        return ctx.fail(problem, index=index, chunk=chunks[index].id, field="embedding")

    if len(given) != len(vectors):
        missing = next(i for i, vector in enumerate(vectors) if vector is None)
        problem = f"no embedding, but {len(given)} of the {len(vectors)} chunks have one"
        raise fail(f"{problem}; give every chunk an embedding or none", missing)
    dimension = len(vectors[0])
    for index, vector in enumerate(vectors):
        if len(vector) != dimension:
            raise fail(
                f"embedding has {len(vector)} values, the pool's dimension is "
                f"{dimension} (from chunk '{chunks[0].id}')",
                index,
            )
    return np.array(vectors, dtype=np.float64)


def _query_vector(raw: dict[str, Any], vectors: list[Any], ctx: Location) -> np.ndarray | None:
    value = raw.get("query_embedding")
    has_chunk_vectors = vectors[0] is not None
    if value is None:
        if has_chunk_vectors and raw.get("embedding_model") is None:
            raise ctx.fail(
                "the chunks have embeddings but the pool has no query_embedding and no "
                "embedding_model, so the query cannot be embedded by the same model; add "
                "the query's embedding, name the model (a local sentence-transformers "
                "folder), or remove the chunk embeddings",
                field="query_embedding",
            )
        return None
    vector = parse_vector(value, ctx, None, None, "query_embedding")
    if has_chunk_vectors and len(vector) != len(vectors[0]):
        raise ctx.fail(
            f"query_embedding has {len(vector)} values, the pool's dimension is {len(vectors[0])}",
            field="query_embedding",
        )
    return np.array(vector, dtype=np.float64)


def _answers(raw: dict[str, Any], ctx: Location, limits: Limits) -> list[str]:
    answers = raw.get("answers")
    if answers is None:
        return []
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise ctx.fail("must be a list of strings", field="answers")
    for position, answer in enumerate(answers):
        check_string(answer, ctx, f"answers[{position}]", limits=limits, text=True)
    return answers


def _tokenizer_name(
    raw: dict[str, Any], chunks: list[Chunk], ctx: Location, limits: Limits
) -> str | None:
    name = optional_field(raw, "tokenizer", str, "a string", ctx)
    if name is not None:
        check_string(name, ctx, "tokenizer", limits=limits)
    counted = [chunk.tokens is not None for chunk in chunks]
    if any(counted) and not all(counted):
        missing = counted.index(False)
        problem = f"no token count, but {sum(counted)} of the {len(chunks)} chunks have one"
        problem += "; give every chunk a count or none"
        raise ctx.fail(problem, index=missing, chunk=chunks[missing].id, field="tokens")
    if all(counted):
        return name or GIVEN
    return None
