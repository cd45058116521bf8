"""Retrieved documents in the shapes pipelines already dump, mapped to canonical chunks.

- LangChain ``Document`` (``page_content``, ``metadata``; also ``dumpd`` output and
  ``[document, score]`` pairs),
- LlamaIndex ``NodeWithScore`` / ``TextNode`` dicts,
- Haystack ``Document`` dicts (``content``, ``meta``).

A document list takes its query from a wrapper object
``{"query": ..., "documents" | "nodes" | "source_nodes": [...]}`` or from ``query=``.
:func:`object_to_dict` does the same for the live Python objects a pipeline returns.
"""

from __future__ import annotations

from typing import Any

from adagres.errors import PoolError
from adagres.pools.chunk_fields import Location, type_name

__all__ = ["DOC_LIST_KEYS", "looks_like_pool", "normalise_pool", "object_to_dict"]

#: Keys of a wrapper object that hold its list of documents.
DOC_LIST_KEYS = ("documents", "docs", "nodes", "source_nodes", "results")


def looks_like_pool(obj: Any) -> bool:
    """True for an object with chunks or a list of documents (not a bare document)."""
    return isinstance(obj, dict) and ("chunks" in obj or any(k in obj for k in DOC_LIST_KEYS))


def normalise_pool(obj: Any, ctx: Location, query: str | None) -> dict[str, Any]:
    """Turn a canonical pool, a wrapper or a bare document list into a canonical dict."""
    if isinstance(obj, list):
        if query is None:
            raise ctx.fail(
                "a list of documents has no query; give query= or wrap the list "
                'as {"query": ..., "documents": [...]}'
            )
        return {"query": query, "chunks": [_document_to_chunk(d, i) for i, d in enumerate(obj)]}
    if not isinstance(obj, dict):
        raise ctx.fail(f"a pool must be a JSON object, got {type_name(obj)}")
    out = dict(obj)
    if "chunks" not in out:
        for key in DOC_LIST_KEYS:
            if isinstance(out.get(key), list):
                documents = out.pop(key)
                out["chunks"] = [_document_to_chunk(d, i) for i, d in enumerate(documents)]
                break
    if "query" not in out and query is not None:
        out["query"] = query
    return out


# --------------------------------------------------------------------------- dumped dicts


def _document_to_chunk(doc: Any, index: int) -> Any:
    """Map one LangChain / LlamaIndex / Haystack / canonical document to a canonical chunk."""
    if _is_pair(doc):  # LangChain (Document, score) pair; the outermost score wins
        score = doc[1]
        while _is_pair(doc):  # a loop, not recursion: nesting depth is the user's
            doc = doc[0]
        chunk = _document_to_chunk(doc, index)
        return {**chunk, "score": score} if isinstance(chunk, dict) else chunk
    if not isinstance(doc, dict):
        return doc  # validated (and rejected) later with its position
    if doc.get("lc") is not None and isinstance(doc.get("kwargs"), dict):
        doc = {**doc["kwargs"]}  # LangChain dumpd() output
    if "page_content" in doc:
        return _langchain(doc, index)
    if isinstance(doc.get("node"), dict):
        return _llamaindex(doc["node"], index, score=doc.get("score"))
    if "id_" in doc or "text_resource" in doc:
        return _llamaindex(doc, index, score=doc.get("score"))
    if "content" in doc and "text" not in doc:
        return _haystack(doc, index)
    return doc


def _is_pair(doc: Any) -> bool:
    return (
        isinstance(doc, list)
        and len(doc) == 2
        and isinstance(doc[1], (int, float))
        and not isinstance(doc[1], bool)
    )


def _langchain(doc: dict[str, Any], index: int) -> dict[str, Any]:
    metadata = doc.get("metadata")
    out: dict[str, Any] = {
        "id": doc.get("id") or f"c{index}",
        "text": doc["page_content"],
    }
    if metadata is not None:
        out["metadata"] = metadata
    if isinstance(metadata, dict):
        # Copied to the chunk's field only where the type fits (a numeric title stays in
        # the metadata alone): the metadata keeps every value either way.
        for key, kind in (("source", str), ("title", str), ("score", (int, float))):
            value = metadata.get(key)
            if isinstance(value, kind) and not isinstance(value, bool) and key not in doc:
                out[key] = value
    for key, value in doc.items():
        if key not in ("id", "page_content", "metadata", "type"):
            out[key] = value
    return out


def _llamaindex(node: dict[str, Any], index: int, *, score: Any) -> dict[str, Any]:
    text = node.get("text")
    if text is None and isinstance(node.get("text_resource"), dict):
        text = node["text_resource"].get("text")
    out: dict[str, Any] = {"id": node.get("id_") or node.get("id") or f"c{index}", "text": text}
    if score is not None:
        out["score"] = score
    # Everything else the node holds (metadata, embedding, relationships, start_char_idx and
    # end_char_idx, templates) is kept: the format's fields as such, others as the chunk's own.
    return _keep_rest(node, out, ("id_", "id", "text", "text_resource"))


def _haystack(doc: dict[str, Any], index: int) -> dict[str, Any]:
    out: dict[str, Any] = {"id": doc.get("id") or f"c{index}", "text": doc["content"]}
    meta = doc.get("meta")
    if meta is not None:
        out["metadata"] = meta
    # score and embedding as such; sparse_embedding, blob and any other field: kept as the
    # chunk's own keys.
    return _keep_rest(doc, out, ("id", "content", "meta"))


#: Type tags of a serialised object: what it is, not what it holds.
_TYPE_TAGS = ("class_name",)


def _keep_rest(
    source: dict[str, Any], out: dict[str, Any], used: tuple[str, ...]
) -> dict[str, Any]:
    """``out`` with every other non-null key of ``source`` (a document or node dict) kept."""
    for key, value in source.items():
        if key not in out and key not in used and key not in _TYPE_TAGS and value is not None:
            out[key] = value
    return out


# --------------------------------------------------------------------------- live objects


def object_to_dict(item: Any) -> dict[str, Any]:
    """Turn a retrieved Python object (str, dict, LangChain/LlamaIndex/Haystack) into a dict."""
    if isinstance(item, str):
        return {"text": item}
    if isinstance(item, dict):
        return dict(item)
    node = getattr(item, "node", None)
    if node is not None and node is not item:  # LlamaIndex NodeWithScore
        out = object_to_dict(node)
        if getattr(item, "score", None) is not None:
            out["score"] = float(item.score)
        return out
    for attribute in ("page_content", "text", "content"):
        text = getattr(item, attribute, None)
        if isinstance(text, str):
            out = {"text": text}
            for meta_attr in ("metadata", "meta"):
                meta = getattr(item, meta_attr, None)
                if isinstance(meta, dict):
                    out["metadata"] = dict(meta)
            for id_attr in ("id", "id_", "node_id"):
                value = getattr(item, id_attr, None)
                if isinstance(value, str) and value:
                    out["id"] = value
                    break
            return out
    raise PoolError(f"cannot read a text from a retrieved {type(item).__name__} object")
