"""AdaGReS in Haystack: a pipeline component that selects from retrieved documents.

:class:`AdagresSelector` takes the ``documents`` of a retriever and the
``query_embedding`` the retriever searched with, and returns the documents AdaGReS selects
within ``budget`` tokens, in pick order. It uses each document's stored vector as it is,
so the retriever must return them: ``InMemoryEmbeddingRetriever(store, top_k=30,
return_embedding=True)`` (a document without an embedding is an error that says so).
Tokens are counted on ``content``. Each selected document comes back as a copy whose
``meta`` adds ``adagres_step`` and ``adagres_gain``, with its id, score and embedding;
nothing is kept on the component. ``query`` (optional) names the pool in a ``record_to``
file, where it is required. Options are those of
:func:`adagres.integrations.common.options`; ``to_dict``/``from_dict`` carry them (a
callable tokenizer must be a module-level function to serialise).
"""

from __future__ import annotations

from .extras import haystack as _framework  # noqa: F401  (or MissingExtra, naming the extra)

# isort: split

import dataclasses
import os
from typing import Any

from haystack import Document, component, default_from_dict, default_to_dict
from haystack.utils import deserialize_callable, serialize_callable

from ..core.settings import Settings
from ..errors import InputError
from ..pools.tokens import DEFAULT_TOKENIZER, TOKENIZERS
from . import common

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
            budget, preset=preset, strategy=strategy, settings=settings, tokenizer=tokenizer,
            record_to=record_to,
        )  # fmt: skip
        self.preset = preset

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
                raise InputError(f"document {doc.id!r} (position {position}): has no text "
                                 f"content to count tokens on")  # fmt: skip
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
        )
        selection = common.select(self._options, retrieved, framework=FRAMEWORK)
        chosen = [
            dataclasses.replace(documents[i], meta={**documents[i].meta, **extra})
            for i, extra in common.picks(selection)
        ]
        return common.Selected(chosen, selection)

    def to_dict(self) -> dict[str, Any]:
        """The component as a pipeline file stores it."""
        chosen = self._options
        tokenizer = chosen.tokenizer
        return default_to_dict(
            self,
            budget=chosen.budget,
            preset=self.preset,
            strategy=chosen.strategy,
            settings=chosen.settings.as_dict(),
            tokenizer=tokenizer if isinstance(tokenizer, str) else serialize_callable(tokenizer),
            record_to=None if chosen.record_to is None else str(chosen.record_to),
        )

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AdagresSelector:
        """The component from :meth:`to_dict`'s output."""
        params = dict(data.get("init_parameters", {}))
        if params.get("tokenizer") not in (None, *TOKENIZERS):  # a callable's dotted path
            params["tokenizer"] = deserialize_callable(params["tokenizer"])
        if params.get("settings") is not None:
            params["settings"] = Settings(**params["settings"])
        selector: AdagresSelector = default_from_dict(cls, {**data, "init_parameters": params})
        return selector
