"""Offsets too large for the machine: every place a chunk's character offset comes from (the
pool format's ``offset``, corpus mode's ``metadata.start``, LangChain's ``start_index``,
LlamaIndex's ``start_char_idx``, Haystack's ``split_idx_start``) in every file format, the
command line, pools built in code and :class:`Spans` built in code. Each must give the
project's one-line error naming the field, the chunk and the value, never OverflowError."""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from adagres.cli import main
from adagres.core.overlaps import Spans
from adagres.core.validate import MAX_OFFSET
from adagres.errors import InputError, PoolError
from adagres.pools.io import load_pool
from adagres.pools.pool import Chunk, Pool
from adagres.pools.spans import placement

HUGE = [2**63, 2**64, 2**63 - 1, MAX_OFFSET + 1, 10**40]

#: (description, chunk fields that place a chunk with ``value`` as its offset, field named)
PLACED_BY = {
    "offset": (lambda at: {"source": "doc", "offset": at}, "offset"),
    "metadata.start": (lambda at: {"metadata": {"doc_id": "doc", "start": at}}, "metadata.start"),
    "start_index": (
        lambda at: {"metadata": {"source": "doc", "start_index": at}},
        "metadata.start_index",
    ),
    "split_idx_start": (
        lambda at: {"metadata": {"source_id": "doc", "split_idx_start": at}},
        "metadata.split_idx_start",
    ),
    "start_char_idx": (
        lambda at: {"relationships": {"1": {"node_id": "doc"}}, "start_char_idx": at},
        "start_char_idx",
    ),
}


def pool_dict(**fields) -> dict:
    chunks = [
        {"id": "a", "text": "alpha beta", "tokens": 2, "embedding": [1.0, 0.0], **fields},
        {"id": "b", "text": "gamma delta", "tokens": 2, "embedding": [0.0, 1.0]},
    ]
    return {"query": "q", "query_embedding": [1.0, 0.2], "chunks": chunks}


