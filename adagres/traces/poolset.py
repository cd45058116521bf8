"""A trace export as a pool set: one pool per retriever span (or LangSmith retriever run),
the pools of a trace next to each other.

:func:`write_pool_set` streams the export once, checks each pool as a pool file's line is
checked (:func:`adagres.pools.io.pool_from_dict`, with its limits), writes it to a
temporary file and keeps 32 bytes per pool (a hash of its trace id, its start, its place
in that file); then it writes the pools grouped by trace (the traces in the order they
first appear, the retrievals of a trace by start time) into a ``.jsonl`` pool set that
:func:`adagres.poolsets.summaries.load_pool_set` opens. Memory: one line of the export and
32 bytes per pool, whatever the export's size.

A retriever span without documents is left out and counted (LlamaIndex records an inner
retriever span without them around every retrieval); an export in which no retriever span
has documents is refused. Without token counts or embeddings in a trace, the pools are
written without them, or with ``tokenizer=`` (counts) and ``embed=True`` (the packaged
model, offline) filled in, as for any pool (:func:`adagres.pools.ready.ensure_token_counts`,
:func:`adagres.pools.ready.ensure_embeddings`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import threading
from array import array
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from adagres.core.validate import choice
from adagres.errors import InputError, PoolError, one_line
from adagres.pools.io import pool_from_dict
from adagres.pools.load_limits import DEFAULT_LIMITS, Limits
from adagres.pools.pool import Pool
from adagres.poolsets.files import PoolSet, is_file, load_pool_set, reading
from adagres.traces.exports import detect, spans
from adagres.traces.spans import has_documents, span_pool

__all__ = ["Converted", "read_pools", "trace_pool_set", "write_pool_set"]


@dataclass(frozen=True)
class Converted:
    """What :func:`write_pool_set` read and wrote."""

    format: str
    spans: int
    pools: int
    traces: int
    empty: int
    kinds: dict[str, int]

    def summary(self) -> str:
        """One line for the CLI and the app."""
        noun = "runs" if self.format == "langsmith" else "spans"
        empty = f"; {self.empty} retriever {noun} without documents left out" if self.empty else ""
        return (
            f"{self.pools} pools from {self.traces} traces ({self.spans:,} {noun} read, "
            f"{self.format} export){empty}"
        )


def _pool_dicts(path: Path, kind: str, tally: Counter) -> Iterator[tuple[dict[str, Any], str, int]]:
    """(pool object, where, start in ns) of every retrieval with documents; ``tally``
    counts what it read (``spans``, ``empty``, ``pools`` and each span kind). PoolError
    when there is none."""
    for span in spans(path, kind):
        tally["spans"] += 1
        tally[f"kind:{span.span_kind}"] += 1
        if not span.is_retriever:
            continue
        if not has_documents(span):
            tally["empty"] += 1
            continue
        tally["pools"] += 1
        yield span_pool(span), span.where, span.start_ns or 0
    if not tally["pools"]:
        raise _no_pools(path, kind, tally)


def read_pools(source: str | os.PathLike[str], *, limits: Limits | None = None) -> Iterator[Pool]:
    """The pools of a trace export in file order (not grouped), each checked: for a look
    at a small export in code. :func:`write_pool_set` groups them by trace."""
    path, kind, chosen = _opened(source, limits)
    for obj, where, _ in _pool_dicts(path, kind, Counter()):
        yield pool_from_dict(obj, name=where, limits=chosen)


def _opened(source: Any, limits: Limits | None) -> tuple[Path, str, Limits]:
    chosen = limits or DEFAULT_LIMITS
    if not isinstance(chosen, Limits):
        raise InputError(f"limits must be an adagres.Limits, got {type(chosen).__name__}")
    if not isinstance(source, str | os.PathLike):
        raise InputError(f"trace export: expected a path, got {type(source).__name__}")
    path = Path(source)
    label = one_line(path.name, max_chars=120)
    if not is_file(path):
        raise PoolError(f"{label}: no such trace export file")
    kind = detect(path)
    if kind is None:
        raise PoolError(
            f"{label}: not a trace export: expected OTLP JSON (resourceSpans), a Phoenix span "
            f"table (Parquet or JSON lines with span_kind / attributes.* columns) or LangSmith "
            f"runs (run_type)"
        )
    return path, kind, chosen


def _no_pools(path: Path, kind: str, tally: Counter) -> PoolError:
    label = one_line(path.name, max_chars=120)
    kinds = {k.removeprefix("kind:"): n for k, n in tally.items() if k.startswith("kind:")}
    shown = ", ".join(f"{name} {count}" for name, count in sorted(kinds.items())) or "none"
    noun = "run" if kind == "langsmith" else "span"
    if tally["empty"]:
        return PoolError(
            f"{label}: {tally['empty']} retriever {noun}(s), none with documents "
            f"({'outputs.documents' if kind == 'langsmith' else 'retrieval.documents'}); "
            f"{tally['spans']:,} {noun}s read"
        )
    return PoolError(
        f"{label}: no retriever {noun} among {tally['spans']:,} {noun}s (kinds: {shown})"
    )


def write_pool_set(
    source: str | os.PathLike[str],
    target: str | os.PathLike[str],
    *,
    tokenizer: str | None = None,
    embed: bool = False,
    limits: Limits | None = None,
) -> Converted:
    """Write the retrievals of the trace export ``source`` as a ``.jsonl`` pool set at
    ``target``, grouped by trace (see the module); return what was read and written.

    ``tokenizer`` (a name of :data:`adagres.embed.tokens.TOKENIZERS`) writes token counts;
    ``embed`` writes embeddings from the packaged model. Raise PoolError naming the file,
    the line (or row) and the span for a malformed export, a retriever span without a query
    or with a document without content, or an export with no retriever span that has
    documents; the target is then left as it was.
    """
    from adagres.embed.tokens import TOKENIZERS
    from adagres.pools.ready import ensure_embeddings, ensure_token_counts

    if tokenizer is not None:
        choice(tokenizer, "tokenizer", TOKENIZERS)
    path, kind, chosen = _opened(source, limits)
    out = Path(target)
    if not out.name.endswith((".jsonl", ".ndjson")):
        raise InputError(f"target: expected a .jsonl file (a pool set), got {out.name!r}")
    mine = f"{os.getpid()}-{threading.get_ident()}"  # the app converts in its sessions' threads
    scratch = out.with_name(f".{out.name}.{mine}.unsorted")
    partial = out.with_name(f".{out.name}.{mine}.tmp")
    keys, starts, offsets, lengths = array("q"), array("q"), array("q"), array("q")
    tally: Counter = Counter()
    try:
        with scratch.open("wb") as handle:
            for obj, where, start in _pool_dicts(path, kind, tally):
                pool = pool_from_dict(obj, name=where, limits=chosen)
                if tokenizer is not None:
                    pool = ensure_token_counts(pool, tokenizer)
                if embed:
                    pool = ensure_embeddings(pool)
                line = (json.dumps(pool.to_dict(), ensure_ascii=False) + "\n").encode()
                trace_id = obj["trace"].get("trace_id")  # else the pool is a trace of its own
                key = f"t:{trace_id}" if trace_id else f"n:{len(keys)}"
                digest = hashlib.blake2b(key.encode(), digest_size=8).digest()
                keys.append(int.from_bytes(digest, "little") >> 1)  # the trace's 63-bit key
                starts.append(start)
                offsets.append(handle.tell())
                lengths.append(len(line))
                handle.write(line)
        order = _grouped(np.frombuffer(keys, np.int64), np.frombuffer(starts, np.int64))
        with scratch.open("rb") as unsorted, partial.open("wb") as handle:
            for index in order:
                unsorted.seek(offsets[index])
                handle.write(unsorted.read(lengths[index]))
        os.replace(partial, out)
    finally:
        for leftover in (scratch, partial):
            leftover.unlink(missing_ok=True)
    kinds = {k.removeprefix("kind:"): n for k, n in tally.items() if k.startswith("kind:")}
    traces = len(np.unique(np.frombuffer(keys, np.int64)))
    return Converted(kind, tally["spans"], len(keys), traces, tally["empty"], kinds)


def _grouped(keys: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The order that puts each trace's pools together: traces by first appearance, the
    pools of a trace by start time, then by their place in the export.

    >>> _grouped(np.array([7, 5, 7, 5]), np.array([30, 10, 20, 5])).tolist()
    [2, 0, 3, 1]
    """
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    trace_rank = first[inverse]
    return np.lexsort((np.arange(len(keys)), starts, trace_rank))


def trace_pool_set(
    source: str | os.PathLike[str],
    folder: str | os.PathLike[str],
    *,
    limits: Limits | None = None,
) -> PoolSet:
    """The trace export ``source`` as a :class:`PoolSet`: written once into ``folder``
    (named by the digest of the export's bytes, so a second call reads it at once), then
    opened as any pool set file; the set keeps the export's name and path."""
    path = Path(source)
    with reading(one_line(path.name, max_chars=120)), path.open("rb") as handle:
        digest = hashlib.file_digest(handle, "sha256")
    target = Path(folder) / f"trace-{digest.hexdigest()[:24]}.jsonl"
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        write_pool_set(path, target, limits=limits)
    found = load_pool_set(target, limits=limits)
    return dataclasses.replace(found, name=path.name, source=str(path))
