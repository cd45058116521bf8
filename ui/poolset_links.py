"""Links to a pool set's query: the set's path on the server and where the query's pool lies
in it, in the address, so that a link or a reload opens that pool again.

A query opened from the Pool sets page becomes a private pool of the session
(``poolset-<digest>``): another browser does not have it. The address carries ``set`` (the
set's path, only where the server shares it: an upload's path is never written) and
``setq`` (``<piece>.<position>``: the piece of the set and the pool's place in it). When
the address names a ``poolset-`` pool this session lacks, the sidebar calls
:func:`restore_from_url`, which reads the pool from the set again.

A request of a trace export also carries ``setspan``, its retriever span's id (a LangSmith
run's id): an export grows as the pipeline runs (a collector's file exporter appends), and
a retrieval recorded later in a request's trace moves the requests after it. The link
then finds its request by the span, where the place no longer holds it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from adagres.errors import AdagresError, InputError
from adagres.pools.pool import Pool

from . import pools, render, state

if TYPE_CHECKING:
    from adagres.poolsets.files import PoolSet

__all__ = [
    "PIECE",
    "SET",
    "SPAN",
    "linkable",
    "remember",
    "restore_from_url",
    "span_of",
]


def _shared(path: str) -> bool:
    """Whether the server shares ``path`` (an upload's path is this session's only)."""
    try:
        pools.server_path(path, "set")
    except InputError:
        return False
    return True


def _piece(raw: str) -> tuple[int, int]:
    parts = raw.split(".")
    if len(parts) != 2 or not all(p.isdigit() and len(p) <= 9 for p in parts):
        raise ValueError("expected <piece>.<position>, e.g. 0.3")
    return int(parts[0]), int(parts[1])


_SPAN_ID = re.compile(r"[0-9A-Za-z-]{1,64}")  # OTel's 16 hex digits, a LangSmith run's UUID


def _span(raw: str) -> str:
    if not _SPAN_ID.fullmatch(raw):
        raise ValueError("expected a span or run id: up to 64 letters, digits and -")
    return raw


SET = state.Option("set", str, shareable=_shared)
PIECE = state.Option("setq", _piece, lambda v: f"{v[0]}.{v[1]}")
SPAN = state.Option("setspan", _span)


def span_of(pool: Pool) -> str:
    """The id of the retriever span (or LangSmith run) a trace export's pool came from, ""
    for any other pool."""
    trace = pool.extra.get("trace")
    span = trace.get("span_id") if isinstance(trace, dict) else None
    return span if isinstance(span, str) and _SPAN_ID.fullmatch(span) else ""


def linkable(key: str) -> bool:
    """Whether a link brings the pool ``key`` back: a pool set's query whose set the server
    shares (an upload's query does not come back)."""
    return pools.kind(key) == "poolset" and _shared(state.option(SET, ""))


def remember(source: str, piece: int, position: int, span: str = "") -> None:
    """Put the set's path, the query's place in it and, for a trace's request, its span id
    (:func:`span_of`) into the view (written to the address with the pool's key; the path
    only where the server shares it)."""
    state.set_option(SET, str(source))
    state.set_option(PIECE, (int(piece), int(position)))
    state.option(SPAN, "")  # its default: no span in the address
    state.set_option(SPAN, span)


def _located(pool_set: PoolSet, unit: int, position: int, span: str) -> tuple[int, int, Pool]:
    """The pool at ``unit``.``position`` of the set; for a trace's request (``span``), the
    pool of that span, looked for through the set where the place holds another one."""
    from adagres.poolsets import summaries as poolsets

    found: list[Pool] = []
    if 0 <= unit < len(pool_set.units):
        found = poolsets.load_unit(pool_set.units[unit])
    if 0 <= position < len(found) and (not span or span_of(found[position]) == span):
        return unit, position, found[position]
    if not span:
        if not 0 <= unit < len(pool_set.units):
            raise InputError(f"setq: the set has {len(pool_set.units)} pieces, not {unit + 1}")
        raise InputError(f"setq: piece {unit} holds {len(found)} pools, not {position + 1}")
    for number, piece in enumerate(pool_set.units):  # the export changed: by the span
        for place, pool in enumerate(poolsets.load_unit(piece)):
            if span_of(pool) == span:
                return number, place, pool
    raise InputError(f"setspan: no retrieval of span {span} in {pool_set.name} any more")


def restore_from_url() -> str | None:
    """Read the pool the address's ``set`` and ``setq`` (and ``setspan``) name from the set
    again and return its key (a link opened in a fresh browser, or a reload after the
    server restarted); a set that cannot be read is said with its reason."""
    path, piece = state.option(SET, ""), state.option(PIECE, None)
    span = state.option(SPAN, "")
    if not path or piece is None:
        return None
    from adagres.poolsets import summaries as poolsets

    from . import poolsets as sets

    try:
        pool_set = sets.open_set(path)
        unit, position, pool = _located(pool_set, piece[0], piece[1], span)
        pool = poolsets.prepare_pool(pool)
    except AdagresError as error:
        render.error(f"Could not reopen the pool set's query: {error}")
        return None
    if (unit, position) != piece:  # the request moved in its export: the address follows
        state.set_option(PIECE, (unit, position))
    label = f"{sets.display_name(pool_set)} {unit}.{position}: {pool.query[:40]}"
    return pools.add_pool(pool, "poolset", label)
