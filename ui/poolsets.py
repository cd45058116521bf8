"""The Pool sets page's helpers: open a pool set, its per-query rows (cached per file
fingerprint, settings and budget), the table's filters, the distributions across queries,
and opening one query's pool in every page.

A query opened becomes a private pool of the session (``poolset-<digest>``). The address
carries where to read it again: ``set`` (the set's path, only where the server shares it:
an upload's path is never written), ``setq`` (``<piece>.<position>`` in the set) and, for a
request of a trace export, ``setspan`` (its retriever span's or LangSmith run's id: an
export grows as the pipeline runs, and a retrieval recorded later moves the requests after
it, so the link finds its request by the span where the place no longer holds it). When
the address names a ``poolset-`` pool this session lacks, the sidebar calls
:func:`restore_from_url`.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import streamlit as st

import adagres
from adagres import traces
from adagres.core.settings import Settings as Selector
from adagres.embed.models import cache_dir
from adagres.errors import AdagresError, InputError
from adagres.pools.pool import Pool
from adagres.poolsets import summaries as poolsets
from adagres.poolsets.summaries import PoolSet

from . import pools, render, state

__all__ = [
    "COLUMNS",
    "MAX_SESSION_UPLOADS",
    "SORTABLE",
    "display_name",
    "filter_rows",
    "follow_set",
    "frame",
    "is_upload",
    "linkable",
    "mean_share",
    "open_query",
    "open_set",
    "pick_from_table",
    "restore_from_url",
    "rows",
    "save_upload",
    "show_open_error",
]

#: Table columns: row key -> heading.
COLUMNS = {
    "query_id": "#",
    "query": "query",
    "chunks": "chunks",
    "pool_tokens": "pool tokens",
    "topk_redundancy": "top-k cos",
    "adagres_redundancy": "AdaGReS cos",
    "recommended_redundancy": "recommended cos",
    "topk_repeated": "top-k repeated text",
    "recommended_repeated": "rec. repeated text",
    "dropped": "dropped",
    "dropped_recommended": "dropped (rec.)",
    "topk_tokens": "top-k tokens",
    "adagres_tokens": "AdaGReS tokens",
    "recommended_tokens": "rec. tokens",
    "topk_recall": "top-k gold recall",
    "adagres_recall": "AdaGReS gold recall",
    "topk_answer": "top-k answer",
    "adagres_answer": "AdaGReS answer",
    "lambda": "λ",
}
#: Columns the page offers to sort by.
SORTABLE = ("query_id", "dropped", "adagres_redundancy", "topk_redundancy", "chunks", "lambda")
_OPEN_ERROR = "ps_open_error"
_OWN = "ps_own_uploads"  # session state: paths of the pool sets this session uploaded
_NAMES = "ps_upload_names"  # session state: upload path -> the uploaded file's name
_SHOWN = "ps_shown_set"  # session state: fingerprint of the set the page showed last
_OPENED = "ps_opened_upload"  # session state: (path, stamp, PoolSet) of its open upload
_UPLOAD_ROWS = "ps_upload_rows"  # session state: (key, rows) of its open upload
#: Uploads a session may open (the latest ones); an older upload is released.
MAX_SESSION_UPLOADS = 4
ROWS_FORMAT = 2  # bump when the rows change meaning, so rows on disk are computed again


def _stamp(path: Path) -> tuple[Any, ...]:
    """What changes when the set's files change (sizes and times), cheap to read."""
    files = sorted(path.iterdir()) if path.is_dir() else [path]
    return tuple((f.name, f.stat().st_size, f.stat().st_mtime_ns) for f in files if f.is_file())


def _load(path: str | Path) -> PoolSet:
    """A pool set file or folder, or a trace export (told by its content: OTLP JSON,
    Phoenix's span table, LangSmith runs) as the pool set of its retrievals, converted once
    into the cache folder (:func:`adagres.traces.trace_pool_set`)."""
    if traces.detect(path) is not None:
        return traces.trace_pool_set(path, cache_dir(kind="poolsets") / "traces")
    return poolsets.load_pool_set(path)


@st.cache_resource(max_entries=4, show_spinner=False)
def _open(path: str, stamp: tuple[Any, ...]) -> PoolSet:
    return _load(path)


