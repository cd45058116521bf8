"""Helpers of the AppTest page tests: open a page from a URL, read its figures and tables."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
from reference import select_inputs, typed_array
from streamlit.testing.v1 import AppTest

import adagres
from adagres.pools.io import load_pool
from adagres.pools.pool import Pool

APP = "../../app.py"
POOL_PAGE = "../../app_pages/1_pool.py"
SELECTION = "../../app_pages/2_selection.py"
SIMILARITY = "../../app_pages/3_similarity.py"
LAMBDA = "../../app_pages/4_lambda.py"
COMPARE = "../../app_pages/5_compare.py"
WHY = "../../app_pages/6_why.py"
DEMO = "biomedical_redundant"  # a bundled demo pool (88 chunks, gold labels and answers)
TIMEOUT = 120
#: The URL parameter that opens the paper's method (the app's default is the recommended preset).
PAPER = {"preset": "paper"}


def page(path: str, **params: str) -> AppTest:
    """Run the page ``path`` in a new session whose URL carries ``params``."""
    at = AppTest.from_file(path, default_timeout=TIMEOUT)
    at.query_params.update(params)
    return at.run()


def no_error(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def figures(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def array(values: Any) -> np.ndarray:
    """A plotly array from the spec: nested lists, or {"dtype", "bdata", "shape"} (base64)."""
    if isinstance(values, dict):
        return typed_array(values).astype(float)
    return np.asarray(values, dtype=float)


def trace(figure: dict[str, Any], name: str) -> dict[str, Any]:
    matches = [t for t in figure["data"] if t.get("name", "").startswith(name)]
    assert matches, f"no trace {name!r} in {[t.get('name') for t in figure['data']]}"
    return matches[0]


def metric(at: AppTest, label: str) -> str:
    values = [m.value for m in at.metric if m.label == label]
    assert values, f"no metric {label!r} in {[m.label for m in at.metric]}"
    return values[0]


def shown_number(at: AppTest, label: str) -> str:
    """The Selection page's λ or F(S): its headline tile where the rule uses λ, else the
    paper's number in the folded whole-run line ("the paper's F(S) -0.2977 at λ 0.2222")."""
    tiles = [m.value for m in at.metric if m.label == label]
    if tiles:
        return tiles[0]
    pattern = {"λ": r"at λ (-?[0-9.]+)", "F(S)": r"the paper's F\(S\) (-?[0-9.]+)"}[label]
    found = [m.group(1) for e in at.expander if (m := re.search(pattern, e.label))]
    assert found, f"no {label} in the tiles or in {[e.label for e in at.expander]}"
    return found[0]


def frames(at: AppTest, column: str) -> list[Any]:
    """The tables shown that have ``column`` (AppTest does not expose dataframe keys)."""
    return [df.value for df in at.dataframe if column in df.value.columns]


def frame(at: AppTest, column: str, index: int = 0) -> Any:
    found = frames(at, column)
    assert len(found) > index, f"no table with a column {column!r}"
    return found[index]


def context_ids(at: AppTest) -> list[str]:
    """Chunk ids of the Selection page's context table, in pick order (the table is drawn
    once its expander is open: opened here, with one more run, where it is closed)."""
    if not frames(at, "order"):
        at.session_state["sel_context_table"] = True
        at.run()
    return list(frame(at, "order")["id"])


def paper_selection(pool: Pool, budget: int, **options: Any) -> adagres.Selection:
    """The paper's method on ``pool``: :func:`adagres.select` with its defaults."""
    return adagres.select(*select_inputs(pool), budget, **options)


def recommended_selection(pool: Pool, budget: int, **options: Any) -> adagres.Selection:
    """The app's default: the recommended preset on ``pool``."""
    chosen = adagres.PRESETS["recommended"]  # on Pool.prepared, as the app: with its places
    trace = options.pop("trace", True)
    return adagres.baselines.run_prepared(
        chosen.strategy,
        pool.prepared,
        budget,
        chosen.settings.replace(**options),
        texts=pool.texts,
        trace=trace,
    )


def pool_of(folder: Path, name: str) -> Pool:
    """The pool file ``name`` of the data folder ``folder``."""
    return load_pool(folder / f"{name}.json")
