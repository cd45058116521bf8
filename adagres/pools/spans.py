"""Where a pool's chunks sit in their sources, read from the fields pipelines leave.

Overlap-aware packing (:mod:`adagres.core.packing`) stitches picks that overlap in their
source. This module reads each chunk's source key and character offset, in this order:

1. the pool format's ``offset`` field (characters from the start of the source) with the
   chunk's ``source`` (else its ``title``) as the source;
2. ``metadata.doc_id`` with ``metadata.start``: corpus mode and the Milvus collections
   ``index_documents`` writes;
3. LangChain's ``metadata.start_index`` (text splitters with ``add_start_index=True``) with
   ``metadata.source``;
4. LlamaIndex's ``start_char_idx`` (a node's own key, kept by the pool readers) with the
   node's source document (``relationships``) or ``metadata.file_name``;
5. Haystack's ``metadata.split_idx_start`` with ``metadata.source_id`` (what
   ``DocumentSplitter`` writes).

A chunk with none of them is placed by the text it shares with other chunks at its edges
(:mod:`adagres.core.overlaps`). The tokens of a stitched passage are counted with the
pool's tokenizer when the pool names one (``pool.tokenizer``); a pool whose counts came
without a tokenizer (``"given"``) gets the estimate the packing module states.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from adagres.core import validate as v
from adagres.core.overlaps import Spans
from adagres.embed.tokens import TOKENIZERS, count_tokens
from adagres.errors import PoolError, one_line
from adagres.pools.pool import Chunk

__all__ = ["TokenCounter", "offset_problem", "placement", "spans_of"]


class TokenCounter:
    """Count one text's tokens with a named tokenizer (picklable: the name is its state)."""

    def __init__(self, tokenizer: str) -> None:
        self.tokenizer = tokenizer

    def __call__(self, text: str) -> int:
        return int(count_tokens([text], self.tokenizer)[0])

    def __repr__(self) -> str:
        return f"TokenCounter({self.tokenizer!r})"


def _whole(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _key(value: Any) -> Hashable | None:
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


def _candidates(chunk: Chunk) -> list[tuple[str, Hashable | None, str, Any]]:
    """(tag, source key, offset field, offset value) of each placement, in the order read."""
    meta = chunk.metadata or {}
    extra = chunk.extra
    if "start_char_idx" in extra:  # a LlamaIndex node's own key, kept by the readers
        llama = ("start_char_idx", extra["start_char_idx"])
    else:
        llama = ("metadata.start_char_idx", meta.get("start_char_idx"))
    source = chunk.source if chunk.source is not None else chunk.title
    return [
        ("source", source, "offset", extra.get("offset")),
        ("doc", _key(meta.get("doc_id")), "metadata.start", meta.get("start")),
        ("langchain", _page_source(meta), "metadata.start_index", meta.get("start_index")),
        ("llamaindex", _llamaindex_source(chunk), *llama),
        (
            "haystack",
            _key(meta.get("source_id")),
            "metadata.split_idx_start",
            meta.get("split_idx_start"),
        ),
    ]


def _used(chunk: Chunk) -> tuple[str, Hashable, str, int] | None:
    """The placement a chunk's fields give: the first source key with a whole offset >= 0
    (tag, key, field, offset). A negative offset (LangChain writes -1 where a splitter did
    not find the chunk) or one that is not an integer places nothing."""
    for tag, key, field, value in _candidates(chunk):
        at = _whole(value)
        if key is not None and at is not None:
            return tag, key, field, at
    return None


def offset_problem(chunk: Chunk) -> tuple[str, str] | None:
    """(field, problem) when the offset that places ``chunk`` is too large for the machine
    (over :data:`adagres.core.validate.MAX_OFFSET`), else None: the loaders refuse it
    naming the file, the chunk and the field."""
    used = _used(chunk)
    if used is None:
        return None
    problem = v.offset_problem(used[3])
    return None if problem is None else (used[2], problem)


def placement(chunk: Chunk) -> tuple[Hashable | None, int | None]:
    """(source key, character offset) of a chunk from its fields: (key, None) where only its
    source is known (shared edges then join it only to chunks of that source), (None, None)
    where neither is.

    An offset over :data:`adagres.core.validate.MAX_OFFSET` is a :class:`PoolError` naming
    the chunk and the field (a pool built in code; the loaders refuse it at load)."""
    used = _used(chunk)
    if used is not None:
        tag, key, field, at = used
        problem = v.offset_problem(at)
        if problem is not None:
            shown = one_line(chunk.id, max_chars=80)
            raise PoolError(f"chunk '{shown}', field '{field}': {problem}")
        return (tag, key), at
    if chunk.source is not None:
        return ("source", chunk.source), None
    for tag, key, _, _ in _candidates(chunk)[1:]:
        if key is not None:
            return (tag, key), None
    return None, None


def _page_source(meta: dict[str, Any]) -> Hashable | None:
    """LangChain's source, with the page where a PDF loader gave one (its ``start_index``
    counts from the start of the page, so each page is a source of its own)."""
    source = _key(meta.get("source"))
    page = _key(meta.get("page"))
    return source if source is None or page is None else (source, page)


def _llamaindex_source(chunk: Chunk) -> Hashable | None:
    relationships = chunk.extra.get("relationships")
    if isinstance(relationships, dict):
        for key in ("1", "SOURCE", "source"):  # NodeRelationship.SOURCE serialises as "1"
            ref = relationships.get(key)
            if isinstance(ref, dict) and _key(ref.get("node_id")) is not None:
                return _key(ref["node_id"])
    meta = chunk.metadata or {}
    return _key(meta.get("file_name")) or _key(meta.get("doc_id"))


def spans_of(chunks: tuple[Chunk, ...], tokenizer: str | None) -> Spans:
    """The spans of a pool's chunks, counting stitched text with ``tokenizer`` if named."""
    places = [placement(c) for c in chunks]
    counter = TokenCounter(tokenizer) if tokenizer in TOKENIZERS else None
    return Spans(
        tuple(c.text for c in chunks),
        tuple(source for source, _ in places),
        tuple(at for _, at in places),
        counter,
    )
