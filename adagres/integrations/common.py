"""What the three framework adapters share: their options, the selection, the record.

An adapter turns what its framework retrieved into a :class:`Retrieved` (texts, vectors,
ids, metadata, in rank order), calls :func:`select`, and hands back the documents at
:func:`picks` in pick order (or the passages of :func:`returned`), each with the record of
its step (:data:`STEP_KEY`, :data:`GAIN_KEY`) added to a copy of its metadata.
:func:`select` is exactly ``baselines.run_prepared`` on the pool with the documents placed
in their sources (:mod:`adagres.integrations.passages`), untraced: the same picks, fewer
arrays; without overlapping documents, or with packing off, that is ``baselines.run``. Options
default to the ``"recommended"`` preset's strategy and settings (:func:`options`); with
``record_to`` each selection is appended to a pool-set JSONL file the app opens, the
selection under the pool's ``"selection"`` key (:data:`RECORD_KEY`). Imports no framework.

>>> o = options(300, tokenizer="words")
>>> o.strategy, o.settings.packing, o.tokenizer
('topk_budget', True, 'words')
>>> options(300, preset="paper", strategy="mmr").strategy
'mmr'
>>> options(300, record_to="runs.json")
Traceback (most recent call last):
...
adagres.errors.InputError: record_to: expected a .jsonl file (a pool set), got 'runs.json'
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import numpy as np

from ..core import baselines
from ..core import validate as v
from ..core.metrics import checked_texts
from ..core.prepared import prepare
from ..core.presets import preset as find_preset
from ..core.result import Selection
from ..core.settings import Settings
from ..embed.tokens import DEFAULT_TOKENIZER, TOKENIZERS, count_tokens
from ..errors import InputError, one_line
from ..pools.io import pool_from_retrieval
from ..pools.pool import GIVEN, Pool
from . import tracing
from .passages import Placed, Places, located, passages, spans_for, token_count

__all__ = [
    "DEFAULT_PRESET",
    "GAIN_KEY",
    "RECORD_KEY",
    "STEP_KEY",
    "Options",
    "Retrieved",
    "Selected",
    "Tokenizer",
    "answer",
    "count",
    "embedded",
    "matrix",
    "options",
    "picks",
    "record",
    "report",
    "returned",
    "saved",
    "select",
    "settings_from",
]

Tokenizer = str | Callable[[str], int]

#: The preset an adapter selects with unless told otherwise.
DEFAULT_PRESET = "recommended"
#: Metadata key of a selected document: its step number (1 = picked first).
STEP_KEY = "adagres_step"
#: Metadata key of a selected document: its marginal gain when picked (at the shared λ, τ).
GAIN_KEY = "adagres_gain"
#: Key of a recorded pool that holds the selection made on it.
RECORD_KEY = "selection"

D = TypeVar("D")

_RECORD_LOCK = threading.Lock()  # one appended line at a time within a process


@dataclass(frozen=True)
class Options:
    """How an adapter selects: budget (tokens), strategy and settings, tokenizer, record file."""

    budget: int
    strategy: str
    settings: Settings
    tokenizer: Tokenizer
    record_to: Path | None = None
    preset: str | None = None

    @property
    def tokenizer_name(self) -> str:
        """The tokenizer's name, or ``"given"`` for a callable (as a pool file records it)."""
        return self.tokenizer if isinstance(self.tokenizer, str) else GIVEN


