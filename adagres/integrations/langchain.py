"""AdaGReS in LangChain: a document compressor, a retriever wrapper, offline embeddings.

- :class:`AdagresCompressor` is a ``BaseDocumentCompressor`` for
  ``langchain_classic.retrievers.ContextualCompressionRetriever``: handed documents and the
  query only, it embeds both with its ``embeddings`` (use the model the store was built
  with), or reads the documents' vectors from ``vector_store=``.
- :class:`AdagresRetriever` is a ``BaseRetriever`` that wraps any retriever. Over a
  vector-store retriever it embeds the query once and searches the store with that vector;
  documents are read from the stores behind the retriever
  (:mod:`adagres.integrations.langchain_vectors`, also through an ``EnsembleRetriever``);
  only what no store holds is embedded with ``embeddings`` (default: the store's own).
- :class:`PackagedMiniLM` is an ``Embeddings`` over the installed all-MiniLM-L6-v2
  (:func:`adagres.embed.models.embed_texts`): offline, cached on disk.
- :class:`QueryCache` wraps any ``Embeddings`` and keeps its last queries' vectors by text.

Each selected document comes back as a copy whose metadata adds ``adagres_step`` and
``adagres_gain``, with its id and every metadata key. Documents that overlap in their
source (a splitter's ``metadata["start_index"]`` in ``metadata["source"]`` and
``metadata["page"]``; else the text they share at their edges) are stitched when packing
is on and come back as one document per passage (:mod:`adagres.integrations.passages`).
Nothing is kept on the adapter: ``select(documents, query)`` / ``select_for(query)`` return
the full :class:`~adagres.Selection` beside the documents. Options are those of
:func:`adagres.integrations.common.options`; tokens are counted on ``page_content``.

Tracing: each selection is a child run ``adagres.selection`` of the retriever's (or the
compression retriever's) run, its metadata the options, its outputs
:func:`adagres.integrations.tracing.attributes`, which it also sends as the custom event
``adagres.selection``: any callback handler (LangSmith's too) sees them.

Serialisation: the four classes are LangChain-serialisable under the namespace
``["adagres", "integrations", "langchain"]``; ``load`` takes them with
``valid_namespaces=["adagres"]`` and ``allowed_objects`` naming them. Neither a vector
store nor a base retriever is saved (nor the queries a :class:`QueryCache` kept): pass
them again after loading.
"""

from __future__ import annotations

from .extras import langchain as _framework  # noqa: F401  (or MissingExtra, naming the extra)

# isort: split

import contextvars
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun, Callbacks
from langchain_core.callbacks.manager import dispatch_custom_event
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.embeddings import Embeddings
from langchain_core.load.serializable import Serializable
from langchain_core.retrievers import BaseRetriever, RetrieverLike
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.vectorstores import VectorStore
from pydantic import Field, InstanceOf, PrivateAttr

from ..embed.models import DEFAULT_MODEL, embed_texts
from ..errors import InputError
from . import common, tracing
from .fields import Checked, OptionFields
from .langchain_vectors import search_by_vector, searches_by_vector, stored_vectors, stores_of
from .passages import Placed, Places, joined_id, located

__all__ = ["NAMESPACE", "AdagresCompressor", "AdagresRetriever", "PackagedMiniLM", "QueryCache"]

FRAMEWORK = "langchain"
#: The LangChain namespace of the adapters (``load`` needs ``valid_namespaces=["adagres"]``).
NAMESPACE = ["adagres", "integrations", "langchain"]

# Where select_for() collects what its own invoke() selected (per call, not per adapter).
_COLLECT: contextvars.ContextVar[list[common.Selected[Document]] | None] = contextvars.ContextVar(
    "adagres_collect", default=None
)


class _InNamespace(Serializable):
    """Serialisable by LangChain's ``dumpd`` under this project's namespace (``load`` needs
    ``valid_namespaces=["adagres"]``)."""

    @classmethod
    def is_lc_serializable(cls) -> bool:
        return True

    @classmethod
    def get_lc_namespace(cls) -> list[str]:
        return NAMESPACE


class PackagedMiniLM(_InNamespace, Embeddings):
    """The packaged all-MiniLM-L6-v2 as LangChain ``Embeddings`` (384-d unit vectors).

    Runs offline from the installed wheel; every text's vector is cached on disk, so the
    same text always gives the same bits (the store's and the adapter's vectors agree).
    """

    model_name: str = DEFAULT_MODEL

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text."""
        return embed_texts(texts).tolist() if texts else []

    def embed_query(self, text: str) -> list[float]:
        """The query's vector (the same model: MiniLM has no query prefix)."""
        vector: list[float] = embed_texts([text])[0].tolist()
        return vector


