"""The core stays numpy-only: importing it loads no UI, plotting or model library."""

from __future__ import annotations

import subprocess
import sys

HEAVY = [
    "streamlit",
    "plotly",
    "torch",
    "sentence_transformers",
    "pandas",
    "umap",
    "scipy",
    "langchain_core",
    "langchain_classic",
    "llama_index",
    "haystack",
    "pymilvus",
    "milvus_lite",
    "distributed",
]


def test_import_adagres_loads_no_heavy_library():
    code = (
        "import sys, adagres, adagres.cli, adagres.stores.milvus, adagres.poolsets.summaries\n"
        "import adagres.traces\n"
        f"loaded = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(','.join(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_public_api_names():
    import adagres

    for name in ("select", "calibrate", "objective", "Selection", "baselines", "metrics"):
        assert name in adagres.__all__ and hasattr(adagres, name)
    for name in ("topk_same_k", "topk_budget", "mmr", "exact", "reference_code"):
        assert callable(getattr(adagres.core.baselines, name))


def test_the_core_does_not_import_the_exact_solver():
    """The exact solver is an optional package (adagres.optimum) that registers ``exact``;
    no module of the core imports it, and every strategy name lives in one registry."""
    import ast
    from pathlib import Path

    import adagres
    from adagres.core.strategies import STRATEGIES

    core = Path(adagres.__file__).parent / "core"
    for path in core.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert "optimum" not in (node.module or ""), path.name
    assert STRATEGIES["exact"].family == "optimum"
    assert STRATEGIES["exact"].fn.__module__ == "adagres.optimum"


def test_traces_read_pools_and_pools_know_no_traces():
    """adagres/traces sits above adagres/pools: it builds pools, no pool module imports it."""
    import ast
    from pathlib import Path

    import adagres

    root = Path(adagres.__file__).parent
    for folder in ("pools", "core"):
        for path in (root / folder).glob("*.py"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom):
                    assert "traces" not in (node.module or ""), path.name


def _app_sources() -> list[tuple[str, str]]:
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    paths = [root / "app.py", *sorted((root / "ui").glob("*.py"))]
    paths += sorted((root / "app_pages").glob("*.py"))
    return [(path.name, path.read_text()) for path in paths]


def test_the_app_reads_no_file_of_streamlits_own_bundle():
    """Streamlit as documented: no module looks inside Streamlit's package (its private
    build, whose file names change with every release) or imports its internals."""
    import ast

    for name, source in _app_sources():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Attribute) and node.attr == "__file__":
                assert not (isinstance(node.value, ast.Name) and node.value.id == "st"), name
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("streamlit."):
                assert node.module in {"streamlit.testing.v1"}, (name, node.module)
        assert "static/js" not in source and '"static"' not in source, name


def test_the_app_draws_no_figure_of_its_own():
    """Every figure is built in adagres/figures: the app layer imports no plotly."""
    import ast

    for name, source in _app_sources():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                assert not any(a.name.startswith("plotly") for a in node.names), name
            if isinstance(node, ast.ImportFrom):
                assert not (node.module or "").startswith("plotly"), (name, node.module)
