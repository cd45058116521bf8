"""Pools that cannot be loaded: one test per kind of bad input, each message naming the file,
the line, the chunk and the field."""

from __future__ import annotations

import json

import numpy as np
import pytest
from pool_io_support import canonical, load_error, write

from adagres.errors import AdagresError, PoolError
from adagres.pools.io import load_pool, pool_from_dict
from adagres.pools.pool import Chunk, Pool

# --------------------------------------------------------------------------- bad input


def test_malformed_json_names_line_and_column(tmp_path):
    (tmp_path / "pool.json").write_text('{"query": "q",\n "chunks": [\n  {"id": "a",}\n]}')
    with pytest.raises(PoolError, match=r"^pool.json, line 3, column 14: malformed JSON"):
        load_pool(tmp_path / "pool.json")


def test_malformed_jsonl_names_the_line(tmp_path):
    good = json.dumps({"query": "q", "chunks": [{"id": "a", "text": "t"}]})
    (tmp_path / "runs.jsonl").write_text(f"{good}\n{good}\n{{not json\n")
    with pytest.raises(PoolError, match=r"^runs.jsonl, line 3, column 2: malformed JSON"):
        load_pool(tmp_path / "runs.jsonl", index=0)


def test_nan_literal_in_json_is_refused_naming_chunk_and_field(tmp_path):
    (tmp_path / "pool.json").write_text(
        '{"query": "q", "chunks": [{"id": "a", "text": "t", "embedding": [NaN, 1]}]}'
    )
    with pytest.raises(
        PoolError, match=r"^pool.json, line 1, chunk 'a', field 'embedding': value 0 is nan"
    ):
        load_pool(tmp_path / "pool.json")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("text", 42, "chunk 'c2', field 'text': must be a string, got an integer"),
        ("text", "   \n", "chunk 'c2', field 'text': the text is empty"),
        ("score", "high", "chunk 'c2', field 'score': must be a number, got a string 'high'"),
        ("gold", "yes", "chunk 'c2', field 'gold': must be true or false, got a string"),
        ("metadata", [1], "chunk 'c2', field 'metadata': must be an object, got a list"),
        ("tokens", -3, "chunk 'c2', field 'tokens': token count -3 is not a non-negative"),
        ("tokens", 2.5, "chunk 'c2', field 'tokens': token count 2.5 is not a non-negative"),
        ("tokens", True, "chunk 'c2', field 'tokens': token count True is not"),
        (
            "embedding",
            [0.1, 0.2],
            "chunk 'c2', field 'embedding': embedding has 2 values, the pool's dimension is 3",
        ),
        ("embedding", [0.0, 0.0, 0.0], "chunk 'c2', field 'embedding': all 3 values are zero"),
        ("embedding", [0.1, "x", 0.2], "chunk 'c2', field 'embedding': value 1 is a string"),
        ("embedding", "0.1 0.2", "chunk 'c2', field 'embedding': must be a non-empty list"),
    ],
)
def test_wrong_chunk_field_names_file_line_chunk_and_field(tmp_path, field, value, message):
    pool = canonical()
    pool["chunks"][1][field] = value
    error = load_error(tmp_path, pool)
    assert error.startswith("pool.json, line ")
    assert message in error


def test_line_of_chunk_in_json_file_is_that_of_its_id(tmp_path):
    pool = canonical()
    pool["chunks"][2]["tokens"] = -1
    path = write(tmp_path, pool)
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1) if '"c3"' in text)
    assert f"pool.json, line {line}, chunk 'c3'" in load_error(tmp_path, pool)


def test_missing_text_and_missing_id(tmp_path):
    pool = canonical()
    del pool["chunks"][1]["text"]
    assert "chunk 'c2', field 'text': missing text" in load_error(tmp_path, pool)
    pool = canonical()
    del pool["chunks"][1]["id"]
    assert load_error(tmp_path, pool) == "pool.json, chunks[1]: missing field 'id'"
    pool["chunks"][1]["id"] = 7
    assert "chunks[1], field 'id': must be a non-empty string, got an integer 7" in load_error(
        tmp_path, pool
    )


def test_chunk_that_is_not_an_object(tmp_path):
    pool = canonical()
    pool["chunks"][0] = "just text"
    assert load_error(tmp_path, pool) == (
        "pool.json, chunks[0]: a chunk must be an object, got a string"
    )


def test_empty_pool_and_missing_query(tmp_path):
    assert load_error(tmp_path, {"query": "q", "chunks": []}) == (
        "pool.json, field 'chunks': the pool is empty: 'chunks' has no chunk"
    )
    assert load_error(tmp_path, {"chunks": [{"id": "a", "text": "t"}]}) == (
        "pool.json: missing field 'query'"
    )
    assert "field 'query': must be a non-empty string, got an integer" in load_error(
        tmp_path, {"query": 3, "chunks": [{"id": "a", "text": "t"}]}
    )
    assert load_error(tmp_path, [1, 2], query="q") == (
        "pool.json, chunks[0]: a chunk must be an object, got an integer"
    )


