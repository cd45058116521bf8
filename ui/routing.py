"""Deep links on a freshly started server go through ``app.py``.

Streamlit decides once per server process whether the app uses the legacy ``pages/``
folder mode: until ``st.navigation`` has run in the process, a first request for a
sub-page (a bookmarked ``/why?budget=600...``) runs that page file directly, with a
navigation built from the folder and without ``app.py``'s page config. This project keeps
its page files in ``pages/`` (the layout every Streamlit user knows) and routes with
``st.navigation``, so a page that finds itself run that way switches the process to
``st.navigation`` and reruns, which executes ``app.py`` and lands on the same page.

It touches one attribute of Streamlit's ``PagesManager`` (checked with Streamlit 1.67;
the browser test opens a deep link on a fresh server, so a change there fails a test).
"""

from __future__ import annotations

import streamlit as st

__all__ = ["route_through_app"]


def route_through_app() -> None:
    """Rerun through ``app.py`` if this run came from the legacy ``pages/`` folder mode."""
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False  # what st.navigation itself sets
        st.rerun()
