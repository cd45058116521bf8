"""Fuzzing the offsets that place a chunk in its source, in every pool format: huge,
negative, float, NaN, strings, booleans and null, with and without the source key that
makes them an offset. A file loads with every value kept as given (and the chunk placed at
exactly that offset where the value is one), or it is refused with the project's one-line
error; an offset that places a chunk never exceeds the machine's range."""

from __future__ import annotations

import functools
import io
import json
import math
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from fuzzing import characters, outcome, time_limit
from hypothesis import assume, given
from hypothesis import strategies as st

from adagres.core.overlaps import Spans
from adagres.core.validate import MAX_OFFSET
from adagres.pools.io import load_pool
from adagres.pools.spans import placement, spans_of

pytestmark = time_limit(1.0)

#: Each way to place a chunk: (where the value goes, the key that pairs with it, its tag).
#: "top" keys are the chunk's own (the pool format's offset, a LlamaIndex node's
#: start_char_idx); the others sit in its metadata.
KINDS = {
    "offset": ("top", "offset", ("source", "doc"), "source"),
    "start": ("metadata", "start", ("doc_id", "doc"), "doc"),
    "start_index": ("metadata", "start_index", ("source", "doc"), "langchain"),
    "split_idx_start": ("metadata", "split_idx_start", ("source_id", "doc"), "haystack"),
    "metadata.start_char_idx": ("metadata", "start_char_idx", ("file_name", "doc"), "llamaindex"),
    "start_char_idx": (
        "top",
        "start_char_idx",
        ("relationships", {"1": {"node_id": "doc"}}),
        "llamaindex",
    ),
}
METADATA_KINDS = sorted(k for k, (where, *_) in KINDS.items() if where == "metadata")

odd_offsets = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(min_value=0, max_value=2**12),
    st.sampled_from([MAX_OFFSET, MAX_OFFSET + 1, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -1, 0]),
    st.floats(),
    st.text(characters, max_size=8),
    st.booleans(),
    st.none(),
)


def chunk_with(kind: str, value: Any, paired: bool) -> dict[str, Any]:
    where, key, (pair_key, pair_value), _ = KINDS[kind]
    chunk: dict[str, Any] = {"id": "a", "text": "alpha beta", "tokens": 2}
    placed = {key: value, **({pair_key: pair_value} if paired else {})}
    if where == "top":
        chunk.update(placed)
    else:
        chunk["metadata"] = placed
    return chunk


def pool_with(kind: str, value: Any, paired: bool) -> dict[str, Any]:
    other = {"id": "b", "text": "gamma delta", "tokens": 2}
    return {"query": "q", "chunks": [chunk_with(kind, value, paired), other]}


def is_offset(value: Any) -> bool:
    return type(value) is int and value >= 0


def must_refuse(kind: str, value: Any, paired: bool) -> bool:
    """Whether the loaders must refuse the value (the rule the docs state)."""
    if isinstance(value, float) and not math.isfinite(value):
        return True  # no file holds NaN or infinity
    if kind == "offset":  # the pool format's own field, checked whatever its pairing
        return value is not None and not (is_offset(value) and value <= MAX_OFFSET)
    return paired and is_offset(value) and value > MAX_OFFSET


def kept(pool: Any, kind: str, value: Any, paired: bool) -> None:
    """The loaded chunk holds the value exactly as given, and is placed at it where it is
    an offset; the spans of the pool build without overflow."""
    where, key, _, tag = KINDS[kind]
    chunk = pool.chunks[0]
    held = chunk.extra[key] if where == "top" else chunk.metadata[key]
    assert type(held) is type(value) and held == value, (held, value)
    found = placement(chunk)
    if paired and is_offset(value):
        assert found == ((tag, "doc"), value), found
    else:  # no offset: at most its source is known (shared edges join it within that source)
        assert found[1] is None and found[0] in (None, (tag, "doc"), ("source", "doc")), found
    spans_of(pool.chunks, None).layout  # noqa: B018 (builds the int64 arrays)


