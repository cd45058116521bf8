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
    from adagres.core import baselines  # imported here: the order tests run in may not have

    for name in ("select", "calibrate", "objective", "Selection", "baselines", "metrics"):
        assert name in adagres.__all__ and hasattr(adagres, name)
    for name in ("topk_same_k", "topk_budget", "mmr", "exact", "reference_code"):
        assert callable(getattr(baselines, name))


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


#: The rooms of the package, ground floor first (docs/LAYOUT.md): a module imports only from
#: its own room and the rooms before it, at module level or inside a function.
ROOMS = (
    "errors",
    "core",
    "optimum",
    "figures",
    "embed",
    "pools",
    "corpora",
    "stores",
    "poolsets",
    "traces",
    "integrations",
    "eval",
    "cli",
)


def imported_rooms(path, package):
    """The rooms of ``adagres`` that the module at ``path`` imports (relative imports
    resolved against its ``package``)."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                target = ".".join(parts + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            names = [target] if target != "adagres" else [f"adagres.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "adagres" and len(parts) > 1:
                found.add(parts[1])
    return found


def test_imports_run_down_the_rooms():
    from pathlib import Path

    import adagres

    root = Path(adagres.__file__).parent
    upward = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        module = ".".join(rel.parts)
        package = (
            module.removesuffix(".__init__")
            if path.name == "__init__.py"
            else (module.rpartition(".")[0])
        )
        room = rel.parts[1] if len(rel.parts) > 1 else None
        if room in (None, "__init__", "__main__"):
            continue  # the package's front door and `python -m adagres` may import any room
        room = room.removesuffix(".py") if room.endswith(".py") else room
        assert room in ROOMS, f"{module}: a room docs/LAYOUT.md does not list"
        for other in imported_rooms(path, package):
            if other in ROOMS and ROOMS.index(other) > ROOMS.index(room):
                upward.append(f"{module} imports adagres.{other}")
    assert upward == []


def test_the_room_test_sees_an_upward_import(tmp_path):
    """The check above fails on an import that climbs: a pool module importing the CLI."""
    path = tmp_path / "pool.py"
    path.write_text("from ..cli import main\nimport adagres.eval.run\n")
    assert imported_rooms(path, "adagres.pools") == {"cli", "eval"}


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


def test_the_library_builds_every_figure_in_its_figures_room():
    """Outside adagres/figures only the report writer imports plotly, to write the figures
    as HTML and PNG: no module there draws one (no trace, no subplots, no Figure())."""
    import ast
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    writers = {"adagres/eval/report.py"}
    for path in sorted((root / "adagres").rglob("*.py")):
        name = path.relative_to(root).as_posix()
        if name.startswith("adagres/figures/"):
            continue
        source = path.read_text(encoding="utf-8")
        imports = [
            node
            for node in ast.walk(ast.parse(source))
            if (
                isinstance(node, ast.Import)
                and any(a.name.startswith("plotly") for a in node.names)
            )
            or (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("plotly"))
        ]
        assert name in writers or not imports, name
        assert "make_subplots" not in source and not re.search(r"\bgo\.\w+\(", source), name


#: The modules where a strategy's name is written: the registry and the modules that define
#: a strategy (``selection``: AdaGReS; ``baselines``: the by-name functions of the public API).
STRATEGY_HOMES = {
    "adagres/core/strategies.py",
    "adagres/core/classic.py",
    "adagres/core/variants.py",
    "adagres/core/selection.py",
    "adagres/core/baselines.py",
    "adagres/optimum/__init__.py",
}


def name_tests(source: str, names: set[str]) -> list[int]:
    """Lines where code decides by a strategy's name written as a literal: compared with a
    strategy (``settings.strategy == "mmr"``, ``row["strategy"] in (...)``), passed as
    ``strategy=`` or looked up in the registry (``STRATEGIES["mmr"]``). A metric, a column
    or a retriever's search type that happens to share a name is not a strategy."""
    import ast

    def named(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in names
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(named(e) for e in node.elts)
        return False

    def strategic(node: ast.AST) -> bool:
        return "strateg" in ast.unparse(node).lower()

    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(named(a) for a in sides) and any(strategic(a) for a in sides if not named(a)):
                lines.append(node.lineno)
        elif isinstance(node, ast.keyword) and node.arg == "strategy" and named(node.value):
            lines.append(node.value.lineno)
        elif isinstance(node, ast.Subscript) and named(node.slice) and strategic(node.value):
            lines.append(node.lineno)
    return sorted(lines)


def test_no_caller_decides_by_a_strategy_s_name():
    """A caller reads what it needs from the strategy's registry entry (its options, the
    run it takes its size from, whether it proves the optimum, ...), never tests its name."""
    import subprocess
    from pathlib import Path

    import adagres
    from adagres.core.strategies import STRATEGIES

    root = Path(adagres.__file__).parent.parent
    files = subprocess.run(
        ["git", "ls-files", "adagres", "ui", "app_pages", "app.py"],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
    ).stdout.split()
    found = []
    for name in files:
        if name.endswith(".py") and name not in STRATEGY_HOMES:
            for line in name_tests((root / name).read_text(), set(STRATEGIES)):
                found.append(f"{name}:{line}")
    assert found == []


def test_the_name_check_sees_each_way_of_deciding_by_name():
    code = (
        'if settings.strategy == "mmr": pass\n'
        'x = {"topk_budget": 1}\n'
        'key.replace(strategy="adagres")\n'
        'y = STRATEGIES["exact"]\n'
        'z = row["strategy"] in ("coverage", "other")\n'
        'metric = row["mmr"]\n'
        'if search_type == "mmr": pass\n'
    )
    names = {"mmr", "topk_budget", "adagres", "exact", "coverage"}
    assert name_tests(code, names) == [1, 3, 4, 5]


def test_import_adagres_selects_with_the_optional_rooms_absent():
    """The exact optimum, the evaluation, the adapters, the stores, pool sets and traces are
    optional: with each blocked, `import adagres` works and every other strategy selects."""
    code = (
        "import sys\n"
        "for m in ('adagres.optimum', 'adagres.eval', 'adagres.integrations', 'adagres.stores',"
        " 'adagres.poolsets', 'adagres.traces'):\n"
        "    sys.modules[m] = None\n"
        "import numpy as np, adagres\n"
        "from adagres.core.strategies import STRATEGIES\n"
        "q = np.array([1.0, 0.0]); C = np.array([[0.9, 0.1], [0.95, 0.05], [0.5, 0.5]])\n"
        "for name in STRATEGIES:\n"
        "    t = ['a b', 'c d', 'e f']\n"
        "    s = adagres.baselines.run(name, q, C, [60, 60, 30], 100, texts=t)\n"
        "    assert s.tokens_used <= 100 and s.size >= 1, name\n"
        "print(','.join(STRATEGIES))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names = out.stdout.strip().split(",")
    assert "exact" not in names and len(names) == 8
    assert {"adagres", "topk_budget", "mmr", "coverage"} <= set(names)
