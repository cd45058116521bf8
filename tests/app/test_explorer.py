"""The Pool page's map explorer: colour by a field, find text, chunks chosen on the map,
their export as a pool file; all of it in the address."""

from __future__ import annotations

import numpy as np
from apptest_support import POOL_PAGE, figures, frames, no_error, page, pool_of

from adagres.pools.io import load_pool
from ui import explorer


def explorer_figure(at) -> dict:
    return next(f for f in figures(at) if f["layout"].get("dragmode") == "lasso")


def test_find_colour_and_chosen_chunks_come_from_the_address(data_dir):
    pool = pool_of(data_dir, "biomedical_redundant")
    word = pool.texts[5].split()[3]
    expected = [
        i
        for i, c in enumerate(pool.chunks)
        if word.casefold() in (c.text + (c.title or "") + c.id).casefold()
    ]
    at = page(POOL_PAGE, pool="biomedical_redundant", find=word, color="gold", picked="4,9,2")
    no_error(at)
    fig = explorer_figure(at)
    names = [t["name"] for t in fig["data"]]
    assert "gold: gold" in names and "gold: not gold" in names
    (ring,) = [t for t in fig["data"] if t["name"].startswith("matches")]
    assert sorted(ring["customdata"]) == expected and ring["name"] == f"matches ({len(expected)})"
    gold = next(t for t in fig["data"] if t["name"] == "gold: gold")
    assert sorted(gold["customdata"]) == [i for i, c in enumerate(pool.chunks) if c.gold]
    # The chosen chunks are listed with their verdicts, in pool order.
    chosen = next(df for df in frames(at, "verdict") if len(df) == 3)
    assert list(chosen["id"]) == [pool.ids[i] for i in (2, 4, 9)]
    assert any("chosen" in b.proto.label for b in at.get("download_button"))
    assert at.query_params["picked"] == "4,9,2"  # the link is not rewritten on opening


def test_choices_redraw_the_map_and_a_colour_the_pool_lacks_is_dropped(data_dir):
    """Find and Colour by are widgets Streamlit binds to the address (the browser writes
    them: tests/app/test_browser_explorer.py); here, what they draw."""
    at = page(POOL_PAGE, pool="biomedical_redundant", color="meta:nothing")
    no_error(at)
    assert at.selectbox(key="color").value == "verdict"
    at.text_input(key="find").set_value("dose").run()
    (ring,) = [t for t in explorer_figure(at)["data"] if t["name"].startswith("matches")]
    found = explorer.matches(at_pool(data_dir), "dose")
    assert found is not None
    assert ring["name"] == f"matches ({len(found)})"
    at.selectbox(key="color").set_value("tokens").run()
    fig = explorer_figure(at)
    (scale,) = [t for t in fig["data"] if t["name"] == "tokens"]
    pool = pool_of(data_dir, "biomedical_redundant")
    assert pool.token_counts is not None
    assert [scale["marker"]["color"][i] for i in range(3)] == [
        int(n) for n in pool.token_counts[:3]
    ]


def at_pool(data_dir):
    return pool_of(data_dir, "biomedical_redundant")


def test_the_export_loads_back_as_a_pool_of_the_chosen_chunks(data_dir, tmp_path):
    pool = pool_of(data_dir, "biomedical_redundant")
    path = tmp_path / "chosen.json"
    path.write_text(explorer.export_text(pool, (2, 4, 9)), encoding="utf-8")
    again = load_pool(path)
    assert again.ids == tuple(pool.ids[i] for i in (2, 4, 9)) and again.query == pool.query
    assert pool.embeddings is not None
    np.testing.assert_array_equal(again.embeddings, pool.embeddings[[2, 4, 9]])
