"""Reading a plotly figure in the tests: its dict with typed arrays decoded, one trace."""

from __future__ import annotations

from typing import Any

import numpy as np
from reference import typed_array

import adagres
from adagres.figures.projection import project


def decoded(value: Any) -> Any:
    """``value`` with plotly's typed arrays ({"dtype", "bdata"[, "shape"]}, base64, which
    numpy inputs become) and the numpy arrays it keeps as they are (empty or of objects)
    as lists, so that tests read lists whatever the input; NaN, a typed array's missing
    value (a gap, as null is in a list), reads as None."""
    if isinstance(value, dict) and "bdata" in value and "dtype" in value:
        value = typed_array(value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "f":
            return [None if x != x else x for x in value.tolist()]
        return value.tolist()
    if isinstance(value, dict):
        return {k: decoded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [decoded(v) for v in value]
    return value


def as_dict(fig: Any) -> dict[str, Any]:
    return decoded(fig.to_dict())


def trace(fig: Any, name: str) -> dict[str, Any]:
    """The one trace of ``fig`` called ``name``, as a decoded dict."""
    matches = [t for t in as_dict(fig)["data"] if t.get("name") == name]
    assert len(matches) == 1, name
    return matches[0]


def figure_pool(n: int, budget: int) -> dict[str, Any]:
    """The figure tests' pool: 40 chunks around five topics with two near-twins, a run
    that spends the budget (λ = 0.2) and one that stops on a non-positive gain."""
    rng = np.random.default_rng(11)
    d = 16
    common = rng.normal(size=d)
    centers = common + rng.normal(size=(5, d))
    C = centers[rng.integers(0, 5, n)] + 0.45 * rng.normal(size=(n, d))
    C[3] = C[2] + 0.01 * rng.normal(size=d)  # near-twins
    C = C / np.linalg.norm(C, axis=1, keepdims=True)
    q = centers[1] / np.linalg.norm(centers[1])
    tokens = rng.integers(20, 160, n)
    ids = [f"c{i}<i>" for i in range(n)]
    texts = [f"chunk {i}: <script>alert({i})</script> & more text " * 4 for i in range(n)]
    selection = adagres.select(q, C, tokens, budget, lam=0.2)  # runs until the budget is out
    adaptive = adagres.select(q, C, tokens, budget)  # stops on a non-positive gain
    return {
        "q": q,
        "C": C,
        "tokens": tokens,
        "ids": ids,
        "texts": texts,
        "s": selection,
        "adaptive": adaptive,
        "proj": project(C, q, method="pca"),
    }


def strip_own_markup(text: str) -> str:
    for tag in ("<b>", "</b>", "<br>"):
        text = text.replace(tag, "")
    return text
