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

from adagres.core.overlaps import Spans
from adagres.pools.pool import Chunk

__all__ = ["TokenCounter", "placement", "spans_of"]


class TokenCounter:
    """Count one text's tokens with a named tokenizer (picklable: the name is its state)."""

    def __init__(self, tokenizer: str) -> None:
        self.tokenizer = tokenizer

    def __call__(self, text: str) -> int:
        from adagres.pools.tokens import count_tokens

        return int(count_tokens([text], self.tokenizer)[0])

    def __repr__(self) -> str:
        return f"TokenCounter({self.tokenizer!r})"


def _whole(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _key(value: Any) -> Hashable | None:
    return value if isinstance(value, str | int) and not isinstance(value, bool) else None


def placement(chunk: Chunk) -> tuple[Hashable | None, int | None]:
    """(source key, character offset) of a chunk from its fields: (key, None) where only its
    source is known, (None, None) where neither is."""
    meta = chunk.metadata or {}
    extra = chunk.extra
    offset = _whole(extra.get("offset"))
    if offset is not None:
        source = chunk.source if chunk.source is not None else chunk.title
        if source is not None:
            return ("source", source), offset
    found = [
        (_key(meta.get("doc_id")), _whole(meta.get("start"))),
        (_page_source(meta), _whole(meta.get("start_index"))),
        (
            _llamaindex_source(chunk),
            _whole(extra.get("start_char_idx", meta.get("start_char_idx"))),
        ),
        (_key(meta.get("source_id")), _whole(meta.get("split_idx_start"))),
    ]
    tags = ("doc", "langchain", "llamaindex", "haystack")
    for tag, (key, at) in zip(tags, found, strict=True):
        if key is not None and at is not None:
            return (tag, key), at
    # no offset: the source alone, so that shared edges join only chunks of one source
    if chunk.source is not None:
        return ("source", chunk.source), None
    for tag, (key, _) in zip(tags, found, strict=True):
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
    from adagres.pools.tokens import TOKENIZERS  # (it imports the pool module)

    counter = TokenCounter(tokenizer) if tokenizer in TOKENIZERS else None
    return Spans(
        tuple(c.text for c in chunks),
        tuple(source for source, _ in places),
        tuple(at for _, at in places),
        counter,
    )
