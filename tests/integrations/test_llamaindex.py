"""LlamaIndex: AdagresPostprocessor in a query engine over a VectorStoreIndex of the demo
texts, embedded by the packaged MiniLM (a BaseEmbedding over adagres.embed_texts)."""

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
from llama_index.core import VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.schema import MetadataMode, TextNode
from llama_index.core.vector_stores import SimpleVectorStore

from adagres.errors import InputError
from adagres.integrations.llamaindex import AdagresPostprocessor, PackagedMiniLMEmbedding

pytestmark = pytest.mark.model


@pytest.fixture(scope="module")
def index(demo) -> VectorStoreIndex:
    nodes = [
        TextNode(id_=node_id, text=text, metadata=meta)
        for node_id, text, meta in zip(demo.ids, demo.texts, demo.metadatas, strict=True)
    ]
    return VectorStoreIndex(nodes=nodes, embed_model=PackagedMiniLMEmbedding())


def pool_of(index: VectorStoreIndex, query: str):
    """The retriever's nodes, the vectors the store holds for them, the texts the LLM gets."""
    nodes = index.as_retriever(similarity_top_k=TOP_K).retrieve(query)
    assert all(n.node.embedding is None for n in nodes)  # why the adapter fetches them
    store = index.vector_store
    assert isinstance(store, SimpleVectorStore)  # the index's default, in memory
    vectors = [store.get(n.node.node_id) for n in nodes]
    texts = [n.node.get_content(metadata_mode=MetadataMode.LLM) for n in nodes]
    return nodes, vectors, texts


def test_postprocessor_in_a_query_engine_uses_the_stored_vectors(index, demo, tmp_path):
    record = tmp_path / "runs.jsonl"
    embed_model = PackagedMiniLMEmbedding()
    postprocessor = AdagresPostprocessor(
        budget=BUDGET, embed_model=embed_model, vector_store=index.vector_store, record_to=record
    )
    engine = index.as_query_engine(
        llm=MockLLM(), similarity_top_k=TOP_K, node_postprocessors=[postprocessor]
    )
    picked = engine.query(demo.query).source_nodes

    nodes, vectors, texts = pool_of(index, demo.query)
    want = expected(embed_model.get_query_embedding(demo.query), vectors, texts)
    pool_ids = [n.node.node_id for n in nodes]
    check_picks([n.node.node_id for n in picked], pool_ids, want)
    check_annotations(
        [n.node.metadata for n in picked], want, [nodes[i].node.metadata for i in want.indices]
    )
    assert [n.score for n in picked] == [nodes[i].score for i in want.indices]
    # The record stays out of what the LLM reads and out of the index's nodes.
    assert all("adagres" not in n.node.get_content(metadata_mode=MetadataMode.LLM) for n in picked)
    assert "adagres_step" not in index.docstore.get_node(pool_ids[0]).metadata
    check_record(record, pool_ids, want, "llamaindex")


def test_without_a_vector_store_the_nodes_are_embedded_again(index, demo):
    """Re-embedding the text the index embedded gives the stored bits (the disk cache), so
    the picks are the same; the query vector is computed when the bundle has none."""
    embed_model = PackagedMiniLMEmbedding()
    nodes, vectors, texts = pool_of(index, demo.query)
    postprocessor = AdagresPostprocessor(budget=BUDGET, embed_model=embed_model, preset="paper")
    picked = postprocessor.postprocess_nodes(nodes, query_str=demo.query)
    want = expected(
        embed_model.get_query_embedding(demo.query),
        vectors,
        texts,
        strategy="adagres",
        settings=postprocessor.options().settings,
    )
    check_picks([n.node.node_id for n in picked], [n.node.node_id for n in nodes], want)


def test_no_query_is_an_error_that_says_what_to_pass(index, demo):
    nodes, _, _ = pool_of(index, demo.query)
    with pytest.raises(InputError, match="query_bundle: AdagresPostprocessor needs the query"):
        AdagresPostprocessor(budget=BUDGET).postprocess_nodes(nodes)
    assert AdagresPostprocessor(budget=BUDGET).postprocess_nodes([], query_str="q") == []


def test_readme_example_runs_and_selects_like_the_library(demo):
    namespace = {"texts": demo.texts, "metadatas": demo.metadatas, "query": demo.query}
    exec(readme_example("adagres.integrations.llamaindex"), namespace)
    index, picked = namespace["index"], namespace["nodes"]
    nodes, vectors, texts = pool_of(index, demo.query)
    want = expected(namespace["embed_model"].get_query_embedding(demo.query), vectors, texts)
    check_picks([n.node.node_id for n in picked], [n.node.node_id for n in nodes], want)
