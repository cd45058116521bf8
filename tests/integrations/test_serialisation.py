"""Each adapter saved and loaded in its framework's own way picks exactly what the original
picks (LangChain dumpd/load, LlamaIndex to_dict/from_dict and to_json/from_json); the
saved forms hold no store, and a callable tokenizer is refused in one line."""

from __future__ import annotations

import json

import pytest
from adapter_checks import BUDGET, TOP_K
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_core.documents import Document
from langchain_core.load import Serializable, dumpd, dumps, load
from langchain_core.vectorstores import InMemoryVectorStore
from llama_index.core import VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.schema import TextNode

from adagres import Settings
from adagres.errors import InputError
from adagres.integrations.langchain import (
    AdagresCompressor,
    AdagresRetriever,
    PackagedMiniLM,
    QueryCache,
)
from adagres.integrations.llamaindex import AdagresPostprocessor, PackagedMiniLMEmbedding

pytestmark = pytest.mark.model

SETTINGS = Settings(lam=0.4, policy="skip")
ALLOWED: list[type[Serializable]] = [
    AdagresCompressor,
    AdagresRetriever,
    PackagedMiniLM,
    QueryCache,
]


@pytest.fixture(scope="module")
def lc_store(demo) -> InMemoryVectorStore:
    store = InMemoryVectorStore(PackagedMiniLM())
    store.add_documents(
        [
            Document(page_content=text, metadata=meta, id=doc_id)
            for doc_id, text, meta in zip(demo.ids, demo.texts, demo.metadatas, strict=True)
        ]
    )
    return store


@pytest.fixture(scope="module")
def index(demo) -> VectorStoreIndex:
    nodes = [
        TextNode(id_=node_id, text=text, metadata=meta)
        for node_id, text, meta in zip(demo.ids, demo.texts, demo.metadatas, strict=True)
    ]
    return VectorStoreIndex(nodes=nodes, embed_model=PackagedMiniLMEmbedding())


def ids(documents) -> list[str]:
    return [doc.id for doc in documents]


def test_langchain_compressor_survives_dumpd_and_load(lc_store, demo):
    compressor = AdagresCompressor(
        embeddings=PackagedMiniLM(),
        budget=BUDGET,
        preset="paper",
        settings=SETTINGS,
        tokenizer="words",
    )
    data = dumpd(compressor)
    assert data["type"] == "constructor"
    assert data["id"] == ["adagres", "integrations", "langchain", "AdagresCompressor"]
    assert data["kwargs"]["settings"] == SETTINGS.as_dict()
    assert data["kwargs"]["embeddings"]["id"][-1] == "PackagedMiniLM"
    with pytest.raises(ValueError, match="Invalid namespace"):
        load(data, allowed_objects=ALLOWED)  # adagres is not a namespace LangChain trusts
    loaded = load(
        json.loads(dumps(compressor)), allowed_objects=ALLOWED, valid_namespaces=["adagres"]
    )
    assert isinstance(loaded, AdagresCompressor) and isinstance(loaded.embeddings, PackagedMiniLM)
    assert loaded.options() == compressor.options()
    base = lc_store.as_retriever(search_kwargs={"k": TOP_K})
    first, again = (
        ContextualCompressionRetriever(base_compressor=c, base_retriever=base).invoke(demo.query)
        for c in (compressor, loaded)
    )
    assert 2 <= len(first) < TOP_K and ids(again) == ids(first)


def test_langchain_retriever_is_saved_without_its_base_retriever(lc_store, demo):
    base = lc_store.as_retriever(search_kwargs={"k": TOP_K})
    retriever = AdagresRetriever(base_retriever=base, budget=BUDGET, strategy="mmr")
    data = dumpd(retriever)
    assert data["type"] == "constructor" and "base_retriever" not in data["kwargs"]
    assert len(json.dumps(data)) < 600
    loaded = load(data, allowed_objects=ALLOWED, valid_namespaces=["adagres"])
    with pytest.raises(InputError, match=r"^base_retriever: not set"):
        loaded.invoke(demo.query)
    ready = loaded.model_copy(update={"base_retriever": base})
    first = retriever.invoke(demo.query)
    assert 2 <= len(first) < TOP_K and ids(ready.invoke(demo.query)) == ids(first)


