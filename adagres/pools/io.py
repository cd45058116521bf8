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
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from adagres.errors import PoolError
from adagres.pools.pool import GIVEN, Chunk, Pool

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

FORMATS = ("json", "jsonl", "csv", "parquet")
#: The JSON Schema of the canonical pool format (package data).
SCHEMA_PATH = Path(__file__).with_name("schema") / "pool.schema.json"
MAX_BYTES = 200_000_000
MAX_CHUNKS = 100_000

_EXTENSIONS = {
    ".json": "json",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".csv": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_CHUNK_FIELDS = (
    "id",
    "text",
    "embedding",
    "tokens",
    "score",
    "title",
    "source",
    "gold",
    "metadata",
)
_POOL_FIELDS = ("query", "query_embedding", "embedding_model", "answers", "tokenizer", "chunks")
_DOC_LIST_KEYS = ("documents", "docs", "nodes", "source_nodes", "results")
_TEXT_COLUMNS = ("text", "page_content", "content", "chunk", "passage")
_QUERY_COLUMNS = ("query", "question")


# --------------------------------------------------------------------------- locations


@dataclass(frozen=True)
class _Ctx:
    """Where a pool came from, to build messages: file, line of the pool, chunk positions."""

    file: str
    line: int | None = None
    chunk_position: Callable[[int, Any], str] | None = None

    def fail(
        self, problem: str, *, index: int | None = None, chunk: Any = None, field: str | None = None
    ) -> PoolError:
        parts = [self.file]
        position = None
        if index is not None and self.chunk_position is not None:
            position = self.chunk_position(index, chunk)
        if position:
            parts.append(position)
        elif self.line is not None:
            parts.append(f"line {self.line}")
        if index is not None:
            parts.append(f"chunk '{chunk}'" if isinstance(chunk, str) else f"chunks[{index}]")
        if field is not None:
            parts.append(f"field '{field}'")
        return PoolError(", ".join(parts) + ": " + problem)


def _json_line_finder(text: str) -> Callable[[int, Any], str]:
    """Return a function that finds the line of a chunk's ``"id"`` in a JSON text (lazily)."""

    def position(index: int, chunk_id: Any) -> str:
        if not isinstance(chunk_id, str):
            return ""
        pattern = r'"id"\s*:\s*' + re.escape(json.dumps(chunk_id))
        found = re.search(pattern, text) or re.search(
            r'"id"\s*:\s*' + re.escape(json.dumps(chunk_id, ensure_ascii=False)), text
        )
        return f"line {text.count(chr(10), 0, found.start()) + 1}" if found else ""

    return position


def _row_position(rows: Sequence[int]) -> Callable[[int, Any], str]:
    return lambda index, _chunk: f"row {rows[index]}"


# --------------------------------------------------------------------------- reading


def _read(
    source: str | os.PathLike[str] | bytes, name: str | None, max_bytes: int
) -> tuple[bytes, str]:
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        label = name or "<bytes>"
    else:
        path = Path(source)
        label = name or path.name
        if not path.is_file():
            raise PoolError(f"{label}: no such file ({path})")
        size = path.stat().st_size
        if size > max_bytes:
            raise PoolError(
                f"{label}: the file has {size:,} bytes, over the limit of "
                f"{max_bytes:,} bytes (raise max_bytes to load it)"
            )
        data = path.read_bytes()
    if len(data) > max_bytes:
        raise PoolError(
            f"{label}: the file has {len(data):,} bytes, over the limit of "
            f"{max_bytes:,} bytes (raise max_bytes to load it)"
        )
    return data, label


def _decode(data: bytes, label: str) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise PoolError(
            f"{label}, line {line}: bytes are not UTF-8 (byte 0x{data[error.start]:02x} at "
            f"offset {error.start}); save the file as UTF-8"
        ) from None
    return text[1:] if text.startswith("\ufeff") else text


def detect_format(name: str | None, format: str | None = None) -> str:
    """Return the pool format (one of ``FORMATS``) from ``format`` or the name's extension.

    >>> detect_format("runs/pool.JSONL")
    'jsonl'
    """
    if format is not None:
        fmt = format.lower().lstrip(".")
        fmt = "jsonl" if fmt == "ndjson" else fmt
        if fmt not in FORMATS:
            raise PoolError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")
        return fmt
    suffix = Path(name or "").suffix.lower()
    if suffix not in _EXTENSIONS:
        raise PoolError(
            f"{name or '<bytes>'}: cannot tell the format from the name; give format= "
            f"({', '.join(FORMATS)}) or a name ending in {', '.join(sorted(_EXTENSIONS))}"
        )
    return _EXTENSIONS[suffix]


# --------------------------------------------------------------------------- public API


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
    return [_build(raw, ctx, max_chunks) for raw, ctx in raws]


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
    return _build(raw, ctx, max_chunks)


def save_pool(
    pool: Pool, path: str | os.PathLike[str], *, float_decimals: int | None = None
) -> Path:
    """Write ``pool`` as canonical JSON (``.json``) or as one line (``.jsonl``); return the path.

    Loading the file gives back an equal pool (texts, ids, embeddings, token counts,
    metadata and extra keys), unless ``float_decimals`` rounds the embeddings.

    >>> import tempfile, pathlib
    >>> pool = load_pool(b'{"query": "q", "chunks": [{"id": "a", "text": "x"}]}', format="json")
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "pool.json"
    >>> load_pool(save_pool(pool, target)) == pool
    True
    """
    return save_pools([pool], path, float_decimals=float_decimals)


def save_pools(
    pools: Iterable[Pool], path: str | os.PathLike[str], *, float_decimals: int | None = None
) -> Path:
    """Write pools to ``path``: a ``.jsonl`` file (one per line) or a ``.json`` file (one pool).

    >>> import tempfile, pathlib
    >>> pool = load_pool(b'{"query": "q", "chunks": [{"id": "a", "text": "x"}]}', format="json")
    >>> target = save_pools([pool, pool], pathlib.Path(tempfile.mkdtemp()) / "runs.jsonl")
    >>> len(load_pools(target))
    2
    """
    path = Path(path)
    pools = list(pools)
    fmt = detect_format(path.name)
    dicts = [pool.to_dict(float_decimals=float_decimals) for pool in pools]
    if fmt == "jsonl":
        text = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in dicts)
    elif fmt == "json" and len(dicts) == 1:
        text = json.dumps(dicts[0], ensure_ascii=False, indent=1) + "\n"
    else:
        raise PoolError(
            f"{path.name}: save one pool per .json file or many to .jsonl "
            f"(got {len(dicts)} pool(s) for a .{fmt} file)"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
    return path


def pool_from_dict(
    obj: Any, *, name: str = "<pool>", query: str | None = None, max_chunks: int = MAX_CHUNKS
) -> Pool:
    """Validate a canonical pool object (or a document list with ``query``) and return a Pool.

    >>> pool_from_dict({"query": "q", "chunks": [{"id": "a", "text": "x"}]}).texts
    ('x',)
    """
    raw = _normalise_top(obj, _Ctx(name), query)
    return _build(raw, _Ctx(name), max_chunks)


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
        chunk = _object_to_dict(item)
        if scores is not None:
            chunk["score"] = float(scores[position])
        if ids is not None:
            chunk["id"] = ids[position]
        chunk.setdefault("id", f"c{position}")
        if metadata is not None and metadata[position] is not None:
            chunk["metadata"] = dict(metadata[position])
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
    >>> target = pathlib.Path(tempfile.mkdtemp()) / "pool.json"
    >>> load_pool(dump_retrieval(target, "q", ["a text", "another"], [0.8, 0.5])).ids
    ('c0', 'c1')
    """
    return save_pool(pool_from_retrieval(query, texts, scores, **options), path)


# --------------------------------------------------------------------------- raw pools


def _raw_pools(
    source: Any, format: str | None, query: str | None, max_bytes: int, name: str | None
) -> list[tuple[dict[str, Any], _Ctx]]:
    if not isinstance(source, (bytes, bytearray, memoryview)) and name is None:
        name = Path(source).name
    fmt = detect_format(name, format)
    data, label = _read(source, name, max_bytes)
    if fmt == "parquet":
        return _table_pools(_parquet_rows(data, label), label, query, typed=True)
    text = _decode(data, label)
    if fmt == "csv":
        return _table_pools(_csv_rows(text, label), label, query, typed=False)
    if fmt == "jsonl":
        return _jsonl_pools(text, label, query)
    return _json_pools(text, label, query)


def _json_error(error: json.JSONDecodeError, label: str, line_offset: int = 0) -> PoolError:
    return PoolError(
        f"{label}, line {error.lineno + line_offset}, column {error.colno}: "
        f"malformed JSON ({error.msg})"
    )


def _reject_constant(token: str) -> float:
    raise ValueError(f"{token} is not valid JSON")


def _parse_json(text: str) -> Any:
    return json.loads(text, parse_constant=_reject_constant)


def _loads(text: str, label: str, line_offset: int = 0) -> Any:
    try:
        return _parse_json(text)
    except json.JSONDecodeError as error:
        raise _json_error(error, label, line_offset) from None
    except ValueError as error:  # NaN / Infinity literals
        raise PoolError(f"{label}, line {line_offset + 1}: malformed JSON ({error})") from None


def _json_pools(text: str, label: str, query: str | None) -> list[tuple[dict, _Ctx]]:
    obj = _loads(text, label)
    ctx = _Ctx(label, chunk_position=_json_line_finder(text))
    if isinstance(obj, list) and obj and all(_looks_like_pool(item) for item in obj):
        return [(_normalise_top(item, _Ctx(label), None), _Ctx(label)) for item in obj]
    return [(_normalise_top(obj, ctx, query), ctx)]


def _jsonl_pools(text: str, label: str, query: str | None) -> list[tuple[dict, _Ctx]]:
    records: list[tuple[Any, int]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            records.append((_loads(line, label, number - 1), number))
    if not records:
        raise PoolError(f"{label}: the file holds no pool (no non-blank line)")
    if not _looks_like_pool(records[0][0]):
        lines = [number for _, number in records]
        ctx = _Ctx(label, chunk_position=_row_position_lines(lines))
        return [(_normalise_top([item for item, _ in records], ctx, query), ctx)]
    out = []
    for item, number in records:
        ctx = _Ctx(label, line=number)
        out.append((_normalise_top(item, ctx, None), ctx))
    return out


def _row_position_lines(lines: Sequence[int]) -> Callable[[int, Any], str]:
    return lambda index, _chunk: f"line {lines[index]}"


def _looks_like_pool(obj: Any) -> bool:
    return isinstance(obj, dict) and ("chunks" in obj or any(k in obj for k in _DOC_LIST_KEYS))


def _normalise_top(obj: Any, ctx: _Ctx, query: str | None) -> dict[str, Any]:
    """Turn a canonical pool, a wrapper or a bare document list into a canonical dict."""
    if isinstance(obj, list):
        if query is None:
            raise ctx.fail(
                "a list of documents has no query; give query= or wrap the list "
                'as {"query": ..., "documents": [...]}'
            )
        return {"query": query, "chunks": [_document_to_chunk(d, i) for i, d in enumerate(obj)]}
    if not isinstance(obj, dict):
        raise ctx.fail(f"a pool must be a JSON object, got {_type_name(obj)}")
    out = dict(obj)
    if "chunks" not in out:
        for key in _DOC_LIST_KEYS:
            if isinstance(out.get(key), list):
                documents = out.pop(key)
                out["chunks"] = [_document_to_chunk(d, i) for i, d in enumerate(documents)]
                break
    if "query" not in out and query is not None:
        out["query"] = query
    return out


# --------------------------------------------------------------------------- document shapes


def _document_to_chunk(doc: Any, index: int) -> Any:
    """Map one LangChain / LlamaIndex / Haystack / canonical document to a canonical chunk."""
    if isinstance(doc, list) and len(doc) == 2 and isinstance(doc[1], (int, float)):
        chunk = _document_to_chunk(doc[0], index)  # LangChain (Document, score) pair
        if isinstance(chunk, dict):
            chunk = {**chunk, "score": doc[1]}
        return chunk
    if not isinstance(doc, dict):
        return doc  # validated (and rejected) later with its position
    if doc.get("lc") is not None and isinstance(doc.get("kwargs"), dict):
        doc = {**doc["kwargs"]}  # LangChain dumpd() output
    if "page_content" in doc:
        return _langchain(doc, index)
    if isinstance(doc.get("node"), dict):
        return _llamaindex(doc["node"], index, score=doc.get("score"))
    if "id_" in doc or "text_resource" in doc:
        return _llamaindex(doc, index, score=doc.get("score"))
    if "content" in doc and "text" not in doc:
        return _haystack(doc, index)
    return doc


def _langchain(doc: dict[str, Any], index: int) -> dict[str, Any]:
    metadata = doc.get("metadata")
    out: dict[str, Any] = {
        "id": doc.get("id") or f"c{index}",
        "text": doc["page_content"],
    }
    if metadata is not None:
        out["metadata"] = metadata
    if isinstance(metadata, dict):
        for key in ("source", "title", "score"):
            if metadata.get(key) is not None and key not in doc:
                out[key] = metadata[key]
    for key, value in doc.items():
        if key not in ("id", "page_content", "metadata", "type"):
            out[key] = value
    return out


def _llamaindex(node: dict[str, Any], index: int, *, score: Any) -> dict[str, Any]:
    text = node.get("text")
    if text is None and isinstance(node.get("text_resource"), dict):
        text = node["text_resource"].get("text")
    out: dict[str, Any] = {"id": node.get("id_") or node.get("id") or f"c{index}", "text": text}
    for key in ("metadata", "embedding"):
        if node.get(key) is not None:
            out[key] = node[key]
    if score is not None:
        out["score"] = score
    return out


def _haystack(doc: dict[str, Any], index: int) -> dict[str, Any]:
    out: dict[str, Any] = {"id": doc.get("id") or f"c{index}", "text": doc["content"]}
    meta = doc.get("meta")
    if meta is not None:
        out["metadata"] = meta
    for key in ("score", "embedding"):
        if doc.get(key) is not None:
            out[key] = doc[key]
    return out


def _object_to_dict(item: Any) -> dict[str, Any]:
    """Turn a retrieved Python object (str, dict, LangChain/LlamaIndex/Haystack) into a dict."""
    if isinstance(item, str):
        return {"text": item}
    if isinstance(item, dict):
        return dict(item)
    node = getattr(item, "node", None)
    if node is not None:  # LlamaIndex NodeWithScore
        out = _object_to_dict(node)
        if getattr(item, "score", None) is not None:
            out["score"] = float(item.score)
        return out
    for attribute in ("page_content", "text", "content"):
        text = getattr(item, attribute, None)
        if isinstance(text, str):
            out = {"text": text}
            for meta_attr in ("metadata", "meta"):
                meta = getattr(item, meta_attr, None)
                if isinstance(meta, dict):
                    out["metadata"] = dict(meta)
            for id_attr in ("id", "id_", "node_id"):
                value = getattr(item, id_attr, None)
                if isinstance(value, str) and value:
                    out["id"] = value
                    break
            return out
    raise PoolError(f"cannot read a text from a retrieved {type(item).__name__} object")


# --------------------------------------------------------------------------- tables


def _csv_rows(text: str, label: str) -> list[dict[str, Any]]:
    csv.field_size_limit(2**31 - 1)
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        rows = [dict(row) for row in reader]
    except csv.Error as error:
        raise PoolError(f"{label}: malformed CSV ({error})") from None
    if reader.fieldnames is None:
        raise PoolError(f"{label}: the CSV file is empty (no header row)")
    for number, row in enumerate(rows, start=1):
        if None in row or any(value is None for value in row.values()):
            raise PoolError(
                f"{label}, row {number}: the row has a different number of "
                f"fields than the header ({len(reader.fieldnames)})"
            )
    return rows


def _parquet_rows(data: bytes, label: str) -> list[dict[str, Any]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:  # pragma: no cover - pyarrow is a core requirement
        raise PoolError(f"{label}: reading parquet needs pyarrow (pip install pyarrow)") from None
    try:
        table = pq.read_table(io.BytesIO(data))
    except Exception as error:  # pyarrow raises several types for a corrupt file
        raise PoolError(f"{label}: not a readable parquet file ({error})") from None
    return table.to_pylist()


def _column(columns: Iterable[str], choices: Sequence[str]) -> str | None:
    present = list(columns)
    return next((name for name in choices if name in present), None)


def _table_pools(
    rows: list[dict[str, Any]], label: str, query: str | None, *, typed: bool
) -> list[tuple[dict, _Ctx]]:
    if not rows:
        raise PoolError(f"{label}: the table has no rows: the pool is empty")
    columns = list(rows[0])
    text_column = _column(columns, _TEXT_COLUMNS)
    if text_column is None:
        raise PoolError(
            f"{label}: no text column; expected one of {', '.join(_TEXT_COLUMNS)}"
            f" (found {', '.join(map(str, columns))})"
        )
    query_column = _column(columns, _QUERY_COLUMNS)
    if query_column is None and query is None:
        raise PoolError(f"{label}: no query column ({', '.join(_QUERY_COLUMNS)}); give query=")
    groups: dict[str, list[int]] = {}
    for number, row in enumerate(rows, start=1):
        row_query = query if query_column is None else row.get(query_column)
        if not isinstance(row_query, str) or not row_query.strip():
            raise PoolError(f"{label}, row {number}, field '{query_column}': the query is empty")
        groups.setdefault(row_query, []).append(number)
    pools = []
    for group_query, numbers in groups.items():
        chunks = [
            _row_to_chunk(rows[n - 1], n, label, text_column, query_column, typed) for n in numbers
        ]
        ctx = _Ctx(label, chunk_position=_row_position(numbers))
        pools.append(({"query": group_query, "chunks": chunks}, ctx))
    return pools


def _row_to_chunk(
    row: dict[str, Any],
    number: int,
    label: str,
    text_column: str,
    query_column: str | None,
    typed: bool,
) -> dict[str, Any]:
    chunk: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for key, value in row.items():
        if key == query_column:
            continue
        if key == text_column:
            chunk["text"] = value
        elif key in ("id", "chunk_id"):
            chunk["id"] = value if not typed or value is None else str(value)
        elif key in _CHUNK_FIELDS:
            if typed:
                if value is not None:
                    chunk[key] = value
            elif value != "":
                chunk[key] = _csv_value(key, value, number, label, row.get("id"))
        elif not (typed and value is None) and not (not typed and value == ""):
            metadata[key] = value
    chunk.setdefault("id", f"row{number}")
    if chunk.get("id") in (None, ""):
        chunk["id"] = f"row{number}"
    if metadata:
        base = chunk.get("metadata")
        chunk["metadata"] = {**metadata, **base} if isinstance(base, dict) else metadata
    return chunk


def _csv_value(key: str, value: str, number: int, label: str, chunk_id: Any) -> Any:
    where = f"{label}, row {number}, chunk '{chunk_id or f'row{number}'}', field '{key}'"
    if key in ("embedding", "metadata"):
        try:
            return _parse_json(value)
        except ValueError as error:
            raise PoolError(f"{where}: not valid JSON ({error})") from None
    if key == "tokens":
        try:
            return int(value)
        except ValueError:
            raise PoolError(f"{where}: token count {value!r} is not an integer") from None
    if key == "score":
        try:
            return float(value)
        except ValueError:
            raise PoolError(f"{where}: score {value!r} is not a number") from None
    if key == "gold":
        lowered = value.strip().lower()
        if lowered in ("true", "1", "yes"):
            return True
        if lowered in ("false", "0", "no"):
            return False
        raise PoolError(f"{where}: {value!r} is not true or false")
    return value


# --------------------------------------------------------------------------- validation


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _vector(value: Any, ctx: _Ctx, index: int | None, chunk: Any, field: str) -> list[float]:
    if not isinstance(value, list) or not value:
        raise ctx.fail(
            f"must be a non-empty list of numbers, got {_type_name(value)}",
            index=index,
            chunk=chunk,
            field=field,
        )
    # Fast path in C (set of types, one finite check); the loop below only runs to name the
    # first bad value.
    numbers = set(map(type, value)) <= {int, float}
    if numbers and np.isfinite(np.array(value, np.float64)).all() and any(value):
        return value
    for position, number in enumerate(value):
        if not _is_number(number):
            raise ctx.fail(
                f"value {position} is {_type_name(number)}, not a number",
                index=index,
                chunk=chunk,
                field=field,
            )
        if not math.isfinite(number):
            raise ctx.fail(
                f"value {position} is {number}: NaN and infinite values are not allowed",
                index=index,
                chunk=chunk,
                field=field,
            )
    if not any(value):
        raise ctx.fail(
            f"all {len(value)} values are zero: the vector has no direction",
            index=index,
            chunk=chunk,
            field=field,
        )
    return value


def _optional(
    obj: dict[str, Any],
    key: str,
    kind: type | tuple[type, ...],
    what: str,
    ctx: _Ctx,
    index: int | None = None,
    chunk: Any = None,
) -> Any:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ctx.fail(
            f"must be {what}, got {_type_name(value)} {value!r:.60}",
            index=index,
            chunk=chunk,
            field=key,
        )
    return value


def _token_count(value: Any, ctx: _Ctx, index: int, chunk_id: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 12.0 is an integer in JSON Schema too
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ctx.fail(
            f"token count {value!r} is not a non-negative integer",
            index=index,
            chunk=chunk_id,
            field="tokens",
        )
    return value


def _parse_chunk(item: Any, index: int, ctx: _Ctx) -> tuple[Chunk, list[float] | None]:
    if not isinstance(item, dict):
        raise ctx.fail(f"a chunk must be an object, got {_type_name(item)}", index=index)
    chunk_id = item.get("id")
    if chunk_id is None:
        raise ctx.fail("missing field 'id'", index=index)
    if not isinstance(chunk_id, str) or not chunk_id:
        raise ctx.fail(
            f"must be a non-empty string, got {_type_name(chunk_id)} {chunk_id!r}",
            index=index,
            field="id",
        )
    text = item.get("text")
    if text is None:
        raise ctx.fail("missing text", index=index, chunk=chunk_id, field="text")
    if not isinstance(text, str):
        raise ctx.fail(
            f"must be a string, got {_type_name(text)}", index=index, chunk=chunk_id, field="text"
        )
    if not text.strip():
        raise ctx.fail("the text is empty", index=index, chunk=chunk_id, field="text")
    tokens = _token_count(item.get("tokens"), ctx, index, chunk_id)
    score = _optional(item, "score", (int, float), "a number", ctx, index, chunk_id)
    if score is not None and not math.isfinite(score):
        raise ctx.fail(f"score {score} is not finite", index=index, chunk=chunk_id, field="score")
    embedding = item.get("embedding")
    if embedding is not None:
        embedding = _vector(embedding, ctx, index, chunk_id, "embedding")
    chunk = Chunk(
        id=chunk_id,
        text=text,
        tokens=tokens,
        score=score,
        title=_optional(item, "title", str, "a string", ctx, index, chunk_id),
        source=_optional(item, "source", str, "a string", ctx, index, chunk_id),
        gold=_optional(item, "gold", bool, "true or false", ctx, index, chunk_id),
        metadata=_optional(item, "metadata", dict, "an object", ctx, index, chunk_id),
        extra={k: v for k, v in item.items() if k not in _CHUNK_FIELDS},
    )
    return chunk, embedding


def _build(raw: dict[str, Any], ctx: _Ctx, max_chunks: int) -> Pool:
    query = raw.get("query")
    if query is None:
        raise ctx.fail("missing field 'query'")
    if not isinstance(query, str) or not query.strip():
        raise ctx.fail(
            f"must be a non-empty string, got {_type_name(query)} {query!r:.60}", field="query"
        )
    items = raw.get("chunks")
    if not isinstance(items, list):
        raise ctx.fail(f"must be a list of chunks, got {_type_name(items)}", field="chunks")
    if not items:
        raise ctx.fail("the pool is empty: 'chunks' has no chunk", field="chunks")
    if len(items) > max_chunks:
        raise ctx.fail(
            f"the pool has {len(items):,} chunks, over the limit of "
            f"{max_chunks:,} (raise max_chunks to load it)",
            field="chunks",
        )
    chunks, vectors = _parse_chunks(items, ctx)
    return Pool(
        query=query,
        chunks=tuple(chunks),
        raw_embeddings=_embedding_matrix(chunks, vectors, ctx),
        raw_query_embedding=_query_vector(raw, chunks, vectors, ctx),
        embedding_model=_optional(raw, "embedding_model", str, "a string", ctx),
        answers=tuple(_answers(raw, ctx)),
        tokenizer=_tokenizer_name(raw, chunks, ctx),
        extra={k: v for k, v in raw.items() if k not in _POOL_FIELDS},
        name=ctx.file,
    )


def _parse_chunks(items: list[Any], ctx: _Ctx) -> tuple[list[Chunk], list[Any]]:
    chunks, vectors, first = [], [], {}
    for index, item in enumerate(items):
        chunk, vector = _parse_chunk(item, index, ctx)
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


def _embedding_matrix(chunks: list[Chunk], vectors: list[Any], ctx: _Ctx) -> np.ndarray | None:
    given = [i for i, vector in enumerate(vectors) if vector is not None]
    if not given:
        return None
    if len(given) != len(vectors):
        missing = next(i for i, vector in enumerate(vectors) if vector is None)
        raise ctx.fail(
            f"no embedding, but {len(given)} of the {len(vectors)} chunks have "
            f"one; give every chunk an embedding or none",
            index=missing,
            chunk=chunks[missing].id,
            field="embedding",
        )
    dimension = len(vectors[0])
    for index, vector in enumerate(vectors):
        if len(vector) != dimension:
            raise ctx.fail(
                f"embedding has {len(vector)} values, the pool's dimension is "
                f"{dimension} (from chunk '{chunks[0].id}')",
                index=index,
                chunk=chunks[index].id,
                field="embedding",
            )
    return np.array(vectors, dtype=np.float64)


def _query_vector(
    raw: dict[str, Any], chunks: list[Chunk], vectors: list[Any], ctx: _Ctx
) -> np.ndarray | None:
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
    vector = _vector(value, ctx, None, None, "query_embedding")
    if has_chunk_vectors and len(vector) != len(vectors[0]):
        raise ctx.fail(
            f"query_embedding has {len(vector)} values, the pool's dimension is {len(vectors[0])}",
            field="query_embedding",
        )
    return np.array(vector, dtype=np.float64)


def _answers(raw: dict[str, Any], ctx: _Ctx) -> list[str]:
    answers = raw.get("answers")
    if answers is None:
        return []
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        raise ctx.fail("must be a list of strings", field="answers")
    return answers


def _tokenizer_name(raw: dict[str, Any], chunks: list[Chunk], ctx: _Ctx) -> str | None:
    name = _optional(raw, "tokenizer", str, "a string", ctx)
    counted = [chunk.tokens is not None for chunk in chunks]
    if any(counted) and not all(counted):
        missing = counted.index(False)
        raise ctx.fail(
            f"no token count, but {sum(counted)} of the {len(chunks)} chunks have "
            f"one; give every chunk a count or none",
            index=missing,
            chunk=chunks[missing].id,
            field="tokens",
        )
    if all(counted):
        return name or GIVEN
    return None
