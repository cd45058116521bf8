"""Labels and columns that read the same everywhere and keep what matters in view: the Pool
table's key columns first, shares written as percentages on every page, the Similarity
page's sizes and pairs in words, and the policy help naming each preset once."""

from __future__ import annotations

import pytest
from apptest_support import COMPARE, DEMO, POOL_PAGE, SIMILARITY, frame, no_error, page, pool_of

pytestmark = pytest.mark.usefixtures("data_dir")


def test_the_pool_table_starts_with_its_key_columns():
    at = page(POOL_PAGE, pool=DEMO, budget="1000")
    no_error(at)
    table = frame(at, "verdict")
    assert list(table.columns[:5]) == ["id", "verdict", "step", "tokens", "relevance"]


def test_repeated_text_reads_as_a_percentage_in_compare(data_dir):
    at = page(COMPARE, pool=DEMO, budget="1000")
    no_error(at)
    table = frame(at, "metric")
    (shown,) = table.loc[table["metric"] == "repeated text", "A"]
    assert shown.endswith("%") and len(shown.split(".")[1]) == 2, shown  # "2.4%"


def test_similarity_offers_no_size_beyond_the_pool_and_names_the_selected_chunk(data_dir):
    pool = pool_of(data_dir, DEMO)
    at = page(SIMILARITY, pool=DEMO, budget="1000")
    no_error(at)
    sizes = at.select_slider(key="top")
    assert list(sizes.options) == ["50", f"all {len(pool)}"]
    at.slider(key="pairs").set_value(0.8).run()
    pairs = frame(at, "id A")
    assert len(pairs) > 0
    allowed = {"both", "neither", *pool.ids}
    assert set(pairs["selected"]) <= allowed and not {"A", "B"} & set(pairs["selected"])
    for _, row in pairs.iterrows():
        assert row["selected"] in ("both", "neither", row["id A"], row["id B"])


def test_the_policy_help_names_each_preset_once():
    at = page(POOL_PAGE, pool=DEMO, budget="1000")
    text = at.selectbox(key="sb_policy").help
    assert "(the paper and recommended presets')" in text
    assert "preset's) (the" not in text
