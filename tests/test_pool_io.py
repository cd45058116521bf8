"""Pools in and out: formats, round trips, and one test per kind of bad input."""

from __future__ import annotations

import io
import json
import pickle
import re
import subprocess
import sys
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from adagres.errors import AdagresError, PoolError
from adagres.pools.io import (
    SCHEMA_PATH,
    dump_retrieval,
    load_pool,
    load_pools,
    pool_from_dict,
    pool_from_retrieval,
    save_pool,
    save_pools,
)
from adagres.pools.pool import Chunk, Pool


def canonical(**extra) -> dict:
    """A small canonical pool with every optional field and some unknown keys."""
    pool = {
        "query": "Which city is the capital of France?",
        "query_embedding": [1.0, 0.0, 0.0],
        "embedding_model": "toy-model",
        "answers": ["Paris"],
        "run": {"retriever": "bm25", "k": 3},
        "chunks": [
            {
                "id": "c1",
                "text": "Paris is the capital of France.\n",
                "embedding": [3.0, 4.0, 0.0],
                "tokens": 8,
                "score": 0.91,
                "title": "Paris",
                "source": "wiki/Paris",
                "gold": True,
                "metadata": {"page": 1, "tags": ["city"]},
                "lang": "en",
            },
            {
                "id": "c2",
                "text": "Lyon — a city in France, naïve café ☕.",
                "embedding": [0.1, 0.2, 0.3],
                "tokens": 12,
                "score": 0.5,
                "metadata": {},
            },
            {
                "id": "c3",
                "text": "  leading and trailing spaces  ",
                "embedding": [0.0, 0.0, 1e-3],
                "tokens": 0,
                "gold": False,
            },
        ],
    }
    pool.update(extra)
    return pool


def write(tmp_path: Path, obj, name: str = "pool.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(obj, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def load_error(tmp_path: Path, obj, name: str = "pool.json", **kwargs) -> str:
    path = write(tmp_path, obj, name)
    with pytest.raises(PoolError) as caught:
        load_pool(path, **kwargs)
    return str(caught.value)


# --------------------------------------------------------------------------- model and round trip


def test_loaded_pool_exposes_normalised_float32_views(tmp_path):
    pool = load_pool(write(tmp_path, canonical()))
    assert pool.ids == ("c1", "c2", "c3")
    assert pool.embeddings.dtype == np.float32 and pool.embeddings.shape == (3, 3)
    np.testing.assert_allclose(pool.embeddings[0], [0.6, 0.8, 0.0], rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(pool.embeddings, axis=1), 1.0, rtol=1e-6)
    assert pool.query_embedding.tolist() == [1.0, 0.0, 0.0]
    assert pool.token_counts.dtype == np.int64 and pool.token_counts.tolist() == [8, 12, 0]
    assert pool.tokenizer == "given"
    assert pool.gold_ids == ("c1",)
    assert pool.answers == ("Paris",)
    assert pool.embedding_model == "toy-model"
    assert pool.scores is None  # c3 has no score
    assert pool.extra == {"run": {"retriever": "bm25", "k": 3}}
    assert pool.chunks[0].extra == {"lang": "en"}
    assert pool.name == "pool.json"


def test_save_and_load_round_trip_exactly(tmp_path):
    original = load_pool(write(tmp_path, canonical()))
    saved = save_pool(original, tmp_path / "out" / "copy.json")
    again = load_pool(saved)
    assert again == original
    assert again.texts == original.texts  # byte-exact, spaces and non-ASCII kept
    assert np.array_equal(again.raw_embeddings, original.raw_embeddings)
    assert again.fingerprint == original.fingerprint
    assert json.loads(saved.read_text(encoding="utf-8")) == canonical()


def test_round_trip_keeps_exact_float64_embeddings(tmp_path):
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(4, 5))
    pool = pool_from_retrieval(
        "q",
        ["a", "b", "c", "d"],
        embeddings=vectors,
        query_embedding=rng.normal(size=5),
        embedding_model="m",
    )
    again = load_pool(save_pool(pool, tmp_path / "p.jsonl"))
    assert np.array_equal(again.raw_embeddings, vectors)


def test_fingerprint_changes_with_content_and_is_stable():
    pool = pool_from_dict(canonical())
    assert pool.fingerprint == pool_from_dict(canonical()).fingerprint
    assert re.fullmatch(r"[0-9a-f]{64}", pool.fingerprint)
    changed = canonical()
    changed["chunks"][1]["text"] += " "
    assert pool_from_dict(changed).fingerprint != pool.fingerprint
    assert pool.with_token_counts([1, 2, 3], "words").fingerprint != pool.fingerprint