def options(
    budget: int,
    *,
    preset: str = DEFAULT_PRESET,
    strategy: str | None = None,
    settings: Settings | None = None,
    tokenizer: Tokenizer = DEFAULT_TOKENIZER,
    record_to: str | os.PathLike[str] | None = None,
) -> Options:
    """Validate an adapter's arguments into one :class:`Options` value.

    ``preset`` (a name of :data:`adagres.PRESETS`) gives the strategy and the settings;
    ``strategy`` (a name of ``strategies.STRATEGIES``) and ``settings`` replace either one.
    ``record_to`` must name a ``.jsonl`` (or ``.ndjson``) file.
    """
    chosen = find_preset(preset)
    strategy = chosen.strategy if strategy is None else strategy
    v.choice(strategy, "strategy", baselines.STRATEGIES)
    if settings is None:
        settings = chosen.settings
    elif not isinstance(settings, Settings):
        raise InputError(f"settings: expected adagres.Settings, got {type(settings).__name__}")
    if not (tokenizer in TOKENIZERS if isinstance(tokenizer, str) else callable(tokenizer)):
        names = ", ".join(map(repr, TOKENIZERS))
        raise InputError(
            f"tokenizer: expected one of {names} or a callable text -> int, got {tokenizer!r}"
        )
    path = None
    if record_to is not None:
        if not isinstance(record_to, str | os.PathLike):
            shown = one_line(repr(record_to), max_chars=60)
            raise InputError(
                f"record_to: expected a path to a .jsonl file, got "
                f"{shown} ({type(record_to).__name__})"
            )
        path = Path(record_to)
        if not path.name.endswith((".jsonl", ".ndjson")):
            raise InputError(f"record_to: expected a .jsonl file (a pool set), got {path.name!r}")
    return Options(v.budget(budget), strategy, settings, tokenizer, path, preset)


def saved(chosen: Options) -> dict[str, Any]:
    """The options as JSON values: what each framework's serialised form of an adapter holds.

    A tokenizer is saved by its name; a callable cannot be saved (InputError).

    >>> saved(options(300, tokenizer="words"))["tokenizer"]
    'words'
    """
    if not isinstance(chosen.tokenizer, str):
        names = ", ".join(map(repr, TOKENIZERS))
        raise InputError(
            f"tokenizer: a callable tokenizer cannot be serialised; "
            f"pass tokenizer= one of {names} to save this adapter"
        )
    return {
        "budget": chosen.budget,
        "preset": chosen.preset or DEFAULT_PRESET,
        "strategy": chosen.strategy,
        "settings": chosen.settings.as_dict(),
        "tokenizer": chosen.tokenizer,
        "record_to": None if chosen.record_to is None else str(chosen.record_to),
    }


def settings_from(value: Any) -> Any:
    """``value`` as :class:`~adagres.Settings` when it is a mapping (a saved adapter's
    ``settings``), else ``value`` unchanged (checked by :func:`options`)."""
    if not isinstance(value, Mapping):
        return value
    known = {f.name for f in dataclasses.fields(Settings)}
    unknown = sorted(set(value) - known)
    if unknown:
        raise InputError(
            f"settings: unknown field {unknown[0]!r}; expected some of {', '.join(sorted(known))}"
        )
    return Settings(**value)


def count(texts: Sequence[str], tokenizer: Tokenizer) -> np.ndarray:
    """The (N,) int64 token count of each text under a tokenizer name or callable.

    >>> count(["one two", "three"], lambda text: len(text.split())).tolist()
    [2, 1]
    """
    if isinstance(tokenizer, str):
        return count_tokens(texts, tokenizer)
    counts = [token_count(tokenizer(text), f"document {i}") for i, text in enumerate(texts)]
    return np.array(counts, dtype=np.int64)


def matrix(vectors: Sequence[Any], labels: Sequence[str]) -> np.ndarray:
    """Stack one vector per document into an (N, d) array; a missing or odd-sized one is an
    :class:`InputError` naming the document (``labels[i]``)."""
    rows: list[np.ndarray] = []
    for label, vector in zip(labels, vectors, strict=True):
        if vector is None:
            raise InputError(f"document {label}: has no embedding")
        row = np.asarray(vector)
        if row.ndim != 1 or (rows and row.shape != rows[0].shape):
            dim = rows[0].shape[0] if rows else "a flat list of"
            raise InputError(
                f"document {label}: embedding has shape {row.shape}, expected {dim} values"
            )
        rows.append(row)
    return np.stack(rows)


