"""Where the LangChain adapters find vectors: the stores a retriever searches, read by id.

A store gives the vectors it holds for retrieved documents when it is

- an ``InMemoryVectorStore`` (by ``Document.id``);
- a ``langchain_milvus.Milvus`` store (by its primary key, which its documents carry in
  their metadata; one query per call, ``output_fields`` the vector field);
- a ``langchain_chroma.Chroma`` store (by ``Document.id``; one ``get`` per call with
  ``include=["embeddings"]``);
- a ``langchain_community`` ``FAISS`` store (by ``Document.id``, through
  ``index_to_docstore_id``; ``index.reconstruct`` per document): the vectors its index keeps,
  normalised where the store was built with ``normalize_L2=True`` and approximate where the
  index compresses them (PQ, scalar quantisers); an index that cannot reconstruct (an IVF
  index without a direct map) holds none;
- any store with a method ``vectors_for(documents) -> list[list[float] | None]`` (the
  :class:`VectorSource` protocol: ``None`` for a document it does not hold).

:func:`stores_of` finds the stores behind a retriever: a ``VectorStoreRetriever``'s
``vectorstore``, and those of the retrievers an ``EnsembleRetriever`` (``retrievers``) or a
``ContextualCompressionRetriever`` (``base_retriever``) wraps. :func:`search_by_vector` runs
a vector-store retriever's search with a query vector computed once (``similarity`` and
``mmr`` search types), so the store does not embed the query again.
"""

from __future__ import annotations

import weakref
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


def search_by_vector(retriever: Any, query_vector: list[float]) -> list[Document]:
    """What ``retriever.invoke(query)`` returns, searched with ``query_vector``, for a
    retriever :func:`searches_by_vector` accepts."""
    store: VectorStore = retriever.vectorstore
    if retriever.search_type == "mmr":
        return store.max_marginal_relevance_search_by_vector(
            query_vector, **retriever.search_kwargs
        )
    return store.similarity_search_by_vector(query_vector, **retriever.search_kwargs)


def _read(store: Any, documents: list[Document]) -> list[Vector | None]:
    if isinstance(store, VectorSource):
        return list(store.vectors_for(documents))
    if isinstance(store, InMemoryVectorStore):
        rows = [store.store.get(doc.id) if doc.id else None for doc in documents]
        return [None if row is None else row["vector"] for row in rows]
    module = type(store).__module__
    if module.startswith("langchain_milvus"):
        return _milvus(store, documents)
    if module.startswith("langchain_chroma"):
        return _chroma(store, documents)
    if module.startswith("langchain_community.vectorstores.faiss"):
        return _faiss(store, documents)
    return [None] * len(documents)


def _milvus(store: Any, documents: list[Document]) -> list[Vector | None]:
    """A Milvus store's vectors by primary key (the key its documents' metadata holds)."""
    fields = store.client.describe_collection(store.collection_name)["fields"]
    primary = next(field["name"] for field in fields if field.get("is_primary"))
    if len(store.vector_fields) != 1:  # several vector fields: which one the search used?
        return [None] * len(documents)
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


def _chroma(store: Any, documents: list[Document]) -> list[Vector | None]:
    """A Chroma store's vectors by id (Chroma returns the rows it holds, in its own order)."""
    wanted = list(dict.fromkeys(doc.id for doc in documents if doc.id))
    if not wanted:
        return [None] * len(documents)
    rows = store.get(ids=wanted, include=["embeddings"])
    by_id = dict(zip(rows["ids"], rows["embeddings"], strict=True))
    return [by_id.get(doc.id) if doc.id else None for doc in documents]


# A FAISS store's docstore id -> index position, kept per store with the mapping it was read
# from and its length: an add or a merge lengthens ``index_to_docstore_id``, a delete
# replaces it, and then the table is read again (each position found is checked as well).
_POSITIONS: weakref.WeakKeyDictionary[Any, tuple[dict[int, str], int, dict[str, int]]] = (
    weakref.WeakKeyDictionary()
)


def _faiss(store: Any, documents: list[Document]) -> list[Vector | None]:
    """A FAISS store's vectors, reconstructed from its index at each document's position."""
    positions = _faiss_positions(store, documents)
    try:
        return [None if at is None else store.index.reconstruct(at) for at in positions]
    except RuntimeError:  # an index that keeps no vectors to give back (IVF, no direct map)
        return [None] * len(documents)


def _faiss_positions(store: Any, documents: list[Document]) -> list[int | None]:
    current: dict[int, str] = store.index_to_docstore_id
    known = _POSITIONS.get(store)
    if known is not None and known[0] is current and known[1] == len(current):
        positions = [known[2].get(doc.id) if doc.id else None for doc in documents]
        if all(
            p is None or current.get(p) == doc.id
            for p, doc in zip(positions, documents, strict=True)
        ):
            return positions
    table = {doc_id: int(position) for position, doc_id in current.items()}
    _POSITIONS[store] = (current, len(current), table)
    return [table.get(doc.id) if doc.id else None for doc in documents]
