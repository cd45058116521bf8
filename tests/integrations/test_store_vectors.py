"""The adapters use the vectors a store holds and embed the query once: embed calls counted
with a counting model, over an InMemoryVectorStore, a Milvus Lite store
(langchain_milvus), an EnsembleRetriever of both, and a LlamaIndex query engine."""

from __future__ import annotations

import numpy as np
import pytest
from adapter_checks import BUDGET, TOP_K, check_picks, expected
from langchain_classic.retrievers import ContextualCompressionRetriever, EnsembleRetriever
from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore
from langchain_milvus import Milvus
from lc_checks import Counting, chunk_ids, documents_of, want_for
from llama_index.core import VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.schema import MetadataMode, TextNode
from llama_index.core.vector_stores import SimpleVectorStore

from adagres import embed_texts
from adagres.integrations.langchain import AdagresCompressor, AdagresRetriever, QueryCache
from adagres.integrations.langchain_vectors import stored_vectors
from adagres.integrations.llamaindex import AdagresPostprocessor, PackagedMiniLMEmbedding

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def model() -> Counting:
    """One model object behind both stores, as an application holds it."""
    return Counting()


@pytest.fixture(scope="module")
def memory(demo, model) -> InMemoryVectorStore:
    store = InMemoryVectorStore(model)
    store.add_documents(documents_of(demo))
    return store


@pytest.fixture(scope="module")
def milvus(demo, model, tmp_path_factory) -> Milvus:
    store = Milvus(
        model,
        connection_args={"uri": str(tmp_path_factory.mktemp("milvus") / "lc.db")},
        collection_name="demo",
        auto_id=False,
        consistency_level="Strong",
        index_params={"index_type": "FLAT", "metric_type": "COSINE"},
    )
    store.add_documents(documents_of(demo), ids=demo.ids)
    return store


@pytest.mark.parametrize("name", ["memory", "milvus"])
def test_a_vector_store_query_costs_one_embedding(request, demo, name):
    store = request.getfixturevalue(name)
    model = store.embeddings
    base = store.as_retriever(search_kwargs={"k": TOP_K})
    pool = base.invoke(demo.query)
    retriever = AdagresRetriever(base_retriever=base, budget=BUDGET)
    model.reset()
    result = retriever.select_for(demo.query)
    assert (model.queries, model.documents) == (1, 0)
    check_picks(chunk_ids(result.documents), chunk_ids(pool), want_for(pool, demo.query))
    # The vectors read from the store are the model's float32 values, bit for bit.
    stored = np.asarray(stored_vectors([store], pool), dtype=np.float32)
    assert np.array_equal(stored, embed_texts([doc.page_content for doc in pool]))


def test_milvus_documents_are_read_by_primary_key_and_unknown_ones_are_none(milvus, demo):
    found = stored_vectors([milvus], [Document("x", metadata={"pk": demo.ids[3]}), Document("y")])
    assert np.array_equal(np.asarray(found[0], dtype=np.float32), embed_texts([demo.texts[3]])[0])
    assert found[1] is None


def ensemble_of(memory: InMemoryVectorStore, milvus: Milvus) -> EnsembleRetriever:
    return EnsembleRetriever(
        retrievers=[
            memory.as_retriever(search_kwargs={"k": TOP_K}),
            milvus.as_retriever(search_kwargs={"k": 12}),
        ],
        weights=[0.6, 0.4],
    )


def test_an_ensemble_over_one_model_embeds_the_query_once(memory, milvus, model, demo):
    ensemble = ensemble_of(memory, milvus)
    pool = ensemble.invoke(demo.query)
    retriever = AdagresRetriever(base_retriever=ensemble, budget=BUDGET)
    model.reset()
    result = retriever.select_for(demo.query)
    assert (model.queries, model.documents) == (1, 0)
    check_picks(chunk_ids(result.documents), chunk_ids(pool), want_for(pool, demo.query))


def test_an_ensemble_embeds_no_document_its_stores_hold(memory, milvus, model, demo):
    """With another model object the stores search as they do (each embeds the query)."""
    ensemble = ensemble_of(memory, milvus)
    pool = ensemble.invoke(demo.query)
    own = Counting()
    retriever = AdagresRetriever(base_retriever=ensemble, budget=BUDGET, embeddings=own)
    model.reset()
    result = retriever.select_for(demo.query)
    assert (model.queries, own.queries, model.documents + own.documents) == (2, 1, 0)
    check_picks(chunk_ids(result.documents), chunk_ids(pool), want_for(pool, demo.query))


