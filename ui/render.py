"""Small render helpers shared by the pages.

User data (chunk texts, ids, titles, file names in error messages) is never passed to a
Markdown-rendering call unescaped: texts go to ``st.text`` / ``st.code`` / dataframes, and
messages that quote user data go through :func:`escape_md` first.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

import streamlit as st

from adagres.core.result import Selection
from adagres.errors import AdagresError
from adagres.pools.pool import Pool

from . import compute, pools
from .compute import PoolKey, SelectionKey
from .projection_store import projection_ready
from .state import Settings
from .text import escape_md

__all__ = [
    "chunk_text",
    "clicked_position",
    "current_pool",
    "error",
    "escape_md",
    "pool_and_selection",
    "projection_note",
    "table",
    "wait_for_projection",
]


def error(message: str) -> None:
    """``st.error`` with a message that may quote user data, shown literally."""
    st.error(escape_md(message), icon=":material/error:")


def current_pool(settings: Settings) -> tuple[Pool, SelectionKey]:
    """The pool the settings name and the key of their selection; stops the page quietly
    when no pool is chosen."""
    if not settings.pool:
        st.stop()
    return pools.get_pool(settings.pool), compute.selection_key(settings)


def pool_and_selection(settings: Settings) -> tuple[Pool, SelectionKey, Selection]:
    """The current pool, the key and the selection under ``settings``; stops the page
    otherwise.

    With no pool chosen the page stops quietly; a selection that cannot be made (an
    ``AdagresError``, e.g. the exact solver refusing the pool) is shown with ``error``.
    """
    pool, key = current_pool(settings)
    try:
        selection = compute.selection(key)
    except AdagresError as exc:
        error(str(exc))
        st.stop()
    return pool, key, selection


def chunk_text(pool: Pool, index: int) -> None:
    """One chunk's id, title and text, as plain text."""
    chunk = pool.chunks[index]
    header = f"{chunk.id} · {pool.token_counts[index]} tokens"
    if chunk.title:
        header += f" · {chunk.title}"
    st.text(header)
    st.code(chunk.text, language=None, wrap_lines=True)


def table(frame: Any, key: str, columns: Mapping[str, Any] | None = None, **options: Any) -> Any:
    """``st.dataframe`` as the pages use it: full width, no index, an explicit key."""
    return st.dataframe(frame, key=key, hide_index=True, width="stretch",
                        column_config=dict(columns or {}), **options)  # fmt: skip


def clicked_position(points: Iterable[Mapping[str, Any]]) -> int | None:
    """The pool position of the first clicked map point (its ``customdata``), if any."""
    for point in points:
        value = point.get("customdata")
        if isinstance(value, list | tuple):  # a 2-D customdata arrives as a list
            value = value[0] if value else None
        if value is not None:
            return int(value)
    return None


def projection_note(method: str, pending: bool) -> None:
    """Say which projection the map uses, and that UMAP will replace PCA when ready."""
    if pending:
        st.caption(
            "Map: PCA for now; the seeded UMAP layout is being computed in the background "
            "and replaces it when ready."
        )
    else:
        st.caption(f"Map: {method.upper()} of cosine geometry (seed 0).")


@st.fragment(run_every=1.0)
def wait_for_projection(key: PoolKey) -> None:
    """Rerun the page once the background UMAP of the pool is ready (polls each second)."""
    if projection_ready(key):
        time.sleep(0.05)
        st.rerun(scope="app")
