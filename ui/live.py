"""The Live page's helpers: a Milvus store and collection, a query, its pool in every page.

The store is the embedded Milvus Lite file ``<data>/live.db`` (``make live-data``) unless
the user types a server address. The address names the collection, the query and N
(``live_collection``, ``live_query``, ``live_n``, and ``live_uri`` for a typed address
without credentials) on every page, so a link retrieves the same pool again
(:func:`restore_from_url`). The collection records the model the query is embedded with.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import streamlit as st

from adagres.errors import AdagresError
from adagres.pools.pool import Pool
from adagres.stores import milvus

from . import params, pools, progress, render, state

__all__ = [
    "COLLECTION",
    "DEFAULT_N",
    "QUERY",
    "URI",
    "N",
    "collections",
    "current_live_pool",
    "open_live_pool",
    "pool_frame",
    "restore_from_url",
    "store_input",
]

DEFAULT_N = 20
URI_KEY = "live_uri_box"


def _text(raw: str) -> str:
    if not raw.strip():
        raise ValueError("empty")
    return raw


URI = state.Option("live_uri", _text, shareable=lambda uri: not milvus.has_credentials(uri))
COLLECTION = state.Option("live_collection", _text)
QUERY = state.Option("live_query", _text)
N = state.Option("live_n", lambda s: params.whole(s, minimum=1, maximum=milvus.MAX_TOP_N))
_OPENED = "live_opened"  # session state: {(uri, collection, query, n): pool key}


def default_store() -> Path:
    """The embedded store of the project's data folder (``<data>/live.db``)."""
    return pools.data_dir() / "live.db"


def _uri(typed: str) -> str:
    return typed.strip() or str(default_store())


def _check_shared(uri: str) -> None:
    """A store file opens only where the server shares files (InputError otherwise); a
    server address is the user's to choose."""
    if milvus.is_local(uri):
        pools.server_path(uri, "store")


def store_input() -> str:
    """The store box: empty means the embedded store; returns the URI to use.

    A URI with credentials is kept in this session only: the box is then drawn without
    binding it to the URL (its changes still reach the option, so the URL follows again
    once the credentials are gone).
    """
    label = "Store (empty: the embedded `data/live.db`, or `http://host:19530`)"
    typed = st.session_state.get(URI_KEY, state.option(URI, ""))
    if not typed or milvus.has_credentials(typed):
        st.session_state.setdefault(URI_KEY, typed)
        keep = lambda: state.set_option(URI, st.session_state[URI_KEY])  # noqa: E731
        st.text_input(label, key=URI_KEY, placeholder=str(default_store()), on_change=keep)
        typed = st.session_state[URI_KEY]
    else:
        typed = state.bind_option(st.text_input, URI, URI_KEY, label, default="")
    return _uri(typed)


@st.cache_data(ttl=30, show_spinner=False)
def _collections(uri: str) -> list[str]:
    return milvus.collection_names(uri)


def collections(uri: str) -> list[str] | None:
    """The store's collections (cached for 30 s), or None after showing why there are none."""
    if uri == str(default_store()) and not default_store().exists():
        st.info(
            "No embedded store yet: `make live-data` indexes the demo texts into "
            "data/live.db; or type a Milvus server address."
        )
        return None
    try:
        _check_shared(uri)
        return _collections(uri)
    except AdagresError as error:
        render.error(str(error))
        return None


def _retrieve(uri: str, collection: str, query: str, n: int, *, fresh: bool = False) -> str:
    """Retrieve, register the pool for this session, return its key; without ``fresh`` the
    session's earlier retrieval of the same four values is reused (reruns, page switches)."""
    _check_shared(uri)
    opened: dict[tuple[str, str, str, int], str] = st.session_state.setdefault(_OPENED, {})
    wanted = (uri, collection, query, n)
    if not fresh and wanted in opened and pools.registered(opened[wanted]) is not None:
        return opened[wanted]
    with progress.spinner(f"Retrieving the top {n} of {collection!r}…"):
        pool = milvus.retrieve_pool(uri, collection, query, top_n=n)
    key = pools.add_pool(pool, "live", f"live: {collection}: {query[:40]}")
    opened[wanted] = key
    return key


def open_live_pool(uri: str, collection: str, query: str, n: int) -> str | None:
    """Retrieve the pool and make it the current one of every page; None after showing the
    error."""
    try:
        key = _retrieve(uri, collection, query, n, fresh=True)
    except AdagresError as error:
        render.error(str(error))
        return None
    state.update(pool=key, step=None, chunk=None)
    return key


def restore_from_url() -> str | None:
    """Retrieve the pool the address's live options name (a link opened in a fresh browser,
    or Back to a Live pool this session no longer has) and return its key; the sidebar
    calls it when the address names a Live pool that is not there."""
    collection, query = state.option(COLLECTION, ""), state.option(QUERY, "")
    if not (collection and query):
        return None
    uri, n = _uri(state.option(URI, "")), state.option(N, DEFAULT_N)
    try:
        return _retrieve(uri, collection, query, n)
    except AdagresError as error:
        render.error(str(error))
        return None


def current_live_pool(settings: state.AppSettings) -> Pool | None:
    """The current pool if it came from a collection (its ``extra["retrieval"]``), else None."""
    try:
        pool = pools.get_pool(settings.pool) if settings.pool else None
    except AdagresError:
        return None
    return pool if pool is not None and "retrieval" in pool.extra else None


def pool_frame(pool: Pool) -> Any:
    """The retrieved chunks in rank order: rank, id, score, tokens, title, source."""
    import pandas as pd

    return pd.DataFrame(
        {
            "rank": range(1, len(pool) + 1),
            "chunk": pool.ids,
            "score": [chunk.score for chunk in pool.chunks],
            "tokens": [chunk.tokens for chunk in pool.chunks],
            "title": [chunk.title or "" for chunk in pool.chunks],
            "source": [chunk.source or "" for chunk in pool.chunks],
        }
    )
