"""Shared by the LangChain store tests: a model that counts what it embeds, the demo as
documents, and the library's selection on the packaged model's vectors."""

from __future__ import annotations

from collections.abc import Sequence

from adapter_checks import expected
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from adagres import embed_texts
from adagres.core.result import Selection


def doc_id(document: Document) -> str:
    """The id the vector store gave ``document`` (every document it returns has one)."""
    assert document.id is not None
    return document.id


class Counting(Embeddings):
    """The packaged MiniLM, counting query calls and embedded documents."""

    def __init__(self) -> None:
        self.queries = 0
        self.documents = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents += len(texts)
        return embed_texts(texts).tolist() if texts else []

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        vector: list[float] = embed_texts([text])[0].tolist()
        return vector

    def reset(self) -> None:
        self.queries = self.documents = 0


def documents_of(demo) -> list[Document]:
    return [
        Document(page_content=text, metadata=meta, id=doc_id)
        for doc_id, text, meta in zip(demo.ids, demo.texts, demo.metadatas, strict=True)
    ]


def chunk_ids(documents: Sequence[Document]) -> list[str]:
    return [doc.metadata["chunk"] for doc in documents]


def want_for(documents: list[Document], query: str) -> Selection:
    """The library's selection on the packaged model's vectors of these documents (the
    same bits as any store holds: the model's float32 values, cached)."""
    texts = [doc.page_content for doc in documents]
    return expected(embed_texts([query])[0], embed_texts(texts), texts)
