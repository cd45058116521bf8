"""Pools from retrieval frameworks' output: LangChain documents, LlamaIndex nodes, Haystack
documents, and pipeline objects given to ``pool_from_retrieval``."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pool_io_support import write

from adagres.errors import PoolError
from adagres.pools.io import dump_retrieval, load_pool, pool_from_retrieval

# --------------------------------------------------------------------------- other shapes


def test_langchain_documents_with_query_argument(tmp_path):
    docs = [
        {
            "page_content": "Paris is in France.",
            "metadata": {"source": "a.txt", "page": 2},
            "type": "Document",
        },
        {"id": "doc-7", "page_content": "Lyon too.", "metadata": {}, "type": "Document"},
        {
            "lc": 1,
            "type": "constructor",
            "id": ["langchain", "schema", "document", "Document"],
            "kwargs": {"page_content": "Nice as well.", "metadata": {"title": "Nice"}},
        },
    ]
    pool = load_pool(write(tmp_path, docs), query="French cities")
    assert pool.query == "French cities"
    assert pool.ids == ("c0", "doc-7", "c2")
    assert pool.texts == ("Paris is in France.", "Lyon too.", "Nice as well.")
    assert pool.chunks[0].metadata == {"source": "a.txt", "page": 2}
    assert pool.chunks[0].source == "a.txt" and pool.chunks[2].title == "Nice"
    with pytest.raises(PoolError, match=r"a list of documents has no query; give query="):
        load_pool(tmp_path / "pool.json")


def test_langchain_document_score_pairs(tmp_path):
    pairs = {
        "query": "q",
        "documents": [
            [{"page_content": "a", "metadata": {}}, 0.8],
            [{"page_content": "b", "metadata": {}}, 0.3],
        ],
    }
    scores = load_pool(write(tmp_path, pairs)).scores
    assert scores is not None and scores.tolist() == [0.8, 0.3]


def test_llamaindex_nodes_with_score(tmp_path):
    nodes = {
        "query": "q",
        "source_nodes": [
            {
                "node": {
                    "id_": "n1",
                    "text": "first",
                    "metadata": {"file_name": "a.md"},
                    "embedding": None,
                    "class_name": "TextNode",
                },
                "score": 0.7,
                "class_name": "NodeWithScore",
            },
            {
                "node": {"id_": "n2", "text_resource": {"text": "second"}, "metadata": {}},
                "score": 0.2,
            },
        ],
    }
    pool = load_pool(write(tmp_path, nodes))
    assert pool.ids == ("n1", "n2") and pool.texts == ("first", "second")
    assert pool.scores is not None and pool.scores.tolist() == [0.7, 0.2]
    assert pool.chunks[0].metadata == {"file_name": "a.md"}


def test_haystack_documents_one_per_jsonl_line(tmp_path):
    lines: list[dict[str, Any]] = [
        {"id": "h1", "content": "alpha", "meta": {"k": 1}, "score": 0.5, "embedding": [1.0, 0.0]},
        {"id": "h2", "content": "beta", "meta": {}, "score": None, "embedding": [0.0, 1.0]},
    ]
    path = tmp_path / "docs.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    with pytest.raises(PoolError, match=r"no query_embedding and no embedding_model"):
        load_pool(path, query="greek letters")
    lines[0].pop("embedding"), lines[1].pop("embedding")
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    pool = load_pool(path, query="greek letters")
    assert pool.ids == ("h1", "h2") and pool.chunks[0].metadata == {"k": 1}
    assert pool.chunks[1].score is None


def test_pool_from_retrieval_accepts_pipeline_objects(tmp_path):
    class LangChainDoc:
        def __init__(self, text, metadata):
            self.page_content, self.metadata, self.id = text, metadata, None

    class Node:
        def __init__(self, text):
            self.text, self.metadata, self.id_ = text, {"f": 1}, "node-1"

    class NodeWithScore:
        def __init__(self, node, score):
            self.node, self.score = node, score

    pool = pool_from_retrieval(
        "q", [LangChainDoc("lc text", {"s": 2}), NodeWithScore(Node("li text"), 0.4), "plain"]
    )
    assert pool.ids == ("c0", "node-1", "c2")
    assert pool.chunks[1].score == 0.4 and pool.chunks[0].metadata == {"s": 2}
    path = dump_retrieval(tmp_path / "r.json", "q", ["x", "y"], [0.2, 0.1], ids=["p", "q"])
    scores = load_pool(path).scores
    assert scores is not None and scores.tolist() == [0.2, 0.1]
