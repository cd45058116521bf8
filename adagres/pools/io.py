"""Pools in and out: load, validate and save pool files in every supported shape.

Formats (chosen by ``format=`` or by the file name's extension):

- ``json``: one canonical pool ``{"query", "chunks": [...]}`` (see ``schema/pool.schema.json``),
  a list of pools, or a list of retrieved documents in the shapes pipelines already dump:
  LangChain ``Document`` (``page_content``, ``metadata``; also ``dumpd`` output and
  ``[document, score]`` pairs), LlamaIndex ``NodeWithScore`` / ``TextNode`` dicts and
  Haystack ``Document`` dicts (``content``, ``meta``). A document list takes its query from
  a wrapper object ``{"query": ..., "documents" | "nodes" | "source_nodes": [...]}`` or
  from ``query=``.
- ``jsonl``: one pool per line (selected by ``index=`` or ``query=``), or one document per
  line (then the whole file is one pool).
- ``csv`` / ``parquet``: one row per chunk; columns ``text`` (required), ``id``, ``query``
  (or ``query=``), ``score``, ``tokens``, ``title``, ``source``, ``gold``, ``embedding``
  (a JSON list in CSV), ``metadata`` (a JSON object in CSV); other columns go into the
  chunk's metadata. Several queries in the ``query`` column make several pools.

Every problem is a :class:`~adagres.errors.PoolError` whose message names the file, the line
or row, the chunk and the field. Nothing is ever unpickled. Nothing the user gave is
altered: texts stay byte-exact and unknown keys are kept.

This module is the public face; the layers under it, bottom up:

- :mod:`~adagres.pools.files`: the format from the name, the bytes within ``max_bytes``,
  UTF-8 text;
- :mod:`~adagres.pools.fields`: one chunk, field by field, and where each one came from;
- :mod:`~adagres.pools.frameworks`: LangChain / LlamaIndex / Haystack shapes to chunks;
- :mod:`~adagres.pools.validate`: a whole pool dict to a :class:`~adagres.pools.pool.Pool`;
- :mod:`~adagres.pools.jsonfile` (``.json``, ``.jsonl``, and saving) and
  :mod:`~adagres.pools.tables` (``.csv``, ``.parquet``): the readers;
- :mod:`~adagres.pools.retrieval`: :func:`pool_from_retrieval`, :func:`dump_retrieval`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from adagres.errors import PoolError
from adagres.pools.fields import RawPool
from adagres.pools.files import FORMATS, MAX_BYTES, decode_text, detect_format, read_source
from adagres.pools.jsonfile import json_pools, jsonl_pools, save_pool, save_pools
from adagres.pools.pool import Pool
from adagres.pools.retrieval import dump_retrieval, pool_from_retrieval
from adagres.pools.tables import csv_rows, parquet_rows, table_pools
from adagres.pools.validate import MAX_CHUNKS, build_pool, pool_from_dict

__all__ = [
    "FORMATS",
    "MAX_BYTES",
    "MAX_CHUNKS",
    "SCHEMA_PATH",
    "detect_format",
    "dump_retrieval",
    "load_pool",
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
    max_bytes: int = MAX_BYTES,
    max_chunks: int = MAX_CHUNKS,
    name: str | None = None,
) -> list[Pool]:
    """Load every pool a file holds (a jsonl file or a table may hold many), validated.

    ``source`` is a path or the file's bytes (bytes need ``format=`` or a ``name=`` with an
    extension). ``query`` supplies the query of a document list or table that has none; it
    never filters (``load_pool(..., query=)`` chooses a pool by its query).

    >>> pools = load_pools(b'{"query": "q", "chunks": [{"id": "a", "text": "x"}]}\\n',
    ...                    name="runs.jsonl")
    >>> [len(pool) for pool in pools]
    [1]
    """
    raws = _raw_pools(source, format, query, max_bytes, name)
    return [build_pool(raw, ctx, max_chunks) for raw, ctx in raws]


def load_pool(
    source: str | os.PathLike[str] | bytes,
    *,
    format: str | None = None,
    index: int | None = None,
    query: str | None = None,
    max_bytes: int = MAX_BYTES,
    max_chunks: int = MAX_CHUNKS,
    name: str | None = None,
) -> Pool:
    """Load one validated pool from a path or bytes; raise PoolError naming what is wrong.

    When the file holds several pools, choose one with ``index`` (0-based) or ``query``
    (its exact query text). For a document list or table without a query column,
    ``query`` supplies the query. No network, no unpickling.

    >>> pool = load_pool(b'{"query": "q", "chunks": [{"id": "a", "text": "x", "tokens": 1}]}',
    ...                  name="pool.json")
    >>> pool.ids, pool.token_counts.tolist(), pool.tokenizer
    (('a',), [1], 'given')
    """
    raws = _raw_pools(source, format, query, max_bytes, name)
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
                f"{label}: no pool has the query {query!r} ({len(raws)} pools in the file)"
            )
        raw, ctx = matches[0]
    elif len(raws) == 1:
        raw, ctx = raws[0]
    else:
        raise PoolError(
            f"{label}: the file holds {len(raws)} pools; choose one with "
            f"index= (0 to {len(raws) - 1}) or query="
        )
    return build_pool(raw, ctx, max_chunks)


def _raw_pools(
    source: Any, format: str | None, query: str | None, max_bytes: int, name: str | None
) -> list[RawPool]:
    """Read the file and hand it to the reader of its format; the pools are not yet checked."""
    if not isinstance(source, (bytes, bytearray, memoryview)) and name is None:
        name = Path(source).name
    fmt = detect_format(name, format)
    data, label = read_source(source, name, max_bytes)
    if fmt == "parquet":
        return table_pools(parquet_rows(data, label), label, query, typed=True)
    text = decode_text(data, label)
    if fmt == "csv":
        return table_pools(csv_rows(text, label), label, query, typed=False)
    if fmt == "jsonl":
        return jsonl_pools(text, label, query)
    return json_pools(text, label, query)