def test_pool_is_frozen_and_pickles():
    pool = pool_from_dict(canonical())
    with pytest.raises(AttributeError):
        pool.query = "other"  # type: ignore[misc]
    with pytest.raises(ValueError):
        pool.embeddings[0, 0] = 2.0
    assert pickle.loads(pickle.dumps(pool)) == pool


def test_with_token_counts_and_with_embeddings_return_new_pools():
    pool = pool_from_dict(
        {"query": "q", "chunks": [{"id": "a", "text": "x"}, {"id": "b", "text": "y"}]}
    )
    assert pool.token_counts is None and pool.tokenizer is None and pool.embeddings is None
    counted = pool.with_token_counts([3, 4], "o200k")
    assert counted.token_counts.tolist() == [3, 4] and counted.tokenizer == "o200k"
    embedded = counted.with_embeddings([[0.0, 2.0], [1.0, 1.0]], [5.0, 0.0], "m")
    assert embedded.embedding_model == "m"
    np.testing.assert_allclose(embedded.embeddings[1], [2**-0.5, 2**-0.5], rtol=1e-6)
    assert pool.token_counts is None  # unchanged


def test_saved_tokenizer_name_is_read_back(tmp_path):
    pool = pool_from_dict(canonical()).with_token_counts([1, 2, 3], "cl100k")
    assert load_pool(save_pool(pool, tmp_path / "p.json")).tokenizer == "cl100k"


# --------------------------------------------------------------------------- jsonl and bytes


def test_jsonl_selects_by_index_and_query(tmp_path):
    first = canonical(query="first?")
    second = {"query": "second?", "chunks": [{"id": "x", "text": "only"}]}
    path = tmp_path / "runs.jsonl"
    path.write_text(json.dumps(first) + "\n\n" + json.dumps(second) + "\n", encoding="utf-8")
    assert [p.query for p in load_pools(path)] == ["first?", "second?"]
    assert load_pool(path, index=1).ids == ("x",)
    assert load_pool(path, query="first?").ids == ("c1", "c2", "c3")
    with pytest.raises(PoolError, match=r"runs.jsonl: the file holds 2 pools; choose one"):
        load_pool(path)
    with pytest.raises(PoolError, match=r"no pool at index 5; the file holds 2 pool\(s\)"):
        load_pool(path, index=5)
    with pytest.raises(PoolError, match=r"no pool has the query 'third\?'"):
        load_pool(path, query="third?")


def test_bytes_need_a_format_or_a_name():
    data = json.dumps(canonical()).encode()
    assert load_pool(data, name="upload.json").ids == ("c1", "c2", "c3")
    assert load_pool(data, format="json").name == "<bytes>"
    with pytest.raises(PoolError, match=r"cannot tell the format"):
        load_pool(data)


def test_jsonl_error_names_the_line_of_the_pool(tmp_path):
    bad = canonical()
    bad["chunks"][2]["embedding"] = [1.0, 2.0]
    lines = [json.dumps({"query": "ok", "chunks": [{"id": "a", "text": "t"}]}), json.dumps(bad)]
    (tmp_path / "runs.jsonl").write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(PoolError) as caught:
        load_pool(tmp_path / "runs.jsonl", index=1)
    assert str(caught.value) == (
        "runs.jsonl, line 2, chunk 'c3', field 'embedding': embedding has 2 values, "
        "the pool's dimension is 3 (from chunk 'c1')"
    )


# --------------------------------------------------------------------------- other shapes


def test_langchain_documents_with_query_argument(tmp_path):
    docs = [
        {
            "page_content": "Paris is in France.",
            "metadata": {"source": "a.txt", "page": 2},
            "type": "Document",
        },
        {"id": "doc-7", "page_content": "Lyon too.", "metadata": {}, "type": "Document"},
        {
            "lc": 1,
            "type": "constructor",
            "id": ["langchain", "schema", "document", "Document"],
            "kwargs": {"page_content": "Nice as well.", "metadata": {"title": "Nice"}},
        },
    ]
    pool = load_pool(write(tmp_path, docs), query="French cities")
    assert pool.query == "French cities"
    assert pool.ids == ("c0", "doc-7", "c2")
    assert pool.texts == ("Paris is in France.", "Lyon too.", "Nice as well.")
    assert pool.chunks[0].metadata == {"source": "a.txt", "page": 2}
    assert pool.chunks[0].source == "a.txt" and pool.chunks[2].title == "Nice"
    with pytest.raises(PoolError, match=r"a list of documents has no query; give query="):
        load_pool(tmp_path / "pool.json")


def test_langchain_document_score_pairs(tmp_path):
    pairs = {
        "query": "q",
        "documents": [
            [{"page_content": "a", "metadata": {}}, 0.8],
            [{"page_content": "b", "metadata": {}}, 0.3],
        ],
    }
    assert load_pool(write(tmp_path, pairs)).scores.tolist() == [0.8, 0.3]


