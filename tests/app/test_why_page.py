"""AppTest tests of the Why-dropped page: verdicts by id, redundancy sources, map clicks."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_support import PAPER, WHY, array, figures, no_error, page

from adagres.pools.io import load_pool


def test_why_dropped_by_id(pools_dir):
    at = page(WHY, pool="medium", budget="1000")
    no_error(at)
    pool = load_pool(pools_dir / "medium.json")
    # c0001 is a near-copy of... pick a chunk that did not fit or was outscored.
    at.selectbox(key="why_chunk").set_value("c0199").run()
    no_error(at)
    assert at.query_params["chunk"] == "c0199"
    summary = at.text[0].value
    assert summary.startswith("c0199: ")
    assert "did not fit" in summary or "outscored" in summary or "non-positive" in summary
    assert pool.texts[199] in [c.value for c in at.code]
    history = next(df.value for df in at.dataframe if "its gain" in df.value.columns)
    assert len(history) >= 1 and set(history["step"]) <= set(range(1, 200))


def test_why_dropped_redundancy_sources(pools_dir):
    # The paper's method: its gains turn non-positive (policy fill spends the budget instead).
    at = page(WHY, pool="medium", budget="1500", **PAPER)
    pool = load_pool(pools_dir / "medium.json")
    table = next(df.value for df in at.dataframe if "verdict" in df.value.columns)
    picked = [pool.ids.index(i) for i in table.loc[table["verdict"] == "selected", "id"]]
    dropped = table.loc[table["verdict"] == "no positive gain", "position"].tolist()
    assert picked and dropped
    unit = pool.embeddings
    chunk = max(dropped, key=lambda i: float((unit[picked] @ unit[i]).max()))
    at.selectbox(key="why_chunk").set_value(pool.ids[chunk]).run()
    no_error(at)
    sources = next(df.value for df in at.dataframe if "selected chunk" in df.value.columns)
    # Brute force: the selected chunk most similar to it comes first, with its cosine.
    cosines = unit[picked] @ unit[chunk]
    best = picked[int(np.argmax(cosines))]
    assert sources["selected chunk"].iloc[0] == pool.ids[best]
    assert sources["cosine"].iloc[0] == pytest.approx(float(cosines.max()), abs=1e-4)
    assert "non-positive gain" in at.text[0].value


def test_why_map_points_name_their_chunks(pools_dir):
    """A click on the map is read from the point's customdata: its pool position."""
    from ui.render import clicked_position

    at = page(WHY, pool="medium", budget="1500")
    no_error(at)
    pool = load_pool(pools_dir / "medium.json")
    chunk_map = next(f for f in figures(at) if any(t["name"] == "query" for t in f["data"]))
    seen = set()
    for layer in chunk_map["data"]:
        if layer["name"] == "query":
            continue
        positions = [int(p) for p in array(layer["customdata"])]
        for position, hover in zip(positions, layer.get("hovertext", []), strict=False):
            assert hover.startswith(f"<b>{pool.ids[position]}</b>")
        seen.update(positions)
    assert seen == set(range(len(pool)))
    # A click event as Streamlit reports it: customdata as a number or a one-item list.
    assert clicked_position([{"curve_number": 2, "point_index": 0, "customdata": 17}]) == 17
    assert clicked_position([{"curve_number": 0, "customdata": [5]}]) == 5
    assert clicked_position([{"curve_number": 4, "point_index": 0}]) is None  # the query
