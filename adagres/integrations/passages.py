"""Overlap-aware packing in the adapters: where retrieved documents sit in their sources,
and the stitched passages an adapter hands back. Imports no framework.

Each adapter reads the offsets its framework's splitters leave (LangChain's
``metadata["start_index"]`` with ``metadata["source"]``, LlamaIndex's ``start_char_idx``
with the node's source document, Haystack's ``meta["split_idx_start"]`` with
``meta["source_id"]``) into a :class:`Places`; documents without them are placed by the
text they share at their edges (:mod:`adagres.core.overlaps`). :func:`spans_for` turns
them into the :class:`~adagres.core.overlaps.Spans` the core packs with; a stitched
passage is counted with the adapter's tokenizer (a name or a callable).

When the selection stitched anything (``Selection.passages``), an adapter returns one
document per passage (:func:`passages`), in context order (the order of each passage's
first pick). A passage of one chunk is that chunk's document; a stitched one is a new
document (id: the chunks' ids joined by ``+``) whose text is the passage's, whose
metadata is the metadata of its first chunk in text order (so its offset is the
passage's), whose score is the best of its chunks', and which carries no embedding. Every
returned document's metadata adds :data:`CHUNKS_KEY` (the ids of the chunks it came from,
in text order) and :data:`TOKENS_KEY` (the tokens the budget paid for it); the step and
gain (``adagres_step``, ``adagres_gain``) are those of the passage's first pick.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..core.overlaps import Spans
from ..core.result import Selection
from ..core.validate import offset_problem
from ..errors import InputError, one_line
from ..pools.spans import TokenCounter

__all__ = [
    "CHUNKS_KEY",
    "TOKENS_KEY",
    "Placed",
    "Places",
    "joined_id",
    "located",
    "passages",
    "spans_for",
    "token_count",
    "whole",
]

#: Metadata key of a returned passage: the ids of the chunks it was stitched from.
CHUNKS_KEY = "adagres_chunks"
#: Metadata key of a returned passage: the tokens the budget paid for it.
TOKENS_KEY = "adagres_tokens"


def joined_id(ids: Sequence[str | None]) -> str | None:
    """The id of a stitched passage: its chunks' ids joined by ``+`` in text order (None
    when a chunk has none).

    >>> joined_id(["a#0", "a#1"]), joined_id(["a#0", None])
    ('a#0+a#1', None)
    """
    return "+".join(i for i in ids if i) if all(ids) else None


def whole(value: Any, where: str) -> int | None:
    """``value`` if it is a whole number >= 0 (a character offset), else None (LangChain
    writes -1 where a splitter did not find the chunk: it places nothing). One over
    :data:`adagres.core.validate.MAX_OFFSET` is an :class:`InputError` naming ``where``
    (the document and the field).

    >>> whole(12, "document 'a', metadata['start_index']"), whole(-1, "x"), whole("3", "x")
    (12, None, None)
    >>> whole(2**64, "document 'a', metadata['start_index']")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    adagres.errors.InputError: document 'a', metadata['start_index']: offset 1844... is beyond ...
    """
    if type(value) is not int or value < 0:
        return None
    problem = offset_problem(value)
    if problem is not None:
        raise InputError(f"{where}: {problem}")
    return value


def token_count(value: Any, what: str) -> int:
    """A tokenizer's count for ``what`` (a document, a passage), checked: a whole number >= 0."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise InputError(
            f"tokenizer: {what}: expected a whole number of tokens >= 0, "
            f"got {one_line(repr(value), max_chars=60)}"
        )
    return int(value)


@dataclass(frozen=True)
class Places:
    """Where each retrieved document sits: ``texts`` (what is stitched: the text the
    offsets index), a hashable source key and a character offset per document (None where
    unknown). ``render(i, text)`` is the text the tokenizer counts for a passage ``text``
    whose first chunk is document ``i`` (None: ``text`` itself)."""

    texts: tuple[str, ...]
    sources: tuple[Hashable | None, ...]
    starts: tuple[int | None, ...]
    render: Callable[[int, str], str] | None = None


def located(
    texts: Sequence[str],
    found: Sequence[tuple[Hashable | None, Any, str]],
    render: Callable[[int, str], str] | None = None,
) -> Places:
    """The :class:`Places` of documents from what their framework left: per document its
    source key (None: no source), its offset as given (read by :func:`whole`) and where
    that offset is, for a message. A document is placed when it has both."""
    starts = tuple(None if key is None else whole(start, where) for key, start, where in found)
    keys = (key for key, _, _ in found)
    sources = tuple(None if at is None else key for key, at in zip(keys, starts, strict=True))
    return Places(tuple(texts), sources, starts, render)


def spans_for(places: Places, tokenizer: Any) -> Spans:
    """The spans the core packs with: a stitched passage is counted by ``tokenizer`` on its
    text as ``places.render`` gives it for the document it begins with (the longest text
    it starts with)."""
    counter = TokenCounter(tokenizer) if isinstance(tokenizer, str) else tokenizer
    texts, render = places.texts, places.render

    def count(text: str) -> int:
        if render is not None:
            starts = (i for i, own in enumerate(texts) if text.startswith(own.rstrip()))
            text = render(max(starts, key=lambda i: len(texts[i]), default=0), text)
        return token_count(counter(text), "a stitched passage")

    return Spans(texts, places.sources, places.starts, count)


class Placed(NamedTuple):
    """One document an adapter returns for a passage: ``chunks`` (retrieved positions, in
    text order), ``first`` (the position whose document it is made from), ``text``, and the
    metadata to add (``extra``); ``stitched`` is False for a passage of one chunk."""

    chunks: tuple[int, ...]
    first: int
    text: str
    extra: dict[str, Any]

    @property
    def stitched(self) -> bool:
        return len(self.chunks) > 1


def passages(
    selection: Selection,
    texts: Sequence[str],
    ids: Sequence[str],
    picked: Sequence[tuple[int, dict[str, Any]]],
) -> list[Placed] | None:
    """The passages to return in context order, or None when nothing was stitched (then the
    adapter returns each pick as it always did). ``texts``: the places' texts; ``ids`` name
    the documents; ``picked``: :func:`~.common.picks` of the selection."""
    if not selection.passages:
        return None
    record = dict(picked)
    order = {i: n for n, (i, _) in enumerate(picked)}
    out = []
    for chunks, text, paid in selection.context(list(texts)):
        opener = min(chunks, key=lambda i: order.get(i, len(order)))
        extra = {
            **record.get(opener, {}),
            CHUNKS_KEY: [ids[i] for i in chunks],
            TOKENS_KEY: int(paid),
        }
        out.append(Placed(tuple(chunks), chunks[0], text, extra))
    return out
