"""Strategies and checks the fuzz tests share: valid pools, hostile values, and the one
contract every public entry point keeps (a valid result, or an AdagresError of one line)."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import settings
from hypothesis import strategies as st

from adagres.errors import AdagresError, one_line


def time_limit(seconds_per_example: float) -> pytest.MarkDecorator:
    """A per-test time limit (pytest-timeout) that grows with the profile's examples: a hang
    fails the test, while ``make fuzz`` (thousands of examples) still has the time it needs."""
    profile = settings.default
    assert profile is not None  # hypothesis always has a loaded profile
    return pytest.mark.timeout(60 + seconds_per_example * profile.max_examples)


# --------------------------------------------------------------------------- text

#: Real characters: every category but surrogates (which the loaders refuse by design).
characters = st.characters(exclude_categories=["Cs"])
#: Anything a str can hold: surrogates, control characters, separators.
hostile_characters = st.characters()
real_text = st.text(characters, min_size=1, max_size=40).filter(lambda t: t.strip() != "")
hostile_text = st.one_of(
    st.text(hostile_characters, max_size=30),
    st.sampled_from(["", " \n\t", "\x00", "\ud800", "a\udfffb", "\u2028", "\x1b[31m", "\ufeff"]),
)

# --------------------------------------------------------------------------- numbers

finite_floats = st.floats(allow_nan=False, allow_infinity=False)
hostile_numbers = st.one_of(
    st.floats(),  # NaN, ±inf, subnormals, ±0.0, 1.8e308
    st.integers(min_value=-(2**80), max_value=2**80),
    st.sampled_from([2**63, 2**64, 10**40, -1, 10**12, 10**12 + 1, 2**63 - 1, 10**400, -(2**1100)]),
)

# --------------------------------------------------------------------------- JSON values

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**300), max_value=2**300),
    finite_floats,
    st.text(characters, max_size=20),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(characters, max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
hostile_values = st.recursive(
    st.one_of(json_scalars, hostile_numbers, hostile_text),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(hostile_text, inner, max_size=3),
    max_leaves=8,
)


#: The optional chunk fields and a strategy of valid values for each ("extra": a key the
#: format does not know).
OPTIONAL_FIELDS = {
    "score": finite_floats,
    "title": st.text(characters, max_size=10),
    "source": st.text(characters, max_size=10),
    "gold": st.booleans(),
    "metadata": st.dictionaries(st.text(characters, max_size=6), json_values, max_size=3),
    "extra": json_values,
}


@st.composite
def pool_dicts(draw: Any, *, embedded: bool | None = None) -> dict[str, Any]:
    """A valid canonical pool dict: unique ids, real texts, optional token counts, optional
    embeddings (with a query embedding), metadata and unknown keys of any JSON value."""
    size = draw(st.integers(min_value=1, max_value=6))
    ids = draw(
        st.lists(
            st.text(characters, min_size=1, max_size=12), min_size=size, max_size=size, unique=True
        )
    )
    with_tokens = draw(st.booleans())
    with_vectors = draw(st.booleans()) if embedded is None else embedded
    dimension = draw(st.integers(min_value=1, max_value=5))
    vector = st.lists(
        st.floats(min_value=-1e6, max_value=1e6, allow_nan=False),
        min_size=dimension,
        max_size=dimension,
    ).filter(any)
    chunks = []
    for chunk_id in ids:
        chunk: dict[str, Any] = {"id": chunk_id, "text": draw(real_text)}
        if with_tokens:
            chunk["tokens"] = draw(st.integers(min_value=0, max_value=10**12))
        if with_vectors:
            chunk["embedding"] = draw(vector)
        for key in sorted(draw(st.sets(st.sampled_from(sorted(OPTIONAL_FIELDS))))):
            chunk[key] = draw(OPTIONAL_FIELDS[key])
        chunks.append(chunk)
    pool: dict[str, Any] = {"query": draw(real_text), "chunks": chunks}
    if with_vectors:
        pool["query_embedding"] = draw(vector)
    if draw(st.booleans()):
        pool["answers"] = draw(st.lists(st.text(characters, max_size=10), max_size=2))
    if draw(st.booleans()):
        pool["run"] = draw(json_values)
    return pool


# --------------------------------------------------------------------------- files


def as_json(obj: Any, *, ascii: bool = True) -> bytes:
    """JSON as Python writes it, NaN and Infinity literals included. With ``ascii=False``
    non-ASCII characters are written raw, a lone surrogate as the three bytes a broken
    encoder writes (which are not UTF-8)."""
    text = json.dumps(obj, ensure_ascii=ascii, allow_nan=True)
    return text.encode("utf-8", "surrogatepass")


def as_csv(pool: dict[str, Any]) -> bytes:
    """A pool dict as a CSV table (embedding and metadata as JSON cells)."""
    import csv

    buffer = io.StringIO()
    columns = ["id", "text", "query", "tokens", "score", "metadata"]
    writer = csv.writer(buffer)
    writer.writerow(columns)
    for chunk in pool["chunks"]:
        row = {**chunk, "query": pool["query"]}
        if "metadata" in row:
            row["metadata"] = json.dumps(row["metadata"], allow_nan=True)
        writer.writerow([str(row.get(name, "")) for name in columns])
    return buffer.getvalue().encode("utf-8", "surrogatepass")


def as_parquet(table: pa.Table) -> bytes:
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return buffer.getvalue()


# --------------------------------------------------------------------------- the contract


def check_error(error: BaseException, label: str | None = None) -> str:
    """Fail unless ``error`` is the project's own, with one line (nothing for
    :func:`~adagres.errors.one_line` to escape) that starts with ``label`` (the file) when
    given; return the message."""
    assert isinstance(error, AdagresError), f"{type(error).__name__}: {error}"
    message = str(error)
    assert message and one_line(message) == message, repr(message)
    if label is not None:
        assert message.startswith(label), message
    return message


def outcome(call: Callable[[], Any], label: str | None = None) -> tuple[Any, str | None]:
    """Run ``call``: (its result, None), or (None, its one-line message) for an AdagresError.
    Any other exception propagates, and fails the property."""
    try:
        return call(), None
    except AdagresError as error:
        return None, check_error(error, label)


def all_finite(value: Any) -> bool:
    """True when every float in ``value`` (nested dicts, lists, tuples) is finite."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return True
