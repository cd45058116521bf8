"""Deep links: every page's URL is the name Streamlit gives its file in the ``pages/``
folder, so a bookmarked link lands on its page even as a fresh server's first request
(which Streamlit serves in folder mode, before ``app.py``'s navigation has run:
ui/routing.py). A page whose URL differed showed "Page not found" there."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def pages_of_app() -> list[tuple[str, str | None]]:
    """(file, url_path) of every st.Page(...) call in app.py."""
    found = []
    for node in ast.walk(ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Page":
            file = node.args[0].value  # type: ignore[attr-defined]
            url = next((k.value.value for k in node.keywords if k.arg == "url_path"), None)
            found.append((file, url))
    return found


def test_every_page_url_is_its_file_name_in_folder_mode():
    pages = pages_of_app()
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))
    assert sorted(file for file, _ in pages) == files  # every page file is in the navigation
    for file, url in pages:
        assert url == re.sub(r"^\d+_", "", Path(file).stem), file
