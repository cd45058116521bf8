"""AppTest tests of the Similarity, λ derivation and Compare pages together, and of the
Similarity page.

Reference values are computed here from the pool files with the core or by brute force, and
compared with what the pages show.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from apptest_support import (
    COMPARE,
    DEMO,
    LAMBDA,
    PAPER,
    SIMILARITY,
    array,
    figures,
    frame,
    frames,
    metric,
    no_error,
    page,
    paper_selection,
    pool_of,
)
from streamlit.testing.v1.element_tree import Element
from synthetic import INJECTION

from adagres.optimum.exact import EXACT_MAX_CHUNKS

pytestmark = pytest.mark.usefixtures("data_dir")
TITLES = {SIMILARITY: "Similarity", LAMBDA: "λ derivation", COMPARE: "Compare"}


# --------------------------------------------------------------------------- every page


@pytest.mark.parametrize("pool", ["tiny", "medium", DEMO])
@pytest.mark.parametrize("path", [SIMILARITY, LAMBDA, COMPARE])
def test_pages_load(data_dir, path, pool):
    at = page(path, pool=pool)
    no_error(at)
    assert at.title[0].value == TITLES[path]
    assert at.selectbox(key="sb_pool").value == pool
    assert len(at.get("plotly_chart")) >= 1


@pytest.mark.parametrize("path", [SIMILARITY, LAMBDA, COMPARE])
def test_bad_states_show_messages(data_dir, path):
    # The exact solver refuses 2000 chunks that fit: a warning, not a traceback.
    at = page(path, pool="large", budget="1500", strategy="exact")
    no_error(at)
    assert at.title[0].value == TITLES[path]
    if path != LAMBDA:  # the λ page always explains AdaGReS
        refusal = f"limits: {EXACT_MAX_CHUNKS} chunks"
        assert any(refusal in w.value.replace("\\", "") for w in at.warning)
    # A budget smaller than every chunk: nothing is selected.
    at = page(path, pool="medium", budget="1")
    no_error(at)
    messages = " ".join(element.value for element in [*at.info, *at.warning])
    if path == SIMILARITY:
        assert "Nothing is selected" in messages
    if path == LAMBDA:
        assert "Fallback" in messages
        assert metric(at, "F(greedy)") == metric(at, "F(optimum)") == "0.0000"
    if path == COMPARE:
        assert "A selects nothing" in messages and "B selects nothing" in messages
        table = frame(at, "metric")
        assert list(table.loc[table["metric"] == "chunks", ["A", "B"]].iloc[0]) == ["0", "0"]


@pytest.mark.parametrize("path", [SIMILARITY, LAMBDA, COMPARE])
def test_chunk_text_is_never_markdown(data_dir, path):
    at = page(path, pool="tiny", budget="2000")
    no_error(at)
    kinds = ("markdown", "caption", "title", "subheader", "info", "warning", "success", "error")
    for kind in kinds:
        for element in at.get(kind):
            assert isinstance(element, Element)
            assert "alert(1)" not in element.value and "**bold**" not in element.value
    plain = [df.value[c] for df in at.dataframe for c in df.value.columns if "text" in c]
    if path != LAMBDA:  # the λ page shows numbers only
        assert any(INJECTION in set(column) for column in plain)
    for figure in figures(at):
        assert "<script>" not in json.dumps(figure)


# --------------------------------------------------------------------------- similarity


@pytest.mark.parametrize("pool_name", ["tiny", "medium"])
@pytest.mark.parametrize("order", ["pick", "cluster"])
def test_heatmap_is_the_cosine_matrix_of_the_shown_order(data_dir, pool_name, order):
    # The paper's method leaves chunks of the tiny pool out, so the outlined block of picks
    # is a strict part of the matrix (the recommended preset fills 1200 tokens with all 10).
    at = page(SIMILARITY, pool=pool_name, budget="1200", **PAPER)
    if order == "cluster":
        at.radio(key="order").set_value("cluster").run()
    no_error(at)
    pool = pool_of(data_dir, pool_name)
    rows = frame(at, "row")
    position = {chunk_id: i for i, chunk_id in enumerate(pool.ids)}
    shown = [position[chunk_id] for chunk_id in rows["id"]]
    heat = figures(at)[0]["data"][0]
    z = array(heat["z"])
    assert pool.embeddings is not None
    unit = pool.embeddings.astype(np.float64)
    np.testing.assert_allclose(z, unit[shown] @ unit[shown].T, atol=1e-5)

    selection = paper_selection(pool, 1200)
    k = selection.size
    rest = sorted(
        (i for i in range(len(pool)) if i not in selection.indices),
        key=lambda i: (-selection.relevance[i], i),
    )
    pick_order = [*selection.indices, *rest][:150]
    if order == "pick":
        # Picks in pick order, then the others by decreasing relevance.
        assert shown == pick_order
        # One outline around the block of selected chunks (the first k rows).
        shapes = figures(at)[0]["layout"]["shapes"]
        assert [(s["x0"], s["x1"], s["y0"], s["y1"]) for s in shapes] == [
            (-0.5, k - 0.5, -0.5, k - 0.5)
        ]
    else:
        # The same chunks, grouped by clustering.
        assert sorted(shown) == sorted(pick_order) and shown != pick_order
    if len(pool) > 150:
        assert len(shown) == 150
        assert any("shows the top 150" in info.value for info in at.info)
    else:
        assert len(shown) == len(pool)
        assert not any("shows the top" in info.value for info in at.info)
    # Hover names both chunks of a cell: its row's and its column's category.
    assert heat["hovertemplate"].startswith("%{y}<br>%{x}<br>")
    assert [row.split("</b>")[0] for row in heat["y"]] == [f"<b>{pool.ids[i]}" for i in shown]
    assert list(heat["x"]) == list(heat["y"])


def test_heatmap_size_control(data_dir):
    at = page(SIMILARITY, pool="medium")
    at.select_slider(key="top").set_value(50).run()
    no_error(at)
    assert len(frame(at, "row")) == 50
    assert array(figures(at)[0]["data"][0]["z"]).shape == (50, 50)
    assert "top 50 of 200" in figures(at)[0]["layout"]["title"]["text"]


@pytest.mark.parametrize("threshold", [0.9, 0.8])
def test_near_duplicate_table_lists_exactly_the_pairs_above_the_threshold(data_dir, threshold):
    at = page(SIMILARITY, pool="medium")
    at.slider(key="pairs").set_value(threshold).run()
    no_error(at)
    pool = pool_of(data_dir, "medium")
    assert pool.embeddings is not None
    unit = pool.embeddings.astype(np.float64)
    gram = unit @ unit.T
    a, b = np.triu_indices(len(pool), k=1)
    close = np.abs(gram[a, b] - threshold) < 1e-5  # too close to call in float32
    assert not close.any()
    hits = gram[a, b] >= threshold
    expected = {
        (pool.ids[i], pool.ids[j]): gram[i, j] for i, j in zip(a[hits], b[hits], strict=True)
    }
    table = frame(at, "id A")
    shown = {
        (x, y): s for x, y, s in zip(table["id A"], table["id B"], table["cosine"], strict=True)
    }
    assert len(table) == len(expected) > 0
    assert shown.keys() == expected.keys()
    for pair, cosine in expected.items():
        assert shown[pair] == pytest.approx(cosine, abs=1e-5)
    assert list(table["cosine"]) == sorted(table["cosine"], reverse=True)
    # Snippets are the chunks' own text, as plain text.
    first = table.iloc[0]
    assert pool.texts[pool.ids.index(first["id A"])].startswith(first["text A"].rstrip("…"))


def test_near_duplicate_table_is_capped(data_dir):
    at = page(SIMILARITY, pool="medium")
    at.slider(key="pairs").set_value(0.7).run()
    no_error(at)
    pool = pool_of(data_dir, "medium")
    assert pool.embeddings is not None
    unit = pool.embeddings.astype(np.float64)
    a, b = np.triu_indices(len(pool), k=1)
    cosines = np.sort((unit @ unit.T)[a, b])[::-1]
    total = int((cosines >= 0.7).sum())
    assert total > 1000
    table = frame(at, "id A")
    assert len(table) == 1000
    np.testing.assert_allclose(table["cosine"], cosines[:1000], atol=1e-5)
    assert any(f"{total:,} pairs" in c.value and "1000 most similar" in c.value for c in at.caption)


def test_no_pair_above_the_threshold(data_dir):
    at = page(SIMILARITY, pool="tiny")
    at.slider(key="pairs").set_value(1.0).run()
    no_error(at)
    assert any("No pair" in info.value for info in at.info)
    assert not frames(at, "id A")
