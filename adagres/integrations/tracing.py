"""What an adapter reports to its framework's tracing, and the OpenTelemetry span.

:func:`attributes` turns one selection into flat ``adagres.*`` values (strings, numbers and
lists of strings, which every tracer can store): the strategy and preset, the budget and
the tokens used, λ, the stop reason, the picked and the dropped ids, and what
overlap-aware packing did: the merges it made (``adagres.merges``, 0 without packing) and
the tokens they saved (``adagres.tokens_saved``). Each adapter hands
them to its framework's tracing (LangChain callbacks, LlamaIndex instrumentation, Haystack
tracer tags); :func:`otel_span` also sets them on an OpenTelemetry span when
``opentelemetry-api`` is installed (a no-op span unless the application configured a
tracer provider). Imports no framework.

:func:`reranker_attributes` describes the same selection as an OpenInference span of
kind ``RERANKER``, which Phoenix and other OpenInference back ends show as a reranker
under the retriever: ``reranker.query``, the retrieved documents in rank order
(``reranker.input_documents.N.document.{id,content,score,metadata}``), the picks in pick
order (``reranker.output_documents.N.document.*``, each scored by its marginal gain when
picked), ``reranker.model_name`` (``adagres/<strategy>``) and ``reranker.top_k`` (the
number of picks); λ, the stop reason, the tokens used and saved and the dropped ids are
the ``adagres.*`` values beside them.

>>> import numpy as np
>>> from adagres.core import baselines
>>> s = baselines.run("topk_budget", np.array([1.0, 0.0]), np.eye(2), [5, 5], 5)
>>> a = attributes(s, ["x", "y"], preset="recommended", tokenizer="words")
>>> a["adagres.picked_ids"], a["adagres.dropped_ids"], a["adagres.tokens_used"]
(['x'], ['y'], 5)
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..core.result import Selection

__all__ = [
    "PREFIX",
    "RERANKER",
    "SPAN_NAME",
    "attribute_limit",
    "attributes",
    "otel_span",
    "reranker_attributes",
]

#: The prefix of every reported key.
PREFIX = "adagres."
#: The name of the span (OpenTelemetry, Haystack), run (LangChain) and event (LlamaIndex).
SPAN_NAME = "adagres.selection"
#: OpenInference's span kind of a selection span.
RERANKER = "RERANKER"


def attributes(
    selection: Selection, ids: Sequence[str], *, preset: str | None, tokenizer: str
) -> dict[str, Any]:
    """The selection as flat ``adagres.*`` values; ``ids`` name the pool's documents in
    rank order (the dropped ids are the retrieved documents not picked, in rank order)."""
    picked = set(selection.indices)
    lam = float(selection.lam)
    return {
        f"{PREFIX}strategy": selection.strategy,
        f"{PREFIX}preset": preset or "",
        f"{PREFIX}budget": int(selection.budget),
        f"{PREFIX}tokens_used": int(selection.tokens_used),
        f"{PREFIX}lambda": lam if math.isfinite(lam) else str(lam),
        f"{PREFIX}stop_reason": selection.stop_reason.value,
        f"{PREFIX}pool_size": len(ids),
        f"{PREFIX}picked_ids": [str(ids[i]) for i in selection.indices],
        f"{PREFIX}dropped_ids": [str(ids[i]) for i in range(len(ids)) if i not in picked],
        f"{PREFIX}tokenizer": tokenizer,
        f"{PREFIX}merges": len(selection.merges),
        f"{PREFIX}tokens_saved": int(selection.tokens_saved),
    }


def _document(
    prefix: str, document_id: str, text: str, score: float | None, metadata: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {f"{prefix}.document.id": document_id, f"{prefix}.document.content": text}
    if score is not None and math.isfinite(score):
        out[f"{prefix}.document.score"] = float(score)
    if metadata:
        out[f"{prefix}.document.metadata"] = json.dumps(
            dict(metadata), ensure_ascii=False, default=str
        )
    return out


def reranker_attributes(
    selection: Selection,
    query: str,
    ids: Sequence[str],
    texts: Sequence[str],
    *,
    scores: Sequence[float | None] | None = None,
    metadata: Sequence[Mapping[str, Any] | None] | None = None,
    gains: Mapping[int, float] | None = None,
    max_attributes: int | None = None,
) -> dict[str, Any]:
    """The selection as OpenInference ``RERANKER`` span attributes (see the module):
    ``ids``, ``texts``, ``scores`` and ``metadata`` describe the retrieved documents in rank
    order; ``gains`` maps a pick's pool position to its marginal gain (its output score).

    An OpenTelemetry span keeps at most 128 attributes unless configured otherwise (and
    drops the oldest past that); with ``max_attributes`` the documents are added whole
    while they fit, the picks first, and ``adagres.documents_left_out`` counts the input
    and output documents left out.

    >>> import numpy as np
    >>> from adagres.core import baselines
    >>> s = baselines.run("topk_budget", np.array([1.0, 0.0]), np.eye(2), [5, 5], 5)
    >>> a = reranker_attributes(s, "q", ["x", "y"], ["X.", "Y."], gains={0: 1.0})
    >>> a["openinference.span.kind"], a["reranker.output_documents.0.document.id"]
    ('RERANKER', 'x')
    >>> a["reranker.output_documents.0.document.score"], a["reranker.top_k"]
    (1.0, 1)
    """
    out: dict[str, Any] = {
        "openinference.span.kind": RERANKER,
        "input.value": query,
        "reranker.query": query,
        "reranker.model_name": f"adagres/{selection.strategy}",
        "reranker.top_k": len(selection.indices),
    }
    scores = [None] * len(ids) if scores is None else scores
    metadata = [None] * len(ids) if metadata is None else metadata
    gains = gains or {}
    documents = [
        _document(
            f"reranker.output_documents.{rank}", str(ids[i]), texts[i], gains.get(i), metadata[i]
        )
        for rank, i in enumerate(map(int, selection.indices))
    ]
    for n, (document_id, text) in enumerate(zip(ids, texts, strict=True)):
        prefix = f"reranker.input_documents.{n}"
        documents.append(_document(prefix, str(document_id), text, scores[n], metadata[n]))
    room = None if max_attributes is None else max_attributes - len(out) - 1
    left_out = 0
    for document in documents:
        if left_out or (room is not None and len(document) > room):
            left_out += 1  # and every later one: the numbers N stay 0, 1, 2, ... unbroken
            continue
        out.update(document)
        room = None if room is None else room - len(document)
    if max_attributes is not None:
        out[f"{PREFIX}documents_left_out"] = left_out
    return out


def attribute_limit() -> int:
    """The most attributes an OpenTelemetry span keeps, as the SDK reads it from the
    environment (``OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT``, else ``OTEL_ATTRIBUTE_COUNT_LIMIT``,
    else 128)."""
    for name in ("OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT", "OTEL_ATTRIBUTE_COUNT_LIMIT"):
        value = os.environ.get(name, "").strip()
        if value.isdigit():
            return int(value)
    return 128


@contextlib.contextmanager
def otel_span(framework: str) -> Iterator[Any]:
    """An OpenTelemetry span named :data:`SPAN_NAME` around a selection, or ``None``
    without ``opentelemetry-api``."""
    try:
        from opentelemetry import trace
    except ImportError:
        yield None
        return
    tracer = trace.get_tracer("adagres")
    with tracer.start_as_current_span(SPAN_NAME) as span:
        span.set_attribute(f"{PREFIX}framework", framework)
        yield span
