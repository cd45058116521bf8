"""What the first message of every run sends: the page icon and the chart code's preload.

Imports only Streamlit and the standard library, so that ``app.py`` can send both before
it imports the rest of the app (numpy, the library, plotly: about 0.3 s on a cold server),
and a new visitor's browser starts on the chart code that much sooner.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import streamlit as st

__all__ = ["FAVICON", "preload_charts"]

#: The page icon, drawn here (a funnel: select from a pool) so that the browser fetches no
#: icon from a font host: ``st.set_page_config`` turns an SVG string into a data URL.
FAVICON = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24">'
    '<rect width="24" height="24" rx="5" fill="#0072B2"/>'
    '<path d="M5 6h14l-5.5 6.5V18l-3 1.5v-7z" fill="#ffffff"/></svg>'
)


@functools.cache
def _plotly_chunk() -> str | None:
    """The file name of Streamlit's Plotly chunk (``PlotlyChart.<hash>.js``), or None."""
    folder = Path(st.__file__).resolve().parent / "static" / "static" / "js"
    names = sorted(p.name for p in folder.glob("PlotlyChart.*.js"))
    return names[0] if len(names) == 1 else None


def preload_charts() -> None:
    """Start loading the browser's Plotly code at the first message of a run.

    The browser fetches and compiles Streamlit's Plotly chunk (4.7 MB) only when the first
    chart arrives, after the server has built it, so a new visitor waited for the two one
    after the other. This script imports the same module (the same URL, so the page's own
    import later finds it evaluated) while the server is still running the page. It
    changes nothing on the page; with another Streamlit build it does nothing.
    """
    name = _plotly_chunk()
    if name is None:
        return
    with st.container(key="chart-preload"):  # hidden, so that it takes no room either
        st.html(
            "<style>div:has(> .st-key-chart-preload) {display: none;}</style><script>(() => {"
            "const index = document.querySelector(\"script[src*='/js/index.']\");"
            f"if (index) import(new URL({json.dumps(name)}, index.src).href).catch(() => {{}});"
            "})();</script>",
            unsafe_allow_javascript=True,
        )
