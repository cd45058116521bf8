"""Pipeline traces as pools: the retrievals that OpenInference (Phoenix) and LangSmith
already record, read as a pool set.

``write_pool_set("spans.jsonl", "pools.jsonl").summary()`` says, for example,
``'12 pools from 9 traces (480 spans read, otlp export)'``.

- :func:`detect` tells the format of an export by its content (OTLP JSON, Phoenix's span
  table as Parquet or JSON lines, LangSmith runs), or None;
- :func:`write_pool_set` writes its retrievals as a ``.jsonl`` pool set, grouped by trace,
  streaming the export (:mod:`adagres.traces.poolset`);
- :func:`trace_pool_set` opens an export as a :class:`~adagres.poolsets.summaries.PoolSet`
  (converted once into a folder);
- :func:`read_pools` yields its pools in file order.

Each retriever span (or run) becomes one pool, as :mod:`adagres.traces.spans` says.
Imports neither OpenTelemetry nor any framework.
"""

from adagres.traces.exports import FORMATS, MAX_DOCUMENT_BYTES, detect
from adagres.traces.poolset import Converted, read_pools, trace_pool_set, write_pool_set

__all__ = [
    "FORMATS",
    "MAX_DOCUMENT_BYTES",
    "Converted",
    "detect",
    "read_pools",
    "trace_pool_set",
    "write_pool_set",
]
