"""Haystack: overlapping splits of DocumentSplitter come back stitched from a pipeline."""

from __future__ import annotations

import os

os.environ["HAYSTACK_TELEMETRY_ENABLED"] = "False"  # before haystack is imported

import dataclasses

import pytest
from haystack import Document, Pipeline
from haystack.components.preprocessors import DocumentSplitter
from haystack.components.retrievers.in_memory import InMemoryEmbeddingRetriever
from haystack.document_stores.in_memory import InMemoryDocumentStore
from packing_checks import (
    DOC,
    NOTES,
    QUERY_VECTOR,
    RECOMMENDED,
    core,
    union_budget,
    vector,
    words,
)

from adagres.core import baselines
from adagres.integrations.haystack import AdagresSelector
from adagres.pools.io import load_pools


def documents(offsets: bool) -> list[Document]:
    """The first four splits of DOC, then unrelated notes, each with its hand-made vector."""
    splitter = DocumentSplitter(split_by="word", split_length=30, split_overlap=12)
    splits = splitter.run([Document(content=DOC, meta={"file": "doc.txt"})])["documents"][:4]
    if not offsets:
        splits = [dataclasses.replace(d, meta={"file": "doc.txt"}) for d in splits]
    notes = [Document(content=text, meta={"file": f"note{i}"}) for i, text in enumerate(NOTES)]
    return [dataclasses.replace(d, embedding=vector(rank)) for rank, d in enumerate(splits + notes)]


def retrieved(docs: list[Document], selector: AdagresSelector) -> list[Document]:
    store = InMemoryDocumentStore(embedding_similarity_function="dot_product")
    store.write_documents(docs)
    pipe = Pipeline()
    pipe.add_component(
        "retriever", InMemoryEmbeddingRetriever(store, top_k=len(docs), return_embedding=True)
    )
    pipe.add_component("adagres", selector)
    pipe.connect("retriever.documents", "adagres.documents")
    out = pipe.run(
        {
            "retriever": {"query_embedding": QUERY_VECTOR},
            "adagres": {"query_embedding": QUERY_VECTOR},
        }
    )
    found: list[Document] = out["adagres"]["documents"]
    return found


@pytest.mark.parametrize("offsets", [True, False], ids=["split_idx_start", "shared-edges"])
def test_two_overlapping_splits_are_one_document_paid_for_once(offsets, tmp_path):
    docs = documents(offsets)
    texts = [d.content or "" for d in docs]
    union, budget = union_budget((DOC.index(texts[0]), texts[0]), (DOC.index(texts[1]), texts[1]))
    (doc,) = retrieved(docs, AdagresSelector(budget, tokenizer="words"))
    assert (doc.content or "").rstrip() == union and doc.id == f"{docs[0].id}+{docs[1].id}"
    assert doc.meta["adagres_chunks"] == [docs[0].id, docs[1].id]
    assert doc.meta["adagres_tokens"] == budget == words(union)
    assert doc.meta["file"] == "doc.txt" and doc.meta["adagres_step"] == 1
    assert doc.embedding is None and doc.score == pytest.approx(0.9)  # the best of the two
    if offsets:
        assert (
            doc.meta["split_idx_start"] == 0 and doc.meta["source_id"] == docs[0].meta["source_id"]
        )

    record = tmp_path / "runs.jsonl"
    got = AdagresSelector(budget, tokenizer="words", record_to=record).select(
        docs, QUERY_VECTOR, "which words?"
    )
    sources = [d.meta.get("source_id") for d in docs]
    starts = [d.meta.get("split_idx_start") for d in docs]
    want = core(texts, sources, starts, range(len(docs)), budget)
    assert got.selection is not None and got.selection.indices == want.indices == (0, 1)
    assert got.selection.passages == want.passages and got.selection.tokens_used == budget
    # the recorded pool places its documents alike: the app selects the same passage again
    [saved] = load_pools(record)
    assert saved.extra["selection"]["passages"] == [[docs[0].id, docs[1].id]]
    if offsets:
        assert saved.prepared.spans is not None
        assert saved.prepared.spans.layout.origin[:2] == ("offset", "offset")
    again = baselines.run_prepared(
        RECOMMENDED.strategy, saved.prepared, budget, RECOMMENDED.settings, texts=list(saved.texts)
    )
    assert again.indices == (0, 1) and again.passages == want.passages

    settings = RECOMMENDED.settings.replace(packing=False)
    apart = retrieved(docs, AdagresSelector(budget, tokenizer="words", settings=settings))
    ids = [d.id for d in apart]
    assert ids[0] == docs[0].id and docs[1].id not in ids  # apart, the second does not fit
    assert all("adagres_chunks" not in d.meta for d in apart)
