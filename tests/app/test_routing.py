"""Deep links: every page's URL is the name Streamlit gives its file in the ``pages/``
folder, so a bookmarked link lands on its page even as a fresh server's first request
(which Streamlit serves in folder mode, before ``app.py``'s navigation has run:
ui/routing.py). A page whose URL differed showed "Page not found" there."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def pages_of_app() -> list[tuple[str | None, str | None, bool]]:
    """(file, url_path, default) of every st.Page(...) call in app.py (file None: a
    callable page)."""
    found = []
    for node in ast.walk(ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Page":
            first = node.args[0]
            file = first.value if isinstance(first, ast.Constant) else None
            keywords = {k.arg: k.value.value for k in node.keywords
                        if isinstance(k.value, ast.Constant)}  # fmt: skip
            found.append((file, keywords.get("url_path"), bool(keywords.get("default"))))
    return found


def test_every_page_url_is_its_file_name_in_folder_mode():
    pages = pages_of_app()
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "pages").glob("*.py"))
    assert sorted(file for file, _, _ in pages if file) == files  # every page file is there
    # Folder mode serves 2_selection.py at /selection; under app.py it is the default page
    # (served at "/"), and a hidden page holds /selection to forward there.
    urls = {url: (file, default) for file, url, default in pages}
    assert urls["selection"] == (None, False)
    for file, url, default in pages:
        if file and not default:
            assert url == re.sub(r"^\d+_", "", Path(file).stem), file
    assert [file for file, _, default in pages if default] == ["pages/2_selection.py"]
