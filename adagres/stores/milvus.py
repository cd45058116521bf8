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

Every failure to reach a store or to read a collection becomes one :class:`PoolError` line
that names the store (credentials redacted), the collection and the reason. ``pymilvus`` is
imported inside the functions that talk to a store (``import adagres`` stays light).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np

from adagres.embed.tokens import DEFAULT_TOKENIZER, count_tokens
from adagres.errors import InputError, PoolError, require
from adagres.pools.pool import Chunk, Pool
from adagres.stores import lockfiles

__all__ = [
    "MAX_TOP_N",
    "Indexed",
    "auth_failure",
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

#: Collection properties that record how the vectors and token counts were made.
MODEL_PROPERTY = "adagres.embedding_model"
TOKENIZER_PROPERTY = "adagres.tokenizer"
FORMAT_PROPERTY = "adagres.format"
#: Byte limits of the VARCHAR fields of a collection made here.
LENGTHS = {"chunk_id": 512, "doc_id": 1024, "title": 1024, "source": 2048, "text": 65535}
# pymilvus logs every failed call with a traceback; Milvus Lite's in-process gRPC server logs
# calls it does not implement (AllocTimestamp), which pymilvus then does without.
_NOISY = ("pymilvus.decorators", "milvus_lite.server_manager", "grpc._server")
_SECRET_KEYS = {"token", "password", "api_key", "apikey", "secret"}


# --------------------------------------------------------------------------- URIs


def _pymilvus(module: str) -> Any:
    """``pymilvus`` (or ``milvus_lite``), or a MissingExtra naming the ``milvus`` extra."""
    return require(module, "milvus", purpose="a Milvus store")


def is_local(uri: str) -> bool:
    """Whether ``uri`` names a Milvus Lite store file (``*.db``), as pymilvus decides."""
    return uri.endswith(".db") and "://" not in uri


def _split(uri: str) -> tuple[str, str | None, bool]:
    """(uri without credentials, token for the client or None, whether a secret was there)."""
    if is_local(uri):
        return uri, None, False
    parts = urlsplit(uri)
    token, found, netloc = None, False, parts.netloc
    if "@" in netloc:
        token, netloc = netloc.rsplit("@", 1)
        found = True
    query = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key.lower() in _SECRET_KEYS:
            token, found = token or value, True
        else:
            query.append((key, value))
    clean = urlunsplit((parts.scheme, netloc, parts.path, urlencode(query), parts.fragment))
    return clean, token, found


def strip_credentials(uri: str) -> str:
    """``uri`` without user, password or token (what a pool records and a URL may show).

    >>> strip_credentials("http://me:secret@milvus.example:19530")
    'http://milvus.example:19530'
    """
    return _split(uri)[0]


def has_credentials(uri: str) -> bool:
    """Whether ``uri`` carries a user, password or token.

    >>> has_credentials("data/live.db"), has_credentials("https://h:1?token=abc")
    (False, True)
    """
    return _split(uri)[2]


def redact_uri(uri: str) -> str:
    """``uri`` for messages: credentials replaced by ``***``.

    >>> redact_uri("http://me:secret@milvus.example:19530")
    'http://***@milvus.example:19530'
    """
    clean, _, found = _split(uri)
    parts = urlsplit(clean)
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc)) if found else clean


# --------------------------------------------------------------------------- connection


_AUTH_STATUSES = ("UNAUTHENTICATED", "PERMISSION_DENIED")


