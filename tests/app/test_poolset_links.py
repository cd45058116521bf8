"""Every view from its address: a pool set's query opened in every page comes back from a
link in another browser session (the set's path and the query's place are in the address);
an uploaded pool, which cannot, says so in the page with the way to keep it."""

from __future__ import annotations

import json

from apptest_support import POOL_PAGE, SELECTION, context_ids, no_error, page
from streamlit.testing.v1 import AppTest

from adagres.pools.io import load_pool
from adagres.poolsets import summaries as poolsets

SETS = "../../app_pages/9_pool_sets.py"


def opened_query(number: int) -> AppTest:
    """The Pool sets page on the data folder (the bundled pools), query ``number`` opened."""
    at = AppTest.from_file(SETS, default_timeout=120)
    at.query_params["pool"] = "tiny"
    at.run()
    at.selectbox(key="ps_query").set_value(number).run()
    at.button(key="ps_open").click().run()
    no_error(at)
    return at


def test_a_link_to_a_pool_sets_query_opens_its_pool_in_another_session(pools_dir):
    at = opened_query(1)
    key = at.session_state["settings"].pool
    params = dict(at.query_params)
    assert params["pool"] == key and key.startswith("poolset-")
    set_ = poolsets.load_pool_set(pools_dir)
    row = poolsets.summarize(set_, at.session_state["settings"].selector, 700, workers=1)[1]
    assert params["set"] == str(pools_dir) and params["setq"] == f"{row['unit']}.{row['position']}"
    expected = poolsets.load_unit(set_.units[row["unit"]])[row["position"]]

    # Another browser: the link opens the same pool, with its numbers, and says nothing is
    # missing.
    linked = page(SELECTION, **params)
    no_error(linked)
    assert not linked.warning, [w.value for w in linked.warning]
    assert linked.session_state["settings"].pool == key
    assert linked.selectbox(key="sb_pool").value == key
    mine = page(SELECTION, **params)  # the same view, its picks from the same pool
    assert context_ids(linked) == context_ids(mine)
    assert set(context_ids(linked)) <= set(expected.ids)


def test_an_uploaded_pool_says_in_the_page_that_a_link_cannot_bring_it_back(pools_dir, tmp_path):
    pool = load_pool(pools_dir / "tiny.json").to_dict()
    pool["query"] = "a query of my own"
    mine = page(POOL_PAGE, pool="tiny")
    mine.file_uploader(key="pool_upload").set_value(
        ("mine.json", json.dumps(pool).encode(), "application/json")
    )
    mine.run()
    no_error(mine)
    key = mine.session_state["settings"].pool
    assert key.startswith("upload-")
    # Its own session offers the file that brings it back.
    (button,) = [b for b in mine.get("download_button") if b.proto.label == "Download this pool"]
    assert button.proto.label == "Download this pool"
    # Another browser: told in the page (not only the sidebar), with the way to keep it.
    linked = page(SELECTION, pool=key, budget="300")
    no_error(linked)
    said = " ".join(w.value for w in linked.main.warning).replace("\\", "")
    assert key in said and "not available in this session" in said
    assert "Download this pool" in said
