"""Live pools from a Milvus collection: index documents into it, retrieve a pool from it.

``uri`` is a Milvus Lite store file (``"data/live.db"``: Milvus Lite runs inside this
process; one process at a time per store) or a server address (``"http://host:19530"``;
credentials as ``http://user:password@host:19530`` or ``?token=...``: they never appear in
a message or in ``pool.extra``).

A collection made by :func:`index_documents` has one row per chunk: ``chunk_id`` (primary
key), ``doc_id``, ``title``, ``source``, ``text``, ``tokens``, ``metadata`` (JSON) and
``vector`` (FLOAT_VECTOR, a FLAT index with the COSINE metric, so a search is the exact
top-N), created with strong consistency. Its properties record the embedding model and the
tokenizer, so :func:`retrieve_pool` embeds the query with the same model and reports the
same token counts. Retrieval only searches: it never writes to the store.

``pymilvus`` is imported inside the functions that talk to a store (``import adagres`` stays
light). The plumbing (URIs, connection, layout) is in :mod:`adagres.stores.milvus_store`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from adagres.embed.tokens import DEFAULT_TOKENIZER, count_tokens
from adagres.errors import InputError, PoolError
from adagres.pools.pool import Chunk, Pool
from adagres.stores import milvus_store as store
from adagres.stores.milvus_store import has_credentials, is_local, redact_uri, strip_credentials

__all__ = [
    "MAX_TOP_N",
    "Indexed",
    "collection_names",
    "has_credentials",
    "index_chunks",
    "index_documents",
    "is_local",
    "redact_uri",
    "retrieve_pool",
    "retrieve_pools",
    "strip_credentials",
]

#: The largest ``top_n`` a Milvus search returns.
MAX_TOP_N = 16384
_OPTIONAL = ("chunk_id", "doc_id", "title", "source", "tokens", "metadata")
_BATCH = 256


@dataclass(frozen=True)
class Indexed:
    """What :func:`index_documents` stored: counts, and the model and tokenizer recorded."""

    collection: str
    documents: int
    chunks: int
    rows: int
    model: str
    tokenizer: str


def collection_names(uri: str) -> list[str]:
    """The collections of the store at ``uri``, sorted (PoolError if it cannot be reached)."""
    with store.connect(uri) as client:
        return sorted(
            store.call(f"{redact_uri(uri)}: listing collections", client.list_collections)
        )


# --------------------------------------------------------------------------- indexing


def _row(chunk: Chunk, vector: np.ndarray, where: str) -> dict[str, Any]:
    metadata = dict(chunk.metadata or {})
    doc_id = str(metadata.get("doc_id", chunk.title or ""))
    row = {
        "pk": store.key_of(chunk.id),
        "doc_key": store.key_of(doc_id),
        "chunk_id": chunk.id,
        "doc_id": doc_id,
        "title": chunk.title or "",
        "source": chunk.source or "",
        "text": chunk.text,
        "tokens": -1 if chunk.tokens is None else int(chunk.tokens),  # -1: not counted
        "metadata": metadata,
        "vector": vector.tolist(),
    }
    for name, limit in store.LENGTHS.items():
        size = len(row[name].encode("utf-8"))
        if size > limit:
            raise PoolError(
                f"{where}chunk {chunk.id!r}: {name} has {size} bytes, the store's field holds "
                f"at most {limit} (use smaller chunks)"
            )
    return row


def index_chunks(
    uri: str,
    collection: str,
    chunks: Sequence[Chunk],
    vectors: Any,
    *,
    model: str,
    tokenizer: str,
) -> int:
    """Store ``chunks`` with their ``vectors`` (N, d) in ``collection``; return its row count.

    The collection is created when missing (recording ``model`` and ``tokenizer``); an
    existing one must record the same model, tokenizer and dimension. Rows of a document
    already in the collection (same ``doc_id``) are replaced, so indexing twice is a no-op.
    """
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != len(chunks) or not len(chunks):
        raise InputError(f"vectors have shape {matrix.shape}, expected ({len(chunks)}, d)")
    where = f"{redact_uri(uri)}: collection {collection!r}: "
    rows = [_row(c, v, where) for c, v in zip(chunks, matrix, strict=True)]
    if len({row["pk"] for row in rows}) != len(rows):
        raise PoolError(f"{where}the chunk ids are not unique")
    with store.connect(uri, create=True) as client:
        if not store.call(where + "has_collection", client.has_collection, collection):
            store.call(
                where + "create",
                store.create_collection,
                client,
                collection,
                matrix.shape[1],
                model,
                tokenizer,
            )
        layout = store.layout(client, uri, collection)
        if (layout.model, layout.tokenizer, layout.dimension) != (
            model,
            tokenizer,
            matrix.shape[1],
        ):
            raise PoolError(
                f"{where}holds {layout.dimension}-d vectors from {layout.model!r} counted with "
                f"{layout.tokenizer!r}; these chunks are {matrix.shape[1]}-d from {model!r} "
                f"counted with {tokenizer!r} (use another collection)"
            )
        store.load(client, uri, collection)  # a reopened store holds it released
        _delete_documents(client, collection, sorted({r["doc_key"] for r in rows}), where)
        for start in range(0, len(rows), _BATCH):
            store.call(where + "insert", client.insert, collection, rows[start : start + _BATCH])
        return int(store.call(where + "counting rows", store.row_count, client, collection))


def _delete_documents(client: Any, collection: str, doc_keys: list[int], where: str) -> None:
    """Delete the rows of these documents (by primary key, which every Milvus version takes)."""
    for start in range(0, len(doc_keys), _BATCH):
        wanted = ", ".join(str(key) for key in doc_keys[start : start + _BATCH])
        old = store.call(
            where + "query",
            client.query,
            collection,
            filter=f"doc_key in [{wanted}]",
            output_fields=["pk"],
        )
        if old:
            store.call(where + "delete", client.delete, collection, ids=[row["pk"] for row in old])


def _documents_with_sources(documents: Any) -> tuple[dict[str, str], dict[str, str]]:
    """``{doc_id: text}`` as :func:`read_documents` reads it, and ``{doc_id: file}`` for the
    documents that came from a file; a document id that two sources give is an error."""
    from adagres.corpora.documents import read_documents

    if isinstance(documents, Mapping):
        return read_documents(documents), {}
    items = [documents] if isinstance(documents, (str, os.PathLike)) else list(documents)
    texts: dict[str, str] = {}
    sources: dict[str, str] = {}
    for position, item in enumerate(items):
        if isinstance(item, os.PathLike) or (isinstance(item, str) and _exists(item)):
            path = Path(item)
            found = read_documents(path)
            origin = {d: str(path / d if path.is_dir() else path) for d in found}
        elif isinstance(item, str):
            found, origin = {f"doc{position}": item}, {}
        else:
            kind = type(item).__name__
            raise InputError(f"documents[{position}] is a {kind}, expected a text or a file path")
        for doc_id, text in found.items():
            if doc_id in texts:
                raise PoolError(
                    f"document id {doc_id!r} comes from both {sources.get(doc_id, 'a text')} "
                    f"and {origin.get(doc_id, 'a text')}; give the documents distinct names"
                )
            texts[doc_id] = text
            if doc_id in origin:
                sources[doc_id] = origin[doc_id]
    return texts, sources


def _exists(text: str) -> bool:
    return "\n" not in text and len(text) < 4096 and Path(text).exists()


def index_documents(
    uri: str,
    collection: str,
    documents: Any,
    *,
    size: int = 200,
    overlap: int = 40,
    tokenizer: str = DEFAULT_TOKENIZER,
    model: str | os.PathLike[str] | None = None,
    metadata: Mapping[str, Mapping[str, Any]] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: Any = None,
) -> Indexed:
    """Chunk ``documents`` with overlap, embed the chunks and store them in ``collection``.

    ``documents`` is what :func:`adagres.corpora.documents.read_documents` takes (files, a folder,
    a table or pool file, ``{doc_id: text}``, texts); ``metadata`` maps a document id to
    fields stored with each of its chunks (in the JSON ``metadata`` field, beside the
    chunk's ``doc_id`` and offsets). Chunks are windows of ``size`` tokens of ``tokenizer``
    overlapping by ``overlap`` (:func:`~adagres.corpora.documents.chunk_documents`), embedded by
    ``model`` (default: the packaged all-MiniLM-L6-v2); ``source`` is the file they came from.
    """
    from adagres.corpora.documents import chunk_documents
    from adagres.embed.models import embed_texts, resolve_model

    texts, sources = _documents_with_sources(documents)
    extra = {str(k): dict(v) for k, v in (metadata or {}).items()}
    unknown = sorted(set(extra) - set(texts))
    if unknown:
        raise InputError(f"metadata names document {unknown[0]!r}, not one of the documents")
    chunks = chunk_documents(texts, size=size, overlap=overlap, tokenizer=tokenizer)
    stored = []
    for chunk in chunks:
        doc_id = str((chunk.metadata or {})["doc_id"])
        fields = {**extra.get(doc_id, {}), **(chunk.metadata or {})}
        stored.append(
            Chunk(
                chunk.id,
                chunk.text,
                tokens=chunk.tokens,
                title=chunk.title,
                source=sources.get(doc_id),
                metadata=fields,
            )
        )
    name = resolve_model(model)
    vectors = embed_texts(
        [c.text for c in stored], model=name, cache_dir=cache_dir, progress=progress
    )
    rows = index_chunks(uri, collection, stored, vectors, model=name, tokenizer=tokenizer)
    return Indexed(collection, len(texts), len(stored), rows, name, tokenizer)


# --------------------------------------------------------------------------- retrieval


def retrieve_pool(
    uri: str,
    collection: str,
    query: str,
    *,
    top_n: int = 20,
    model: str | os.PathLike[str] | None = None,
    tokenizer: str | None = None,
) -> Pool:
    """The ``top_n`` chunks of ``collection`` nearest to ``query``, as a :class:`Pool`.

    The query is embedded by the model the collection records (``model`` must name the same
    one, or be None); chunks come in the store's rank order with its scores (cosine), its
    stored vectors (the exact float32 values) and its token counts (a ``tokenizer`` other
    than the recorded one counts again). ``pool.extra["retrieval"]`` records the store (URI
    without credentials), the collection and ``top_n``.
    """
    pools = retrieve_pools(uri, collection, [query], top_n=top_n, model=model, tokenizer=tokenizer)
    return pools[0]


def retrieve_pools(
    uri: str,
    collection: str,
    queries: Sequence[str],
    *,
    top_n: int = 20,
    model: str | os.PathLike[str] | None = None,
    tokenizer: str | None = None,
) -> list[Pool]:
    """:func:`retrieve_pool` for several queries: one connection, one batch of embeddings."""
    from adagres.embed.models import embed_texts

    queries = list(queries)
    if not queries:
        raise InputError("queries: give at least one query")
    for position, query in enumerate(queries):
        if not isinstance(query, str) or not query.strip():
            raise InputError(f"queries[{position}]: the query must be a non-empty text")
    if isinstance(top_n, bool) or not isinstance(top_n, int) or not 1 <= top_n <= MAX_TOP_N:
        raise InputError(f"top_n must be a whole number from 1 to {MAX_TOP_N}, got {top_n!r}")
    where = f"{redact_uri(uri)}: collection {collection!r}"
    with store.connect(uri) as client:
        layout = store.layout(client, uri, collection)
        name = _query_model(layout, model, where)
        store.load(client, uri, collection)
        vectors = embed_texts(queries, model=name)
        if vectors.shape[1] != layout.dimension:
            raise PoolError(
                f"{where}: its vectors have {layout.dimension} values, the query model "
                f"{name!r} gives {vectors.shape[1]}"
            )
        wanted = sorted((layout.fields & set(_OPTIONAL)) | {"text", layout.vector})
        hits = store.call(
            f"{where}: search",
            client.search,
            collection,
            data=vectors.tolist(),
            limit=top_n,
            anns_field=layout.vector,
            output_fields=wanted,
        )
    record = {
        "store": "milvus",
        "uri": strip_credentials(uri),
        "collection": collection,
        "top_n": top_n,
    }
    return [
        _pool(query, list(found), vector, layout, name, tokenizer, record, where)
        for query, found, vector in zip(queries, hits, vectors, strict=True)
    ]


def _query_model(layout: store.Layout, model: Any, where: str) -> str:
    from adagres.embed.models import resolve_model

    if layout.model is None:  # a collection made elsewhere: the caller names the model
        return resolve_model(model)
    if model is not None and resolve_model(model) != layout.model:
        raise PoolError(
            f"{where} was embedded with {layout.model!r}; the query must be embedded by the "
            f"same model, got model={str(model)!r}"
        )
    try:
        return resolve_model(layout.model)
    except PoolError as error:
        raise PoolError(f"{where}: the model it records is not available here: {error}") from None


def _pool(
    query: str,
    hits: list[Any],
    query_vector: np.ndarray,
    layout: store.Layout,
    model: str,
    tokenizer: str | None,
    record: dict[str, Any],
    where: str,
) -> Pool:
    if not hits:
        raise PoolError(f"{where}: the collection holds no rows, so the pool would be empty")
    chunks, vectors = [], []
    for hit in hits:
        entity = hit["entity"]
        vectors.append(np.asarray(entity[layout.vector], dtype=np.float32))
        tokens = entity.get("tokens")
        chunks.append(
            Chunk(
                str(entity.get("chunk_id", entity.get(layout.primary, hit.id))),
                entity["text"],
                tokens=None if tokens is None or tokens < 0 else int(tokens),
                score=float(hit.distance),
                title=entity.get("title") or None,
                source=entity.get("source") or None,
                metadata=entity.get("metadata") or None,
            )
        )
    counted = all(chunk.tokens is not None for chunk in chunks)
    pool = Pool(
        query,
        tuple(chunks),
        raw_embeddings=np.stack(vectors),
        raw_query_embedding=query_vector,
        embedding_model=model,
        tokenizer=layout.tokenizer if counted else None,
        extra={"retrieval": dict(record)},
    )
    if pool.token_counts is not None and tokenizer in (None, pool.tokenizer):
        return pool  # the store's counts (named or not), unless another tokenizer is asked for
    wanted = tokenizer or DEFAULT_TOKENIZER
    return pool.with_token_counts(count_tokens(pool.texts, wanted), wanted)
