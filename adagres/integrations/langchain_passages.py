"""Overlap-aware packing in the LangChain adapters: where a ``Document`` sits in its source,
and the document returned for a passage (:mod:`adagres.integrations.passages`).

A text splitter with ``add_start_index=True`` writes ``metadata["start_index"]``, the
character offset in the document it split, whose metadata (``"source"``, and ``"page"``
for loaders that split by page) every chunk keeps. Imports LangChain only to type.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .passages import Placed, Places, joined_id, located

if TYPE_CHECKING:
    from langchain_core.documents import Document

__all__ = ["passage", "places"]


def places(documents: Sequence[Document]) -> Places:
    """Each document's source (``metadata["source"]``, with ``"page"`` where a loader split
    by page) and offset (``metadata["start_index"]``, a splitter's ``add_start_index``)."""
    found = []
    for position, doc in enumerate(documents):
        meta = doc.metadata or {}
        source, page = meta.get("source"), meta.get("page")
        key = ("langchain", source, page if isinstance(page, int | str) else None)
        where = f"document {doc.id!r} (position {position}), metadata['start_index']"
        found.append((key if isinstance(source, str) else None, meta.get("start_index"), where))
    return located([d.page_content for d in documents], found)


def passage(documents: Sequence[Document], placed: Placed) -> Document:
    """The document returned for one passage (see :mod:`adagres.integrations.passages`)."""
    first = documents[placed.first]
    update: dict[str, Any] = {"metadata": {**first.metadata, **placed.extra}}
    if placed.stitched:
        update["page_content"] = placed.text
        update["id"] = joined_id([documents[i].id for i in placed.chunks])
    return first.model_copy(update=update)
