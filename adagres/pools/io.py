"""Pools in and out: load, validate and save pool files in every supported shape.

Formats (chosen by ``format=`` or by the file name's extension; ``docs/POOL_FORMAT.md``):
``json`` (one canonical pool, a list of pools, or a list of retrieved documents as
LangChain, LlamaIndex or Haystack dump them, read by :mod:`~adagres.pools.formats.jsonfile`
and :mod:`~adagres.pools.formats.frameworks`), ``jsonl`` (one pool per line, or one document
per line) and ``csv`` / ``parquet`` (one row per chunk, :mod:`~adagres.pools.formats.tables`).

Every problem is a :class:`~adagres.errors.PoolError` whose one-line message names the file,
the line or row, the chunk and the field. An object that holds a key twice is refused
(naming the key), never read as its last value. Nothing is ever unpickled. Nothing the user gave
is altered: texts stay byte-exact and unknown keys are kept (Parquet dates, times and
decimals become their ISO / decimal strings, as JSON has no such types). The work of loading
is bounded by :class:`~adagres.pools.load_limits.Limits` (pass ``limits=Limits(...)`` to raise
one), each checked before the step it bounds. A pool that loads saves, and the saved file
loads back to an equal pool.

The layers under this module, bottom up: :mod:`~adagres.pools.formats.detect` (the format,
the bytes, UTF-8 text), :mod:`~adagres.pools.chunk_fields` (one chunk, field by field),
:mod:`~adagres.pools.formats.frameworks`, :mod:`~adagres.pools.from_dict` (a pool dict to a
:class:`~adagres.pools.pool.Pool`), the readers (``jsonfile``, ``tables``) and
:mod:`~adagres.pools.retrieval` (:func:`pool_from_retrieval`, :func:`dump_retrieval`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from adagres.core.validate import limit_hint
from adagres.errors import PoolError, one_line
from adagres.pools.chunk_fields import RawPool
from adagres.pools.formats.detect import decode_text, detect_format, read_source
from adagres.pools.formats.jsonfile import (
    json_pools,
    jsonl_line_pool,
    jsonl_pools,
    save_pool,
    save_pools,
)
from adagres.pools.formats.tables import csv_rows, parquet_rows, table_pools
from adagres.pools.from_dict import build_pool, pool_from_dict
from adagres.pools.load_limits import DEFAULT_LIMITS, Limits, too_many_chunks
from adagres.pools.pool import Pool
from adagres.pools.retrieval import dump_retrieval, pool_from_retrieval

__all__ = [
    "DEFAULT_LIMITS",
    "SCHEMA_PATH",
    "Limits",
    "detect_format",
    "dump_retrieval",
    "load_pool",
    "load_pool_line",
    "load_pools",
    "pool_from_dict",
    "pool_from_retrieval",
    "save_pool",
    "save_pools",
]

#: The JSON Schema of the canonical pool format (package data).
SCHEMA_PATH = Path(__file__).with_name("schema") / "pool.schema.json"


def load_pools(
    source: str | os.PathLike[str] | bytes,
    *,
    format: str | None = None,
    query: str | None = None,
    max_bytes: int | None = None,
    max_chunks: int | None = None,
    name: str | None = None,
    limits: Limits | None = None,
) -> list[Pool]:
    """Load every pool a file holds (a jsonl file or a table may hold many), validated.

    ``source`` is a path or the file's bytes (bytes need ``format=`` or a ``name=`` with an
    extension). ``query`` supplies the query of a document list or table that has none; it
    never filters (``load_pool(..., query=)`` chooses a pool by its query). ``limits``
    bounds the work (see the module docstring); ``max_bytes`` and ``max_chunks`` override
    those two of its fields.

    >>> pools = load_pools(b'{"query": "q", "chunks": [{"id": "a", "text": "x"}]}\\n',
    ...                    name="runs.jsonl")
    >>> [len(pool) for pool in pools]
    [1]
    """
    chosen = (limits or DEFAULT_LIMITS).replace(max_bytes=max_bytes, max_chunks=max_chunks)
    raws = _raw_pools(source, format, query, chosen, name)
    return [build_pool(raw, ctx, chosen) for raw, ctx in raws]


def load_pool_line(data: bytes, *, name: str, line: int, limits: Limits | None = None) -> Pool:
    """The pool of one line of a ``.jsonl`` file (its bytes, without the line end), checked;
    messages name the file ``name`` and ``line``. Reading one line costs what the line
    holds, whatever its number (a pool set reads each of its lines this way).

    >>> load_pool_line(b'{"query": "q", "chunks": [{"id": "a", "text": "x"}]}',
    ...                name="runs.jsonl", line=7).ids
    ('a',)
    """
    chosen = limits or DEFAULT_LIMITS
    label = name
    if len(data) > chosen.max_bytes:
        raise PoolError(
            f"{label}, line {line}: the line has {len(data):,} bytes, over the limit of "
            f"{chosen.max_bytes:,} bytes ({limit_hint('max_bytes')})"
        )
    text = decode_text(data, f"{label}, line {line}")
    raw, ctx = jsonl_line_pool(text, label, line, chosen, raw=data)
    chunks = raw.get("chunks")
    if isinstance(chunks, list) and len(chunks) > chosen.max_file_chunks:
        raise too_many_chunks(f"{label}, line {line}", len(chunks), chosen)
    return build_pool(raw, ctx, chosen)


def load_pool(
    source: str | os.PathLike[str] | bytes,
    *,
    format: str | None = None,
    index: int | None = None,
    query: str | None = None,
    max_bytes: int | None = None,
    max_chunks: int | None = None,
    name: str | None = None,
    limits: Limits | None = None,
) -> Pool:
    """Load one validated pool from a path or bytes; raise PoolError naming what is wrong.

    When the file holds several pools, choose one with ``index`` (0-based) or ``query``
    (its exact query text). For a document list or table without a query column,
    ``query`` supplies the query. ``limits``, ``max_bytes`` and ``max_chunks`` as for
    :func:`load_pools`. No network, no unpickling.

    >>> pool = load_pool(b'{"query": "q", "chunks": [{"id": "a", "text": "x", "tokens": 1}]}',
    ...                  name="pool.json")
    >>> pool.ids, pool.token_counts.tolist(), pool.tokenizer
    (('a',), [1], 'given')
    """
    chosen = (limits or DEFAULT_LIMITS).replace(max_bytes=max_bytes, max_chunks=max_chunks)
    raws = _raw_pools(source, format, query, chosen, name)
    label = raws[0][1].file
    if index is not None:
        if not -len(raws) <= index < len(raws):
            raise PoolError(
                f"{label}: no pool at index {index}; the file holds "
                f"{len(raws)} pool(s), index 0 to {len(raws) - 1}"
            )
        raw, ctx = raws[index]
    elif query is not None:
        # The one place a query selects: the readers only supply it where a file has none.
        matches = [item for item in raws if item[0].get("query") == query]
        if not matches:
            raise PoolError(
                f"{label}: no pool has the query {one_line(repr(query), max_chars=80)} "
                f"({len(raws)} pools in the file)"
            )
        raw, ctx = matches[0]
    elif len(raws) == 1:
        raw, ctx = raws[0]
    else:
        raise PoolError(
            f"{label}: the file holds {len(raws)} pools; choose one with "
            f"index= (0 to {len(raws) - 1}) or query="
        )
    return build_pool(raw, ctx, chosen)


def _raw_pools(
    source: Any, format: str | None, query: str | None, limits: Limits, name: str | None
) -> list[RawPool]:
    """Read the file and hand it to the reader of its format; the pools are not yet checked."""
    if not isinstance(source, (bytes, bytearray, memoryview)) and name is None:
        name = Path(source).name
    fmt = detect_format(name, format)
    data, label = read_source(source, name, limits.max_bytes)
    if fmt == "parquet":
        rows = parquet_rows(data, label, limits)
        return table_pools(rows, label, query, typed=True, limits=limits)
    if len(data) > limits.max_decoded_bytes:  # UTF-8 text decodes to as many bytes
        raise PoolError(
            f"{label}: the file has {len(data):,} bytes, over the limit of "
            f"{limits.max_decoded_bytes:,} decoded bytes ({limit_hint('max_decoded_bytes')})"
        )
    text = decode_text(data, label)
    if fmt == "csv":
        return table_pools(csv_rows(text, label, limits), label, query, typed=False, limits=limits)
    reader = jsonl_pools if fmt == "jsonl" else json_pools
    raws = reader(text, label, query, limits, raw=data)
    chunks = sum(len(raw["chunks"]) for raw, _ in raws if isinstance(raw.get("chunks"), list))
    if chunks > limits.max_file_chunks:  # before each becomes a Chunk (~1 KB more each)
        raise too_many_chunks(label, chunks, limits)
    return raws
