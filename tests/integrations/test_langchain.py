"""LangChain: AdagresCompressor in a ContextualCompressionRetriever and AdagresRetriever
over an InMemoryVectorStore of the demo texts, embedded by the packaged MiniLM."""

from __future__ import annotations

import pytest
from adapter_checks import (
    BUDGET,
    TOP_K,
    check_annotations,
    check_picks,
    check_record,
    expected,
    readme_example,
)
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda
from langchain_core.vectorstores import InMemoryVectorStore
from lc_checks import doc_id

from adagres.core.presets import PRESETS
from adagres.errors import InputError
from adagres.integrations.langchain import AdagresCompressor, AdagresRetriever, PackagedMiniLM

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def store(demo) -> InMemoryVectorStore:
    store = InMemoryVectorStore(PackagedMiniLM())
    documents = [
        Document(page_content=text, metadata=meta, id=doc_id)
        for doc_id, text, meta in zip(demo.ids, demo.texts, demo.metadatas, strict=True)
    ]
    store.add_documents(documents)
    return store


def pool_of(store: InMemoryVectorStore, query: str):
    """The base retriever's documents and the vectors the store holds for them."""
    documents = store.as_retriever(search_kwargs={"k": TOP_K}).invoke(query)
    return documents, [store.store[doc_id(doc)]["vector"] for doc in documents]


def test_compressor_in_contextual_compression_retriever(store, demo, tmp_path):
    record = tmp_path / "runs.jsonl"
    compressor = AdagresCompressor(embeddings=store.embeddings, budget=BUDGET, record_to=record)
    retriever = ContextualCompressionRetriever(
        base_compressor=compressor,
        base_retriever=store.as_retriever(search_kwargs={"k": TOP_K}),
    )
    picked = retriever.invoke(demo.query)

    documents, vectors = pool_of(store, demo.query)
    texts = [doc.page_content for doc in documents]
    want = expected(store.embeddings.embed_query(demo.query), vectors, texts)
    pool_ids = [doc_id(doc) for doc in documents]
    check_picks([doc_id(doc) for doc in picked], pool_ids, want)
    check_annotations(
        [doc.metadata for doc in picked], want, [documents[i].metadata for i in want.indices]
    )
    check_record(record, pool_ids, want, "langchain")
    # The store's documents are untouched: the picks are copies.
    assert all("adagres_step" not in row["metadata"] for row in store.store.values())


@pytest.mark.parametrize(
    ("options", "strategy", "settings"),
    [
        ({}, "topk_budget", PRESETS["recommended"].settings),
        ({"preset": "paper"}, "adagres", PRESETS["paper"].settings),
        ({"preset": "paper", "strategy": "mmr"}, "mmr", PRESETS["paper"].settings),
    ],
)
def test_retriever_uses_the_stored_vectors_and_the_chosen_strategy(
    store, demo, options, strategy, settings
):
    retriever = AdagresRetriever(
        base_retriever=store.as_retriever(search_kwargs={"k": TOP_K}), budget=BUDGET, **options
    )
    result = retriever.select_for(demo.query)
    documents, vectors = pool_of(store, demo.query)
    texts = [doc.page_content for doc in documents]
    want = expected(
        store.embeddings.embed_query(demo.query),
        vectors,
        texts,
        strategy=strategy,
        settings=settings,
    )
    check_picks([doc_id(doc) for doc in result.documents], [doc_id(doc) for doc in documents], want)
    assert result.selection is not None and result.selection.strategy == strategy
    assert [doc.id for doc in retriever.invoke(demo.query)] == [d.id for d in result.documents]


class Counting(PackagedMiniLM):
    """The packaged model, counting the documents it is asked to embed."""

    documents_embedded: int = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents_embedded += len(texts)
        return super().embed_documents(texts)


def test_retriever_embeds_no_document_that_the_store_holds(store, demo):
    embeddings = Counting()
    base = store.as_retriever(search_kwargs={"k": TOP_K})
    AdagresRetriever(base_retriever=base, embeddings=embeddings, budget=BUDGET).invoke(demo.query)
    assert embeddings.documents_embedded == 0
    compressor = AdagresCompressor(embeddings=embeddings, budget=BUDGET)
    compressor.compress_documents(base.invoke(demo.query), demo.query)
    assert embeddings.documents_embedded == TOP_K  # a compressor is not told the vectors


def words(text: str) -> int:
    return len(text.split())


def test_retriever_reembeds_when_the_base_retriever_is_no_vector_store(store, demo):
    """Any runnable retriever: the documents are embedded again (from the disk cache: the
    same bits as the store's vectors); here with a callable tokenizer."""
    documents, vectors = pool_of(store, demo.query)
    retriever = AdagresRetriever(
        base_retriever=RunnableLambda(lambda query: documents),
        embeddings=PackagedMiniLM(),
        budget=300,
        tokenizer=words,
    )
    picked = retriever.invoke(demo.query)
    tokens = [words(doc.page_content) for doc in documents]
    texts = [doc.page_content for doc in documents]
    want = expected(
        store.embeddings.embed_query(demo.query),
        vectors,
        texts,
        budget=300,
        tokens=tokens,
        counter=words,
    )
    check_picks([doc_id(doc) for doc in picked], [doc_id(doc) for doc in documents], want)
    tokens_of = {doc.id: count for doc, count in zip(documents, tokens, strict=True)}
    assert sum(tokens_of[doc.id] for doc in picked) <= 300


def test_bad_options_and_a_retriever_without_embeddings_are_named():
    with pytest.raises(InputError, match="strategy: expected one of"):
        AdagresCompressor(embeddings=PackagedMiniLM(), budget=100, strategy="best")
    with pytest.raises(InputError, match=r"record_to: expected a \.jsonl file"):
        AdagresCompressor(embeddings=PackagedMiniLM(), budget=100, record_to="runs.csv")
    lonely = AdagresRetriever(base_retriever=RunnableLambda(lambda q: [Document("x")]), budget=9)
    with pytest.raises(InputError, match="embeddings: the base retriever"):
        lonely.invoke("q")


def test_readme_example_runs_and_selects_like_the_library(demo):
    namespace = {"texts": demo.texts, "metadatas": demo.metadatas, "query": demo.query}
    exec(readme_example("adagres.integrations.langchain"), namespace)
    store = namespace["store"]
    for name in ("docs", "compressed_docs"):
        picked = namespace[name]
        documents, vectors = pool_of(store, demo.query)
        strategy = "topk_budget" if name == "docs" else "adagres"
        preset = PRESETS["recommended" if name == "docs" else "paper"]
        want = expected(
            store.embeddings.embed_query(demo.query),
            vectors,
            [doc.page_content for doc in documents],
            strategy=strategy,
            settings=preset.settings,
        )
        check_picks([doc_id(doc) for doc in picked], [doc_id(doc) for doc in documents], want)
