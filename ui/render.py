"""Small render helpers shared by the pages.

User data (chunk texts, ids, titles, file names in error messages) is never passed to a
Markdown-rendering call unescaped: texts go to ``st.text`` / ``st.code`` / dataframes, and
messages that quote user data go through :func:`escape_md` first.
"""

from __future__ import annotations

import time

import streamlit as st

from adagres.core.result import Selection
from adagres.errors import AdagresError
from adagres.pools.pool import Pool

from . import data
from .state import Settings
from .text import escape_md

__all__ = [
    "chunk_text",
    "current_pool",
    "error",
    "escape_md",
    "pool_and_selection",
    "projection_note",
    "wait_for_projection",
]


def error(message: str) -> None:
    """``st.error`` with a message that may quote user data, shown literally."""
    st.error(escape_md(message), icon=":material/error:")


def current_pool(settings: Settings) -> Pool:
    """The pool the settings name; stops the page quietly when none is chosen."""
    if not settings.pool:
        st.stop()
    return data.get_pool(settings.pool)


def pool_and_selection(settings: Settings) -> tuple[Pool, Selection]:
    """The current pool and its selection under ``settings``; stops the page otherwise.

    With no pool chosen the page stops quietly; a selection that cannot be made (an
    ``AdagresError``, e.g. the exact solver refusing the pool) is shown with ``error``.
    """
    pool = current_pool(settings)
    try:
        selection = data.run_selection(settings)
    except AdagresError as exc:
        error(str(exc))
        st.stop()
    return pool, selection


def chunk_text(pool: Pool, index: int) -> None:
    """One chunk's id, title and text, as plain text."""
    chunk = pool.chunks[index]
    header = f"{chunk.id} · {pool.token_counts[index]} tokens"
    if chunk.title:
        header += f" · {chunk.title}"
    st.text(header)
    st.code(chunk.text, language=None, wrap_lines=True)


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
def wait_for_projection(key: str) -> None:
    """Rerun the page once the background UMAP of pool ``key`` is ready (polls each second)."""
    store = data.projection_store(data.projection_method())
    if store.ready(key, data.get_pool(key)):
        time.sleep(0.05)
        st.rerun(scope="app")
