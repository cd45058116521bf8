"""Plotly figure builders for the app's views (imports plotly; never streamlit).

Not imported by ``adagres`` itself, so the core stays numpy-only. Every builder takes
results (a :class:`~adagres.Selection`, a projection, a sweep, arrays), first extracts plain
data (the ``*_data`` functions, which tests check exactly) and then draws a ``go.Figure``.
Styling arguments are keyword-only; :func:`apply_layout` gives every figure the same look.
Names load on first use (PEP 562), so ``adagres.figures.projection`` imports without plotly.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

#: The modules whose public names (their ``__all__``) the package binds on first use;
#: ``projection`` stays out, so that it imports without plotly, and ``common`` has none.
MODULES = sorted(
    info.name
    for info in pkgutil.iter_modules(__path__)
    if info.name not in {"common", "projection"}
)


def _load() -> dict[str, Any]:
    names: dict[str, Any] = {}
    for module in MODULES:
        loaded = importlib.import_module(f".{module}", __name__)
        names.update({name: getattr(loaded, name) for name in loaded.__all__})
    return names


def __getattr__(name: str) -> Any:
    # Dunder probes (doctest, pickle, copy) must not load plotly.
    names = {} if name.startswith("__") else _load()
    if name not in names:
        raise AttributeError(f"module 'adagres.figures' has no attribute {name!r}")
    # Bind every public name at once: importing a submodule binds the submodule itself to
    # the package (``pool_map``, ``budget_bar``), which the function of the same name must
    # replace.
    globals().update(names)
    return names[name]


def __dir__() -> list[str]:
    return sorted(_load())
