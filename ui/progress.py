"""The one way the data layer draws while it works: a status box, a progress bar, a spinner.

``ui.pools`` and ``ui.compute`` never call ``st.status``, ``st.progress`` or ``st.spinner``
themselves; they report through these helpers, and only outside Streamlit's cache
functions (a cache replays the elements drawn while it ran, so a finished bar would come
back on every hit). Labels and messages are shown literally (Markdown-escaped): they may
quote file names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import streamlit as st

from .text import escape_md

__all__ = ["bar", "spinner", "status"]


@contextmanager
def status(label: str, done: str) -> Iterator[Callable[[str], None]]:
    """A status box labelled ``label`` while the block runs, ``done`` (collapsed) after it.

    Yields ``note(message)``, which writes one line into the box.
    """
    with st.status(escape_md(label), expanded=True) as box:
        yield lambda message: box.write(escape_md(message))
        box.update(label=escape_md(done), state="complete", expanded=False)


@contextmanager
def bar(label: str) -> Iterator[Callable[..., None]]:
    """A progress bar while the block runs, removed after it.

    Yields ``report(fraction, text=None)``: the fraction done (clipped to 0..1) and an
    optional new label.
    """
    widget = st.progress(0.0, text=escape_md(label))

    def report(fraction: float, text: str | None = None) -> None:
        shown = label if text is None else text
        widget.progress(min(max(float(fraction), 0.0), 1.0), text=escape_md(shown))

    try:
        yield report
    finally:
        widget.empty()


@contextmanager
def spinner(label: str) -> Iterator[None]:
    """A spinner while the block runs (Streamlit shows it only after half a second)."""
    with st.spinner(escape_md(label)):
        yield
