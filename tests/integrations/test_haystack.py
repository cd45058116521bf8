"""Haystack: AdagresSelector after an InMemoryEmbeddingRetriever in a Pipeline over an
InMemoryDocumentStore of the demo texts, embedded by the packaged MiniLM."""

from __future__ import annotations

import os

os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"  # before haystack is imported

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
from haystack import Document, Pipeline
from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

from adagres import Settings, embed_texts
from adagres.embed.tokens import count_tokens
from adagres.errors import InputError
from adagres.integrations.haystack import AdagresSelector

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def store(demo) -> InMemoryDocumentStore:
    store = InMemoryDocumentStore()
    vectors = embed_texts(demo.texts)
    store.write_documents(
        [
            Document(id=doc_id, content=text, meta=meta, embedding=vector.tolist())
            for doc_id, text, meta, vector in zip(
                demo.ids, demo.texts, demo.metadatas, vectors, strict=True
            )
        ]
    )
    return store


@pytest.fixture(scope="module")
def query_vector(demo) -> list[float]:
    vector: list[float] = embed_texts([demo.query])[0].tolist()
    return vector


def contents(documents: list[Document]) -> list[str]:
    """The documents' texts (every document of the store has one)."""
    texts = []
    for doc in documents:
        assert doc.content is not None
        texts.append(doc.content)
    return texts


def pipeline(store: InMemoryDocumentStore, selector: AdagresSelector) -> Pipeline:
    pipe = Pipeline()
    pipe.add_component(
        "retriever", InMemoryEmbeddingRetriever(store, top_k=TOP_K, return_embedding=True)
    )
    pipe.add_component("adagres", selector)
    pipe.connect("retriever.documents", "adagres.documents")
    return pipe


def pool_of(store: InMemoryDocumentStore, query_vector: list[float]) -> list[Document]:
    retriever = InMemoryEmbeddingRetriever(store, top_k=TOP_K, return_embedding=True)
    documents: list[Document] = retriever.run(query_embedding=query_vector)["documents"]
    return documents


def test_selector_in_a_pipeline_selects_from_the_stored_vectors(
    store, demo, query_vector, tmp_path
):
    record = tmp_path / "runs.jsonl"
    pipe = pipeline(store, AdagresSelector(budget=BUDGET, record_to=record))
    out = pipe.run({"query_embedding": query_vector, "query": demo.query})
    picked = out["adagres"]["documents"]

    documents = pool_of(store, query_vector)
    # The retriever hands over the stored float32 vectors exactly.
    stored = {doc.id: doc.embedding for doc in store.filter_documents()}
    assert all(doc.embedding == stored[doc.id] for doc in documents)
    want = expected(query_vector, [doc.embedding for doc in documents], contents(documents))
    pool_ids = [doc.id for doc in documents]
    check_picks([doc.id for doc in picked], pool_ids, want)
    check_annotations([doc.meta for doc in picked], want, [documents[i].meta for i in want.indices])
    assert [doc.score for doc in picked] == [documents[i].score for i in want.indices]
    assert all("adagres_step" not in doc.meta for doc in store.filter_documents())
    check_record(record, pool_ids, want, "haystack")


def test_options_survive_dumps_and_loads_with_the_module_allowed(store, query_vector):
    """A saved pipeline loads only with ``adagres.integrations`` allowed, and the loaded
    selector picks what the original picks; the tokenizer travels by name."""
    settings = Settings(policy="skip", scale=0.5)
    selector = AdagresSelector(budget=300, strategy="mmr", settings=settings, tokenizer="words")
    pipe = pipeline(store, selector)
    text = pipe.dumps()
    with pytest.raises(Exception, match="adagres"):
        Pipeline.loads(text)  # not allow-listed
    again = Pipeline.loads(text, allowed_modules=["adagres.integrations"])
    loaded = again.get_component("adagres")
    assert isinstance(loaded, AdagresSelector) and loaded.options() == selector.options()
    from_dict = Pipeline.from_dict(pipe.to_dict(), allowed_modules=["adagres.integrations"])
    rebuilt = from_dict.get_component("adagres")
    assert isinstance(rebuilt, AdagresSelector) and rebuilt.options() == selector.options()
    documents = pool_of(store, query_vector)
    tokens = count_tokens(contents(documents), "words").tolist()
    want = expected(
        query_vector,
        [doc.embedding for doc in documents],
        [],
        budget=300,
        strategy="mmr",
        settings=settings,
        tokens=tokens,
    )
    picked = again.run({"query_embedding": query_vector})["adagres"]["documents"]
    first = pipe.run({"query_embedding": query_vector})["adagres"]["documents"]
    assert [doc.id for doc in picked] == [doc.id for doc in first]
    check_picks([doc.id for doc in picked], [doc.id for doc in documents], want)


def test_a_callable_tokenizer_cannot_be_saved():
    selector = AdagresSelector(budget=300, tokenizer=len)
    with pytest.raises(InputError, match=r"^tokenizer: a callable tokenizer cannot be serialised"):
        selector.to_dict()


def test_documents_without_embeddings_and_records_without_a_query_are_named(
    store, query_vector, tmp_path
):
    documents = InMemoryEmbeddingRetriever(store, top_k=5).run(query_embedding=query_vector)
    with pytest.raises(
        InputError,
        match=r"position 0\): has no embedding; retrieve with "
        r"return_embedding=True",
    ):
        AdagresSelector(budget=BUDGET).run(documents["documents"], query_vector)
    recording = AdagresSelector(budget=BUDGET, record_to=tmp_path / "runs.jsonl")
    with pytest.raises(InputError, match="query: record_to needs the query text"):
        recording.run(pool_of(store, query_vector), query_vector)
    assert AdagresSelector(budget=BUDGET).run([], query_vector) == {"documents": []}


def test_readme_example_runs_and_selects_like_the_library(demo, query_vector):
    namespace = {"texts": demo.texts, "metadatas": demo.metadatas, "query": demo.query}
    exec(readme_example("adagres.integrations.haystack"), namespace)
    documents = pool_of(namespace["store"], query_vector)
    want = expected(query_vector, [doc.embedding for doc in documents], contents(documents))
    check_picks([doc.id for doc in namespace["docs"]], [doc.id for doc in documents], want)