def test_duplicate_chunk_ids(tmp_path):
    pool = canonical()
    pool["chunks"][2]["id"] = "c1"
    error = load_error(tmp_path, pool)
    assert "chunk 'c1', field 'id': duplicate chunk id, first used by chunks[0]" in error


def test_mixed_embeddings_some_missing(tmp_path):
    pool = canonical()
    del pool["chunks"][1]["embedding"]
    assert (
        "chunk 'c2', field 'embedding': no embedding, but 2 of the 3 chunks have one"
        in load_error(tmp_path, pool)
    )


def test_query_embedding_of_wrong_length_nan_or_zero(tmp_path):
    assert (
        "field 'query_embedding': query_embedding has 2 values, the pool's dimension is 3"
        in load_error(tmp_path, canonical(query_embedding=[1.0, 0.0]))
    )
    assert "field 'query_embedding': all 3 values are zero" in load_error(
        tmp_path, canonical(query_embedding=[0, 0, 0])
    )
    with pytest.raises(PoolError, match=r"field 'query_embedding': value 0 is nan: NaN and"):
        pool_from_dict(canonical(query_embedding=[float("nan"), 0, 0]))


def test_overflowing_number_is_an_infinite_embedding_value(tmp_path):
    text = json.dumps(canonical()).replace("[0.1, 0.2, 0.3]", "[0.1, 1e999, 0.3]")
    (tmp_path / "pool.json").write_text(text)
    with pytest.raises(PoolError) as caught:
        load_pool(tmp_path / "pool.json")
    assert str(caught.value) == (
        "pool.json, line 1, chunk 'c2', field 'embedding': value 1 is "
        "inf: NaN and infinite values are not allowed"
    )


def test_embeddings_of_unknown_model_without_query_embedding(tmp_path):
    pool = canonical()
    del pool["query_embedding"], pool["embedding_model"]
    error = load_error(tmp_path, pool)
    assert error.startswith(
        "pool.json, field 'query_embedding': the chunks have embeddings "
        "but the pool has no query_embedding and no embedding_model"
    )


def test_partial_token_counts(tmp_path):
    pool = canonical()
    del pool["chunks"][0]["tokens"]
    assert (
        "chunk 'c1', field 'tokens': no token count, but 2 of the 3 chunks have one"
        in load_error(tmp_path, pool)
    )


def test_bytes_that_are_not_utf8(tmp_path):
    data = b'{"query": "q",\n"chunks": [{"id": "a", "text": "caf\xe9"}]}'
    (tmp_path / "latin1.json").write_bytes(data)
    with pytest.raises(PoolError) as caught:
        load_pool(tmp_path / "latin1.json")
    assert str(caught.value) == (
        "latin1.json, line 2: bytes are not UTF-8 (byte 0xe9 at offset 50); save the file as UTF-8"
    )


def test_utf8_bom_is_accepted():
    data = "\ufeff".encode() + json.dumps(canonical()).encode()
    assert load_pool(data, name="bom.json").texts[0] == "Paris is the capital of France.\n"


def test_file_over_the_size_limit(tmp_path):
    path = write(tmp_path, canonical())
    size = path.stat().st_size
    with pytest.raises(PoolError) as caught:
        load_pool(path, max_bytes=100)
    assert str(caught.value) == (
        f"pool.json: the file has {size:,} bytes, over the limit of "
        "100 bytes (raise max_bytes to load it)"
    )
    with pytest.raises(PoolError, match=r"over the limit of 10 bytes"):
        load_pool(path.read_bytes(), name="pool.json", max_bytes=10)
    assert len(load_pool(path, max_bytes=size)) == 3


def test_pool_over_the_chunk_limit(tmp_path):
    path = write(tmp_path, canonical())
    with pytest.raises(PoolError) as caught:
        load_pool(path, max_chunks=2)
    assert str(caught.value) == (
        "pool.json, field 'chunks': the pool has 3 chunks, over the "
        "limit of 2 (raise max_chunks to load it)"
    )


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(PoolError, match=r"nope.json: no such file"):
        load_pool(tmp_path / "nope.json")
    with pytest.raises(PoolError, match=r"unknown format 'xml'"):
        load_pool(b"<x/>", format="xml")


def test_pool_errors_are_value_errors():
    """A caller that catches ValueError (or AdagresError) catches every bad-pool error."""
    for catch in (ValueError, AdagresError):
        with pytest.raises(catch) as caught:
            load_pool(b'{"query": "q", "chunks": []}', format="json")
        assert type(caught.value) is PoolError
        assert str(caught.value) == (
            "<bytes>, field 'chunks': the pool is empty: 'chunks' has no chunk"
        )


def test_pool_built_in_code_is_checked_too():
    with pytest.raises(PoolError, match=r"the pool has no chunks"):
        Pool("q", ())
    with pytest.raises(PoolError, match=r"chunk 'b': embedding: value 0 is nan: NaN and infinite"):
        Pool("q", (Chunk("a", "x"), Chunk("b", "y")), raw_embeddings=np.array([[1.0], [np.nan]]))
    with pytest.raises(PoolError, match=r"chunk 'a' \(chunks\[1\]\): duplicate chunk id"):
        Pool("q", (Chunk("a", "x"), Chunk("a", "y")))
