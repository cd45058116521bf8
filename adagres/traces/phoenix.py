"""Spans from a running Phoenix, through its client (``arize-phoenix-client``, the
``phoenix`` extra), saved as the span table :mod:`adagres.traces` reads.

:func:`fetch_spans` asks the server for the retriever spans of a project (within a time
range, and a filter in Phoenix's span query language, as its UI takes it), at most
``limit`` of them (the client holds them in memory as one table), and writes them as
Parquet; :func:`adagres.traces.write_pool_set` turns that file into a pool set.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

from adagres.errors import InputError, PoolError, one_line, require

__all__ = ["RETRIEVERS", "fetch_spans"]

#: The filter that keeps the retriever spans.
RETRIEVERS = "span_kind == 'RETRIEVER'"


def fetch_spans(
    base_url: str,
    target: str | os.PathLike[str],
    *,
    project: str = "default",
    start: dt.datetime | None = None,
    end: dt.datetime | None = None,
    where: str | None = None,
    limit: int = 10_000,
    timeout: int = 60,
) -> int:
    """Write the retriever spans of ``project`` on the Phoenix at ``base_url`` to the
    Parquet file ``target``; return how many were written.

    ``start`` and ``end`` bound the spans' start times; ``where`` adds a condition to
    :data:`RETRIEVERS` (``"metadata['user'] == 'ana'"``). Raise InputError for a bad
    argument and PoolError naming the server when it cannot be asked or holds none.
    """
    client_module = require("phoenix.client", "phoenix", purpose="reading spans from Phoenix")
    spans_types = require("phoenix.client.types.spans", "phoenix", purpose="Phoenix queries")
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise InputError(f"limit must be a whole number >= 1, got {limit!r}")
    if not Path(target).name.endswith((".parquet", ".pq")):
        raise InputError(f"target: expected a .parquet file, got {Path(target).name!r}")
    condition = RETRIEVERS if not where else f"({RETRIEVERS}) and ({where})"
    at = f"Phoenix at {one_line(base_url, max_chars=80)}, project {project!r}"
    client = client_module.Client(base_url=base_url)
    try:
        frame = client.spans.get_spans_dataframe(
            query=spans_types.SpanQuery().where(condition),
            project_identifier=project,
            start_time=start,
            end_time=end,
            limit=limit,
            timeout=timeout,
        )
    except Exception as error:  # httpx's and the server's errors, told in one line
        raise PoolError(f"{at}: {type(error).__name__}: {one_line(error, max_chars=160)}") from None
    if frame is None or len(frame) == 0:
        raise PoolError(f"{at}: no span matches {condition!r} in that time range")
    frame.to_parquet(target)
    return len(frame)
