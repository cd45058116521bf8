"""Escaping for the Streamlit calls that render Markdown (labels, metrics, messages).

Kept apart from ``ui.render`` so that ``ui.progress`` can use it without an import cycle.
"""

from __future__ import annotations

import re

__all__ = ["escape_md"]

_MARKDOWN_SPECIALS = re.compile(r"([\\`*_{}\[\]()<>#+\-.!|~$:])")


def escape_md(text: str) -> str:
    """``text`` with every Markdown/HTML special character backslash-escaped."""
    return _MARKDOWN_SPECIALS.sub(r"\\\1", str(text))