def embedded(found: Any, expected: int, model: Any) -> list[Any]:
    """The vectors ``model.embed_documents`` (or its framework's equivalent) returned for
    ``expected`` texts, as a list; another count, or no list at all, is an
    :class:`InputError` naming the model and both counts (never a vector paired with the
    wrong document)."""
    name = type(model).__name__
    if isinstance(found, str | bytes | Mapping) or not hasattr(found, "__len__"):
        raise InputError(
            f"embeddings: {name} returned {one_line(repr(found), max_chars=40)} "
            f"for {expected} texts, expected a list of {expected} vectors"
        )
    if len(found) != expected:
        raise InputError(
            f"embeddings: {name} returned {len(found)} vectors for {expected} "
            f"texts; an embedding model returns one vector per text"
        )
    return list(found)


@dataclass(frozen=True)
class Retrieved:
    """What a framework retrieved for one query, in rank order.

    ``texts`` are what the budget counts; ``embeddings`` (N, d) and ``query_embedding`` (d,)
    are used as given (any scale: the core normalises). ``ids``, ``metadata`` and ``scores``
    go into the record only. ``places`` say where the documents sit in their sources
    (:class:`~adagres.integrations.passages.Places`; None: each is placed by the text it
    shares at its edges).
    """

    query: str
    texts: tuple[str, ...]
    embeddings: np.ndarray
    query_embedding: np.ndarray
    ids: tuple[str | None, ...]
    metadata: tuple[Mapping[str, Any] | None, ...]
    scores: tuple[float | None, ...] | None = None
    embedding_model: str | None = None
    places: Places | None = None

    def record_ids(self) -> list[str]:
        """The framework's ids when every document has a distinct one, else ``c0, c1, ...``."""
        ids = [str(i) for i in self.ids if i]
        if len(ids) == len(self.ids) and len(set(ids)) == len(ids):
            return ids
        return [f"c{position}" for position in range(len(self.ids))]


@dataclass(frozen=True)
class Selected(Generic[D]):
    """An adapter's answer: the selected documents in pick order (framework objects, each
    with its step record in its metadata) and the full :class:`~adagres.Selection`
    (``None`` when nothing was retrieved)."""

    documents: list[D]
    selection: Selection | None


def select(chosen: Options, retrieved: Retrieved, *, framework: str) -> Selection:
    """Count tokens, select with ``baselines.run_prepared`` on the pool with its spans and,
    with ``record_to``, record the run.

    With ``opentelemetry-api`` installed, the selection runs in an ``adagres.selection``
    span that carries :func:`report`'s values."""
    with tracing.otel_span(framework) as span:
        tokens = count(retrieved.texts, chosen.tokenizer)
        pool = prepare(retrieved.query_embedding, retrieved.embeddings, tokens)
        texts = checked_texts(retrieved.texts, pool.n_chunks)
        places = retrieved.places or located(texts, [(None, None, "")] * len(texts))
        pool = pool.with_spans(spans_for(places, chosen.tokenizer))
        selection = baselines.run_prepared(
            chosen.strategy, pool, chosen.budget, chosen.settings, texts=texts, trace=False
        )
        if span is not None and span.is_recording():  # its values, the documents as a reranker
            values = report(chosen, retrieved, selection)
            room = tracing.attribute_limit() - len(values) - 1  # - 1: adagres.framework
            documents = tracing.reranker_attributes(
                selection,
                retrieved.query,
                retrieved.record_ids(),
                retrieved.texts,
                scores=retrieved.scores,
                metadata=retrieved.metadata,
                gains={index: added[GAIN_KEY] for index, added in picks(selection)},
                max_attributes=room,
            )
            span.set_attributes({**documents, **values})  # lists stay lists of strings
    if chosen.record_to is not None:
        record(chosen.record_to, retrieved, tokens, selection, chosen, framework=framework)
    return selection


