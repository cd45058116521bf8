"""AppTest tests of the Why-dropped page: verdicts by id, redundancy sources, map clicks."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_support import PAPER, WHY, array, figures, no_error, page
from reference import select_inputs

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
    _, unit, _ = select_inputs(pool)
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


def test_why_names_the_pick_faq_02_duplicates_under_the_guard(data_dir):
    """The biomedical demo pool at 1,000 tokens. Under the default preset faq-02, a
    paraphrase of faq-01 with facts of its own, is selected second. With the near-duplicate
    guard (a user's choice, in the address) it is dropped; its verdict names faq-01, the
    step and the cosine (brute force)."""
    from adagres.core.presets import NEAR_DUPLICATE_GUARD

    at = page(WHY, pool="biomedical_redundant", budget="1000", chunk="faq-02")
    no_error(at)
    assert at.text[0].value.startswith("faq-02: selected at step 2")
    at = page(WHY, pool="biomedical_redundant", budget="1000", chunk="faq-02", guard="0.9,0.8")
    no_error(at)
    pool = load_pool(data_dir / "biomedical_redundant.json")
    unit = pool.prepared.chunks.astype(np.float64)
    cosine = float(unit[pool.ids.index("faq-02")] @ unit[pool.ids.index("faq-01")])
    assert cosine >= NEAR_DUPLICATE_GUARD[0]
    assert at.text[0].value.startswith(
        f"faq-02: duplicate of 'faq-01' (picked at step 1): cosine {cosine:.3f}"
    )


def test_why_dropped_names_what_blog_02_repeats_under_the_orthogonal_variant(data_dir):
    """The orthogonal variant as the evaluation runs it (fill, derived λ, guard, packing) on
    the biomedical demo pool at 1,000 tokens. blog-02, a near-copy of earlier picks, gets a
    verdict in the rule's own terms that names the picks it repeats (brute force: the picks
    made before its step with the largest cosine beyond the query)."""
    from adagres.core.baselines import run_prepared
    from adagres.core.strategies import ORTHOGONAL

    at = page(
        WHY,
        pool="biomedical_redundant",
        budget="1000",
        chunk="blog-02",
        strategy="orthogonal",
        policy="fill",
        formula="derived",
        guard="0.9,0.8",
    )
    no_error(at)
    pool = load_pool(data_dir / "biomedical_redundant.json")
    summary = at.text[0].value
    assert summary.startswith("blog-02: ") and "repeats" in summary
    assert "cos beyond the query" in summary
    assert ORTHOGONAL.tuned is not None  # the settings the orthogonal variant is meant for
    s = run_prepared("orthogonal", pool.prepared, 1000, ORTHOGONAL.tuned, texts=pool.texts)
    v = s.verdict(pool.ids.index("blog-02"))
    assert v.step is not None  # blog-02 was dropped at a step
    q = pool.prepared.query.astype(np.float64)
    unit = pool.prepared.chunks.astype(np.float64)
    residual = unit - np.outer(unit @ q, q)
    residual /= np.linalg.norm(residual, axis=1, keepdims=True)
    before_step = list(s.indices[: v.step - 1])
    beyond = residual[before_step] @ residual[pool.ids.index("blog-02")]
    most = pool.ids[before_step[int(np.argmax(beyond))]]
    assert f"repeats {most!r}" in summary
    sources = next(df.value for df in at.dataframe if "selected chunk" in df.value.columns)
    assert sources["selected chunk"].iloc[0] == most
