"""Fuzzing what a pipeline hands over in code: ``pool_from_retrieval`` / ``dump_retrieval``
with hostile texts, scores, embeddings, ids and metadata, and the embedding and token
helpers with hostile texts."""

from __future__ import annotations

import numpy as np
from fuzzing import hostile_text, hostile_values, outcome, real_text, time_limit
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from adagres.embed.models import embed_texts
from adagres.embed.tokens import TOKENIZERS, count_tokens
from adagres.pools.io import dump_retrieval, load_pool, pool_from_retrieval
from adagres.pools.ready import ensure_embeddings, ensure_token_counts

pytestmark = time_limit(2.0)
ONE_FOLDER = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


class Document:
    """A retrieved object of no known framework: a text under some attribute."""

    def __init__(self, text, metadata=None):
        self.page_content, self.metadata = text, metadata


items = st.one_of(
    real_text,
    hostile_text,
    st.builds(
        Document,
        hostile_text | real_text,
        st.none() | st.dictionaries(hostile_text, hostile_values, max_size=2),
    ),
    st.dictionaries(
        st.sampled_from(["text", "id", "score", "page_content"]), hostile_values, max_size=3
    ),
    hostile_values,
)
scores = st.one_of(
    st.none(),
    st.lists(
        st.floats() | st.integers(-(2**70), 2**70) | st.sampled_from(["0.5", None, "x"]), max_size=5
    ),
)
embeddings = st.one_of(
    st.none(),
    st.lists(st.lists(st.floats(), min_size=1, max_size=3), max_size=5),
    st.sampled_from([[["a"]], [[None]], "abc", [[1e308, 1e308]], np.ones((2, 2, 2))]),
)


@ONE_FOLDER
@given(
    texts=st.lists(items, min_size=0, max_size=4),
    scores=scores,
    embeddings=embeddings,
    query_embedding=st.none() | st.lists(st.floats(), max_size=3) | st.just("q"),
    ids=st.none() | st.lists(hostile_text | st.integers(), max_size=5),
    metadata=st.none()
    | st.lists(st.none() | st.dictionaries(hostile_text, hostile_values, max_size=2), max_size=5),
    query=hostile_text | real_text,
)
# Found by this test (ValueError, TypeError, IndexError before): now PoolErrors naming them.
@example(
    texts=["t"],
    scores=["x"],
    embeddings=None,
    query_embedding=None,
    ids=None,
    metadata=None,
    query="q",
)
@example(
    texts=["t"],
    scores=[None],
    embeddings=None,
    query_embedding=None,
    ids=None,
    metadata=None,
    query="q",
)
@example(
    texts=["t"],
    scores=[],
    embeddings=None,
    query_embedding=None,
    ids=None,
    metadata=None,
    query="q",
)
@example(
    texts=["t"],
    scores=None,
    embeddings=[["a"]],
    query_embedding=None,
    ids=None,
    metadata=None,
    query="q",
)
@example(
    texts=[3],
    scores=None,
    embeddings=None,
    query_embedding=None,
    ids=None,
    metadata=None,
    query="q",
)
def test_pool_from_retrieval(
    texts, scores, embeddings, query_embedding, ids, metadata, query, tmp_path
):
    options = {
        "embeddings": embeddings,
        "query_embedding": query_embedding,
        "ids": ids,
        "metadata": metadata,
    }
    pool, _ = outcome(lambda: pool_from_retrieval(query, texts, scores, **options), "<retrieval>")
    if pool is None:
        return
    path, _ = outcome(lambda: dump_retrieval(tmp_path / "p.json", query, texts, scores, **options))
    assert path is not None  # what builds a pool also saves it
    assert load_pool(path) == pool


@ONE_FOLDER
@given(texts=st.lists(hostile_text | real_text, max_size=4), tokenizer=st.sampled_from(TOKENIZERS))
def test_counting_and_embedding_any_texts(texts, tokenizer, fake_encoder, tmp_path):
    counts, _ = outcome(lambda: count_tokens(texts, tokenizer))
    if counts is not None:
        assert counts.shape == (len(texts),) and (counts >= 0).all()
    vectors, _ = outcome(lambda: embed_texts(texts, cache_dir=tmp_path))
    if vectors is not None:
        assert vectors.shape == (len(texts), 64) and np.isfinite(vectors).all()


@ONE_FOLDER
@given(texts=st.lists(real_text, min_size=1, max_size=4), tokenizer=st.sampled_from(TOKENIZERS))
def test_every_loaded_pool_embeds_and_counts(texts, tokenizer, fake_encoder, tmp_path):
    pool = pool_from_retrieval("a query", texts)
    embedded = ensure_embeddings(pool, cache_dir=tmp_path)
    counted = ensure_token_counts(embedded, tokenizer)
    assert counted.prepared.tokens.shape == (len(texts),) and counted.tokenizer == tokenizer
    assert counted.token_counts is not None
    assert counted.token_counts.tolist() == count_tokens(texts, tokenizer).tolist()