def report(chosen: Options, retrieved: Retrieved, selection: Selection) -> dict[str, Any]:
    """The selection as flat ``adagres.*`` values for a tracer
    (:func:`adagres.integrations.tracing.attributes`, ids as a record names them)."""
    return tracing.attributes(
        selection, retrieved.record_ids(), preset=chosen.preset, tokenizer=chosen.tokenizer_name
    )


def returned(selection: Selection, retrieved: Retrieved) -> list[Placed] | None:
    """The passages an adapter returns, in context order, each with the metadata to add
    (:func:`adagres.integrations.passages.passages`), or None when nothing was stitched:
    then the adapter returns the picks (:func:`picks`) as they are."""
    texts = retrieved.texts if retrieved.places is None else retrieved.places.texts
    return passages(selection, texts, retrieved.record_ids(), picks(selection))


def answer(selection: Selection, retrieved: Retrieved, make: Callable[[Placed], D]) -> Selected[D]:
    """The adapter's answer: ``make`` builds the document it returns for each passage
    (:func:`returned`), or for each pick when nothing was stitched (a passage of one chunk)."""
    placed = returned(selection, retrieved)
    if placed is None:
        placed = [Placed((i,), i, retrieved.texts[i], extra) for i, extra in picks(selection)]
    return Selected([make(p) for p in placed], selection)


def picks(selection: Selection) -> list[tuple[int, dict[str, Any]]]:
    """(pool position, metadata to add) of each pick, in pick order.

    >>> import numpy as np
    >>> s = baselines.run("topk_budget", np.array([1.0, 0.0]), np.eye(2), [5, 5], 5)
    >>> picks(s)
    [(0, {'adagres_step': 1, 'adagres_gain': 1.0})]
    """
    return [
        (int(step.winner), {STEP_KEY: step.number, GAIN_KEY: float(step.gain)})
        for step in selection.steps
        if step.accepted and step.winner is not None and step.gain is not None
    ]


def record(
    path: Path,
    retrieved: Retrieved,
    tokens: np.ndarray,
    selection: Selection,
    chosen: Options,
    *,
    framework: str,
) -> Pool:
    """Append the pool and its selection to the pool set at ``path`` as one line; return it."""
    if not retrieved.query.strip():
        raise InputError("query: record_to needs the query text (it is the pool's query)")
    ids = retrieved.record_ids()
    metadata = [None if m is None else _json_safe(dict(m)) for m in retrieved.metadata]
    scores = retrieved.scores
    pool = pool_from_retrieval(
        retrieved.query,
        list(retrieved.texts),
        None if scores is None or None in scores else [float(x) for x in scores if x is not None],
        embeddings=retrieved.embeddings,
        query_embedding=retrieved.query_embedding,
        embedding_model=retrieved.embedding_model,
        ids=ids,
        metadata=metadata,
    )
    pool = pool.with_token_counts(tokens, chosen.tokenizer_name)
    summary = {
        "framework": framework,
        "strategy": selection.strategy,
        "budget": selection.budget,
        "settings": chosen.settings.as_dict(),
        "tokenizer": chosen.tokenizer_name,
        "selected": [ids[i] for i in selection.indices],
        "gains": [extra[GAIN_KEY] for _, extra in picks(selection)],
        "tokens_used": selection.tokens_used,
        "objective": selection.objective,
        "lam": selection.lam,
        "stop_reason": selection.stop_reason.value,
    }
    if selection.passages:
        summary["passages"] = [[ids[i] for i in p.chunks] for p in selection.passages]
        summary["tokens_saved"] = selection.tokens_saved
    pool = dataclasses.replace(pool, extra={**pool.extra, RECORD_KEY: summary})
    line = json.dumps(pool.to_dict(), ensure_ascii=False, allow_nan=False) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    with _RECORD_LOCK, open(path, "a", encoding="utf-8") as file:
        file.write(line)  # one write per pool: lines of two runs never interleave
    return pool


def _json_safe(value: Any) -> Any:
    """``value`` with everything JSON cannot hold (NaN, dates, objects) turned into text."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, Mapping):
        return {str(key): _json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(item) for item in value]
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    return str(value)
