"""The end of a pipeline: what a retriever returned, as a validated pool or a pool file."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from numbers import Real
from pathlib import Path
from typing import Any

import numpy as np

from adagres.errors import PoolError, one_line
from adagres.pools.formats.frameworks import object_to_dict
from adagres.pools.formats.jsonfile import save_pool
from adagres.pools.from_dict import pool_from_dict
from adagres.pools.kept_values import string_list_problem
from adagres.pools.pool import Pool

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
    problem = string_list_problem(answers)
    if problem is not None:
        raise PoolError(f"{_WHERE}: answers: {problem}")
    texts = _listed(texts, "texts")
    optional = {"scores": scores, "ids": ids, "metadata": metadata, "embeddings": embeddings}
    given = {name: _listed(v, name, len(texts)) for name, v in optional.items() if v is not None}
    items: list[Any] = []
    for position, item in enumerate(texts):
        try:
            chunk = object_to_dict(item)
        except PoolError as error:
            raise PoolError(f"{_WHERE}: texts[{position}]: {error}") from None
        if "scores" in given:
            chunk["score"] = _score(given["scores"][position], position)
        if "ids" in given:
            chunk["id"] = given["ids"][position]
        chunk.setdefault("id", f"c{position}")
        item_metadata = given["metadata"][position] if "metadata" in given else None
        if item_metadata is not None:
            if not isinstance(item_metadata, Mapping):
                kind = type(item_metadata).__name__
                raise PoolError(f"{_WHERE}: metadata[{position}]: expected a mapping, got {kind}")
            chunk["metadata"] = dict(item_metadata)
        if "embeddings" in given:
            chunk["embedding"] = _vector(given["embeddings"][position], f"embeddings[{position}]")
        items.append(chunk)
    obj: dict[str, Any] = {"query": query, "documents": items}
    if query_embedding is not None:
        obj["query_embedding"] = _vector(query_embedding, "query_embedding")
    if embedding_model is not None:
        obj["embedding_model"] = embedding_model
    if answers:
        obj["answers"] = list(answers)
    return pool_from_dict(obj, name=_WHERE)


_WHERE = "<retrieval>"


def _listed(value: Any, name: str, length: int | None = None) -> list[Any]:
    """``value`` as a list (of ``length`` items when given), or a PoolError naming it."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise PoolError(f"{_WHERE}: {name}: expected a sequence, got {type(value).__name__}")
    items = list(value)
    if length is not None and len(items) != length:
        raise PoolError(f"{_WHERE}: {name}: {len(items)} items for {length} texts")
    return items


def _score(value: Any, position: int) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        shown = one_line(repr(value), max_chars=40)
        raise PoolError(f"{_WHERE}: scores[{position}]: expected a number, got {shown}")
    try:
        return float(value)
    except OverflowError:  # an integer beyond the float range
        raise PoolError(f"{_WHERE}: scores[{position}]: {value:.3g} is beyond a float") from None


def _vector(value: Any, name: str) -> list[float]:
    """A 1-D vector as a list of floats; the loaders check its values, naming the chunk."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as error:
        raise PoolError(
            f"{_WHERE}: {name}: not numbers ({one_line(error, max_chars=80)})"
        ) from None
    if array.ndim != 1:
        raise PoolError(f"{_WHERE}: {name}: expected one vector, got shape {array.shape}")
    values: list[float] = array.tolist()
    return values


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
