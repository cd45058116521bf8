"""The pool model: a query, its retrieved chunks, and the numpy views the selector reads.

A :class:`Pool` is frozen. It keeps every value the user gave (texts byte-exact, extra keys,
raw embeddings as loaded) and exposes, computed once at construction:

- ``pool.embeddings``: (N, d) float32, each row L2-normalised (or ``None``);
- ``pool.query_embedding``: (d,) float32, L2-normalised (or ``None``);
- ``pool.token_counts``: (N,) int64 (or ``None`` until every chunk has a count).

This module imports numpy only.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from adagres.core.prepared import PreparedPool, prepare
from adagres.core.validate import normalise_rows, vector_problem
from adagres.errors import PoolError, one_line
from adagres.pools.kept_values import string_list_problem

__all__ = ["GIVEN", "Chunk", "Pool"]

#: Name of ``pool.tokenizer`` when the token counts came from the file, tokenizer unnamed.
GIVEN = "given"

_SURROGATE = re.compile("[\ud800-\udfff]")


def _surrogate_at(text: str) -> int | None:
    """Position of the first lone surrogate in ``text`` (None if none); O(1) for ASCII."""
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    return None if found is None else found.start()


@dataclass(frozen=True)
class Chunk:
    """One retrieved chunk: an id, its text, and the optional fields of the pool format.

    ``metadata`` is ``None`` when the source had none (kept apart from ``{}`` so that a
    saved pool round-trips exactly); ``extra`` holds keys the format does not know.

    >>> Chunk("c1", "Paris is the capital of France.", tokens=7).tokens
    7
    """

    id: str
    text: str
    tokens: int | None = None
    score: float | None = None
    title: str | None = None
    source: str | None = None
    gold: bool | None = None
    metadata: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Return the chunk as a canonical JSON object (without its embedding)."""
        out: dict[str, Any] = {"id": self.id, "text": self.text}
        for key in ("tokens", "score", "title", "source", "gold", "metadata"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        out.update(self.extra)
        return out


def _as_matrix(values: Any) -> np.ndarray | None:
    if values is None:
        return None
    array = np.array(values, dtype=np.float64)
    array.setflags(write=False)
    return array


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    unit = normalise_rows(np.atleast_2d(matrix)).astype(np.float32).reshape(matrix.shape)
    unit.setflags(write=False)
    return unit


@dataclass(frozen=True, eq=False)
class Pool:
    """A query and its retrieved chunks, validated once, with the arrays the selector needs.

    ``raw_embeddings`` (N, d) and ``raw_query_embedding`` (d,) hold the vectors as given
    (float64, so a saved pool round-trips exactly); ``embeddings`` and ``query_embedding``
    are their L2-normalised float32 views. ``tokenizer`` names where the token counts came
    from (``"given"`` when a file supplied them without naming a tokenizer).

    >>> pool = Pool("capital of France?", (Chunk("a", "Paris"), Chunk("b", "Lyon")),
    ...             raw_embeddings=[[3.0, 4.0], [1.0, 0.0]], raw_query_embedding=[1.0, 0.0])
    >>> pool.embeddings[0].tolist()
    [0.6000000238418579, 0.800000011920929]
    >>> pool.ids
    ('a', 'b')
    """

    query: str
    chunks: tuple[Chunk, ...]
    raw_embeddings: np.ndarray | None = None
    raw_query_embedding: np.ndarray | None = None
    embedding_model: str | None = None
    answers: tuple[str, ...] = ()
    tokenizer: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    name: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "chunks", tuple(self.chunks))
        problem = string_list_problem(self.answers)
        if problem is not None:
            raise PoolError(f"{self._where()}answers: {problem}")
        object.__setattr__(self, "answers", tuple(self.answers))
        object.__setattr__(self, "raw_embeddings", _as_matrix(self.raw_embeddings))
        object.__setattr__(self, "raw_query_embedding", _as_matrix(self.raw_query_embedding))
        self._check()
        if self.token_counts is not None and self.tokenizer is None:
            object.__setattr__(self, "tokenizer", GIVEN)

    # -- validation (a safety net for pools built in code; loaders check with line numbers)

    def _where(self) -> str:
        return f"{self.name}: " if self.name else ""

    def _check(self) -> None:
        where = self._where()
        if not self.chunks:
            raise PoolError(f"{where}the pool has no chunks")
        # Every consumer encodes the query, ids and texts as UTF-8 (hash, file, tokenizer,
        # model); a lone surrogate cannot be, so it is refused here, by name.
        self._check_text("query", self.query)
        seen: dict[str, int] = {}
        for index, chunk in enumerate(self.chunks):
            text, chunk_id = chunk.text, chunk.id
            if not (type(text) is str and type(chunk_id) is str and text.isascii()):
                self._check_text(f"chunks[{index}].id", chunk_id)
                self._check_text(f"chunk '{one_line(chunk_id, max_chars=80)}': text", text)
            elif not chunk_id.isascii():
                self._check_text(f"chunks[{index}].id", chunk_id)
            if chunk.id in seen:
                raise PoolError(
                    f"{where}chunk '{chunk.id}' (chunks[{index}]): duplicate chunk id, "
                    f"first used by chunks[{seen[chunk.id]}]"
                )
            seen[chunk.id] = index
        self._check_embeddings(where)

    def _check_text(self, what: str, text: Any) -> None:
        if not isinstance(text, str):
            raise PoolError(f"{self._where()}{what}: must be a string, got {type(text).__name__}")
        position = _surrogate_at(text)
        if position is not None:
            raise PoolError(
                f"{self._where()}{what}: holds a lone surrogate at character {position}, "
                f"which is not a character and cannot be written as UTF-8"
            )

    def _check_embeddings(self, where: str) -> None:
        matrix, query = self.raw_embeddings, self.raw_query_embedding
        if matrix is not None:
            if matrix.ndim != 2 or matrix.shape[0] != len(self.chunks):
                raise PoolError(
                    f"{where}embeddings have shape {matrix.shape}, expected "
                    f"({len(self.chunks)}, d): one row per chunk"
                )
            for index in np.flatnonzero(~np.isfinite(matrix).all(axis=1) | ~matrix.any(axis=1)):
                problem = vector_problem(matrix[index])
                raise PoolError(f"{where}chunk '{self.chunks[index].id}': embedding: {problem}")
        if query is not None:
            if query.ndim != 1:
                raise PoolError(f"{where}query_embedding must be a flat list of numbers")
            if matrix is not None and query.shape[0] != matrix.shape[1]:
                raise PoolError(
                    f"{where}query_embedding has {query.shape[0]} values, "
                    f"the pool's dimension is {matrix.shape[1]}"
                )
            problem = vector_problem(query)
            if problem is not None:
                raise PoolError(f"{where}query_embedding: {problem}")

    # -- views the selector and the app read

    def __len__(self) -> int:
        return len(self.chunks)

    @cached_property
    def ids(self) -> tuple[str, ...]:
        """Chunk ids in pool order (the retriever's rank order)."""
        return tuple(chunk.id for chunk in self.chunks)

    @cached_property
    def texts(self) -> tuple[str, ...]:
        """Chunk texts in pool order, exactly as loaded."""
        return tuple(chunk.text for chunk in self.chunks)

    @cached_property
    def embeddings(self) -> np.ndarray | None:
        """(N, d) float32 unit rows, or ``None`` while the pool has no embeddings."""
        return None if self.raw_embeddings is None else _unit_rows(self.raw_embeddings)

    @cached_property
    def query_embedding(self) -> np.ndarray | None:
        """(d,) float32 unit vector, or ``None`` while the query is not embedded."""
        q = self.raw_query_embedding
        return None if q is None else _unit_rows(q)

    @cached_property
    def prepared(self) -> PreparedPool:
        """The pool as the core takes it (:func:`adagres.prepare`), made once per pool, with
        the chunks' places in their sources for overlap-aware packing
        (:mod:`adagres.pools.spans`; found only when a packing run first needs them).

        Raises :class:`PoolError` while the pool has no embeddings or no token counts.
        """
        chunks, query, tokens = self.embeddings, self.query_embedding, self.token_counts
        if chunks is None or query is None or tokens is None:
            given = {"embeddings": chunks, "a query embedding": query, "token counts": tokens}
            missing = [name for name, value in given.items() if value is None]
            raise PoolError(f"{self._where()}the pool has no {' and no '.join(missing)} yet")
        from adagres.pools.spans import spans_of  # (it reads Chunk, defined here)

        prepared = prepare(query, chunks, tokens)
        return prepared.with_spans(spans_of(self.chunks, self.tokenizer))

    @property
    def dimension(self) -> int | None:
        """Embedding dimension d, or ``None`` while nothing is embedded."""
        for matrix in (self.raw_embeddings, self.raw_query_embedding):
            if matrix is not None:
                return int(matrix.shape[-1])
        return None

    @cached_property
    def token_counts(self) -> np.ndarray | None:
        """(N,) int64 token lengths, or ``None`` unless every chunk has a count."""
        counts = [chunk.tokens for chunk in self.chunks]
        if any(count is None for count in counts):
            return None
        array = np.array(counts, dtype=np.int64)
        array.setflags(write=False)
        return array

    @cached_property
    def scores(self) -> np.ndarray | None:
        """(N,) float64 retriever scores, or ``None`` unless every chunk has one."""
        scores = [chunk.score for chunk in self.chunks]
        if any(score is None for score in scores):
            return None
        return np.array(scores, dtype=np.float64)

    @cached_property
    def gold_ids(self) -> tuple[str, ...]:
        """Ids of the chunks marked ``gold``, in pool order."""
        return tuple(chunk.id for chunk in self.chunks if chunk.gold)

    @cached_property
    def fingerprint(self) -> str:
        """A stable sha256 hex digest of query, ids, texts, token counts and embeddings."""
        digest = hashlib.sha256()
        header = {
            "query": self.query,
            "ids": self.ids,
            "texts": self.texts,
            "tokens": [chunk.tokens for chunk in self.chunks],
            "model": self.embedding_model,
        }
        digest.update(json.dumps(header, ensure_ascii=False).encode("utf-8"))
        for matrix in (self.raw_embeddings, self.raw_query_embedding):
            digest.update(b"|none" if matrix is None else b"|" + repr(matrix.shape).encode())
            if matrix is not None:
                digest.update(np.ascontiguousarray(matrix, dtype="<f8").tobytes())
        return digest.hexdigest()

    # -- new pools from this one

    def with_embeddings(
        self,
        embeddings: Any,
        query_embedding: Any,
        model: str,
    ) -> Pool:
        """Return a copy with chunk and query embeddings from ``model`` (same model for both).

        >>> pool = Pool("q", (Chunk("a", "x"),))
        >>> pool.with_embeddings([[1.0, 0.0]], [0.0, 1.0], "m").dimension
        2
        """
        return dataclasses.replace(
            self,
            raw_embeddings=embeddings,
            raw_query_embedding=query_embedding,
            embedding_model=model,
        )

    def with_token_counts(self, counts: Iterable[int], tokenizer: str) -> Pool:
        """Return a copy whose chunks carry ``counts`` (one per chunk) from ``tokenizer``.

        >>> Pool("q", (Chunk("a", "x y"),)).with_token_counts([2], "words").token_counts.tolist()
        [2]
        """
        counts = [int(count) for count in counts]
        if len(counts) != len(self.chunks):
            raise PoolError(
                f"{self._where()}{len(counts)} token counts for {len(self.chunks)} chunks"
            )
        if any(count < 0 for count in counts):
            raise PoolError(f"{self._where()}token counts must not be negative")
        chunks = tuple(
            dataclasses.replace(chunk, tokens=count)
            for chunk, count in zip(self.chunks, counts, strict=True)
        )
        return dataclasses.replace(self, chunks=chunks, tokenizer=tokenizer)

    def subset(self, ids: Sequence[str]) -> Pool:
        """Return a pool of the chunks named in ``ids``, in pool order (embeddings kept)."""
        wanted = set(ids)
        missing = wanted.difference(self.ids)
        if missing:
            raise PoolError(f"{self._where()}no chunk with id {sorted(missing)[0]!r}")
        keep = [i for i, chunk_id in enumerate(self.ids) if chunk_id in wanted]
        matrix = None if self.raw_embeddings is None else self.raw_embeddings[keep]
        return dataclasses.replace(
            self, chunks=tuple(self.chunks[i] for i in keep), raw_embeddings=matrix
        )

    # -- serialisation

    def to_dict(self, *, float_decimals: int | None = None) -> dict[str, Any]:
        """Return the pool as a canonical JSON object (see ``pool.schema.json``).

        ``float_decimals`` rounds embedding values (``None`` keeps them exact).
        """

        def floats(vector: np.ndarray) -> list[float]:
            values: list[float] = vector.tolist()
            if float_decimals is None:
                return values
            return [round(value, float_decimals) for value in values]

        out: dict[str, Any] = {"query": self.query}
        if self.raw_query_embedding is not None:
            out["query_embedding"] = floats(self.raw_query_embedding)
        if self.embedding_model is not None:
            out["embedding_model"] = self.embedding_model
        if self.tokenizer not in (None, GIVEN) and self.token_counts is not None:
            out["tokenizer"] = self.tokenizer
        if self.answers:
            out["answers"] = list(self.answers)
        out.update({k: v for k, v in self.extra.items() if k not in out})
        chunks = []
        for index, chunk in enumerate(self.chunks):
            item = chunk.to_dict()
            if self.raw_embeddings is not None:
                item["embedding"] = floats(self.raw_embeddings[index])
            chunks.append(item)
        out["chunks"] = chunks
        return out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Pool):
            return NotImplemented
        return self.to_dict() == other.to_dict() and self.tokenizer == other.tokenizer

    __hash__ = None  # type: ignore[assignment]
