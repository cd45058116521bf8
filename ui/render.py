"""Small render helpers shared by the pages.

User data (chunk texts, ids, titles, file names in error messages) is never passed to a
Markdown-rendering call unescaped: texts go to ``st.text`` / ``st.code`` / dataframes,
messages that quote user data go through :func:`escape_md` first, and headings and captions
that name a chunk through :func:`md_line`.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import streamlit as st

from adagres.core.result import Selection
from adagres.errors import AdagresError
from adagres.pools.pool import Pool

from . import compute, pools, state
from .compute import PoolKey, SelectionKey
from .projection_store import projection_ready
from .state import AppSettings
from .text import escape_md

__all__ = [
    "FOUR_PLACES",
    "RELEVANCE",
    "chart",
    "chunk_text",
    "clicked_position",
    "clicked_positions",
    "current_pool",
    "error",
    "escape_md",
    "md_line",
    "metrics",
    "pool_and_selection",
    "projection_note",
    "scroll_to",
    "table",
    "wait_for_projection",
]


#: A table column of cosines and scores (relevance above all): four decimals.
FOUR_PLACES = st.column_config.NumberColumn(format="%.4f")
RELEVANCE = {"relevance": FOUR_PLACES}

#: Plotly's mode bar without the buttons these figures do not use, so that it stays a short
#: row in the figure's top-right corner (the shared layout keeps a free row for it).
CHART_CONFIG: dict[str, Any] = {
    "displaylogo": False,
    "modeBarButtonsToRemove": [
        "select2d",
        "lasso2d",
        "zoomIn2d",
        "zoomOut2d",
        "autoScale2d",
        "toggleSpikelines",
        "hoverClosestCartesian",
        "hoverCompareCartesian",
    ],
}


def chart(figure: Any, key: str, *, modebar: bool = True, **options: Any) -> Any:
    """``st.plotly_chart`` as the pages use it: full width, an explicit key, a short mode
    bar (none with ``modebar=False``: a chart in a narrow column, whose title the bar would
    cover); ``options`` go through (``on_select``, ``selection_mode``)."""
    config = CHART_CONFIG if modebar else {**CHART_CONFIG, "displayModeBar": False}
    return st.plotly_chart(figure, key=key, config=config, **options)


def metrics(
    items: Sequence[tuple[str, Any]],
    *,
    help: Mapping[str, str] | None = None,
    gap: Literal["small", "medium", "large"] = "large",
) -> None:
    """A row of ``st.metric`` s, each as wide as its label and value, ``gap`` apart,
    wrapping onto the next line when the page is narrow: a value is never cut short
    ("budget exhaus…")."""
    with st.container(horizontal=True, gap=gap):
        for label, value in items:
            st.metric(label, value, width="content", help=(help or {}).get(label))


def scroll_to(anchor: str, nonce: object) -> None:
    """Scroll the page so that the element with id ``anchor`` (a header's anchor) is at the
    top of the view. ``nonce`` changes whenever it should scroll again (e.g. per click): the
    script runs when its text changes. The script is this module's own, with ``anchor``
    and ``nonce`` as JSON literals; no user text reaches it.

    It scrolls twice (the charts above may still grow in the first moments) and holds
    ``data-scrolling`` on the document's root until the second scroll, so that anything
    that scrolls after it (a test, a tour) can wait for the page to rest."""
    script = (
        "<script>(() => {"
        f"const id = {json.dumps(str(anchor))}; const nonce = {json.dumps(str(nonce))};"
        "const root = document.documentElement; root.dataset.scrolling = nonce;"
        "const go = () => document.getElementById(id)"
        "?.scrollIntoView({behavior: 'instant', block: 'start'});"
        "setTimeout(go, 50);"
        "setTimeout(() => { go(); if (root.dataset.scrolling === nonce) "
        "delete root.dataset.scrolling; }, 400);"
        "})();</script>"
    )
    st.html(script, unsafe_allow_javascript=True)


_LINE_BREAK = re.compile(r"\r\n?|\n")


def md_line(text: str) -> str:
    """``text`` (an id, a title) for a Markdown heading or caption, shown as written on one
    line: Markdown and HTML escaped, each line break a space (a heading is one line, and a
    break inside it would start a new block: ``"a\\n# b"`` would be a second heading).

    >>> md_line("**a**\\n# b")
    '\\\\*\\\\*a\\\\*\\\\* \\\\# b'
    """
    return escape_md(_LINE_BREAK.sub(" ", str(text)))


def error(message: str) -> None:
    """``st.error`` with a message that may quote user data, shown literally."""
    st.error(escape_md(message), icon=":material/error:")


def current_pool(settings: AppSettings) -> tuple[Pool, SelectionKey]:
    """The pool the settings name and the key of their selection; stops the page quietly
    when no pool is chosen."""
    if not settings.pool:
        state.stop()
    return pools.get_pool(settings.pool), compute.selection_key(settings)


def pool_and_selection(settings: AppSettings) -> tuple[Pool, SelectionKey, Selection]:
    """The current pool, the key and the selection under ``settings``; else stops the page.

    With no pool chosen the page stops quietly; a selection that cannot be made (an
    ``AdagresError``, e.g. the exact solver refusing the pool) is shown with ``error``.
    """
    pool, key = current_pool(settings)
    try:
        selection = compute.selection(key)
    except AdagresError as exc:
        error(str(exc))
        state.stop()
    return pool, key, selection


def chunk_text(pool: Pool, index: int) -> None:
    """One chunk's id, title and text, as plain text."""
    chunk = pool.chunks[index]
    header = f"{chunk.id} · {chunk.tokens} tokens"
    if chunk.title:
        header += f" · {chunk.title}"
    st.text(header)
    st.code(chunk.text, language=None, wrap_lines=True)


def table(frame: Any, key: str, columns: Mapping[str, Any] | None = None, **options: Any) -> Any:
    """``st.dataframe`` as the pages use it: no index, an explicit key (full width)."""
    return st.dataframe(
        frame, key=key, hide_index=True, column_config=dict(columns or {}), **options
    )


def clicked_positions(points: Iterable[Mapping[str, Any]]) -> list[int]:
    """The pool positions of the clicked or lassoed map points (their ``customdata``)."""
    values = [point.get("customdata") for point in points]
    # a 2-D customdata arrives as a list
    firsts = [(v[0] if v else None) if isinstance(v, list | tuple) else v for v in values]
    return [int(value) for value in firsts if value is not None]


def clicked_position(points: Iterable[Mapping[str, Any]]) -> int | None:
    """The pool position of the first clicked map point (its ``customdata``), if any."""
    return next(iter(clicked_positions(points)), None)


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
