"""LangChain: overlapping windows of RecursiveCharacterTextSplitter come back stitched."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_text_splitters import RecursiveCharacterTextSplitter
from packing_checks import (
    DOC,
    NOTES,
    QUERY,
    QUERY_VECTOR,
    RECOMMENDED,
    core,
    union_budget,
    vector,
    words,
)

from adagres.core import baselines
from adagres.integrations.langchain import AdagresCompressor
from adagres.pools.io import load_pools


class Table(Embeddings):
    """Vectors looked up by text (made by hand: see packing_checks)."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.vectors[text] for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return QUERY_VECTOR


class Events(BaseCallbackHandler):
    """The custom events a run sends (what LangSmith and any handler see)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict]] = []

    def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
        self.events.append((name, data))


def pool(add_start_index: bool) -> list[Document]:
    """The first two windows of DOC (splitter order), then unrelated notes."""
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=120, chunk_overlap=50, add_start_index=add_start_index
    )
    windows = splitter.split_documents([Document(DOC, metadata={"source": "doc.txt"})])
    notes = [Document(text, metadata={"source": f"note{i}"}) for i, text in enumerate(NOTES)]
    return [d.model_copy(update={"id": f"d{i}"}) for i, d in enumerate(windows[:4] + notes)]


@pytest.mark.parametrize("add_start_index", [True, False], ids=["start_index", "shared-edges"])
def test_two_overlapping_windows_are_one_document_paid_for_once(add_start_index, tmp_path):
    documents = pool(add_start_index)
    texts = [d.page_content for d in documents]
    starts = [DOC.index(text) for text in texts[:2]]
    union, budget = union_budget((starts[0], texts[0]), (starts[1], texts[1]))
    embeddings = Table({text: vector(rank) for rank, text in enumerate(texts)})
    record = tmp_path / "runs.jsonl"
    adapter = AdagresCompressor(
        budget=budget, embeddings=embeddings, tokenizer="words", record_to=record
    )
    handler = Events()
    got = adapter.select(documents, QUERY, callbacks=[handler])

    (doc,) = got.documents
    assert doc.page_content == union and doc.id == "d0+d1"
    assert doc.metadata["adagres_chunks"] == ["d0", "d1"]
    assert doc.metadata["adagres_tokens"] == budget == words(union)
    assert doc.metadata["source"] == "doc.txt" and doc.metadata["adagres_step"] == 1
    if add_start_index:
        assert doc.metadata["start_index"] == 0
    sources = [d.metadata["source"] if add_start_index else None for d in documents]
    offsets = [d.metadata.get("start_index") for d in documents]
    want = core(texts, sources, offsets, range(len(texts)), budget)
    assert got.selection is not None and got.selection.indices == want.indices == (0, 1)
    assert got.selection.passages == want.passages and got.selection.tokens_used == budget
    # the recorded pool places its chunks alike: the app selects the same passage again
    [saved_pool] = load_pools(record)
    assert saved_pool.extra["selection"]["passages"] == [["d0", "d1"]]
    again = baselines.run_prepared(
        RECOMMENDED.strategy,
        saved_pool.prepared,
        budget,
        RECOMMENDED.settings,
        texts=list(saved_pool.texts),
    )
    assert again.indices == (0, 1) and again.passages == want.passages
    [(name, values)] = handler.events
    saved = words(texts[0]) + words(texts[1]) - budget
    assert name == "adagres.selection" and saved > 0
    assert (values["adagres.merges"], values["adagres.tokens_saved"]) == (1, saved)

    apart = adapter.model_copy(
        update={"settings": RECOMMENDED.settings.replace(packing=False), "record_to": None}
    ).select(documents, QUERY)
    ids = [d.id for d in apart.documents]
    assert ids[0] == "d0" and "d1" not in ids  # apart, the second window does not fit
    assert all("adagres_chunks" not in d.metadata for d in apart.documents)