def open_set(path: str) -> PoolSet:
    """The pool set at ``path`` (a .jsonl, a folder, a .json spec or a trace export), read
    once per content.

    Only paths the server shares (:func:`ui.pools.server_path`) or this session's own
    uploads are opened: another session's upload, or any other file, raises InputError.
    A set the server shares is kept for every session (the last 4); an upload only in the
    session that uploaded it, one at a time: opening another set releases it, and so does
    the end of the session.
    """
    own = frozenset(st.session_state.get(_OWN, ()))
    target = pools.server_path(path, "pool set path", own)
    try:
        stamp = _stamp(target)
    except OSError:  # no such path, a name too long, ...
        return poolsets.load_pool_set(target)  # its PoolError names the path and the reason
    if str(target) not in own:
        _release_upload()  # a shared set now
        return _open(str(target), stamp)
    kept = st.session_state.get(_OPENED)
    if kept is not None and kept[:2] == (str(target), stamp):
        return kept[2]
    _release_upload()  # before the next one is read
    pool_set = _load(target)
    st.session_state[_OPENED] = (str(target), stamp, pool_set)
    return pool_set


def _release_upload() -> None:
    """Drop this session's open upload and its rows from memory (both stay on disk)."""
    st.session_state.pop(_OPENED, None)
    st.session_state.pop(_UPLOAD_ROWS, None)


