"""Deep links: the pages run through ``st.navigation`` in ``app.py`` as documented. No
``pages/`` folder sits next to ``app.py`` (Streamlit would serve a fresh server's first
request from it, without ``app.py``), and nothing touches Streamlit's private modules."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "app.py", *(ROOT / "ui").glob("*.py"), *(ROOT / "app_pages").glob("*.py")]


def pages_of_app() -> list[tuple[str | None, str | None, bool]]:
    """(file, url_path, default) of every st.Page(...) call in app.py (file None: a
    callable page)."""
    found: list[tuple[str | None, str | None, bool]] = []
    for node in ast.walk(ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "Page":
            first = node.args[0]
            file = first.value if isinstance(first, ast.Constant) else None
            keywords = {
                k.arg: k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)
            }
            url = keywords.get("url_path")
            found.append(
                (
                    file if isinstance(file, str) else None,
                    url if isinstance(url, str) else None,
                    bool(keywords.get("default")),
                )
            )
    return found


def test_every_page_file_is_routed_by_app_py_at_its_address():
    assert not (ROOT / "pages").exists()  # folder mode would bypass app.py
    pages = pages_of_app()
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "app_pages").glob("*.py"))
    assert sorted(file for file, _, _ in pages if file) == files  # every page file is there
    # Addresses links already carry: the file's name without its number; the Selection
    # page is the default (served at "/"), and a hidden page forwards /selection there.
    urls = {url: (file, default) for file, url, default in pages}
    assert urls["selection"] == (None, False)
    for file, url, default in pages:
        if file and not default:
            assert url == re.sub(r"^\d+_", "", Path(file).stem), file
    assert [file for file, _, default in pages if default] == ["app_pages/2_selection.py"]


def test_no_private_streamlit_module_and_no_version_cap():
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [alias.name for alias in getattr(node, "names", [])]
                if isinstance(node, ast.Import)
                else []
            )
            assert not any(name.startswith("streamlit.runtime") for name in names), path
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (streamlit,) = [r for r in extra["optional-dependencies"]["app"] if r.startswith("streamlit")]
    assert "<" not in streamlit, streamlit
