"""AdaGReS in Haystack: a pipeline component that selects from retrieved documents.

:class:`AdagresSelector` takes the ``documents`` of a retriever and the
``query_embedding`` the retriever searched with, and returns the documents AdaGReS selects
within ``budget`` tokens, in pick order. It uses each document's stored vector as it is,
so the retriever must return them: ``InMemoryEmbeddingRetriever(store, top_k=30,
return_embedding=True)`` (a document without an embedding is an error that says so).
Tokens are counted on ``content``. Each selected document comes back as a copy whose
``meta`` adds the step record, with its id, score and embedding. Documents that overlap in
their source (``DocumentSplitter``'s ``meta["split_idx_start"]`` in ``meta["source_id"]``;
else the text they share at their edges) are stitched when packing is on and come back as
one document per passage (:mod:`adagres.integrations.passages`). Nothing is kept on the
component. ``query`` (optional) names the pool in a ``record_to`` file, where it is
required. Options are those of :func:`adagres.integrations.common.options`.

Tracing: each selection runs in a span ``adagres.selection`` of Haystack's tracer (a child
of the component's span) whose tags are :func:`adagres.integrations.tracing.attributes`
(Haystack's OpenTelemetry and Datadog tracers store the id lists as JSON text).

Serialisation: ``to_dict``/``from_dict`` carry the options, the tokenizer by name (a
callable tokenizer cannot be saved: ``to_dict`` says so in one line). ``Pipeline.loads``
and ``Pipeline.from_dict`` import only allowed modules: pass
``allowed_modules=["adagres.integrations"]``.
"""

from __future__ import annotations

from .extras import haystack as _framework  # noqa: F401  (or MissingExtra, naming the extra)

# isort: split

import dataclasses
import inspect
import os
from collections.abc import Mapping
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict, tracing
from haystack.core.errors import DeserializationError

from ..core.settings import Settings
from ..embed.tokens import DEFAULT_TOKENIZER
from ..errors import InputError, one_line
from . import common
from .passages import Placed, Places, joined_id, located
from .tracing import SPAN_NAME

__all__ = ["AdagresSelector"]

FRAMEWORK = "haystack"


@component
class AdagresSelector:
    """Keep the retrieved documents AdaGReS selects within ``budget`` tokens, in pick order."""

    def __init__(
        self,
        budget: int,
        *,
        preset: str = common.DEFAULT_PRESET,
        strategy: str | None = None,
        settings: Settings | None = None,
        tokenizer: common.Tokenizer = DEFAULT_TOKENIZER,
        record_to: str | os.PathLike[str] | None = None,
    ) -> None:
        self._options = common.options(
            budget,
            preset=preset,
            strategy=strategy,
            settings=common.settings_from(settings),
            tokenizer=tokenizer,
            record_to=record_to,
        )

    def options(self) -> common.Options:
        """The options as one validated value."""
        return self._options

    @component.output_types(documents=list[Document])
    def run(
        self,
        documents: list[Document],
        query_embedding: list[float],
        query: str | None = None,
    ) -> dict[str, list[Document]]:
        """Select from ``documents`` (rank order, with embeddings) for ``query_embedding``."""
        return {"documents": self.select(documents, query_embedding, query).documents}

    def select(
        self, documents: list[Document], query_embedding: list[float], query: str | None = None
    ) -> common.Selected[Document]:
        """The selected documents and the full selection record."""
        if not documents:
            return common.Selected([], None)
        for position, doc in enumerate(documents):
            if doc.content is None:
                raise InputError(
                    f"document {doc.id!r} (position {position}): has no text "
                    f"content to count tokens on"
                )
            if doc.embedding is None:
                raise InputError(
                    f"document {doc.id!r} (position {position}): has no embedding; retrieve "
                    f"with return_embedding=True (or embed the documents first)"
                )
        labels = [f"{doc.id!r} (position {i})" for i, doc in enumerate(documents)]
        retrieved = common.Retrieved(
            query=query or "",
            texts=tuple(doc.content or "" for doc in documents),
            embeddings=common.matrix([doc.embedding for doc in documents], labels),
            query_embedding=common.matrix([query_embedding], ["query_embedding"])[0],
            ids=tuple(doc.id for doc in documents),
            metadata=tuple(doc.meta for doc in documents),
            scores=tuple(doc.score for doc in documents),
            places=_places(documents),
        )
        with tracing.tracer.trace(SPAN_NAME) as span:
            selection = common.select(self._options, retrieved, framework=FRAMEWORK)
            values = common.report(self._options, retrieved, selection)
            span.set_tags(values)
        return common.answer(selection, retrieved, lambda placed: _passage(documents, placed))

    def to_dict(self) -> dict[str, Any]:
        """The component as a pipeline file stores it (the tokenizer by name)."""
        return default_to_dict(self, **common.saved(self._options))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AdagresSelector:
        """The component from :meth:`to_dict`'s output. A key that is not an option of
        :meth:`__init__`, or a missing ``budget``, is an InputError naming it."""
        if not isinstance(data, Mapping):
            raise InputError(
                f"data: expected the mapping to_dict() returns, got {type(data).__name__}"
            )
        params = data.get("init_parameters", {})
        if not isinstance(params, Mapping):
            raise InputError(
                f"init_parameters: expected a mapping of the options, got {type(params).__name__}"
            )
        known = [name for name in inspect.signature(cls.__init__).parameters if name != "self"]
        unknown = sorted(str(key) for key in params if key not in known)
        if unknown:
            raise InputError(
                f"init_parameters: {one_line(unknown[0], max_chars=60)!r} is not "
                f"an option of AdagresSelector; expected some of "
                f"{', '.join(known)}"
            )
        if "budget" not in params:
            raise InputError("init_parameters: 'budget' is missing (the token budget)")
        params = {**params, "settings": common.settings_from(params.get("settings"))}
        try:
            selector: AdagresSelector = default_from_dict(cls, {**data, "init_parameters": params})
        except DeserializationError as error:  # another component's type
            raise InputError(f"type: {one_line(error, max_chars=160)}") from None
        return selector


def _places(documents: list[Document]) -> Places:
    """Each document's source (``meta["source_id"]``) and offset (``meta["split_idx_start"]``),
    as ``DocumentSplitter`` writes them."""
    found = []
    for position, doc in enumerate(documents):
        source = doc.meta.get("source_id")
        key = source if isinstance(source, str) else None
        where = f"document {doc.id!r} (position {position}), meta['split_idx_start']"
        found.append((key, doc.meta.get("split_idx_start"), where))
    return located([d.content or "" for d in documents], found)


def _passage(documents: list[Document], placed: Placed) -> Document:
    """The document returned for one passage (see :mod:`adagres.integrations.passages`)."""
    first = documents[placed.first]
    meta = {**first.meta, **placed.extra}
    if not placed.stitched:
        return dataclasses.replace(first, meta=meta)
    scores = [s for s in (documents[i].score for i in placed.chunks) if s is not None]
    return Document(
        id=joined_id([documents[i].id for i in placed.chunks]) or "",
        content=placed.text,
        meta=meta,
        score=max(scores) if scores else None,
    )
