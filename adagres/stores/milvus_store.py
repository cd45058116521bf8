"""The Milvus plumbing under :mod:`adagres.stores.milvus`: URIs and their credentials, one
connection, the collection layout this project writes and reads.

Every failure to reach a store or to read a collection becomes one :class:`PoolError`
line that names the store (credentials redacted), the collection and the reason.
``pymilvus`` is imported inside the functions that need it.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from adagres.errors import InputError, PoolError, require
from adagres.stores import lockfiles

__all__ = [
    "FORMAT_PROPERTY",
    "LENGTHS",
    "MODEL_PROPERTY",
    "TOKENIZER_PROPERTY",
    "Layout",
    "call",
    "connect",
    "create_collection",
    "has_credentials",
    "is_local",
    "key_of",
    "layout",
    "load",
    "reason",
    "redact_uri",
    "row_count",
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
    if not found:
        return clean
    parts = urlsplit(clean)
    return urlunsplit(parts._replace(netloc="***@" + parts.netloc))


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


def _store_locked(path: Path) -> bool:
    """Whether another process holds the Milvus Lite lock of the store ``path``."""
    import fcntl

    lock = path / "LOCK"
    if not lock.is_file():
        return False
    with open(lock, "rb") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
    return False


def _lock_holder(path: Path) -> str:
    """Who holds the store's lock, as the message says it: the process(es) when known."""
    others = [
        (pid, command)
        for pid, command in lockfiles.holders(path / lockfiles.LOCK_NAME)
        if pid != os.getpid()
    ]
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
    shown = redact_uri(uri)
    if is_local(uri):
        path = Path(uri)
        if create:
            path.parent.mkdir(parents=True, exist_ok=True)
        elif not path.exists():
            raise PoolError(f"no Milvus Lite store at {shown} (make one with 'adagres index')")
    MilvusClient = _pymilvus("pymilvus").MilvusClient
    if is_local(uri):
        _pymilvus("milvus_lite")  # pymilvus runs a .db store through it

    with _quiet():
        try:
            client = MilvusClient(clean, token=token or "", timeout=60)
        except Exception as error:
            if is_local(uri) and _store_locked(Path(uri)):
                raise PoolError(
                    f"cannot open the Milvus Lite store {shown}: {_lock_holder(Path(uri))} "
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
    loggers = [logging.getLogger(name) for name in _NOISY]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
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


def layout(client: Any, uri: str, collection: str) -> Layout:
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


def load(client: Any, uri: str, collection: str) -> None:
    """Load ``collection`` into memory for search unless it is loaded (a store reopened by a
    new process holds its collections released); no row is written."""
    LoadState = _pymilvus("pymilvus.client.types").LoadState

    where = f"{redact_uri(uri)}: collection {collection!r}"
    state = call(f"{where}: load state", client.get_load_state, collection)
    if state.get("state") != LoadState.Loaded:
        call(f"{where}: load", client.load_collection, collection)


def row_count(client: Any, collection: str) -> int:
    """Rows in ``collection`` (a strong-consistency count, right after an insert too)."""
    rows = client.query(collection, filter="", output_fields=["count(*)"])
    return int(rows[0]["count(*)"])


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
    schema.add_field("chunk_id", DataType.VARCHAR, max_length=LENGTHS["chunk_id"])
    for name in ("doc_id", "title", "source", "text"):
        schema.add_field(name, DataType.VARCHAR, max_length=LENGTHS[name])
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