def test_langchain_callable_tokenizer_is_refused_in_one_line():
    compressor = AdagresCompressor(embeddings=PackagedMiniLM(), budget=BUDGET, tokenizer=len)
    with pytest.raises(InputError) as caught:
        dumpd(compressor)
    message = str(caught.value)
    assert message.startswith("tokenizer: a callable tokenizer cannot be serialised")
    assert "\n" not in message and "'cl100k'" in message


def test_llamaindex_json_holds_no_store_and_round_trips_with_settings(index, demo, tmp_path):
    postprocessor = AdagresPostprocessor(
        budget=BUDGET,
        preset="paper",
        settings=SETTINGS,
        tokenizer="words",
        embed_model=PackagedMiniLMEmbedding(),
        vector_store=index.vector_store,
        record_to=tmp_path / "runs.jsonl",
    )
    text = postprocessor.to_json()
    assert len(text) < 1000  # the store's 32 vectors are not in it
    saved = json.loads(text)
    assert "vector_store" not in saved and saved["settings"] == SETTINGS.as_dict()
    assert saved["embed_model"]["class_name"] == "PackagedMiniLMEmbedding"
    assert saved["record_to"] == str(tmp_path / "runs.jsonl")

    from_json = AdagresPostprocessor.from_json(text, vector_store=index.vector_store)
    from_dict = AdagresPostprocessor.from_dict(
        postprocessor.to_dict(), vector_store=index.vector_store
    )
    for loaded in (from_json, from_dict):
        assert loaded.options() == postprocessor.options()
        assert isinstance(loaded.embed_model, PackagedMiniLMEmbedding)
        assert loaded.vector_store is index.vector_store

    def picks(p: AdagresPostprocessor) -> list[str]:
        engine = index.as_query_engine(
            llm=MockLLM(), similarity_top_k=TOP_K, node_postprocessors=[p]
        )
        return [n.node.node_id for n in engine.query(demo.query).source_nodes]

    first = picks(postprocessor)
    assert 2 <= len(first) < TOP_K
    assert picks(from_json) == first and picks(from_dict) == first


def test_llamaindex_unknown_model_and_callable_tokenizer_are_named():
    saved = AdagresPostprocessor(budget=BUDGET, embed_model=PackagedMiniLMEmbedding()).to_dict()
    saved["embed_model"] = {**saved["embed_model"], "class_name": "SomeRemoteEmbedding"}
    with pytest.raises(InputError, match=r"^embed_model: cannot rebuild 'SomeRemoteEmbedding'"):
        AdagresPostprocessor.from_dict(saved)
    given = PackagedMiniLMEmbedding()
    assert AdagresPostprocessor.from_dict(saved, embed_model=given).embed_model is given
    with pytest.raises(InputError, match=r"^tokenizer: a callable tokenizer cannot be serialised"):
        AdagresPostprocessor(budget=BUDGET, tokenizer=len).to_json()


def test_langchain_query_cache_survives_dumpd_and_load_without_its_queries():
    cache = QueryCache(embeddings=PackagedMiniLM(), size=8)
    cache.embed_query("kept, not saved")
    data = dumpd(cache)
    assert data["id"] == ["adagres", "integrations", "langchain", "QueryCache"]
    assert "kept, not saved" not in json.dumps(data)
    again = load(data, valid_namespaces=["adagres"], allowed_objects=ALLOWED)
    assert isinstance(again, QueryCache) and isinstance(again.embeddings, PackagedMiniLM)
    assert again.size == 8
    assert again.embed_query("a query") == PackagedMiniLM().embed_query("a query")