def auth_failure(error: BaseException) -> str | None:
    """The server's words when ``error`` (or an error it was raised from) is an
    authentication refusal, else None. pymilvus reports a refused login as "illegal
    connection params or server unavailable", the same as a closed port; the gRPC error it
    was raised from carries the status (``UNAUTHENTICATED``) and the server's details."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        code = getattr(current, "code", None)
        status = code() if callable(code) else None
        if getattr(status, "name", None) in _AUTH_STATUSES:
            details = getattr(current, "details", None)
            text = details() if callable(details) else None
            return " ".join(str(text or status.name).split())[:300]  # type: ignore[union-attr]
        current = current.__cause__ or current.__context__
    return None


def reason(error: BaseException, limit: int = 300) -> str:
    """The message of a pymilvus (or any) error on one line, at most ``limit`` characters."""
    message = getattr(error, "message", None) or str(error) or type(error).__name__
    text = " ".join(str(message).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def key_of(text: str) -> int:
    """A stable 63-bit key of ``text`` (the primary key of a chunk id, the key of a document).

    >>> key_of("a.md#0") == key_of("a.md#0") != key_of("a.md#1")
    True
    """
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def _lock_holder(path: Path) -> str | None:
    """Who holds the Milvus Lite lock of the store ``path``, as the message says it (the
    process(es) when known), or None when no other process holds it."""
    import fcntl

    lock = path / lockfiles.LOCK_NAME
    if not lock.is_file():
        return None
    with open(lock, "rb") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pass
        else:
            fcntl.flock(handle, fcntl.LOCK_UN)
            return None
    others = [(pid, command) for pid, command in lockfiles.holders(lock) if pid != os.getpid()]
    if not others:
        return "another process has it open"
    named = "; ".join(f"pid {pid}: {command[:80] or '?'}" for pid, command in others[:3])
    more = f" and {len(others) - 3} more" if len(others) > 3 else ""
    return f"another process has it open ({named}{more})"


@contextlib.contextmanager
def connect(uri: str, *, create: bool = False) -> Iterator[Any]:
    """A ``MilvusClient`` for ``uri``, closed on exit; PoolError if the store cannot be reached.

    A Milvus Lite store file that does not exist is an error unless ``create`` (retrieval
    must not make an empty store where the user mistyped a path).
    """
    if not isinstance(uri, str) or not uri.strip():
        raise InputError(f"uri must be a store file (.db) or a server address, got {uri!r}")
    clean, token, _ = _split(uri)
    shown, local = redact_uri(uri), is_local(uri)
    if local and create:
        Path(uri).parent.mkdir(parents=True, exist_ok=True)
    elif local and not Path(uri).exists():
        raise PoolError(f"no Milvus Lite store at {shown} (make one with 'adagres index')")
    MilvusClient = _pymilvus("pymilvus").MilvusClient
    if local:
        _pymilvus("milvus_lite")  # pymilvus runs a .db store through it

    with _quiet():
        try:
            client = MilvusClient(clean, token=token or "", timeout=60)
        except Exception as error:
            held = _lock_holder(Path(uri)) if local else None
            if held is not None:
                raise PoolError(
                    f"cannot open the Milvus Lite store {shown}: {held} "
                    f"(one process per store file; close it or use a Milvus server)"
                ) from None
            refused = auth_failure(error)
            if refused is not None:
                given = "the credentials given" if token else "no credentials"
                raise PoolError(
                    f"the Milvus server at {shown} refused {given}: authentication failed "
                    f"({refused}); give user and password in the address "
                    f"(http://user:password@host:port) or a token (?token=...)"
                ) from None
            raise PoolError(f"cannot reach the Milvus store at {shown}: {reason(error)}") from None
        try:
            yield client
        finally:
            client.close()


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Keep pymilvus and Milvus Lite from logging tracebacks of errors that :func:`call` turns
    into one PoolError line anyway."""
    levels = {logger: logger.level for logger in map(logging.getLogger, _NOISY)}
    for logger in levels:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in levels.items():
            logger.setLevel(level)