def test_llamaindex_nodes_with_score(tmp_path):
    nodes = {
        "query": "q",
        "source_nodes": [
            {
                "node": {
                    "id_": "n1",
                    "text": "first",
                    "metadata": {"file_name": "a.md"},
                    "embedding": None,
                    "class_name": "TextNode",
                },
                "score": 0.7,
                "class_name": "NodeWithScore",
            },
            {
                "node": {"id_": "n2", "text_resource": {"text": "second"}, "metadata": {}},
                "score": 0.2,
            },
        ],
    }
    pool = load_pool(write(tmp_path, nodes))
    assert pool.ids == ("n1", "n2") and pool.texts == ("first", "second")
    assert pool.scores.tolist() == [0.7, 0.2]
    assert pool.chunks[0].metadata == {"file_name": "a.md"}


def test_haystack_documents_one_per_jsonl_line(tmp_path):
    lines = [
        {"id": "h1", "content": "alpha", "meta": {"k": 1}, "score": 0.5, "embedding": [1.0, 0.0]},
        {"id": "h2", "content": "beta", "meta": {}, "score": None, "embedding": [0.0, 1.0]},
    ]
    path = tmp_path / "docs.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    with pytest.raises(PoolError, match=r"no query_embedding and no embedding_model"):
        load_pool(path, query="greek letters")
    lines[0].pop("embedding"), lines[1].pop("embedding")
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    pool = load_pool(path, query="greek letters")
    assert pool.ids == ("h1", "h2") and pool.chunks[0].metadata == {"k": 1}
    assert pool.chunks[1].score is None


def test_csv_table_with_query_column_makes_pools(tmp_path):
    path = tmp_path / "pool.csv"
    path.write_text(
        "query,id,text,score,tokens,gold,author\n"
        'q1,a,"Text, with a comma\nand a newline",0.9,7,true,Ann\n'
        "q1,b,second,0.5,3,false,\n"
        "q2,c,other query,0.1,2,0,Bob\n",
        encoding="utf-8",
    )
    pools = load_pools(path)
    assert [p.query for p in pools] == ["q1", "q2"]
    first = load_pool(path, query="q1")
    assert first.texts == ("Text, with a comma\nand a newline", "second")
    assert first.token_counts.tolist() == [7, 3] and first.gold_ids == ("a",)
    assert first.chunks[0].metadata == {"author": "Ann"} and first.chunks[1].metadata is None


def test_csv_without_query_column_takes_query_argument(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("text\nalpha\nbeta\n", encoding="utf-8")
    pool = load_pool(path, query="letters")
    assert pool.ids == ("row1", "row2")
    with pytest.raises(PoolError, match=r"t.csv: no query column \(query, question\); give"):
        load_pool(path)


def test_csv_bad_token_count_names_row_chunk_and_field(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("id,text,tokens\na,alpha,3\nb,beta,2.5\n", encoding="utf-8")
    with pytest.raises(PoolError) as caught:
        load_pool(path, query="q")
    assert str(caught.value) == (
        "t.csv, row 2, chunk 'b', field 'tokens': token count '2.5' is not an integer"
    )


def test_parquet_table_with_list_embeddings(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "query": ["q", "q"],
            "id": ["a", "b"],
            "text": ["one", "two"],
            "embedding": [[1.0, 0.0], [0.5, 0.5]],
            "tokens": [1, 1],
            "extra_col": [1, None],
        }
    )
    pq.write_table(table, tmp_path / "p.parquet")
    data = (tmp_path / "p.parquet").read_bytes()
    with pytest.raises(PoolError, match=r"no query_embedding and no embedding_model"):
        load_pool(data, name="p.parquet")
    pq.write_table(table.drop(["embedding"]), tmp_path / "p.parquet")
    pool = load_pool(tmp_path / "p.parquet")
    assert pool.texts == ("one", "two") and pool.chunks[0].metadata == {"extra_col": 1}


def test_bad_parquet_bytes(tmp_path):
    with pytest.raises(PoolError, match=r"p.parquet: not a readable parquet file"):
        load_pool(b"PAR1 nonsense", name="p.parquet")


def test_pool_from_retrieval_accepts_pipeline_objects(tmp_path):
    class LangChainDoc:
        def __init__(self, text, metadata):
            self.page_content, self.metadata, self.id = text, metadata, None

    class Node:
        def __init__(self, text):
            self.text, self.metadata, self.id_ = text, {"f": 1}, "node-1"

    class NodeWithScore:
        def __init__(self, node, score):
            self.node, self.score = node, score

    pool = pool_from_retrieval(
        "q", [LangChainDoc("lc text", {"s": 2}), NodeWithScore(Node("li text"), 0.4), "plain"]
    )
    assert pool.ids == ("c0", "node-1", "c2")
    assert pool.chunks[1].score == 0.4 and pool.chunks[0].metadata == {"s": 2}
    path = dump_retrieval(tmp_path / "r.json", "q", ["x", "y"], [0.2, 0.1], ids=["p", "q"])
    assert load_pool(path).scores.tolist() == [0.2, 0.1]


def test_save_pools_refuses_many_pools_in_one_json(tmp_path):
    pool = pool_from_dict(canonical())
    with pytest.raises(PoolError, match=r"got 2 pool\(s\) for a .json file"):
        save_pools([pool, pool], tmp_path / "x.json")


# --------------------------------------------------------------------------- schema


def test_canonical_example_and_saved_pools_validate_against_the_schema(tmp_path):
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.validate(canonical(), schema)
    saved = save_pool(
        pool_from_dict(canonical()).with_token_counts([1, 2, 3], "cl100k"), tmp_path / "p.json"
    )
    jsonschema.validate(json.loads(saved.read_text(encoding="utf-8")), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"query": "q", "chunks": [{"id": "a"}]}, schema)


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
        Pool("q", (Chunk("a", "x"), Chunk("b", "y")), raw_embeddings=[[1.0], [np.nan]])
    with pytest.raises(PoolError, match=r"chunk 'a' \(chunks\[1\]\): duplicate chunk id"):
        Pool("q", (Chunk("a", "x"), Chunk("a", "y")))


