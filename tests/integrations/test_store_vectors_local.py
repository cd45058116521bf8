"""The LangChain adapters read the vectors a Chroma store (langchain_chroma, in memory) and a
FAISS store (langchain_community) hold: a query costs one embedding, no document is
embedded, and the picks are the library's on the same vectors."""

from __future__ import annotations

import warnings

import chromadb
import faiss
import numpy as np
import pytest
from adapter_checks import BUDGET, TOP_K, check_picks, expected
from langchain_chroma import Chroma
from langchain_core.documents import Document
from lc_checks import Counting, chunk_ids, documents_of, want_for

from adagres import embed_texts
from adagres.integrations.langchain import AdagresCompressor, AdagresRetriever
from adagres.integrations.langchain_vectors import stored_vectors

with warnings.catch_warnings():  # the package announces its sunset on import
    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_community.docstore.in_memory import InMemoryDocstore
    from langchain_community.vectorstores import FAISS

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def model() -> Counting:
    return Counting()


def chroma_store(demo, model, space: str) -> Chroma:
    client = chromadb.EphemeralClient(chromadb.config.Settings(anonymized_telemetry=False))
    store = Chroma(
        collection_name=f"demo-{space}",
        embedding_function=model,
        client=client,
        collection_metadata={"hnsw:space": space},
    )
    store.add_documents(documents_of(demo), ids=demo.ids)
    return store


@pytest.fixture(scope="module")
def chroma(demo, model) -> Chroma:
    """Chroma's default space (l2) keeps the vectors as given."""
    return chroma_store(demo, model, "l2")


def faiss_store(demo, model) -> FAISS:
    return FAISS.from_documents(documents_of(demo), model, ids=demo.ids)


@pytest.fixture(scope="module")
def faiss_flat(demo, model) -> FAISS:
    return faiss_store(demo, model)


def texts_of(documents: list[Document]) -> list[str]:
    return [doc.page_content for doc in documents]


@pytest.mark.parametrize("name", ["chroma", "faiss_flat"])
def test_a_query_costs_one_embedding_and_no_document(request, demo, name):
    store = request.getfixturevalue(name)
    model = store.embeddings
    base = store.as_retriever(search_kwargs={"k": TOP_K})
    pool = base.invoke(demo.query)
    assert len(pool) == TOP_K
    retriever = AdagresRetriever(base_retriever=base, budget=BUDGET)
    model.reset()
    result = retriever.select_for(demo.query)
    assert (model.queries, model.documents) == (1, 0)
    check_picks(chunk_ids(result.documents), chunk_ids(pool), want_for(pool, demo.query))
    # What the store gives back is the model's float32 values, bit for bit, in pool order.
    stored = np.asarray(stored_vectors([store], pool))
    assert np.array_equal(stored, embed_texts(texts_of(pool)))


@pytest.mark.parametrize("name", ["chroma", "faiss_flat"])
def test_a_compressor_given_the_store_embeds_only_the_query(request, demo, name):
    store = request.getfixturevalue(name)
    model = Counting()
    pool = store.as_retriever(search_kwargs={"k": TOP_K}).invoke(demo.query)
    compressor = AdagresCompressor(embeddings=model, vector_store=store, budget=BUDGET)
    picked = compressor.compress_documents(pool, demo.query)
    assert (model.queries, model.documents) == (1, 0)
    check_picks(chunk_ids(picked), chunk_ids(pool), want_for(pool, demo.query))


@pytest.mark.parametrize("name", ["chroma", "faiss_flat"])
def test_documents_the_store_does_not_hold_have_no_vector(request, demo, name):
    store = request.getfixturevalue(name)
    documents = [Document("x", id=demo.ids[5]), Document("y", id="elsewhere"), Document("z")]
    found = stored_vectors([store], documents)
    assert np.array_equal(np.asarray(found[0]), embed_texts([demo.texts[5]])[0])
    assert found[1:] == [None, None]


def test_a_cosine_chroma_collection_gives_its_normalised_vectors(demo):
    """A cosine collection keeps each vector re-normalised in float32 (a last-bit change):
    the picks are the library's on the vectors the store holds."""
    model = Counting()
    store = chroma_store(demo, model, "cosine")
    base = store.as_retriever(search_kwargs={"k": TOP_K})
    pool = base.invoke(demo.query)
    held = np.asarray(stored_vectors([store], pool))
    assert np.allclose(held, embed_texts(texts_of(pool)), rtol=0, atol=1e-7)
    model.reset()
    result = AdagresRetriever(base_retriever=base, budget=BUDGET).select_for(demo.query)
    assert (model.queries, model.documents) == (1, 0)
    want = expected(embed_texts([demo.query])[0], held, texts_of(pool))
    check_picks(chunk_ids(result.documents), chunk_ids(pool), want)


def test_faiss_positions_follow_adds_and_deletes(demo, model):
    store = faiss_store(demo, model)
    first = [Document(demo.texts[i], id=demo.ids[i]) for i in (0, 40, 87)]
    assert np.array_equal(np.asarray(stored_vectors([store], first)), embed_texts(texts_of(first)))
    store.delete(ids=[demo.ids[0], demo.ids[1]])  # every later position moves down by two
    store.add_texts(["A late addition about zebrafish fins."], ids=["late"])
    later = [Document(demo.texts[87], id=demo.ids[87]), Document("", id="late")]
    found = stored_vectors([store], [*later, first[0]])
    want = embed_texts([demo.texts[87], "A late addition about zebrafish fins."])
    assert np.array_equal(np.asarray(found[:2]), want)
    assert found[2] is None  # deleted


def test_an_index_that_cannot_reconstruct_falls_back_to_embedding(demo):
    """An IVF index keeps no direct map: its documents are embedded, the picks unchanged."""
    model = Counting()
    vectors = embed_texts(demo.texts)
    quantizer = faiss.IndexFlatL2(vectors.shape[1])
    index = faiss.IndexIVFFlat(quantizer, vectors.shape[1], 1)
    index.train(vectors)
    store = FAISS(model, index, InMemoryDocstore(), {})
    store.add_embeddings(
        list(zip(demo.texts, vectors.tolist(), strict=True)), demo.metadatas, ids=demo.ids
    )
    base = store.as_retriever(search_kwargs={"k": TOP_K})
    pool = base.invoke(demo.query)
    model.reset()
    result = AdagresRetriever(base_retriever=base, budget=BUDGET).select_for(demo.query)
    assert (model.queries, model.documents) == (1, TOP_K)
    check_picks(chunk_ids(result.documents), chunk_ids(pool), want_for(pool, demo.query))