def call(what: str, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``; a store error becomes ``PoolError("<what>: <reason>")``."""
    try:
        return function(*args, **kwargs)
    except (PoolError, InputError):
        raise
    except Exception as error:
        refused = auth_failure(error)
        if refused is not None:
            raise PoolError(f"{what}: the server refused the credentials ({refused})") from None
        raise PoolError(f"{what}: {reason(error)}") from None


# --------------------------------------------------------------------------- layout


@dataclass(frozen=True)
class Layout:
    """What retrieval needs to know about a collection: its vector field and dimension, its
    primary key, the names of its fields, and the model and tokenizer it records."""

    vector: str
    dimension: int
    primary: str
    fields: frozenset[str]
    model: str | None
    tokenizer: str | None


def describe(client: Any, uri: str, collection: str) -> Layout:
    """Describe ``collection``; PoolError if it is missing (naming those that exist) or has no
    FLOAT_VECTOR field or no VARCHAR field ``text``."""
    shown = redact_uri(uri)
    if not isinstance(collection, str) or not collection:
        raise InputError(f"collection must be a non-empty name, got {collection!r}")
    if not call(f"{shown}: has_collection", client.has_collection, collection):
        names = sorted(call(f"{shown}: listing collections", client.list_collections))
        held = ", ".join(repr(n) for n in names) if names else "none"
        raise PoolError(f"{shown}: no collection {collection!r}; the store holds: {held}")
    info = call(f"{shown}: describing {collection!r}", client.describe_collection, collection)
    DataType = _pymilvus("pymilvus").DataType

    fields = {f["name"]: f for f in info["fields"]}
    listed = ", ".join(fields)
    vectors = [n for n, f in fields.items() if f["type"] == DataType.FLOAT_VECTOR]
    vector = "vector" if "vector" in vectors else vectors[0] if len(vectors) == 1 else None
    if vector is None:
        raise PoolError(
            f"{shown}: collection {collection!r} has no FLOAT_VECTOR field named 'vector' "
            f"(fields: {listed})"
        )
    if fields.get("text", {}).get("type") != DataType.VARCHAR:
        raise PoolError(
            f"{shown}: collection {collection!r} has no VARCHAR field 'text' (fields: {listed})"
        )
    properties = info.get("properties") or {}
    return Layout(
        vector=vector,
        dimension=int(fields[vector]["params"]["dim"]),
        primary=next(n for n, f in fields.items() if f.get("is_primary")),
        fields=frozenset(fields),
        model=properties.get(MODEL_PROPERTY),
        tokenizer=properties.get(TOKENIZER_PROPERTY),
    )


def load_collection(client: Any, collection: str, where: str) -> None:
    """Load ``collection`` into memory for search unless it is loaded (a store reopened by a
    new process holds its collections released); no row is written. ``where`` names it."""
    LoadState = _pymilvus("pymilvus.client.types").LoadState

    state = call(f"{where}: load state", client.get_load_state, collection)
    if state.get("state") != LoadState.Loaded:
        call(f"{where}: load", client.load_collection, collection)


def create_collection(
    client: Any, collection: str, dimension: int, model: str, tokenizer: str
) -> None:
    """Create the chunk collection: FLAT index with COSINE (exact top-N), strong consistency,
    ``model`` and ``tokenizer`` in its properties (Milvus Lite keeps properties; it drops
    the schema description, which a server keeps for people to read)."""
    pymilvus = _pymilvus("pymilvus")
    DataType, MilvusClient = pymilvus.DataType, pymilvus.MilvusClient

    about = f"adagres chunks; embedding model {model}; tokenizer {tokenizer}"[:1024]
    schema = MilvusClient.create_schema(
        auto_id=False, enable_dynamic_field=False, description=about
    )
    # Primary and document keys are 63-bit hashes (key_of): a filter or delete on whole
    # numbers needs no quoting of ids that hold quotes or other punctuation.
    schema.add_field("pk", DataType.INT64, is_primary=True)
    schema.add_field("doc_key", DataType.INT64)
    for name, length in LENGTHS.items():  # chunk_id, doc_id, title, source, text
        schema.add_field(name, DataType.VARCHAR, max_length=length)
    schema.add_field("tokens", DataType.INT64)
    schema.add_field("metadata", DataType.JSON)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dimension)
    index = client.prepare_index_params()
    index.add_index(field_name="vector", index_type="FLAT", metric_type="COSINE")
    properties = {FORMAT_PROPERTY: "1", MODEL_PROPERTY: model, TOKENIZER_PROPERTY: tokenizer}
    client.create_collection(
        collection,
        schema=schema,
        index_params=index,
        consistency_level="Strong",
        properties=properties,
    )


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
    with connect(uri) as client:
        return sorted(call(f"{redact_uri(uri)}: listing collections", client.list_collections))


# --------------------------------------------------------------------------- indexing


def _row(chunk: Chunk, vector: np.ndarray, where: str) -> dict[str, Any]:
    metadata = dict(chunk.metadata or {})
    doc_id = str(metadata.get("doc_id", chunk.title or ""))
    row = {
        "pk": key_of(chunk.id),
        "doc_key": key_of(doc_id),
        "chunk_id": chunk.id,
        "doc_id": doc_id,
        "title": chunk.title or "",
        "source": chunk.source or "",
        "text": chunk.text,
        "tokens": -1 if chunk.tokens is None else int(chunk.tokens),  # -1: not counted
        "metadata": metadata,
        "vector": vector.tolist(),
    }
    for name, limit in LENGTHS.items():
        size = len(row[name].encode("utf-8"))
        if size > limit:
            raise PoolError(
                f"{where}: chunk {chunk.id!r}: {name} has {size} bytes, the store's field holds "
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
    dim = matrix.shape[1]
    where = f"{redact_uri(uri)}: collection {collection!r}"
    rows = [_row(c, v, where) for c, v in zip(chunks, matrix, strict=True)]
    if len({row["pk"] for row in rows}) != len(rows):
        raise PoolError(f"{where}: the chunk ids are not unique")
    with connect(uri, create=True) as client:
        if not call(f"{where}: has_collection", client.has_collection, collection):
            call(f"{where}: create", create_collection, client, collection, dim, model, tokenizer)
        layout = describe(client, uri, collection)
        if (layout.model, layout.tokenizer, layout.dimension) != (model, tokenizer, dim):
            raise PoolError(
                f"{where}: holds {layout.dimension}-d vectors from {layout.model!r} counted with "
                f"{layout.tokenizer!r}; these chunks are {dim}-d from {model!r} "
                f"counted with {tokenizer!r} (use another collection)"
            )
        load_collection(client, collection, where)  # a reopened store holds it released
        _delete_documents(client, collection, sorted({r["doc_key"] for r in rows}), where)
        for start in range(0, len(rows), _BATCH):
            call(f"{where}: insert", client.insert, collection, rows[start : start + _BATCH])
        # a strong-consistency count, right after the insert
        query = {"filter": "", "output_fields": ["count(*)"]}
        counted = call(f"{where}: counting rows", client.query, collection, **query)
        return int(counted[0]["count(*)"])


def _delete_documents(client: Any, collection: str, doc_keys: list[int], where: str) -> None:
    """Delete the rows of these documents (by primary key, which every Milvus version takes)."""
    for start in range(0, len(doc_keys), _BATCH):
        wanted = ", ".join(str(key) for key in doc_keys[start : start + _BATCH])
        old = call(
            f"{where}: query",
            client.query,
            collection,
            filter=f"doc_key in [{wanted}]",
            output_fields=["pk"],
        )
        if old:
            call(f"{where}: delete", client.delete, collection, ids=[row["pk"] for row in old])


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
        short = isinstance(item, str) and "\n" not in item and len(item) < 4096
        if isinstance(item, os.PathLike) or (short and Path(item).exists()):
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
        sources.update(origin)
    return texts, sources


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

    ``documents``: anything :func:`adagres.corpora.documents.read_documents` takes;
    ``metadata`` maps a document id to fields stored in each of its chunks' JSON ``metadata``
    (beside its ``doc_id`` and offsets). Chunks: :func:`~adagres.corpora.documents.chunk_documents`
    windows, embedded by ``model`` (default: the packaged all-MiniLM-L6-v2); ``source`` is
    the file they came from.
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
        stored.append(replace(chunk, source=sources.get(doc_id), metadata=fields))
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
    with connect(uri) as client:
        layout = describe(client, uri, collection)
        name = _query_model(layout, model, where)
        load_collection(client, collection, where)
        vectors = embed_texts(queries, model=name)
        if vectors.shape[1] != layout.dimension:
            raise PoolError(
                f"{where}: its vectors have {layout.dimension} values, the query model "
                f"{name!r} gives {vectors.shape[1]}"
            )
        wanted = sorted((layout.fields & set(_OPTIONAL)) | {"text", layout.vector})
        hits = call(
            f"{where}: search",
            client.search,
            collection,
            data=vectors.tolist(),
            limit=top_n,
            anns_field=layout.vector,
            output_fields=wanted,
        )
    record = dict(store="milvus", uri=strip_credentials(uri), collection=collection, top_n=top_n)
    pools = []
    for query, found, query_vector in zip(queries, hits, vectors, strict=True):
        chunks, stored = _chunks(list(found), layout, where)
        counted = all(chunk.tokens is not None for chunk in chunks)
        pool = Pool(
            query,
            chunks,
            raw_embeddings=stored,
            raw_query_embedding=query_vector,
            embedding_model=name,
            tokenizer=layout.tokenizer if counted else None,
            extra={"retrieval": dict(record)},
        )
        # the store's counts (named or not), unless another tokenizer is asked for
        if pool.token_counts is None or tokenizer not in (None, pool.tokenizer):
            counter = tokenizer or DEFAULT_TOKENIZER
            pool = pool.with_token_counts(count_tokens(pool.texts, counter), counter)
        pools.append(pool)
    return pools


def _query_model(layout: Layout, model: Any, where: str) -> str:
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


def _chunks(hits: list[Any], layout: Layout, where: str) -> tuple[tuple[Chunk, ...], np.ndarray]:
    """The chunks of one query's hits, in the store's rank order, and their stored vectors."""
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
    return tuple(chunks), np.stack(vectors)
