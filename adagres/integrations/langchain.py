"""AdaGReS in LangChain: a document compressor, a retriever wrapper, an offline embedding.

- :class:`AdagresCompressor` is a ``BaseDocumentCompressor``: put it in
  ``langchain_classic.retrievers.ContextualCompressionRetriever`` (or call
  ``compress_documents``). A compressor is handed documents and the query only, so it
  embeds both with its ``embeddings``; use the model the store was built with, and the
  vectors are the store's (:class:`PackagedMiniLM` reads them from its disk cache).
- :class:`AdagresRetriever` is a ``BaseRetriever`` that wraps any retriever. When that
  retriever is a vector-store retriever over an ``InMemoryVectorStore``, the stored vectors
  are used as they are; otherwise the documents are embedded with ``embeddings`` (default:
  the vector store's own embedding object).
- :class:`PackagedMiniLM` is an ``Embeddings`` over the installed all-MiniLM-L6-v2
  (:func:`adagres.pools.embed.embed_texts`): offline, cached on disk.

The record of a run: each selected document comes back as a copy whose metadata adds
``adagres_step`` (1 = picked first) and ``adagres_gain`` (its marginal gain when picked);
documents keep their id and every metadata key. Nothing is kept on the adapter, so one
instance serves concurrent queries: ``select(documents, query)`` /
``select_for(query)`` return the full :class:`~adagres.Selection` beside the documents,
and ``record_to`` appends the pool and the selection to a pool-set file the app opens.
Options (``budget``, ``preset``, ``strategy``, ``settings``, ``tokenizer``,
``record_to``) are those of :func:`adagres.integrations.common.options`; tokens are
counted on ``page_content``.
"""

from __future__ import annotations

from .extras import langchain as _framework  # noqa: F401  (or MissingExtra, naming the extra)

# isort: split

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun, Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever, RetrieverLike
from langchain_core.vectorstores import InMemoryVectorStore, VectorStoreRetriever
from pydantic import ConfigDict, InstanceOf

from ..errors import InputError
from ..pools.embed import DEFAULT_MODEL, embed_texts
from . import common
from .fields import OptionFields

__all__ = ["AdagresCompressor", "AdagresRetriever", "PackagedMiniLM"]

FRAMEWORK = "langchain"


class PackagedMiniLM(Embeddings):
    """The packaged all-MiniLM-L6-v2 as LangChain ``Embeddings`` (384-d unit vectors).

    Runs offline from the installed wheel; every text's vector is cached on disk, so the
    same text always gives the same bits (the store's and the adapter's vectors agree).
    """

    model_name = DEFAULT_MODEL

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text."""
        return embed_texts(texts).tolist() if texts else []

    def embed_query(self, text: str) -> list[float]:
        """The query's vector (the same model: MiniLM has no query prefix)."""
        vector: list[float] = embed_texts([text])[0].tolist()
        return vector


class AdagresCompressor(OptionFields, BaseDocumentCompressor):
    """Keep the documents AdaGReS selects within ``budget`` tokens, in pick order.

    ``embeddings`` embeds the documents and the query (the compressor is not told the
    store's vectors). Use it as the ``base_compressor`` of a
    ``ContextualCompressionRetriever``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    embeddings: InstanceOf[Embeddings]

    def compress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        """The selected documents, in pick order, with ``adagres_step`` / ``adagres_gain``."""
        return self.select(documents, query).documents

    def select(self, documents: Sequence[Document], query: str) -> common.Selected[Document]:
        """The selected documents and the full selection record."""
        documents = list(documents)
        if not documents:
            return common.Selected([], None)
        vectors = self.embeddings.embed_documents([doc.page_content for doc in documents])
        query_vector = self.embeddings.embed_query(query)
        return _select(self, documents, query, vectors, query_vector, self.embeddings)


class AdagresRetriever(OptionFields, BaseRetriever):
    """Retrieve with ``base_retriever``, then keep what AdaGReS selects within ``budget``.

    Give ``base_retriever`` a pool larger than the budget holds (``search_kwargs={"k": 30}``).
    Vectors: the stored ones of an ``InMemoryVectorStore`` behind a vector-store retriever,
    else the documents embedded with ``embeddings`` (default: the store's embedding object);
    the query is embedded with the same object.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    base_retriever: RetrieverLike
    embeddings: InstanceOf[Embeddings] | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        documents = self.base_retriever.invoke(query, config={"callbacks": run_manager.get_child()})
        return self._choose(list(documents), query).documents

    def select_for(self, query: str) -> common.Selected[Document]:
        """Retrieve for ``query`` and select: the documents and the full selection record."""
        return self._choose(list(self.base_retriever.invoke(query)), query)

    def _choose(self, documents: list[Document], query: str) -> common.Selected[Document]:
        if not documents:
            return common.Selected([], None)
        embeddings = self._embeddings()
        vectors = _stored_vectors(self.base_retriever, documents)
        if vectors is None:
            vectors = embeddings.embed_documents([doc.page_content for doc in documents])
        return _select(self, documents, query, vectors, embeddings.embed_query(query), embeddings)

    def _embeddings(self) -> Embeddings:
        if self.embeddings is not None:
            return self.embeddings
        store = getattr(self.base_retriever, "vectorstore", None)
        found = getattr(store, "embeddings", None)
        if isinstance(found, Embeddings):
            return found
        raise InputError(
            f"embeddings: the base retriever ({type(self.base_retriever).__name__}) has no "
            f"vector store embeddings to embed the query with; pass embeddings="
        )


def _select(
    adapter: OptionFields,
    documents: Sequence[Document],
    query: str,
    vectors: Sequence[Any],
    query_vector: Sequence[float],
    embeddings: Embeddings,
) -> common.Selected[Document]:
    """Select from the documents with their vectors; copies of the picks carry the record."""
    labels = [f"{doc.id!r} (position {i})" for i, doc in enumerate(documents)]
    retrieved = common.Retrieved(
        query=query,
        texts=tuple(doc.page_content for doc in documents),
        embeddings=common.matrix(vectors, labels),
        query_embedding=common.matrix([query_vector], ["query"])[0],
        ids=tuple(doc.id for doc in documents),
        metadata=tuple(doc.metadata for doc in documents),
        embedding_model=_model_name(embeddings),
    )
    selection = common.select(adapter.options(), retrieved, framework=FRAMEWORK)
    chosen = [
        documents[i].model_copy(update={"metadata": {**documents[i].metadata, **extra}})
        for i, extra in common.picks(selection)
    ]
    return common.Selected(chosen, selection)


def _stored_vectors(retriever: Any, documents: list[Document]) -> list[Any] | None:
    """The vectors an ``InMemoryVectorStore`` holds for ``documents`` (all or None)."""
    if not isinstance(retriever, VectorStoreRetriever):
        return None
    store = retriever.vectorstore
    if not isinstance(store, InMemoryVectorStore):
        return None
    rows = [store.store.get(doc.id) if doc.id else None for doc in documents]
    if any(row is None for row in rows):
        return None
    return [row["vector"] for row in rows if row is not None]


def _model_name(embeddings: Any) -> str | None:
    name = getattr(embeddings, "model_name", None) or getattr(embeddings, "model", None)
    return name if isinstance(name, str) else None
