"""Loaders of the real corpora in the optional data packages (installed by `make install`)."""

from __future__ import annotations

import importlib.util

import pytest

from adagres import datasets
from adagres.errors import PoolError
from adagres.pools.io import load_pools


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    return tmp_path_factory.mktemp("datasets")


@pytest.fixture(scope="module")
def pools(cache):
    return datasets.fanoutqa_pools(cache_dir=cache)


def test_wiki_summaries_are_the_10033_articles():
    summaries = datasets.wiki_summaries()
    assert len(summaries) == 10033
    assert summaries["Continent"]["title"] == "Continent"


def test_fanoutqa_pools_have_one_gold_summary_and_answers(pools):
    assert len(pools) == 558  # dev sub-questions whose evidence is among the summaries
    assert all(len(pool) == 20 and len(pool.gold_ids) == 1 for pool in pools)
    pool = next(p for p in pools if p.query == "Find the largest continent")
    assert pool.gold_ids == ("wiki:Continent",) and pool.answers == ("Asia",)
    gold = pool.chunks[pool.ids.index("wiki:Continent")]
    assert gold.text == datasets.wiki_summaries()["Continent"]["extract"]
    assert gold.source == "https://en.wikipedia.org/wiki/Continent"
    assert list(pool.scores) == sorted(pool.scores, reverse=True)


def test_fanoutqa_pools_are_cached_on_disk(pools, cache, monkeypatch):
    files = list(cache.glob("fanoutqa-dev-top20-*.jsonl"))
    assert len(files) == 1 and len(load_pools(files[0])) == 558

    def refuse(*args, **kwargs):
        raise AssertionError("rebuilt despite the cache")

    monkeypatch.setattr(datasets, "_fanout_pool", refuse)
    again = datasets.fanoutqa_pools(cache_dir=cache, limit=3)
    assert [p.fingerprint for p in again] == [p.fingerprint for p in pools[:3]]


def test_drug_reviews_are_redundant_texts():
    reviews = datasets.drug_reviews()
    assert len(reviews) == 979
    assert all(text.strip() and "&#039;" not in text for text in reviews.values())
    top_condition, count = datasets.conditions()[0]
    assert len(datasets.drug_reviews(condition=top_condition)) == count
    with pytest.raises(PoolError, match="no drug review has the condition 'Nope'"):
        datasets.drug_reviews(condition="Nope")


def test_drug_review_pool_in_corpus_mode(cache):
    pool = datasets.drug_review_pool(
        "weight gain on birth control",
        condition="Birth Control",
        size=64,
        overlap=16,
        top_n=10,
        cache_dir=cache,
    )
    assert len(pool) == 10 and pool.tokenizer == "cl100k"
    assert pool.extra["condition"] == "Birth Control"
    assert all(chunk.metadata["doc_id"].startswith("review-") for chunk in pool.chunks)


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
