"""Live pools from Milvus: one test body against Milvus Lite and a real standalone server.

The integration tests (``slow``, ``model``) index the demo pools' texts with the packaged
model into (a) a Milvus Lite store under tmp_path and (b) a standalone Milvus server that
the module starts itself (``milvus.MilvusServer``, data under tmp_path, a free port) and
stops by its own handle. Each backend must return the brute-force top-N of the vectors it
was given, bit for bit, leave the store unchanged, and agree with the other backend on ids,
vectors and the selection. The error tests use Milvus Lite and the fake encoder.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import milvus_support
import numpy as np
import pytest
from reference import select_inputs

import adagres
from adagres.corpora.documents import chunk_documents
from adagres.embed.models import DEFAULT_MODEL, embed_texts
from adagres.embed.tokens import count_tokens
from adagres.errors import InputError, PoolError
from adagres.pools.pool import Pool
from adagres.stores import milvus

ROOT = Path(__file__).resolve().parent.parent
DEMO_FILES = sorted((ROOT / "data" / "src").glob("*.json"))
QUERIES = (
    "What is the maximum daily dose of ibuprofen for adults?",
    "Which diseases killed the workers who dug the Panama Canal?",
    "How can a small town cut the energy its street lights use?",
)
TOP_N = 40
BUDGET = 600


def release_lite(path: Path) -> None:
    from milvus_lite.server_manager import server_manager_instance

    server_manager_instance.release_server(str(path))


def store_state(uri: str, collection: str) -> tuple[int, str]:
    """(row count, sha256 over every row's key, text, tokens and vector bits)."""
    from pymilvus import MilvusClient

    client = MilvusClient(uri)
    try:
        count = client.query(collection, filter="", output_fields=["count(*)"])[0]["count(*)"]
        rows = client.query(
            collection,
            filter="pk >= 0",
            limit=16384,
            output_fields=["pk", "text", "tokens", "vector"],
        )
    finally:
        client.close()
    digest = hashlib.sha256()
    for row in sorted(rows, key=lambda r: r["pk"]):
        digest.update(f"{row['pk']}|{row['tokens']}|{row['text']}|".encode())
        digest.update(np.asarray(row["vector"], dtype=np.float32).tobytes())
    return int(count), digest.hexdigest()


# --------------------------------------------------------------------------- integration


@dataclass
class Observed:
    indexed: milvus.Indexed
    pools: list[Pool]
    before: tuple[int, str]
    after: tuple[int, str]


@pytest.fixture(scope="module")
def reference():
    """What the store was given: chunk id -> float32 vector, and the query vectors."""
    texts = {}
    for path in DEMO_FILES:
        texts.update(adagres.corpus.read_documents(path))
    chunks = chunk_documents(texts)
    vectors = embed_texts([c.text for c in chunks])
    return {c.id: v for c, v in zip(chunks, vectors, strict=True)}, embed_texts(list(QUERIES))


@pytest.fixture(scope="module")
def milvus_server(tmp_path_factory):
    """A standalone Milvus server for this module, stopped by its own handle."""
    with milvus_support.milvus_server(tmp_path_factory.mktemp("milvus-server")) as uri:
        yield uri


def exercise(uri: str) -> Observed:
    """The test body, the same for every backend: index, retrieve, check the store."""
    indexed = milvus.index_documents(uri, "demo", DEMO_FILES)
    before = store_state(uri, "demo")
    pools = milvus.retrieve_pools(uri, "demo", QUERIES, top_n=TOP_N)
    pools.append(milvus.retrieve_pool(uri, "demo", QUERIES[0], top_n=TOP_N))
    return Observed(indexed, pools, before, store_state(uri, "demo"))


@pytest.fixture(scope="module")
def observed(tmp_path_factory, milvus_server):
    lite = tmp_path_factory.mktemp("lite") / "live.db"
    try:
        yield {"lite": exercise(str(lite)), "server": exercise(milvus_server)}
    finally:
        release_lite(lite)


BACKENDS = pytest.mark.parametrize("backend", ["lite", "server"])


@pytest.mark.slow
@pytest.mark.model
@BACKENDS
def test_top_n_is_the_brute_force_top_n(observed, reference, backend):
    stored, query_vectors = reference
    ids = list(stored)
    matrix = np.stack([stored[i] for i in ids]).astype(np.float64)
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    assert observed[backend].indexed.rows == len(ids) == observed[backend].before[0]
    for pool, q in zip(observed[backend].pools, [*query_vectors, query_vectors[0]], strict=True):
        cosine = unit @ (q / np.linalg.norm(q))
        order = np.argsort(-cosine, kind="stable")
        assert cosine[order[TOP_N - 1]] - cosine[order[TOP_N]] > 1e-5  # the cut is not a tie
        assert set(pool.ids) == {ids[i] for i in order[:TOP_N]}
        # The store's scores are these cosines (float32 arithmetic) in non-increasing order.
        expected = np.array([cosine[ids.index(i)] for i in pool.ids])
        np.testing.assert_allclose(pool.scores, expected, atol=2e-6)
        assert np.all(np.diff(pool.scores) <= 0)


@pytest.mark.slow
@pytest.mark.model
@BACKENDS
def test_vectors_come_back_bit_exact(observed, reference, backend):
    stored, query_vectors = reference
    for pool, q in zip(observed[backend].pools, [*query_vectors, query_vectors[0]], strict=True):
        sent = np.stack([stored[i] for i in pool.ids])
        back = pool.raw_embeddings.astype(np.float32)
        assert np.array_equal(back.astype(np.float64), pool.raw_embeddings)  # float32 values
        assert np.array_equal(back.view(np.uint32), sent.view(np.uint32))
        assert np.array_equal(pool.raw_query_embedding.astype(np.float32), q)
        assert pool.embedding_model == DEFAULT_MODEL and pool.tokenizer == "cl100k"
        assert pool.token_counts.tolist() == count_tokens(pool.texts, "cl100k").tolist()


@pytest.mark.slow
@pytest.mark.model
@BACKENDS
def test_retrieval_leaves_the_store_unchanged(observed, backend):
    seen = observed[backend]
    assert seen.before == seen.after
    assert seen.pools[0].extra["retrieval"]["collection"] == "demo"
    assert seen.pools[0].extra["retrieval"]["top_n"] == TOP_N


@pytest.mark.slow
@pytest.mark.model
def test_lite_and_server_agree(observed):
    lite, server = observed["lite"].pools, observed["server"].pools
    for a, b in zip(lite, server, strict=True):
        assert a.ids == b.ids and a.texts == b.texts
        assert np.array_equal(a.raw_embeddings, b.raw_embeddings)
        assert a.fingerprint == b.fingerprint  # the app registers both under one key
        np.testing.assert_allclose(a.scores, b.scores, atol=1e-6)
        for settings in (adagres.Settings(), adagres.PRESETS["recommended"].settings):
            x = adagres.select_prepared(a.prepared, BUDGET, settings, trace=False)
            y = adagres.select_prepared(b.prepared, BUDGET, settings, trace=False)
            assert (x.indices, x.tokens_used, x.objective, x.lam) == (
                y.indices,
                y.tokens_used,
                y.objective,
                y.lam,
            )
    assert lite[0].ids == lite[-1].ids  # one query alone gives the batch's pool


@pytest.mark.slow
@pytest.mark.model
def test_a_saved_pool_selects_as_the_retrieved_one(observed, tmp_path):
    pool = observed["server"].pools[0]
    path = adagres.save_pool(pool, tmp_path / "pool.json")
    again = adagres.load_pool(path)
    assert again == pool and again.extra["retrieval"] == pool.extra["retrieval"]
    a = adagres.select(*select_inputs(pool), BUDGET)
    b = adagres.select(*select_inputs(again), BUDGET)
    assert a.indices == b.indices and a.objective == b.objective


# --------------------------------------------------------------------------- errors (Lite)


@pytest.fixture
def lite(tmp_path, monkeypatch):
    """A Milvus Lite store path, with its own embedding cache (the fake encoder's vectors
    must not reach another test's cache under the packaged model's name)."""
    monkeypatch.setenv("ADAGRES_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "store.db"
    yield path
    release_lite(path)


DOCS = {
    "cats.md": "Cats sleep most of the day. A cat purrs when it is content.",
    "dogs.md": "Dogs bark at strangers. A dog wags its tail when it is happy.",
}


def test_index_twice_replaces_and_keeps_metadata(lite, fake_encoder):
    chunks = chunk_documents(DOCS, size=6, overlap=2)
    cats = sum(1 for c in chunks if (c.metadata or {}).get("doc_id") == "cats.md")
    first = milvus.index_documents(str(lite), "pets", DOCS, size=6, overlap=2)
    release_lite(lite)  # as a new process finds it: the collection is released
    again = milvus.index_documents(str(lite), "pets", DOCS, size=6, overlap=2)
    assert first.rows == again.rows == first.chunks == len(chunks) and cats > 1
    # A document indexed again replaces its rows: cats.md now makes one chunk.
    shorter = milvus.index_documents(
        str(lite), "pets", {"cats.md": "Cats sleep."}, size=6, overlap=2
    )
    assert (shorter.chunks, shorter.rows) == (1, len(chunks) - cats + 1)
    pool = milvus.retrieve_pool(str(lite), "pets", "a dog wags", top_n=50)
    assert len(pool) == shorter.rows and "cats.md#0" in pool.ids
    dogs = [c for c in pool.chunks if (c.metadata or {}).get("doc_id") == "dogs.md"]
    assert dogs and all(c.title == "dogs.md" and (c.metadata or {})["start"] >= 0 for c in dogs)
    words = milvus.retrieve_pool(str(lite), "pets", "a dog wags", top_n=3, tokenizer="words")
    assert words.tokenizer == "words"
    assert words.token_counts is not None
    assert words.token_counts.tolist() == count_tokens(words.texts, "words").tolist()


def test_metadata_is_stored_with_every_chunk_of_its_document(lite, fake_encoder):
    milvus.index_documents(str(lite), "pets", DOCS, metadata={"cats.md": {"lang": "en"}})
    pool = milvus.retrieve_pool(str(lite), "pets", "cats", top_n=10)
    metas = [c.metadata or {} for c in pool.chunks]
    langs = {m["doc_id"]: m.get("lang") for m in metas}
    assert langs == {"cats.md": "en", "dogs.md": None}
    with pytest.raises(InputError, match=r"metadata names document 'birds.md'"):
        milvus.index_documents(str(lite), "pets", DOCS, metadata={"birds.md": {}})


def test_missing_store_and_missing_collection(lite, fake_encoder, tmp_path):
    with pytest.raises(PoolError, match=r"no Milvus Lite store at .*nothing.db"):
        milvus.retrieve_pool(str(tmp_path / "nothing.db"), "c", "q")
    assert not (tmp_path / "nothing.db").exists()  # retrieval made no store
    milvus.index_documents(str(lite), "pets", DOCS)
    milvus.index_documents(str(lite), "more", DOCS)
    with pytest.raises(PoolError, match=r"no collection 'birds'; the store holds: 'more', 'pets'"):
        milvus.retrieve_pool(str(lite), "birds", "q")
    assert milvus.collection_names(str(lite)) == ["more", "pets"]


def foreign_collection(path: Path, name: str, *, text: bool, dim: int) -> None:
    from pymilvus import DataType, MilvusClient

    client = MilvusClient(str(path))
    schema = MilvusClient.create_schema(auto_id=False)
    schema.add_field("id", DataType.INT64, is_primary=True)
    schema.add_field("embedding", DataType.FLOAT_VECTOR, dim=dim)
    if text:
        schema.add_field("text", DataType.VARCHAR, max_length=100)
    index = client.prepare_index_params()
    index.add_index(field_name="embedding", index_type="FLAT", metric_type="COSINE")
    client.create_collection(name, schema=schema, index_params=index, consistency_level="Strong")
    row = {"id": 1, "embedding": [1.0] * dim, **({"text": "a row"} if text else {})}
    client.insert(name, [row])
    client.close()


def test_collections_made_elsewhere(lite, fake_encoder):
    foreign_collection(lite, "bare", text=False, dim=64)
    foreign_collection(lite, "small", text=True, dim=8)
    foreign_collection(lite, "fits", text=True, dim=64)
    with pytest.raises(
        PoolError, match=r"'bare' has no VARCHAR field 'text' \(fields: id, embedding\)"
    ):
        milvus.retrieve_pool(str(lite), "bare", "q")
    with pytest.raises(PoolError, match=r"its vectors have 8 values, the query model .* gives 64"):
        milvus.retrieve_pool(str(lite), "small", "q")
    pool = milvus.retrieve_pool(str(lite), "fits", "a row")  # any vector field name, any pk
    assert pool.token_counts is not None
    assert pool.ids == ("1",) and pool.tokenizer == "cl100k" and pool.token_counts.tolist() == [2]


def test_model_and_tokenizer_must_match_the_collection(lite, fake_encoder, tmp_path):
    milvus.index_documents(str(lite), "pets", DOCS)
    other = tmp_path / "other-model"
    other.mkdir()
    (other / "config.json").write_text("{}")
    with pytest.raises(PoolError, match="was embedded with 'sentence-transformers/all-MiniLM"):
        milvus.retrieve_pool(str(lite), "pets", "q", model=other)
    with pytest.raises(
        PoolError, match=r"counted with 'cl100k'; these chunks .* counted with 'words'"
    ):
        milvus.index_documents(str(lite), "pets", DOCS, tokenizer="words")


@pytest.mark.parametrize("top_n", [0, milvus.MAX_TOP_N + 1, True, 2.0])
def test_top_n_is_checked(lite, top_n):
    with pytest.raises(InputError, match="top_n must be a whole number from 1 to 16384"):
        milvus.retrieve_pool(str(lite), "pets", "q", top_n=top_n)


def test_a_store_held_by_another_process(lite, fake_encoder):
    milvus.index_documents(str(lite), "pets", DOCS)
    release_lite(lite)
    holder = textwrap.dedent(f"""
        import sys
        from pymilvus import MilvusClient
        client = MilvusClient({str(lite)!r})
        print("ready", flush=True)
        sys.stdin.read()
    """)
    process = subprocess.Popen(
        [sys.executable, "-c", holder], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
        # The message names the process that holds the store.
        with pytest.raises(PoolError, match=rf"another process has it open \(pid {process.pid}: "):
            milvus.retrieve_pool(str(lite), "pets", "q")
    finally:
        process.communicate(timeout=60)


def test_uri_helpers():
    uri = "https://user:pw@host.example:19530/db?token=abc&x=1"
    assert milvus.strip_credentials(uri) == "https://host.example:19530/db?x=1"
    assert milvus.redact_uri(uri) == "https://***@host.example:19530/db?x=1"
    assert milvus.has_credentials(uri) and not milvus.has_credentials("http://h:1")
    assert milvus.strip_credentials("data/live.db") == "data/live.db"


def test_cli_index_retrieve_then_select(lite, fake_encoder, tmp_path, capsys):
    from adagres.cli import main

    files = []
    for name, text in DOCS.items():
        (tmp_path / name).write_text(text)
        files.append(str(tmp_path / name))
    assert main(["index", str(lite), "pets", *files, "--size", "6", "--overlap", "2"]) == 0
    out = capsys.readouterr().out.splitlines()
    n_chunks = len(chunk_documents(DOCS, size=6, overlap=2))
    assert out[0] == f"indexed {n_chunks} chunks of 2 documents into 'pets' at {lite}"
    saved = tmp_path / "pool.json"
    args = ["retrieve", str(lite), "pets", "a dog wags", "--top-n", "3", "--out", str(saved)]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    expected = milvus.retrieve_pool(str(lite), "pets", "a dog wags", top_n=3)
    assert adagres.load_pool(saved) == expected
    assert [line.split()[1] for line in lines[2:5]] == [i[:32] for i in expected.ids]
    assert main(["select", str(saved), "--budget", "20", "--json"]) == 0
    picked = json.loads(capsys.readouterr().out)["selected"]
    selection = adagres.select(*select_inputs(expected), 20)
    assert picked == [expected.ids[i] for i in selection.indices]


def test_cli_errors_are_one_line_with_status_2(lite, tmp_path, capsys):
    from adagres.cli import main

    assert main(["index", str(lite), "pets", str(tmp_path / "missing.md")]) == 2
    assert main(["retrieve", str(tmp_path / "none.db"), "pets", "q"]) == 2
    errors = capsys.readouterr().err.splitlines()
    messages = [line for line in errors if line.startswith("adagres: error:")]
    missing = tmp_path / "missing.md"
    assert messages == [
        f"adagres: error: documents: '{missing}' is missing; give the path of a text file (a "
        "folder alone, not inside a list), or the text in a mapping, {'doc': text}",
        f"adagres: error: no Milvus Lite store at {tmp_path / 'none.db'} (make one with "
        "'adagres index')",
    ]
