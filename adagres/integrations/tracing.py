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

>>> import numpy as np
>>> from adagres.core import baselines
>>> s = baselines.run("topk_budget", np.array([1.0, 0.0]), np.eye(2), [5, 5], 5)
>>> a = attributes(s, ["x", "y"], preset="recommended", tokenizer="words")
>>> a["adagres.picked_ids"], a["adagres.dropped_ids"], a["adagres.tokens_used"]
(['x'], ['y'], 5)
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ..core.result import Selection

__all__ = ["PREFIX", "SPAN_NAME", "attributes", "otel_span", "set_on"]

#: The prefix of every reported key.
PREFIX = "adagres."
#: The name of the span (OpenTelemetry, Haystack), run (LangChain) and event (LlamaIndex).
SPAN_NAME = "adagres.selection"


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


@contextlib.contextmanager
def otel_span(framework: str) -> Iterator[Any]:
    """An OpenTelemetry span named :data:`SPAN_NAME` around a selection, or ``None``
    without ``opentelemetry-api``; set the values with :func:`set_on`."""
    try:
        from opentelemetry import trace
    except ImportError:
        yield None
        return
    tracer = trace.get_tracer("adagres")
    with tracer.start_as_current_span(SPAN_NAME) as span:
        span.set_attribute(f"{PREFIX}framework", framework)
        yield span


def set_on(span: Any, values: Mapping[str, Any]) -> None:
    """Set ``values`` on an OpenTelemetry span (lists stay lists of strings)."""
    if span is not None:
        span.set_attributes(dict(values))