class QueryCache(Checked, _InNamespace, Embeddings):
    """``embeddings`` that keep the vectors of the last ``size`` queries, by their text.

    Give one object to the store and to an :class:`AdagresCompressor`: in a
    ``ContextualCompressionRetriever`` the store embeds the query, and the compressor then
    finds its vector here instead of embedding it again. Documents pass straight through.
    Safe to share between threads (two threads asking for the same new query at once may
    each embed it).
    """

    embeddings: InstanceOf[Embeddings]
    size: int = Field(default=32, gt=0, strict=True)  # strict: size=True is not 1
    _vectors: OrderedDict[str, list[float]] = PrivateAttr(default_factory=OrderedDict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def model_name(self) -> str | None:
        """The wrapped model's name, where it has one."""
        return _model_name(self.embeddings)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """The wrapped model's vectors (not kept)."""
        return self.embeddings.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        """The query's vector: kept from an earlier call with the same text, else embedded."""
        with self._lock:
            kept = self._vectors.get(text)
            if kept is not None:
                self._vectors.move_to_end(text)
                return list(kept)
        vector = list(self.embeddings.embed_query(text))
        with self._lock:
            self._vectors[text] = vector
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)
        return list(vector)


class _Saved(OptionFields, _InNamespace):
    """LangChain serialisation of the options: saved as JSON values, the tokenizer by name."""

    @property
    def lc_attributes(self) -> dict[str, Any]:
        saved = self.saved_options()
        return {key: value for key, value in saved.items() if key in self.model_fields_set}

    def to_json(self) -> Any:
        self.saved_options()  # a callable tokenizer: one-line InputError naming it
        return super().to_json()


class AdagresCompressor(_Saved, BaseDocumentCompressor):
    """Keep the documents AdaGReS selects within ``budget`` tokens, in pick order.

    ``embeddings`` embeds the query and the documents that ``vector_store`` (optional: the
    store the base retriever searches) does not hold. Use it as the ``base_compressor`` of
    a ``ContextualCompressionRetriever``; with one :class:`QueryCache` as the store's and
    the compressor's ``embeddings``, a query is embedded once.
    """

    embeddings: InstanceOf[Embeddings]
    vector_store: InstanceOf[VectorStore] | None = Field(default=None, exclude=True)

    def compress_documents(
        self,
        documents: Sequence[Document],
        query: str,
        callbacks: Callbacks | None = None,
    ) -> Sequence[Document]:
        """The selected documents, in pick order, with ``adagres_step`` / ``adagres_gain``."""
        return self.select(documents, query, callbacks=callbacks).documents

    def select(
        self, documents: Sequence[Document], query: str, *, callbacks: Callbacks | None = None
    ) -> common.Selected[Document]:
        """The selected documents and the full selection record."""
        documents = list(documents)
        if not documents:
            return common.Selected([], None)
        stores = [] if self.vector_store is None else [self.vector_store]
        vectors = _vectors(stores, documents, self.embeddings)
        query_vector = self.embeddings.embed_query(query)
        return _select(self, documents, query, vectors, query_vector, self.embeddings, callbacks)


class AdagresRetriever(_Saved, BaseRetriever):
    """Retrieve with ``base_retriever``, then keep what AdaGReS selects within ``budget``.

    Give ``base_retriever`` a pool larger than the budget holds (``search_kwargs={"k": 30}``).
    Over a vector-store retriever the query is embedded once; vectors come from the stores
    behind the retriever, else from ``embeddings`` (default: the store's embedding object).
    """

    base_retriever: RetrieverLike | None = Field(default=None, exclude=True)
    embeddings: InstanceOf[Embeddings] | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        chosen = self._choose(query, run_manager)
        collect = _COLLECT.get()
        if collect is not None:
            collect.append(chosen)
        return chosen.documents

    def select_for(
        self, query: str, config: RunnableConfig | None = None
    ) -> common.Selected[Document]:
        """Retrieve for ``query`` and select: the documents and the full selection record
        (a run like ``invoke``'s: callbacks in ``config`` see it)."""
        collect: list[common.Selected[Document]] = []
        token = _COLLECT.set(collect)
        try:
            self.invoke(query, config)
        finally:
            _COLLECT.reset(token)
        return collect[-1]

    def _choose(
        self, query: str, run_manager: CallbackManagerForRetrieverRun
    ) -> common.Selected[Document]:
        if self.base_retriever is None:
            raise InputError(
                "base_retriever: not set (it is not saved); give a loaded AdagresRetriever one: "
                "retriever.model_copy(update={'base_retriever': ...})"
            )
        embeddings = self._embeddings()
        query_vector = embeddings.embed_query(query)
        documents = _retrieve(run_manager, self.base_retriever, query, query_vector, embeddings)
        if not documents:
            return common.Selected([], None)
        vectors = _vectors(stores_of(self.base_retriever), documents, embeddings)
        return _select(
            self, documents, query, vectors, query_vector, embeddings, run_manager.get_child()
        )

    def _embeddings(self) -> Embeddings:
        if self.embeddings is not None:
            return self.embeddings
        for store in stores_of(self.base_retriever):
            found = getattr(store, "embeddings", None)
            if isinstance(found, Embeddings):
                return found
        raise InputError(
            f"embeddings: the base retriever ({type(self.base_retriever).__name__}) has no "
            f"vector store embeddings to embed the query with; pass embeddings="
        )


