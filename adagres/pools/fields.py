"""One chunk, field by field: check each value and name where a bad one is.

Every reader (JSON, JSONL, tables, framework dumps) ends in the same canonical chunk dicts;
this module checks them one field at a time. A :class:`Location` says where a pool came
from (file, line, the line or row of each chunk) so that every :class:`PoolError` names the
file, the line or row, the chunk and the field.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from adagres.core.validate import vector_problem
from adagres.errors import PoolError
from adagres.pools.pool import Chunk

__all__ = [
    "CHUNK_FIELDS",
    "Location",
    "RawPool",
    "json_line_finder",
    "line_positions",
    "optional_field",
    "parse_chunk",
    "parse_token_count",
    "parse_vector",
    "row_positions",
    "type_name",
]

#: The chunk keys the format defines; any other key is kept in ``Chunk.extra``.
CHUNK_FIELDS = (
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


# --------------------------------------------------------------------------- locations


@dataclass(frozen=True)
class Location:
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


#: A pool as a reader found it (a canonical dict, not yet checked) and where it came from.
RawPool = tuple[dict[str, Any], Location]


def json_line_finder(text: str) -> Callable[[int, Any], str]:
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


def row_positions(rows: Sequence[int]) -> Callable[[int, Any], str]:
    """Name chunk ``i`` by its table row, ``rows[i]``."""
    return lambda index, _chunk: f"row {rows[index]}"


def line_positions(lines: Sequence[int]) -> Callable[[int, Any], str]:
    """Name chunk ``i`` by its file line, ``lines[i]``."""
    return lambda index, _chunk: f"line {lines[index]}"


# --------------------------------------------------------------------------- values


def type_name(value: Any) -> str:
    """Name a JSON value's type the way messages say it ("a list", "null", ...)."""
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
    """True for an int or a float, not for a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def parse_vector(
    value: Any, ctx: Location, index: int | None, chunk: Any, field: str
) -> list[float]:
    """Return ``value`` if it is a non-empty list of finite numbers, not all zero."""
    if not isinstance(value, list) or not value:
        raise ctx.fail(
            f"must be a non-empty list of numbers, got {type_name(value)}",
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
                f"value {position} is {type_name(number)}, not a number",
                index=index,
                chunk=chunk,
                field=field,
            )
    problem = vector_problem(np.array(value, np.float64))
    if problem is not None:
        raise ctx.fail(problem, index=index, chunk=chunk, field=field)
    return value


def optional_field(
    obj: dict[str, Any],
    key: str,
    kind: type | tuple[type, ...],
    what: str,
    ctx: Location,
    index: int | None = None,
    chunk: Any = None,
) -> Any:
    """Return ``obj[key]``, or None when absent; raise unless it is of type ``kind``."""
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise ctx.fail(
            f"must be {what}, got {type_name(value)} {value!r:.60}",
            index=index,
            chunk=chunk,
            field=key,
        )
    return value


def parse_token_count(value: Any, ctx: Location, index: int, chunk_id: str) -> int | None:
    """Return a chunk's token count (None when absent); 12.0 counts as 12."""
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


# --------------------------------------------------------------------------- a chunk


def parse_chunk(item: Any, index: int, ctx: Location) -> tuple[Chunk, list[float] | None]:
    """Check one canonical chunk dict; return the Chunk and its embedding (or None)."""
    if not isinstance(item, dict):
        raise ctx.fail(f"a chunk must be an object, got {type_name(item)}", index=index)
    chunk_id = item.get("id")
    if chunk_id is None:
        raise ctx.fail("missing field 'id'", index=index)
    if not isinstance(chunk_id, str) or not chunk_id:
        raise ctx.fail(
            f"must be a non-empty string, got {type_name(chunk_id)} {chunk_id!r}",
            index=index,
            field="id",
        )
    text = item.get("text")
    if text is None:
        raise ctx.fail("missing text", index=index, chunk=chunk_id, field="text")
    if not isinstance(text, str):
        raise ctx.fail(
            f"must be a string, got {type_name(text)}", index=index, chunk=chunk_id, field="text"
        )
    if not text.strip():
        raise ctx.fail("the text is empty", index=index, chunk=chunk_id, field="text")
    tokens = parse_token_count(item.get("tokens"), ctx, index, chunk_id)
    score = optional_field(item, "score", (int, float), "a number", ctx, index, chunk_id)
    if score is not None and not math.isfinite(score):
        raise ctx.fail(f"score {score} is not finite", index=index, chunk=chunk_id, field="score")
    embedding = item.get("embedding")
    if embedding is not None:
        embedding = parse_vector(embedding, ctx, index, chunk_id, "embedding")
    chunk = Chunk(
        id=chunk_id,
        text=text,
        tokens=tokens,
        score=score,
        title=optional_field(item, "title", str, "a string", ctx, index, chunk_id),
        source=optional_field(item, "source", str, "a string", ctx, index, chunk_id),
        gold=optional_field(item, "gold", bool, "true or false", ctx, index, chunk_id),
        metadata=optional_field(item, "metadata", dict, "an object", ctx, index, chunk_id),
        extra={k: v for k, v in item.items() if k not in CHUNK_FIELDS},
    )
    return chunk, embedding
