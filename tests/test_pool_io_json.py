"""Pools in and out as JSON and JSON Lines: the loaded model, exact round trips, choosing one
pool of a file, bytes, and the schema."""

from __future__ import annotations

import json
import pickle
import re

import jsonschema
import numpy as np
import pytest
from pool_io_support import canonical, write

from adagres.errors import PoolError
from adagres.pools.io import (
    SCHEMA_PATH,
    load_pool,
    load_pools,
    pool_from_dict,
    pool_from_retrieval,
    save_pool,
    save_pools,
)

# --------------------------------------------------------------------------- model and round trip


def test_loaded_pool_exposes_normalised_float32_views(tmp_path):
    pool = load_pool(write(tmp_path, canonical()))
    assert pool.ids == ("c1", "c2", "c3")
    assert pool.embeddings is not None and pool.query_embedding is not None
    assert pool.token_counts is not None
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
    assert again.raw_embeddings is not None and original.raw_embeddings is not None
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
    assert again.raw_embeddings is not None
    assert np.array_equal(again.raw_embeddings, vectors)


def test_fingerprint_changes_with_content_and_is_stable():
    pool = pool_from_dict(canonical())
    assert pool.fingerprint == pool_from_dict(canonical()).fingerprint
    assert re.fullmatch(r"[0-9a-f]{64}", pool.fingerprint)
    changed = canonical()
    changed["chunks"][1]["text"] += " "
    assert pool_from_dict(changed).fingerprint != pool.fingerprint
    assert pool.with_token_counts([1, 2, 3], "words").fingerprint != pool.fingerprint


def test_pool_is_frozen_and_pickles() -> None:
    pool = pool_from_dict(canonical())
    with pytest.raises(AttributeError):
        pool.query = "other"  # type: ignore[misc]
    assert pool.embeddings is not None
    with pytest.raises(ValueError):
        pool.embeddings[0, 0] = 2.0
    assert pickle.loads(pickle.dumps(pool)) == pool


def test_with_token_counts_and_with_embeddings_return_new_pools():
    pool = pool_from_dict(
        {"query": "q", "chunks": [{"id": "a", "text": "x"}, {"id": "b", "text": "y"}]}
    )
    assert pool.token_counts is None and pool.tokenizer is None and pool.embeddings is None
    counted = pool.with_token_counts([3, 4], "o200k")
    assert counted.token_counts is not None
    assert counted.token_counts.tolist() == [3, 4] and counted.tokenizer == "o200k"
    embedded = counted.with_embeddings([[0.0, 2.0], [1.0, 1.0]], [5.0, 0.0], "m")
    assert embedded.embedding_model == "m"
    assert embedded.embeddings is not None
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