@given(
    kind=st.sampled_from(sorted(KINDS)),
    value=odd_offsets,
    paired=st.booleans(),
    lines=st.integers(min_value=1, max_value=3),
)
def test_json_and_jsonl_pools_with_odd_offsets(kind, value, paired, lines):
    data = json.dumps(pool_with(kind, value, paired), allow_nan=True).encode()
    for name, payload, index in (
        ("p.json", data, 0),
        ("p.jsonl", b"\n".join([data] * lines), lines - 1),
    ):
        pool, error = outcome(
            functools.partial(load_pool, payload, name=name, index=index),
            name,
        )
        if must_refuse(kind, value, paired):
            assert error is not None, (kind, value, paired)
            if kind == "offset" or paired:
                assert "field '" in error and "chunk 'a'" in error
        else:
            assert error is None, error
            kept(pool, kind, value, paired)


@given(kind=st.sampled_from(METADATA_KINDS), value=odd_offsets, paired=st.booleans())
def test_csv_metadata_cells_with_odd_offsets(kind, value, paired):
    chunk = chunk_with(kind, value, paired)
    cell = json.dumps(chunk["metadata"], allow_nan=True).replace('"', '""')
    text = f'id,text,tokens,metadata\na,alpha beta,2,"{cell}"\nb,gamma delta,2,\n'
    pool, error = outcome(lambda: load_pool(text.encode(), name="p.csv", query="q"), "p.csv")
    if error is None:
        assert not must_refuse(kind, value, paired), (kind, value, paired)
        kept(pool, kind, value, paired)


def parquet_column(value: Any) -> pa.Array:
    if isinstance(value, bool):
        return pa.array([value, False], type=pa.bool_())
    if isinstance(value, int):
        if -(2**63) <= value < 2**63:
            return pa.array([value, 0], type=pa.int64())
        assume(0 <= value < 2**64)
        return pa.array([value, 0], type=pa.uint64())
    if isinstance(value, float):
        return pa.array([value, 0.0], type=pa.float64())
    return pa.array([value, None], type=pa.string())


@given(kind=st.sampled_from(METADATA_KINDS), value=odd_offsets, paired=st.booleans())
def test_parquet_columns_with_odd_offsets(kind, value, paired):
    _, key, (pair_key, pair_value), _ = KINDS[kind]
    columns: dict[str, Any] = {
        "id": ["a", "b"],
        "text": ["alpha beta", "gamma delta"],
        "tokens": [2, 2],
        key: parquet_column(value),
    }
    if paired:
        columns[pair_key] = [pair_value, pair_value]
    # A table's source column is the chunk's own source, not metadata.source: it pairs with
    # the pool format's offset only, so a start_index column beside it places nothing.
    paired = paired and pair_key != "source"
    buffer = io.BytesIO()
    pq.write_table(pa.table(columns), buffer)
    pool, error = outcome(
        lambda: load_pool(buffer.getvalue(), name="p.parquet", query="q"), "p.parquet"
    )
    if must_refuse(kind, value, paired):
        assert error is not None, (kind, value, paired)
    elif error is None and value is not None:  # a null cell is no metadata value at all
        kept(pool, kind, value, paired)


@given(
    texts=st.lists(st.text(characters, min_size=1, max_size=12), min_size=1, max_size=4),
    sources=st.lists(
        st.one_of(st.none(), st.text(max_size=3), st.integers(), st.lists(st.integers())),
        min_size=1,
        max_size=4,
    ),
    starts=st.lists(odd_offsets, min_size=1, max_size=4),
)
def test_spans_built_in_code_are_valid_or_an_input_error(texts, sources, starts):
    spans, _ = outcome(lambda: Spans(tuple(texts), tuple(sources), tuple(starts)))
    if spans is not None:
        assert len(texts) == len(sources) == len(starts)
        assert all(s is None or (is_offset(s) and s <= MAX_OFFSET) for s in starts)
        layout = spans.layout
        placed = [
            i
            for i, (k, s) in enumerate(zip(sources, starts, strict=True))
            if k is not None and s is not None
        ]
        assert [int(layout.start[i]) for i in placed] == [starts[i] for i in placed]
