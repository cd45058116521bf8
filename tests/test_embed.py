"""Offline embeddings: the packaged model, the disk cache, and the one-model rule."""

from __future__ import annotations

import numpy as np
import pytest

from adagres.corpora.documents import pool_from_documents
from adagres.embed import models as embed
from adagres.embed.minilm import packaged_folder
from adagres.embed.models import DEFAULT_MODEL, embed_texts, resolve_model
from adagres.errors import PoolError
from adagres.pools.io import pool_from_dict
from adagres.pools.ready import ensure_embeddings

TEXTS = ["A cat sits on the mat.", "A kitten rests on a rug.", "Quarterly tax filing deadlines."]


@pytest.mark.model
def test_packaged_model_gives_unit_384d_vectors_with_sensible_cosines(tmp_path):
    """The one test that runs the real packaged model; every other test fakes ``_encode``."""
    vectors = embed_texts(TEXTS, cache_dir=tmp_path)
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosine = vectors @ vectors.T
    assert cosine[0, 1] > 0.5 > cosine[0, 2]  # cat~kitten far above cat~tax
    assert cosine[0, 1] > cosine[1, 2] + 0.3
    # Corpus mode end to end with the default model: the answer passage ranks first.
    docs = {
        "a": "Paris is the capital and largest city of France.",
        "b": "Photosynthesis converts light energy into chemical energy in plants.",
    }
    pool = pool_from_documents(
        docs, "What is the capital of France?", size=50, overlap=0, top_n=2, cache_dir=tmp_path
    )
    assert pool.ids == ("a#0", "b#0") and pool.embedding_model == DEFAULT_MODEL
    assert pool.scores is not None and pool.embeddings is not None
    assert pool.scores[0] > pool.scores[1] + 0.3
    assert pool.embeddings.shape == (2, 384)


def test_local_model_folder_is_accepted_and_unknown_names_refused(tmp_path):
    folder = packaged_folder()  # found, not imported (its import loads torch)
    assert resolve_model(folder) == str(folder.resolve())
    assert resolve_model(None) == resolve_model("all-MiniLM-L6-v2") == DEFAULT_MODEL
    with pytest.raises(PoolError, match="'text-embedding-3-small' is neither the packaged"):
        resolve_model("text-embedding-3-small")
    with pytest.raises(PoolError, match="nothing is downloaded"):
        resolve_model(tmp_path)  # an empty folder is not a model


@pytest.fixture
def fake_model(monkeypatch):
    """Replace the model run by a counter returning deterministic 4-d vectors."""
    calls: list[list[str]] = []

    def encode(name, texts):
        calls.append(list(texts))
        return np.array([[len(t), 1.0, t.count("a"), 2.0] for t in texts], dtype=np.float32)

    monkeypatch.setattr(embed, "_encode", encode)
    return calls


def test_second_run_is_served_from_the_disk_cache(tmp_path, fake_model):
    first = embed_texts(["alpha", "beta", "alpha"], cache_dir=tmp_path)
    assert fake_model == [["alpha", "beta"]]  # duplicates embedded once
    second = embed_texts(["beta", "alpha"], cache_dir=tmp_path)
    assert fake_model == [["alpha", "beta"]]  # no new model call
    assert np.array_equal(second, first[[1, 0]])
    embed_texts(["beta", "gamma"], cache_dir=tmp_path)
    assert fake_model[-1] == ["gamma"]  # only the new text


def test_cache_is_keyed_by_model(tmp_path, fake_model):
    embed_texts(["alpha"], cache_dir=tmp_path)
    embed_texts(["alpha"], cache_dir=tmp_path, model=packaged_folder())
    assert fake_model == [["alpha"], ["alpha"]]


def test_cache_dir_follows_environment_variable(tmp_path, monkeypatch, fake_model):
    monkeypatch.setenv("ADAGRES_CACHE_DIR", str(tmp_path))
    embed_texts(["alpha"])
    assert len(list((tmp_path / "embeddings").rglob("*.npy"))) == 1


def test_progress_is_reported_per_batch(tmp_path, fake_model):
    seen = []
    embed_texts(
        [f"text {i}" for i in range(130)],
        cache_dir=tmp_path,
        progress=lambda done, total: seen.append((done, total)),
    )
    assert seen == [(64, 130), (128, 130), (130, 130)]


def test_ensure_embeddings_embeds_query_and_chunks_with_one_model(tmp_path, fake_model):
    pool = pool_from_dict({"query": "a query", "chunks": [{"id": "x", "text": "banana"}]})
    embedded = ensure_embeddings(pool, cache_dir=tmp_path)
    assert fake_model == [["banana", "a query"]]
    assert embedded.embedding_model == DEFAULT_MODEL
    assert embedded.raw_embeddings is not None and embedded.raw_query_embedding is not None
    assert embedded.raw_embeddings.tolist() == [[6.0, 1.0, 3.0, 2.0]]
    assert embedded.raw_query_embedding.tolist() == [7.0, 1.0, 1.0, 2.0]
    assert ensure_embeddings(embedded) is embedded


def test_query_only_embedded_with_the_pools_own_model(tmp_path, fake_model):
    pool = pool_from_dict(
        {
            "query": "q",
            "embedding_model": "all-MiniLM-L6-v2",
            "chunks": [{"id": "x", "text": "t", "embedding": [1, 0, 0, 0]}],
        }
    )
    embedded = ensure_embeddings(pool, cache_dir=tmp_path)
    assert fake_model == [["q"]]
    assert embedded.raw_embeddings is not None
    assert embedded.raw_embeddings.tolist() == [[1.0, 0.0, 0.0, 0.0]]
    assert embedded.embedding_model == "all-MiniLM-L6-v2"


def test_query_of_a_pool_from_an_unavailable_model_is_a_clear_error(fake_model):
    pool = pool_from_dict(
        {
            "query": "q",
            "embedding_model": "text-embedding-3-small",
            "chunks": [{"id": "x", "text": "t", "embedding": [1, 0]}],
        },
        name="mine.json",
    )
    with pytest.raises(PoolError) as caught:
        ensure_embeddings(pool)
    assert str(caught.value).startswith(
        "mine.json: the pool has no query_embedding and its chunk embeddings came from a "
        "model that is not available here: embedding model 'text-embedding-3-small'"
    )
    assert fake_model == []


def test_dimension_mismatch_between_pool_and_model(tmp_path, fake_model):
    pool = pool_from_dict(
        {
            "query": "q",
            "embedding_model": "minilm",
            "chunks": [{"id": "x", "text": "t", "embedding": [1, 0]}],
        }
    )
    with pytest.raises(PoolError, match="gives 4 values, the pool's embeddings have 2"):
        ensure_embeddings(pool, cache_dir=tmp_path)


@pytest.mark.model  # sentence-transformers and the packaged model's files
def test_a_folder_with_only_a_pickled_checkpoint_is_refused(tmp_path):
    """Weights are read from safetensors only: a pytorch_model.bin (a pickle) is never loaded."""
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(packaged_folder(), folder)
    (folder / "model.safetensors").unlink()
    (folder / "pytorch_model.bin").write_bytes(b"\x80\x04not-a-real-checkpoint")
    with pytest.raises(PoolError, match=r"needs model\.safetensors"):
        embed_texts(["a text"], model=folder, cache_dir=tmp_path / "cache")
