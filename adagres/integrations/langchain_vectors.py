"""Where the LangChain adapters find vectors: the stores a retriever searches, read by id.

A store gives the vectors it holds for retrieved documents when it is

- an ``InMemoryVectorStore`` (by ``Document.id``);
- a ``langchain_milvus.Milvus`` store (by its primary key, which its documents carry in
  their metadata; one query per call, ``output_fields`` the vector field);
- any store with a method ``vectors_for(documents) -> list[list[float] | None]`` (the
  :class:`VectorSource` protocol: ``None`` for a document it does not hold).

:func:`stores_of` finds the stores behind a retriever: a ``VectorStoreRetriever``'s
``vectorstore``, and those of the retrievers an ``EnsembleRetriever`` (``retrievers``) or a
``ContextualCompressionRetriever`` (``base_retriever``) wraps. :func:`search_by_vector` runs
a vector-store retriever's search with a query vector computed once (``similarity`` and
``mmr`` search types), so the store does not embed the query again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from langchain_core.documents import Document
from langchain_core.vectorstores import InMemoryVectorStore, VectorStore, VectorStoreRetriever

__all__ = ["VectorSource", "search_by_vector", "searches_by_vector", "stored_vectors", "stores_of"]

Vector = Sequence[float]


@runtime_checkable
class VectorSource(Protocol):
    """A store that gives the vectors it holds for documents it returned."""

    def vectors_for(self, documents: Sequence[Document]) -> list[Vector | None]:
        """One vector per document, ``None`` where the store does not hold it."""
        ...


def stores_of(retriever: Any) -> list[Any]:
    """The vector stores behind ``retriever`` (outermost first, each once)."""
    found: list[Any] = []
    pending = [retriever]
    while pending:
        item = pending.pop(0)
        store = item.vectorstore if isinstance(item, VectorStoreRetriever) else None
        if store is not None and all(store is not seen for seen in found):
            found.append(store)
        pending.extend(getattr(item, "retrievers", None) or [])
        inner = getattr(item, "base_retriever", None)
        if inner is not None:
            pending.append(inner)
    return found


def stored_vectors(stores: Sequence[Any], documents: Sequence[Document]) -> list[Vector | None]:
    """Each document's vector from the first store that holds it, else ``None``."""
    vectors: list[Vector | None] = [None] * len(documents)
    for store in stores:
        missing = [i for i, vector in enumerate(vectors) if vector is None]
        if not missing:
            break
        found = _read(store, [documents[i] for i in missing])
        for i, vector in zip(missing, found, strict=True):
            vectors[i] = vector
    return vectors


def searches_by_vector(retriever: Any) -> bool:
    """Whether :func:`search_by_vector` can run ``retriever``'s search."""
    return isinstance(retriever, VectorStoreRetriever) and retriever.search_type in (
        "similarity",
        "mmr",
    )


def search_by_vector(
    retriever: Any, query_vector: list[float], **kwargs: Any
) -> list[Document] | None:
    """What ``retriever.invoke(query)`` returns, searched with ``query_vector``; ``None``
    when ``retriever`` is no vector-store retriever of the ``similarity`` or ``mmr`` type."""
    if not isinstance(retriever, VectorStoreRetriever):
        return None
    search = {**retriever.search_kwargs, **kwargs}
    store: VectorStore = retriever.vectorstore
    if retriever.search_type == "similarity":
        return store.similarity_search_by_vector(query_vector, **search)
    if retriever.search_type == "mmr":
        return store.max_marginal_relevance_search_by_vector(query_vector, **search)
    return None


def _read(store: Any, documents: list[Document]) -> list[Vector | None]:
    if isinstance(store, VectorSource):
        return list(store.vectors_for(documents))
    if isinstance(store, InMemoryVectorStore):
        rows = [store.store.get(doc.id) if doc.id else None for doc in documents]
        return [None if row is None else row["vector"] for row in rows]
    if type(store).__module__.startswith("langchain_milvus"):
        return _milvus(store, documents)
    return [None] * len(documents)


def _milvus(store: Any, documents: list[Document]) -> list[Vector | None]:
    """A Milvus store's vectors by primary key (the key its documents' metadata holds)."""
    fields = store.client.describe_collection(store.collection_name)["fields"]
    primary = next(field["name"] for field in fields if field.get("is_primary"))
    if len(store.vector_fields) != 1:
        return [None] * len(
            documents
        )  # several vector fields: which one the search used is unknown
    vector_field = store.vector_fields[0]
    keys = [doc.metadata.get(primary, doc.id) for doc in documents]
    wanted = [key for key in keys if key is not None]
    if not wanted:
        return [None] * len(documents)
    rows = store.client.query(
        store.collection_name, ids=wanted, output_fields=[primary, vector_field]
    )
    by_key = {row[primary]: row[vector_field] for row in rows}
    return [None if key is None else by_key.get(key) for key in keys]