def _retrieve(
    run_manager: CallbackManagerForRetrieverRun,
    retriever: Any,
    query: str,
    query_vector: list[float],
    embeddings: Embeddings,
) -> list[Document]:
    """What ``retriever.invoke(query)`` returns, with every vector store that embeds with
    ``embeddings`` searched by ``query_vector`` instead (also inside an ``EnsembleRetriever``,
    whose own fusion, ``weighted_reciprocal_rank``, then ranks the lists)."""
    if _same_model(retriever, embeddings):  # searched by vector, reported as its own child run
        child = run_manager.get_child().on_retriever_start(None, query, name=retriever.get_name())
        try:
            found = search_by_vector(retriever, query_vector)
        except Exception as error:
            child.on_retriever_error(error)
            raise
        child.on_retriever_end(found)
        return found
    inner = getattr(retriever, "retrievers", None)
    fuse = getattr(retriever, "weighted_reciprocal_rank", None)
    if inner and callable(fuse) and any(_same_model(r, embeddings) for r in inner):
        lists = [_retrieve(run_manager, r, query, query_vector, embeddings) for r in inner]
        return list(fuse(lists))
    return list(retriever.invoke(query, config={"callbacks": run_manager.get_child()}))


def _same_model(retriever: Any, embeddings: Embeddings) -> bool:
    return searches_by_vector(retriever) and retriever.vectorstore.embeddings is embeddings


def _vectors(stores: Sequence[Any], documents: list[Document], embeddings: Embeddings) -> list[Any]:
    """The stores' vectors for the documents; the rest embedded with ``embeddings``."""
    vectors = stored_vectors(stores, documents)
    missing = [i for i, vector in enumerate(vectors) if vector is None]
    if missing:
        found = embeddings.embed_documents([documents[i].page_content for i in missing])
        found = common.embedded(found, len(missing), embeddings)
        for i, vector in zip(missing, found, strict=True):
            vectors[i] = vector
    return vectors


def _select(
    adapter: OptionFields,
    documents: Sequence[Document],
    query: str,
    vectors: Sequence[Any],
    query_vector: Sequence[float],
    embeddings: Embeddings,
    callbacks: Callbacks | None,
) -> common.Selected[Document]:
    """Select in a child run ``adagres.selection`` (see the module); copies of the picks
    carry the record."""
    labels = [f"{doc.id!r} (position {i})" for i, doc in enumerate(documents)]
    retrieved = common.Retrieved(
        query=query,
        texts=tuple(doc.page_content for doc in documents),
        embeddings=common.matrix(vectors, labels),
        query_embedding=common.matrix([query_vector], ["query"])[0],
        ids=tuple(doc.id for doc in documents),
        metadata=tuple(doc.metadata for doc in documents),
        embedding_model=_model_name(embeddings),
        places=_places(documents),
    )
    chosen = adapter.options()
    made: list[Any] = []

    def run(_: Any, config: RunnableConfig) -> dict[str, Any]:
        selection = common.select(chosen, retrieved, framework=FRAMEWORK)
        made.append(selection)
        values = common.report(chosen, retrieved, selection)
        dispatch_custom_event(tracing.SPAN_NAME, values, config=config)
        return values

    names = ("budget", "strategy", "preset", "tokenizer")
    shown = (chosen.budget, chosen.strategy, chosen.preset or "", chosen.tokenizer_name)
    metadata = {f"{tracing.PREFIX}{name}": value for name, value in zip(names, shown, strict=True)}
    config: RunnableConfig = {"callbacks": callbacks, "metadata": metadata}
    RunnableLambda(run, name=tracing.SPAN_NAME).invoke(
        {"query": query, "documents": len(documents)}, config
    )
    return common.answer(made[0], retrieved, lambda placed: _passage(documents, placed))


def _model_name(embeddings: Any) -> str | None:
    name = getattr(embeddings, "model_name", None) or getattr(embeddings, "model", None)
    return name if isinstance(name, str) else None


def _places(documents: Sequence[Document]) -> Places:
    """Each document's source (``metadata["source"]``, with ``"page"`` where a loader split
    by page: a splitter's offsets count from the page) and offset (``metadata["start_index"]``,
    a splitter's ``add_start_index``)."""
    found = []
    for position, doc in enumerate(documents):
        meta = doc.metadata or {}
        source, page = meta.get("source"), meta.get("page")
        key = (FRAMEWORK, source, page if isinstance(page, int | str) else None)
        where = f"document {doc.id!r} (position {position}), metadata['start_index']"
        found.append((key if isinstance(source, str) else None, meta.get("start_index"), where))
    return located([d.page_content for d in documents], found)


def _passage(documents: Sequence[Document], placed: Placed) -> Document:
    """The document returned for one passage (see :mod:`adagres.integrations.passages`)."""
    first = documents[placed.first]
    update: dict[str, Any] = {"metadata": {**first.metadata, **placed.extra}}
    if placed.stitched:
        update["page_content"] = placed.text
        update["id"] = joined_id([documents[i].id for i in placed.chunks])
    return first.model_copy(update=update)
