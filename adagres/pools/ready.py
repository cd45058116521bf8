"""A pool made ready to select: token counts and embeddings filled in where its file had
none, with the offline tokenizers and models of :mod:`adagres.embed`."""

from __future__ import annotations

import os
from typing import Any

from adagres.embed.models import Progress, embed_texts, resolve_model
from adagres.embed.tokens import DEFAULT_TOKENIZER, check_name, count_tokens
from adagres.errors import PoolError
from adagres.pools.pool import GIVEN, Pool

__all__ = ["ensure_embeddings", "ensure_token_counts"]


def ensure_token_counts(
    pool: Pool, tokenizer: str = DEFAULT_TOKENIZER, *, recount: bool = False
) -> Pool:
    """Return ``pool`` with token counts from ``tokenizer``, keeping counts the file gave.

    Counts are kept when they came from the file without a tokenizer name (``"given"``)
    or from the same tokenizer; ``recount=True`` always counts again.

    >>> from adagres.pools.pool import Chunk
    >>> ensure_token_counts(Pool("q", (Chunk("a", "one two"),)), "words").token_counts.tolist()
    [2]
    """
    check_name(tokenizer)
    if not recount and pool.token_counts is not None and pool.tokenizer in (GIVEN, tokenizer):
        return pool
    return pool.with_token_counts(count_tokens(pool.texts, tokenizer), tokenizer)


def ensure_embeddings(
    pool: Pool,
    *,
    model: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> Pool:
    """Return ``pool`` with chunk and query embeddings from one model, computing what is missing.

    A pool that already has both keeps them. A pool with chunk embeddings but no query
    embedding gets its query embedded by the model that made the chunk embeddings
    (``pool.embedding_model``), or a PoolError when that model is not available offline.
    Otherwise everything is embedded by ``model`` (default: packaged all-MiniLM-L6-v2).

    >>> from adagres.pools.pool import Chunk
    >>> pool = Pool("q", (Chunk("a", "x"),), raw_embeddings=[[1.0]], raw_query_embedding=[1.0])
    >>> ensure_embeddings(pool) is pool
    True
    """
    if pool.raw_embeddings is not None and pool.raw_query_embedding is not None:
        return pool
    options: dict[str, Any] = {"cache_dir": cache_dir, "progress": progress}
    if pool.raw_embeddings is not None:
        return _embed_query_only(pool, options)
    name = resolve_model(model)
    vectors = embed_texts([*pool.texts, pool.query], model=name, **options)
    return pool.with_embeddings(vectors[:-1], vectors[-1], name)


def _embed_query_only(pool: Pool, options: dict[str, Any]) -> Pool:
    where = f"{pool.name}: " if pool.name else ""
    if pool.embedding_model is None:
        raise PoolError(
            f"{where}the chunks have embeddings from an unknown model and the pool has no "
            f"query_embedding, so the query cannot be embedded by the same model; add "
            f"'query_embedding' or 'embedding_model' to the pool, or drop the embeddings"
        )
    try:
        name = resolve_model(pool.embedding_model)
    except PoolError as error:
        raise PoolError(
            f"{where}the pool has no query_embedding and its chunk embeddings "
            f"came from a model that is not available here: {error}"
        ) from None
    query = embed_texts([pool.query], model=name, **options)[0]
    if query.shape[0] != pool.dimension:
        raise PoolError(
            f"{where}the model {name!r} gives {query.shape[0]} values, the "
            f"pool's embeddings have {pool.dimension}"
        )
    return pool.with_embeddings(pool.raw_embeddings, query, pool.embedding_model)
