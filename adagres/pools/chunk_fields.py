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

from adagres.core.validate import MAX_TOKENS, offset_problem, string_problem, vector_problem
from adagres.errors import PoolError, one_line
from adagres.pools.kept_values import json_value_problem
from adagres.pools.load_limits import DEFAULT_LIMITS, Limits
from adagres.pools.pool import Chunk
from adagres.pools.spans import offset_problem as placement_problem

__all__ = [
    "CHUNK_FIELDS",
    "Location",
    "RawPool",
    "json_line_finder",
    "optional_field",
    "parse_chunk",
    "parse_token_count",
    "parse_vector",
    "positions",
    "show_id",
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
    #: The values came from a JSON text whose scan found nothing for
    #: :func:`~adagres.pools.kept_values.json_value_problem` to find (see ``check_json_text``).
    plain: bool = False

    def fail(
        self, problem: str, *, index: int | None = None, chunk: Any = None, field: str | None = None
    ) -> PoolError:
        parts = [self.file]
        found = self.chunk_position and index is not None and self.chunk_position(index, chunk)
        if found:
            parts.append(found)
        elif self.line is not None:
            parts.append(f"line {self.line}")
        if index is not None:
            named = isinstance(chunk, str)
            parts.append(f"chunk {show_id(chunk)}" if named else f"chunks[{index}]")
        if field is not None:
            parts.append(f"field '{field}'")
        return PoolError(", ".join(parts) + ": " + problem)


def show_id(chunk_id: str) -> str:
    """A chunk id as messages quote it: one line, at most 80 characters.

    >>> show_id("c1"), show_id("a\\nb")
    ("'c1'", "'a\\\\nb'")
    """
    return f"'{one_line(chunk_id, max_chars=80)}'"


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


def positions(unit: str, numbers: Sequence[int]) -> Callable[[int, Any], str]:
    """Name chunk ``i`` by its table row or file line (``unit``), ``numbers[i]``."""
    return lambda index, _chunk: f"{unit} {numbers[index]}"


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


def _fits_float(number: int) -> bool:
    try:
        float(number)
    except OverflowError:
        return False
    return True


def parse_vector(
    value: Any, ctx: Location, index: int | None, chunk: Any, field: str
) -> list[float]:
    """Return ``value`` if it is a non-empty list of finite numbers, not all zero."""

    def fail(problem: str) -> PoolError:
        return ctx.fail(problem, index=index, chunk=chunk, field=field)

    if not isinstance(value, list) or not value:
        raise fail(f"must be a non-empty list of numbers, got {type_name(value)}")
    # Fast path in C (set of types, one finite check); the loop below only runs to name the
    # first bad value.
    numbers = set(map(type, value)) <= {int, float}
    try:
        if numbers and np.isfinite(np.array(value, np.float64)).all() and any(value):
            return value
    except OverflowError:  # an integer beyond the float range: named below
        pass
    for position, number in enumerate(value):
        if not isinstance(number, (int, float)) or isinstance(number, bool):
            raise fail(f"value {position} is {type_name(number)}, not a number")
        if isinstance(number, int) and not _fits_float(number):
            raise fail(f"value {position} is an integer beyond a 64-bit float (±1.8e308)")
    problem = vector_problem(np.array(value, np.float64))
    if problem is not None:
        raise fail(problem)
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
        problem = f"must be {what}, got {type_name(value)} {value!r:.60}"
        raise ctx.fail(problem, index=index, chunk=chunk, field=key)
    return value


def parse_token_count(value: Any, ctx: Location, index: int, chunk_id: str) -> int | None:
    """Return a chunk's token count (None when absent); 12.0 counts as 12.

    Counts above the core's ``MAX_TOKENS`` (10^12, the largest budget) are refused: such a
    chunk could never be selected, and sums of such counts overflow 64-bit integers.
    """
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 12.0 is an integer in JSON Schema too
    problem = None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        problem = f"token count {one_line(repr(value), max_chars=60)} is not a non-negative integer"
    elif value > MAX_TOKENS:
        shown = f"{value:,}" if value.bit_length() < 200 else f"of {len(str(value)):,} digits"
        problem = (
            f"token count {shown} is over the limit of {MAX_TOKENS:,} tokens (the largest budget)"
        )
    if problem is not None:
        raise ctx.fail(problem, index=index, chunk=chunk_id, field="tokens")
    return int(value)


def check_string(
    value: str,
    ctx: Location,
    field: str,
    *,
    limits: Limits,
    text: bool = False,
    index: int | None = None,
    chunk: Any = None,
) -> str:
    """Return ``value`` if it is within its length limit (``max_text_chars`` for a text,
    else ``max_field_chars``) and holds no lone surrogate; else raise naming the field."""
    limit = "max_text_chars" if text else "max_field_chars"
    problem = string_problem(value, getattr(limits, limit), limit)
    if problem is not None:
        raise ctx.fail(problem, index=index, chunk=chunk, field=field)
    return value


def check_kept(
    value: Any,
    ctx: Location,
    limits: Limits,
    *,
    level: int,
    index: int | None = None,
    chunk: Any = None,
) -> None:
    """Raise unless the values of ``value``, an object whose keys are kept as given
    (metadata, unknown keys) and which sits at nesting ``level`` of a canonical pool file,
    save and load back unchanged; the message names the field path."""
    found = json_value_problem(value, "", limits, level=level)
    if found is not None:
        raise ctx.fail(found[1], index=index, chunk=chunk, field=found[0] or None)


# --------------------------------------------------------------------------- a chunk


def parse_chunk(
    item: Any, index: int, ctx: Location, limits: Limits = DEFAULT_LIMITS
) -> tuple[Chunk, list[float] | None]:
    """Check one canonical chunk dict; return the Chunk and its embedding (or None)."""
    if not isinstance(item, dict):
        raise ctx.fail(f"a chunk must be an object, got {type_name(item)}", index=index)
    chunk_id = item.get("id")
    if chunk_id is None:
        raise ctx.fail("missing field 'id'", index=index)
    if not isinstance(chunk_id, str) or not chunk_id:
        shown = f"{type_name(chunk_id)} {one_line(repr(chunk_id), max_chars=60)}"
        raise ctx.fail(f"must be a non-empty string, got {shown}", index=index, field="id")
    check_string(chunk_id, ctx, "id", limits=limits, index=index)

    def fail(problem: str, field: str) -> PoolError:
        return ctx.fail(problem, index=index, chunk=chunk_id, field=field)

    text = item.get("text")
    if text is None:
        raise fail("missing text", "text")
    if not isinstance(text, str):
        raise fail(f"must be a string, got {type_name(text)}", "text")
    check_string(text, ctx, "text", limits=limits, text=True, index=index, chunk=chunk_id)
    if not text.strip():
        raise fail("the text is empty", "text")
    tokens = parse_token_count(item.get("tokens"), ctx, index, chunk_id)
    score = optional_field(item, "score", (int, float), "a number", ctx, index, chunk_id)
    if isinstance(score, int) and not _fits_float(score):
        raise fail("the score is an integer beyond a 64-bit float (±1.8e308)", "score")
    if score is not None and not math.isfinite(score):
        raise fail(f"score {score} is not finite", "score")
    embedding = item.get("embedding")
    if embedding is not None:
        embedding = parse_vector(embedding, ctx, index, chunk_id, "embedding")
    strings = {}
    for key in ("title", "source"):
        value = optional_field(item, key, str, "a string", ctx, index, chunk_id)
        if value is not None:
            check_string(value, ctx, key, limits=limits, index=index, chunk=chunk_id)
        strings[key] = value
    metadata = optional_field(item, "metadata", dict, "an object", ctx, index, chunk_id)
    offset = item.get("offset")  # where the text starts in its source (packing reads it)
    wrong = None if offset is None else offset_problem(offset)
    if wrong is not None:
        raise fail(wrong, "offset")
    extra = {k: v for k, v in item.items() if k not in CHUNK_FIELDS}
    if (metadata or extra) and not ctx.plain:  # as the chunk (level 3) of a saved file
        kept = {"metadata": metadata, **extra} if metadata else extra
        check_kept(kept, ctx, limits, level=3, index=index, chunk=chunk_id)
    chunk = Chunk(
        id=chunk_id,
        text=text,
        tokens=tokens,
        score=score,
        title=strings["title"],
        source=strings["source"],
        gold=optional_field(item, "gold", bool, "true or false", ctx, index, chunk_id),
        metadata=metadata,
        extra=extra,
    )
    # An offset a framework's field gives (metadata.start_index, ...) that places the chunk
    # must fit the machine too; one that places nothing (no source key) is kept as data.
    found = placement_problem(chunk)
    if found is not None:
        raise fail(found[1], found[0])
    return chunk, embedding