def test_a_compressor_given_the_store_embeds_only_the_query(memory, demo):
    model = Counting()
    pool = memory.as_retriever(search_kwargs={"k": TOP_K}).invoke(demo.query)
    compressor = AdagresCompressor(embeddings=model, vector_store=memory, budget=BUDGET)
    picked = compressor.compress_documents(pool, demo.query)
    assert (model.queries, model.documents) == (1, 0)
    check_picks(chunk_ids(picked), chunk_ids(pool), want_for(pool, demo.query))


@pytest.mark.parametrize("cached", [True, False])
def test_a_compression_retriever_sharing_a_query_cache_embeds_the_query_once(demo, cached):
    """The store's search embeds the query; the compressor finds it in the shared cache
    (without one, LangChain's compression retriever embeds it twice)."""
    model = Counting()
    shared = QueryCache(embeddings=model) if cached else model
    store = InMemoryVectorStore(shared)
    store.add_documents(documents_of(demo))
    base = store.as_retriever(search_kwargs={"k": TOP_K})
    compressor = AdagresCompressor(embeddings=shared, vector_store=store, budget=BUDGET)
    compressed = ContextualCompressionRetriever(base_compressor=compressor, base_retriever=base)
    model.reset()
    picked = compressed.invoke(demo.query)
    assert (model.queries, model.documents) == (1 if cached else 2, 0)
    pool = base.invoke(demo.query)
    check_picks(chunk_ids(picked), chunk_ids(pool), want_for(pool, demo.query))


def test_a_query_cache_keeps_the_last_queries_by_text():
    model = Counting()
    cache = QueryCache(embeddings=model, size=2)
    first = cache.embed_query("one")
    first.append(9.0)  # a caller's change does not reach what is kept
    assert cache.embed_query("one") == embed_texts(["one"])[0].tolist()
    cache.embed_query("two")
    cache.embed_query("one")  # "one" used last: "two" is the older
    cache.embed_query("three")  # evicts "two"
    assert model.queries == 3
    assert cache.embed_query("one") == embed_texts(["one"])[0].tolist()
    assert model.queries == 3
    cache.embed_query("two")
    assert model.queries == 4
    assert cache.embed_documents(["one", "one"]) == embed_texts(["one", "one"]).tolist()
    assert (model.queries, model.documents) == (4, 2)


class CountingEmbedding(PackagedMiniLMEmbedding):
    """LlamaIndex: the packaged model, counting query and text embeddings."""

    queries: int = 0
    texts: int = 0

    def _get_query_embedding(self, query: str) -> list[float]:
        self.queries += 1
        return super()._get_query_embedding(query)

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        self.texts += len(texts)
        return super()._get_text_embeddings(texts)


def test_llamaindex_query_costs_one_embedding(demo):
    model = CountingEmbedding()
    nodes = [
        TextNode(id_=node_id, text=text, metadata=meta)
        for node_id, text, meta in zip(demo.ids, demo.texts, demo.metadatas, strict=True)
    ]
    index = VectorStoreIndex(nodes=nodes, embed_model=model)
    postprocessor = AdagresPostprocessor(
        budget=BUDGET, embed_model=model, vector_store=index.vector_store
    )
    engine = index.as_query_engine(
        llm=MockLLM(), similarity_top_k=TOP_K, node_postprocessors=[postprocessor]
    )
    model.queries = model.texts = 0
    picked = engine.query(demo.query).source_nodes
    assert (model.queries, model.texts) == (1, 0)
    pool = index.as_retriever(similarity_top_k=TOP_K).retrieve(demo.query)
    texts = [n.node.get_content(metadata_mode=MetadataMode.LLM) for n in pool]
    store = index.vector_store
    assert isinstance(store, SimpleVectorStore)  # the index's default, in memory
    want = expected(embed_texts([demo.query])[0], [store.get(n.node.node_id) for n in pool], texts)
    check_picks([n.node.node_id for n in picked], [n.node.node_id for n in pool], want)


class Holding:
    """A store of the VectorSource protocol: it holds the vector of document 'b' only."""

    def vectors_for(self, documents):
        return [[0.0, 2.0] if doc.id == "b" else None for doc in documents]


def test_stores_are_asked_in_order_for_what_the_earlier_ones_lack():
    memory = InMemoryVectorStore(Counting())
    memory.store.update(
        {
            "a": {"id": "a", "vector": [1.0, 0.0], "text": "x", "metadata": {}},
            "b": {"id": "b", "vector": [9.0, 9.0], "text": "y", "metadata": {}},
        }
    )
    documents = [Document("x", id="a"), Document("y", id="b"), Document("z", id="c")]
    assert stored_vectors([Holding(), memory], documents) == [[1.0, 0.0], [0.0, 2.0], None]
