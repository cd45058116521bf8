"""Corpus mode: chunk a few documents the way RAG pipelines do, embed, retrieve a pool.

Chunks are windows of ``size`` tokens that start every ``size - overlap`` tokens, cut at
character boundaries of the original text. Each chunk remembers its document and its
character and token offsets in ``chunk.metadata``, so a user can see what overlapping
chunking does to redundancy.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from adagres.core import validate as v
from adagres.embed.tokens import DEFAULT_TOKENIZER, count_tokens, token_spans
from adagres.errors import InputError, PoolError, one_line
from adagres.pools.pool import Chunk, Pool

__all__ = ["chunk_documents", "pool_from_documents", "read_documents"]

_TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".rst")
_TABLE_SUFFIXES = (".csv", ".parquet", ".pq", ".json", ".jsonl")
# How a path is written: from the root, the current or parent folder, home, or a drive.
_PATH_START = re.compile(r"(?:/|\./|\.\./|~/|[A-Za-z]:[\\/])")

Documents = Mapping[str, str] | Sequence[Any] | str | os.PathLike[str]


def read_documents(documents: Documents) -> dict[str, str]:
    """Return ``{doc_id: text}`` from a mapping, a list of texts or files, a folder or a table.

    Text and markdown files are read as UTF-8 (id: the file name); a CSV/parquet/JSON(L)
    table gives one document per row (``text`` column, ``id`` or ``title`` for the id); a
    plain string that is not a path is one document (id ``doc0``).

    A string of one line is a path when it ends in a file suffix (``.txt``, ``.md``,
    ``.csv``, ...) or is written as one: it starts with ``/``, ``./``, ``../``, ``~/`` or a
    drive (``C:\\``) and holds no white space. A path must name a readable regular file
    (at the top level, a folder too: its text files are read); a missing path, a folder
    inside a list, a device such as ``/dev/null`` or a pipe is refused by name, never
    chunked as if it were the text (give such a text in a mapping, ``{"doc": "see
    notes.md"}``).

    >>> read_documents(["first text", "second text"])
    {'doc0': 'first text', 'doc1': 'second text'}
    """
    if isinstance(documents, Mapping):
        return {str(key): value for key, value in documents.items()}
    if isinstance(documents, (str, os.PathLike)):
        path = _path(documents)
        if isinstance(documents, os.PathLike) or _is_path(str(documents)):
            if path.is_dir():
                files = sorted(p for p in path.iterdir() if p.suffix.lower() in _TEXT_SUFFIXES)
                return _read_files(files)
            if path.suffix.lower() in _TABLE_SUFFIXES:
                return _read_table(path)
            return _read_files([path])
        documents = [documents]
    out: dict[str, str] = {}
    for position, item in enumerate(documents):
        if isinstance(item, os.PathLike) or (isinstance(item, str) and _is_path(item)):
            out.update(_read_files([_path(item)]))
        elif isinstance(item, str):
            out[f"doc{position}"] = item
        else:
            raise InputError(
                f"documents[{position}] is a {type(item).__name__}, expected a text or a file path"
            )
    return out


def _is_path(text: str) -> bool:
    """True for a string that names a file (one line, and a file suffix or the start of a
    path with no white space: see :func:`read_documents`); raise PoolError when nothing
    exists there."""
    if "\n" in text or "\r" in text or len(text) >= 4096:
        return False
    suffixed = Path(text).suffix.lower() in (_TEXT_SUFFIXES + _TABLE_SUFFIXES)
    written = _PATH_START.match(text) is not None and not any(c.isspace() for c in text)
    if not (suffixed or written):
        return False
    try:
        found = _path(text).exists()
    except OSError as error:  # a name too long
        found, reason = False, error.strerror or str(error)
    else:
        reason = "no such file or folder"
    if not found:
        shown = one_line(text, max_chars=200)
        raise PoolError(
            f"documents: {shown!r} names a file ({reason}); to chunk a text that ends in a "
            f"file suffix, give it in a mapping, {{'doc': text}}"
        )
    return True


def _path(text: str | os.PathLike[str]) -> Path:
    """The path a string names (``~/`` is the user's home folder; PoolError for ``~name/``
    of a user this system does not know)."""
    path = Path(text)
    if not str(text).startswith("~"):
        return path
    try:
        return path.expanduser()
    except RuntimeError:  # no such user, or no home folder at all
        shown = one_line(str(text), max_chars=200)
        raise PoolError(
            f"documents: {shown!r} names a file in the home folder of {path.parts[0]!r}, "
            "which this system does not know"
        ) from None


def _read_files(paths: Iterable[Path]) -> dict[str, str]:
    out = {}
    for path in paths:
        try:
            regular, folder = path.is_file(), path.is_dir()
        except OSError:  # a name too long: open() below names the reason
            regular, folder = True, False
        if not regular:  # a folder, a device (/dev/null), a pipe: never read as text
            shown = one_line(str(path), max_chars=200)
            kind = "a folder" if folder else "not a regular file" if path.exists() else "missing"
            raise PoolError(
                f"documents: {shown!r} is {kind}; give the path of a text file (a folder "
                f"alone, not inside a list), or the text in a mapping, {{'doc': text}}"
            )
        try:
            out[path.name] = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as error:
            raise PoolError(f"{path.name}: bytes are not UTF-8 (offset {error.start})") from None
        except OSError as error:
            raise PoolError(f"{path.name}: cannot read the file ({error.strerror})") from None
    return out


def _read_table(path: Path) -> dict[str, str]:
    """Every chunk text of a table or pool file, whatever its queries (a stand-in query is
    supplied only where the file has none), as documents named by title, else by id.

    A text that appears again under the same name (the same chunk retrieved for two
    queries) is one document; another text under a name already taken (two reviews with
    one title) is kept as ``"<name> (2)"``, ``"<name> (3)"``, ...: no text is dropped.
    """
    from adagres.pools.io import load_pools

    out: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    for pool in load_pools(path, query="(documents)"):
        for chunk in pool.chunks:
            name = chunk.title or chunk.id
            if (name, chunk.text) in seen:
                continue
            seen.add((name, chunk.text))
            key, copy = name, 1
            while key in out:
                copy += 1
                key = f"{name} ({copy})"
            out[key] = chunk.text
    return out


def chunk_documents(
    documents: Documents,
    *,
    size: int = 200,
    overlap: int = 40,
    tokenizer: str = DEFAULT_TOKENIZER,
) -> list[Chunk]:
    """Split documents into windows of ``size`` tokens overlapping by ``overlap`` tokens.

    Chunk ids are ``"<doc id>#<k>"``; ``metadata`` holds ``doc_id``, ``start``/``end``
    (character offsets into the document) and ``token_start``/``token_end``; ``tokens``
    is the chunk text's own count under ``tokenizer``.

    >>> chunks = chunk_documents({"d": "one two three four five"}, size=3, overlap=1,
    ...                          tokenizer="words")
    >>> [(c.id, c.text) for c in chunks]
    [('d#0', 'one two three'), ('d#1', 'three four five')]
    """
    if not isinstance(size, int) or size < 1:
        raise InputError(f"chunk size must be a positive number of tokens, got {size!r}")
    if not isinstance(overlap, int) or not 0 <= overlap < size:
        raise InputError(
            f"overlap must be at least 0 and below the chunk size {size}, got {overlap!r}"
        )
    chunks: list[Chunk] = []
    for doc_id, text in read_documents(documents).items():
        chunks.extend(_chunk_one(doc_id, text, size, overlap, tokenizer))
    if not chunks:
        raise PoolError("the documents hold no text to chunk")
    counts = count_tokens([chunk.text for chunk in chunks], tokenizer)
    return [replace(chunk, tokens=int(n)) for chunk, n in zip(chunks, counts, strict=True)]


def _chunk_one(doc_id: str, text: str, size: int, overlap: int, tokenizer: str) -> list[Chunk]:
    spans = token_spans(text, tokenizer)
    out: list[Chunk] = []
    # the last window is the first to reach the end of the text
    for first in range(0, max(len(spans) - overlap, 1), size - overlap):
        last = min(first + size, len(spans))
        if last <= first:
            break  # a text without tokens
        start, end = spans[first][0], spans[last - 1][1]
        piece = text[start:end]
        if piece.strip():
            places = dict(doc_id=doc_id, start=start, end=end, token_start=first, token_end=last)
            out.append(Chunk(f"{doc_id}#{len(out)}", piece, title=doc_id, metadata=places))
    return out


def pool_from_documents(
    documents: Documents,
    query: str,
    *,
    size: int = 200,
    overlap: int = 40,
    top_n: int = 20,
    tokenizer: str = DEFAULT_TOKENIZER,
    model: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: Any = None,
) -> Pool:
    """Chunk ``documents``, embed chunks and query with one model, and return the top-N pool.

    The pool is in descending cosine order (ties: document order), each chunk's ``score``
    is its cosine with the query, and ``pool.extra["corpus"]`` records the chunking.

    >>> pool = pool_from_documents(["Paris is in France. Lyon too."], "French cities",
    ...                            size=4, overlap=1, top_n=2)
    >>> len(pool), pool.chunks[0].metadata["doc_id"] is not None
    (2, True)
    """
    from adagres.embed.models import embed_texts, resolve_model

    if not isinstance(query, str) or not query.strip():
        raise InputError("the query must be a non-empty text")
    if not isinstance(top_n, int) or top_n < 1:
        raise InputError(f"top_n must be a positive integer, got {top_n!r}")
    chunks = chunk_documents(documents, size=size, overlap=overlap, tokenizer=tokenizer)
    name = resolve_model(model)
    vectors = embed_texts(
        [*(c.text for c in chunks), query], model=name, cache_dir=cache_dir, progress=progress
    )
    unit = v.unit_rows(vectors, "embeddings")
    cosine = unit[:-1] @ unit[-1]
    order = np.argsort(-cosine, kind="stable")[:top_n]
    picked = tuple(replace(chunks[i], score=round(float(cosine[i]), 6)) for i in order)
    corpus = {
        "size": size,
        "overlap": overlap,
        "tokenizer": tokenizer,
        "documents": len({(c.metadata or {}).get("doc_id") for c in chunks}),
        "chunks": len(chunks),
    }
    return Pool(
        query,
        picked,
        raw_embeddings=vectors[order],
        raw_query_embedding=vectors[-1],
        embedding_model=name,
        tokenizer=tokenizer,
        extra={"corpus": corpus},
    )
