"""The page list in the sidebar: one ``st.page_link`` per page, carrying the view's address.

Streamlit's own page list drops the query string on a page switch (it keeps only the
parameters of widgets bound with ``bind="query-params"``, and the settings are not: see
``ui.state``), so the next page would open at
its defaults, or write the view back as a second history entry. ``app.py`` hides that list
(``st.navigation(..., position="hidden")``) and registers its pages here; the sidebar
draws these links first, and :func:`ui.state.sync_url` draws them again at the end of the
run with the address the run ends on. Pages run on their own (AppTest) draw no list.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from . import state

__all__ = ["draw", "register"]

_PAGES = "nav_pages"


def register(pages: Sequence[Any]) -> None:
    """The pages the list shows, in order (``st.Page`` objects; ``app.py`` calls it)."""
    st.session_state[_PAGES] = list(pages)


def draw() -> None:
    """Reserve the list's place at the top of the sidebar and draw it; the end of the run
    (:func:`ui.state.sync_url`) draws it again with the final address."""
    pages = st.session_state.get(_PAGES)
    if not pages:
        return
    slot = st.sidebar.empty()

    def links(params: dict[str, str]) -> None:
        with slot.container(gap=None):
            for page in pages:
                st.page_link(
                    page, label=page.title, icon=page.icon, query_params=params, width="stretch"
                )

    state.on_view_written(links)