def _write_atomically(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f"{target.name}.{os.getpid()}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, target)


def save_upload(name: str, content: bytes) -> str:
    """Keep an uploaded pool set in the cache folder, named by its digest; return the path
    (which only this session may open: :func:`open_set`). The page calls the set by the
    uploaded file's name (:func:`display_name`), not by that path."""
    target = (
        cache_dir(kind="poolsets") / f"{hashlib.sha256(content).hexdigest()[:16]}-{Path(name).name}"
    )
    if not target.exists():
        _write_atomically(target, content)
    # The session's latest uploads, oldest first: an older one may no longer be opened.
    own = [item for item in st.session_state.get(_OWN, ()) if item != str(target)]
    st.session_state[_OWN] = [*own, str(target)][-MAX_SESSION_UPLOADS:]
    st.session_state.setdefault(_NAMES, {})[str(target)] = Path(name).name
    return str(target)


def display_name(pool_set: PoolSet) -> str:
    """What the page calls ``pool_set``: the uploaded file's name for an upload of this
    session ("runs.jsonl (uploaded)"), else where it came from."""
    uploaded = st.session_state.get(_NAMES, {}).get(str(pool_set.source))
    return f"{uploaded} (uploaded)" if uploaded else str(pool_set.source)


def is_upload(pool_set: PoolSet) -> bool:
    """Whether ``pool_set`` is this session's upload (a link to its queries opens nothing
    in another browser: the server does not share an upload's path)."""
    return str(pool_set.source) in st.session_state.get(_NAMES, {})


def follow_set(pool_set: PoolSet, found: Sequence[dict[str, Any]]) -> None:
    """A set other than the one shown last: its Query box starts at its first query (a
    query id of the previous set would otherwise stay chosen).

    The first id is written, not the box's value dropped: a box whose value is dropped
    keeps showing the previous set's label in the browser (its options are ids, the same
    for two sets of as many queries) while it holds the new set's first query.
    """
    if st.session_state.get(_SHOWN) != pool_set.fingerprint:
        st.session_state[_SHOWN] = pool_set.fingerprint
        if found:
            st.session_state["ps_query"] = found[0]["query_id"]
        else:
            st.session_state.pop("ps_query", None)


def _computed_rows(
    fingerprint: str, selector: Selector, budget: int, pool_set: PoolSet
) -> list[dict]:
    # The code version is part of the key: rows computed by another version are not reused.
    key = f"{ROWS_FORMAT}|{adagres.__version__}|{fingerprint}|{selector!r}|{budget}"
    target = (
        cache_dir(kind="poolsets") / f"rows-{hashlib.sha256(key.encode()).hexdigest()[:24]}.json"
    )
    try:
        return list(json.loads(target.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        pass  # not summarised yet (or a torn file): compute
    found = poolsets.summarize(pool_set, selector, budget)
    _write_atomically(target, json.dumps(found, allow_nan=False).encode("utf-8"))
    return found


@st.cache_resource(max_entries=8, show_spinner=False)
def _rows(fingerprint: str, selector: Selector, budget: int, _pool_set: PoolSet) -> list[dict]:
    return _computed_rows(fingerprint, selector, budget, _pool_set)


def rows(pool_set: PoolSet, selector: Selector, budget: int) -> list[dict[str, Any]]:
    """Per-query rows of :func:`adagres.poolsets.summaries.summarize` (on the local cores),
    computed once per file fingerprint, settings and budget: kept on disk
    (``$ADAGRES_CACHE_DIR/poolsets``), so a set opens at once on a new server too, and in
    memory: for every session (the last 8) for a shared set, and in its own session only
    (the last settings) for an upload, released with the upload."""
    opened = st.session_state.get(_OPENED)
    if opened is None or opened[2] is not pool_set:
        return _rows(pool_set.fingerprint, selector, budget, pool_set)
    key = (pool_set.fingerprint, selector, budget)
    kept = st.session_state.get(_UPLOAD_ROWS)
    if kept is not None and kept[0] == key:
        return kept[1]
    st.session_state.pop(_UPLOAD_ROWS, None)
    found = _computed_rows(pool_set.fingerprint, selector, budget, pool_set)
    st.session_state[_UPLOAD_ROWS] = (key, found)
    return found


def filter_rows(
    found: Sequence[dict[str, Any]],
    *,
    text: str = "",
    min_dropped: int = 0,
    gold_only: bool = False,
    sort: str = "query_id",
    descending: bool = False,
) -> list[dict[str, Any]]:
    """The rows whose query contains ``text`` (any case), where AdaGReS drops at least
    ``min_dropped`` chunks, with gold chunks if ``gold_only``; sorted by ``sort`` (ties and
    missing values by query id)."""
    needle = text.strip().lower()
    kept = [
        row
        for row in found
        if needle in row["query"].lower()
        and row["dropped"] >= min_dropped
        and (row["gold"] > 0 or not gold_only)
    ]
    kept.sort(key=lambda row: row["query_id"])
    present = [row for row in kept if row[sort] is not None]
    present.sort(key=lambda row: row[sort], reverse=descending)
    return present + [row for row in kept if row[sort] is None]


def frame(found: Sequence[dict[str, Any]]) -> Any:
    """The rows as the table shows them (the headings of :data:`COLUMNS`)."""
    import pandas as pd

    table = pd.DataFrame(
        [{key: row.get(key) for key in COLUMNS} for row in found], columns=list(COLUMNS)
    )
    for key in ("topk_repeated", "recommended_repeated"):  # shares as percent, one decimal
        table[key] = [None if v is None else round(100 * v, 1) for v in table[key]]
    return table.rename(columns=COLUMNS)


def mean_share(found: Sequence[dict[str, Any]], key: str) -> str:
    """The mean of a share column over the rows that have it, as "4.2%" ("–" without any).

    >>> mean_share([{"r": 0.02}, {"r": 0.04}, {"r": None}], "r")
    '3.0%'
    """
    values = [row[key] for row in found if row.get(key) is not None]
    return f"{100 * sum(values) / len(values):.1f}%" if values else "–"


def open_query(pool_set: PoolSet, row: dict[str, Any]) -> None:
    """Register the pool of ``row`` for this session and make it the current pool of every
    page (an error is kept for :func:`show_open_error`)."""
    try:
        pool = poolsets.load_unit(pool_set.units[row["unit"]])[row["position"]]
        pool = poolsets.prepare_pool(pool)
    except AdagresError as error:
        st.session_state[_OPEN_ERROR] = str(error)
        return
    label = f"{display_name(pool_set)} #{row['query_id']}: {pool.query[:40]}"
    key = pools.add_pool(pool, "poolset", label)
    state.update(pool=key, step=None, chunk=None)
    # Where to read it again (the path only where the server shares it), and for a trace's
    # request its span, by which it is found if it moves.
    state.set_option(SET, str(pool_set.source))
    state.set_option(PIECE, (int(row["unit"]), int(row["position"])))
    state.option(SPAN, "")  # its default: no span in the address
    state.set_option(SPAN, span_of(pool))


def pick_from_table(pool_set: PoolSet, shown: Sequence[dict[str, Any]]) -> Callable[[], None]:
    """The table's ``on_select`` callback: a clicked row opens its query's pool (once per
    click: a callback runs when the selection changes, not on every rerun)."""

    def pick() -> None:
        picked = st.session_state["ps_table"].selection.rows
        if picked:
            row = shown[picked[0]]
            st.session_state["ps_query"] = row["query_id"]  # the Query box shows it too
            open_query(pool_set, row)

    return pick


def show_open_error() -> None:
    """Show, once, why the last query could not be opened."""
    message = st.session_state.pop(_OPEN_ERROR, None)
    if message:
        render.error(message)


# --------------------------------------------------------------------------- links


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


def _located(pool_set: PoolSet, unit: int, position: int, span: str) -> tuple[int, int, Pool]:
    """The pool at ``unit``.``position`` of the set; for a trace's request (``span``), the
    pool of that span, looked for through the set where the place holds another one."""
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
    try:
        pool_set = open_set(path)
        unit, position, pool = _located(pool_set, piece[0], piece[1], span)
        pool = poolsets.prepare_pool(pool)
    except AdagresError as error:
        render.error(f"Could not reopen the pool set's query: {error}")
        return None
    if (unit, position) != piece:  # the request moved in its export: the address follows
        state.set_option(PIECE, (unit, position))
    label = f"{display_name(pool_set)} {unit}.{position}: {pool.query[:40]}"
    return pools.add_pool(pool, "poolset", label)