def refused(data: bytes, name: str, **options) -> str:
    with pytest.raises(PoolError) as caught:
        load_pool(data, name=name, **options)
    message = str(caught.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize("value", HUGE)
@pytest.mark.parametrize("kind", sorted(PLACED_BY))
def test_a_huge_offset_in_a_json_pool_is_refused_naming_field_chunk_and_value(kind, value):
    fields, field = PLACED_BY[kind]
    message = refused(json.dumps(pool_dict(**fields(value))).encode(), "pool.json")
    assert f"chunk 'a', field '{field}'" in message
    assert str(value)[:20] in message and "2**53 - 1" in message


@pytest.mark.parametrize("kind", sorted(PLACED_BY))
def test_a_huge_offset_in_a_jsonl_pool_set_line_is_refused(kind):
    fields, field = PLACED_BY[kind]
    good = json.dumps(pool_dict())
    bad = json.dumps(pool_dict(**fields(2**64)))
    message = refused(f"{good}\n{bad}\n".encode(), "runs.jsonl", index=1)
    assert "line 2" in message and f"field '{field}'" in message


@pytest.mark.parametrize("kind", sorted(PLACED_BY))
def test_the_largest_offset_loads_and_places_the_chunk(kind):
    fields, _ = PLACED_BY[kind]
    pool = load_pool(json.dumps(pool_dict(**fields(MAX_OFFSET))).encode(), name="pool.json")
    assert placement(pool.chunks[0])[1] == MAX_OFFSET
    assert pool.prepared.spans is not None
    assert pool.prepared.spans.layout.start[0] == MAX_OFFSET


@pytest.mark.parametrize(
    "fields",
    [
        {"metadata": {"start_index": 2**64}},  # no source: nothing placed, kept as data
        {"metadata": {"start": 2**70, "page": 1}},  # no doc_id
        {"metadata": {"source": "doc", "start_index": -1}},  # LangChain: chunk not found
        {"metadata": {"source": "doc", "start_index": 3.0}},  # not an integer: not an offset
    ],
)
def test_a_framework_field_that_places_nothing_is_kept_as_data(fields):
    pool = load_pool(json.dumps(pool_dict(**fields)).encode(), name="pool.json")
    assert pool.chunks[0].metadata == fields["metadata"]
    assert placement(pool.chunks[0])[1] is None  # its source may be known: no offset


@pytest.mark.parametrize("value", [-1, 2.0, "3", True, None])
def test_the_pool_formats_offset_is_a_whole_number_or_refused(value):
    data = json.dumps(pool_dict(source="doc", offset=value)).encode()
    if value is None:
        assert placement(load_pool(data, name="pool.json").chunks[0]) == (("source", "doc"), None)
        return
    message = refused(data, "pool.json")
    assert "chunk 'a', field 'offset': must be a whole number of characters >= 0" in message


def test_a_huge_offset_in_a_csv_metadata_cell_is_refused():
    text = (
        "id,text,tokens,metadata\n"
        'a,alpha beta,2,"{""source"": ""doc"", ""start_index"": 18446744073709551616}"\n'
        "b,gamma delta,2,\n"
    )
    message = refused(text.encode(), "pool.csv", query="q")
    assert "row 2" in message or "chunk 'a'" in message
    assert "field 'metadata.start_index'" in message and "18446744073709551616" in message


@pytest.mark.parametrize(
    ("column", "kind", "value"),
    [
        ("start", pa.uint64(), 2**64 - 1),
        ("start", pa.uint64(), 2**63),
        ("start", pa.int64(), 2**62),
    ],
)
def test_a_huge_offset_in_a_parquet_column_is_refused(column, kind, value):
    table = pa.table(
        {
            "id": ["a", "b"],
            "text": ["alpha beta", "gamma delta"],
            "tokens": [2, 2],
            "doc_id": ["doc", "doc"],
            column: pa.array([value, 0], type=kind),
        }
    )
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    message = refused(buffer.getvalue(), "pool.parquet", query="q")
    assert "chunk 'a', field 'metadata.start'" in message and str(value) in message


def test_a_huge_offset_in_a_langchain_dump_is_refused():
    docs = [
        {"page_content": "alpha beta", "metadata": {"source": "doc", "start_index": 2**64}},
        {"page_content": "gamma delta", "metadata": {"source": "doc", "start_index": 0}},
    ]
    message = refused(json.dumps(docs).encode(), "docs.json", query="q")
    assert "chunk 'c0', field 'metadata.start_index'" in message


def test_the_cli_refuses_a_huge_offset_with_status_2_and_one_line(tmp_path, capsys):
    path = tmp_path / "pool.json"
    path.write_text(json.dumps(pool_dict(source="doc", offset=2**64)))
    assert main(["select", str(path), "--budget", "10"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert "chunk 'a', field 'offset'" in err and "18446744073709551616" in err


@pytest.mark.parametrize("kind", ["metadata.start", "start_index", "start_char_idx"])
def test_a_pool_built_in_code_with_a_huge_offset_raises_a_pool_error(kind):
    fields, field = PLACED_BY[kind]
    raw = fields(2**64)
    metadata = raw.pop("metadata", None)
    chunks = (
        Chunk(id="a", text="alpha beta", tokens=2, metadata=metadata, extra=raw),
        Chunk(id="b", text="gamma delta", tokens=2),
    )
    pool = Pool(query="q", chunks=chunks, raw_embeddings=np.eye(2), raw_query_embedding=np.ones(2))
    with pytest.raises(PoolError, match=rf"chunk 'a', field '{field}': offset 1844"):
        _ = pool.prepared


# --------------------------------------------------------------------------- Spans in code


@pytest.mark.parametrize(
    ("texts", "sources", "starts", "expected"),
    [
        (("a", "b"), ("d", "d"), (0, math.nan), r"starts\[1\]: .*got a float nan"),
        (("a", "b"), ("d", "d"), (0, 2.0), r"starts\[1\]: .*got a float 2\.0"),
        (("a", "b"), ("d", "d"), (0, True), r"starts\[1\]: .*got a bool True"),
        (("a", "b"), ("d", "d"), (0, -3), r"starts\[1\]: .*>= 0, got -3"),
        (("a", "b"), ("d", "d"), (0, "4"), r"starts\[1\]: .*got a str '4'"),
        (("a", "b"), ("d", "d"), (0, 2**64), r"starts\[1\]: offset 18446744073709551616"),
        (("a", "b"), (["d"], "d"), (0, 1), r"sources\[0\]: a source key must be hashable"),
        (("a", b"b"), ("d", "d"), (0, 1), r"texts\[1\]: expected a string, got a bytes"),
        (("a", None), ("d", "d"), (0, 1), r"texts\[1\]: expected a string"),
        (("a", "b"), ("d",), (0, 1), r"sources: has 1 entries; texts has 2"),
        (("a", "b"), ("d", "d"), (0,), r"starts: has 1 entries; texts has 2"),
        ("ab", ("d", "d"), (0, 1), r"texts: expected a sequence"),
    ],
)
def test_spans_built_in_code_are_checked(texts, sources, starts, expected):
    with pytest.raises(InputError, match=expected):
        Spans(texts, sources, starts)


def test_spans_refuse_a_count_that_is_not_callable():
    with pytest.raises(InputError, match="count_tokens: expected None or a callable"):
        Spans(("a",), (None,), (None,), 5)  # type: ignore[arg-type]


def test_spans_keep_valid_input_as_given():
    texts, sources, starts = ["a b", "b c"], ["d", ("t", 1)], [0, np.int64(2)]
    spans = Spans(texts, sources, starts)  # type: ignore[arg-type]  # lists, as given
    assert spans.texts is texts and spans.sources is sources and spans.starts is starts
    assert spans.layout.start.tolist() == [0, 2]