class _Payload:
    """Unpickling this runs code (here it only raises a flag; a real one would do worse)."""

    def __reduce__(self):
        return exec, ("import sys; sys.adagres_unpickled = True",)


def _payloads() -> dict[str, bytes]:
    npy = io.BytesIO()
    np.save(npy, np.array([_Payload()], dtype=object), allow_pickle=True)
    return {
        "pickle-0": pickle.dumps(_Payload(), protocol=0),  # ASCII, looks like text
        "pickle-5": pickle.dumps(_Payload(), protocol=5),
        "npy-object-array": npy.getvalue(),
    }


def test_loaders_never_unpickle(tmp_path, monkeypatch):
    """Pickles disguised as every pool format are refused without running, and no loader
    calls an unpickler or numpy.load (which can unpickle) on good files either."""
    monkeypatch.setattr(sys, "adagres_unpickled", False, raising=False)
    calls: list[str] = []

    def guard(name):
        def called(*args, **kwargs):
            calls.append(name)
            raise AssertionError(f"{name} was called")

        return called

    for module, name in [(pickle, "load"), (pickle, "loads"), (pickle, "Unpickler"), (np, "load")]:
        monkeypatch.setattr(module, name, guard(f"{module.__name__}.{name}"))

    import pyarrow as pa
    import pyarrow.parquet as pq

    good = canonical()
    parquet = io.BytesIO()
    pq.write_table(pa.table({"query": ["q"], "id": ["a"], "text": ["alpha"]}), parquet)
    formats = {
        "json": json.dumps(good).encode(),
        "jsonl": (json.dumps(good) + "\n").encode(),
        "csv": b"query,id,text\nq,a,alpha\n",
        "parquet": parquet.getvalue(),
    }
    for fmt, data in formats.items():
        (tmp_path / f"good.{fmt}").write_bytes(data)
        assert len(load_pool(tmp_path / f"good.{fmt}")) in (1, 3), fmt
        assert len(load_pool(data, format=fmt)) in (1, 3), fmt

    for label, payload in _payloads().items():
        for fmt in formats:
            path = tmp_path / f"{label}.{fmt}"
            path.write_bytes(payload)
            for source, kwargs in ((path, {}), (payload, {"format": fmt})):
                with pytest.raises(PoolError):
                    load_pool(source, query="q", **kwargs)
        for suffix in (".pkl", ".npy", ".pickle"):
            with pytest.raises(PoolError, match="cannot tell the format"):
                load_pool(payload, name=f"pool{suffix}", query="q")
    assert sys.adagres_unpickled is False
    assert calls == []


def test_import_adagres_io_stays_light():
    code = (
        "import sys, adagres, adagres.pools.io, adagres.pools.pool, adagres.pools.tokens, "
        "adagres.pools.embed, adagres.pools.corpus, adagres.pools.datasets\n"
        "heavy = {'torch', 'sentence_transformers', 'pandas', 'pyarrow', 'tokenizers', "
        "'bpe_openai', 'transformers'}\n"
        "print(sorted(heavy & set(sys.modules)))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
