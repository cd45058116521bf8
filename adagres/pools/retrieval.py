"""The end of a pipeline: what a retriever returned, as a validated pool or a pool file."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from adagres.pools.frameworks import object_to_dict
from adagres.pools.jsonfile import save_pool
from adagres.pools.pool import Pool
from adagres.pools.validate import pool_from_dict

__all__ = ["dump_retrieval", "pool_from_retrieval"]


def pool_from_retrieval(
    query: str,
    texts: Sequence[Any],
    scores: Sequence[float] | None = None,
    *,
    embeddings: Any = None,
    query_embedding: Any = None,
    embedding_model: str | None = None,
    ids: Sequence[str] | None = None,
    metadata: Sequence[Mapping[str, Any] | None] | None = None,
    answers: Sequence[str] = (),
) -> Pool:
    """Build a validated pool from what a pipeline retrieved, in rank order.

    ``texts`` may be strings, or retrieved objects of LangChain (``page_content``),
    LlamaIndex (``NodeWithScore`` / nodes with ``text``) or Haystack (``content``); ids
    default to ``c0, c1, ...``.

    >>> pool = pool_from_retrieval("capital of France?", ["Paris is...", "Lyon is..."], [0.9, 0.7])
    >>> pool.ids, pool.scores.tolist()
    (('c0', 'c1'), [0.9, 0.7])
    """
    items: list[Any] = []
    for position, item in enumerate(texts):
        chunk = object_to_dict(item)
        if scores is not None:
            chunk["score"] = float(scores[position])
        if ids is not None:
            chunk["id"] = ids[position]
        chunk.setdefault("id", f"c{position}")
        item_metadata = None if metadata is None else metadata[position]
        if item_metadata is not None:
            chunk["metadata"] = dict(item_metadata)
        if embeddings is not None:
            chunk["embedding"] = np.asarray(embeddings[position], dtype=np.float64).tolist()
        items.append(chunk)
    obj: dict[str, Any] = {"query": query, "documents": items}
    if query_embedding is not None:
        obj["query_embedding"] = np.asarray(query_embedding, dtype=np.float64).tolist()
    if embedding_model is not None:
        obj["embedding_model"] = embedding_model
    if answers:
        obj["answers"] = list(answers)
    return pool_from_dict(obj, name="<retrieval>")


def dump_retrieval(
    path: str | os.PathLike[str],
    query: str,
    texts: Sequence[Any],
    scores: Sequence[float] | None = None,
    **options: Any,
) -> Path:
    """Save what a pipeline retrieved as a pool file, in one line; return the path.

    Options are those of :func:`pool_from_retrieval` (``embeddings``, ``query_embedding``,
    ``embedding_model``, ``ids``, ``metadata``, ``answers``).

    >>> import tempfile, pathlib
    >>> from adagres.pools.io import load_pool
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "pool.json"
    >>> load_pool(dump_retrieval(target, "q", ["a text", "another"], [0.8, 0.5])).ids
    ('c0', 'c1')
    """
    return save_pool(pool_from_retrieval(query, texts, scores, **options), path)
