"""AppTest tests of the settings in the URL: round trips, what reaches the core, bad values."""

from __future__ import annotations

import math

import pytest
from apptest_support import (
    APP,
    SELECTION,
    array,
    context_ids,
    figures,
    no_error,
    page,
    recommended_selection,
    shown_number,
    trace,
)
from reference import select_inputs

import adagres
from adagres import baselines
from adagres.pools.io import load_pool
from ui import pools


def test_url_round_trip(pools_dir):
    params = {
        "pool": "medium",
        "budget": "700",
        "strategy": "adagres",
        "policy": "fill",
        "lam": "0.25",
        "formula": "paper",
        "scale": "1",
        "offset": "0",
        "floor": "pool",
        "step": "2",
    }
    at = page(SELECTION, **params)
    no_error(at)
    assert at.selectbox(key="sb_pool").value == "medium"
    assert at.number_input(key="sb_budget").value == 700
    assert at.selectbox(key="sb_policy").value == "fill"
    assert at.radio(key="sb_lam_mode").value == "manual"
    assert at.slider(key="sb_lam").value == pytest.approx(0.25)
    assert at.radio(key="sb_floor_mode").value == "pool"
    assert at.slider(key="sel_step").value == 2
    assert shown_number(at, "λ") == "0.2500"
    assert at.query_params == params  # written back unchanged
    # A second session from the same URL shows the same selection.
    again = page(SELECTION, **params)
    assert context_ids(again) == context_ids(at)


@pytest.mark.parametrize("strategy", ["adagres", "topk_same_k", "mmr"])
def test_url_settings_reach_the_core_unchanged(pools_dir, strategy):
    """Scale, offset, τ and the calibration's top N set in the URL give exactly the selection
    the library gives with the same adagres.Settings."""
    params = {
        "pool": "medium",
        "budget": "1500",
        "strategy": strategy,
        "policy": "skip",
        "lam": "adaptive",
        "formula": "derived",
        "scale": "1.5",
        "offset": "0.01",
        "floor": "0.2",
        "topn": "40",
        "guard": "off",
    }
    at = page(SELECTION, **params)
    no_error(at)
    assert at.query_params == params  # topn is written back like the others
    assert at.radio(key="sb_topn_mode").value == "top N"
    assert at.number_input(key="sb_topn").value == 40
    settings = adagres.Settings(
        formula="derived", scale=1.5, offset=0.01, redundancy_floor=0.2, calibration_top_n=40
    )
    pool = load_pool(pools_dir / "medium.json")
    args = (*select_inputs(pool), 1500)
    expected = (
        adagres.select(*args, settings=settings)
        if strategy == "adagres"
        else baselines.run(strategy, *args, settings=settings, texts=pool.texts)
    )
    assert expected.calibration is not None
    assert expected.calibration.top_n == 40 and expected.redundancy_floor == 0.2
    assert context_ids(at) == [pool.ids[i] for i in expected.indices]
    # The timeline draws the score each step maximised (for mmr its own score, not the
    # gain); its hover carries the marginal F gains, whose sum is F.
    timeline = figures(at)[1]  # map, timeline, budget bar
    winner = trace(timeline, "winner")
    accepted = [st for st in expected.steps if st.accepted]
    assert array(winner["y"]).tolist() == [st.score for st in accepted]
    gains = [row[2] for row in winner["customdata"]]
    assert math.fsum(gains) == pytest.approx(expected.objective, rel=1e-12)
    assert shown_number(at, "F(S)") == f"{expected.objective:.4f}"
    assert shown_number(at, "λ") == f"{expected.lam:.4f}"
    # Without topn the calibration takes the whole pool: another λ.
    whole = page(SELECTION, **{k: v for k, v in params.items() if k != "topn"})
    assert "topn" not in whole.query_params
    over_all = adagres.select(*args, settings=settings.replace(calibration_top_n=None))
    assert shown_number(whole, "λ") == f"{over_all.lam:.4f}" != shown_number(at, "λ")


def test_manual_lambda_starts_at_the_adaptive_lambda(pools_dir):
    at = page(SELECTION, pool="medium", budget="1200", scale="0.8")  # the default preset
    adaptive = shown_number(at, "λ")
    pool = load_pool(pools_dir / "medium.json")
    expected = recommended_selection(pool, 1200, scale=0.8)
    at.radio(key="sb_lam_mode").set_value("manual").run()
    no_error(at)
    assert at.slider(key="sb_lam").value == pytest.approx(expected.lam, rel=1e-5)
    assert shown_number(at, "λ") == adaptive == f"{expected.lam:.4f}"
    assert float(at.query_params["lam"]) == pytest.approx(expected.lam, rel=1e-5)
    # The URL carries the manual λ exactly as the session uses it.
    again = page(SELECTION, **dict(at.query_params))
    assert context_ids(again) == context_ids(at) == [pool.ids[i] for i in expected.indices]


def test_calibration_top_n_from_the_sidebar(pools_dir):
    at = page(SELECTION, pool="medium", budget="1500")
    assert "topn" not in at.query_params
    at.radio(key="sb_topn_mode").set_value("top N").run()
    no_error(at)
    assert at.query_params["topn"] == "20"
    at.number_input(key="sb_topn").set_value(60).run()
    no_error(at)
    assert at.query_params["topn"] == "60"
    pool = load_pool(pools_dir / "medium.json")
    expected = recommended_selection(pool, 1500, calibration_top_n=60)  # the default preset
    assert shown_number(at, "λ") == f"{expected.lam:.4f}"
    assert context_ids(at) == [pool.ids[i] for i in expected.indices]
    at.radio(key="sb_topn_mode").set_value("whole pool").run()
    assert "topn" not in at.query_params


def test_url_with_bad_values_warns_and_uses_defaults(pools_dir):
    at = page(SELECTION, pool="nope", budget="lots", policy="greedy")
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "budget" in warnings and "policy" in warnings and "nope" in warnings
    default = adagres.PRESETS["recommended"]
    assert at.selectbox(key="sb_policy").value == default.settings.policy == "skip"
    assert at.selectbox(key="sb_strategy").value == default.strategy
    shown = at.selectbox(key="sb_pool").value
    assert shown != "nope"
    # The address is not rewritten by the app on its own (that would be a history entry
    # Back returns to, rewritten again): it keeps what was typed until the user changes
    # something, and then names the pool shown.
    assert at.query_params["pool"] == "nope"
    at.number_input(key="sb_budget").set_value(600).run()
    assert at.query_params["pool"] == shown and at.query_params["budget"] == "600"


def test_url_values_the_core_refuses_are_ignored_with_a_warning(pools_dir):
    at = page(SELECTION, pool="tiny", floor="5", topn="1", lam="-0.2", scale="0.5")
    no_error(at)
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")
    for key in ("floor='5'", "topn='1'", "lam='-0.2'"):
        assert key in warnings
    at.number_input(key="sb_budget").set_value(600).run()  # a change writes the view
    assert at.query_params["floor"] == "off" and "topn" not in at.query_params
    assert at.query_params["lam"] == "adaptive" and at.query_params["scale"] == "0.5"


def test_adaptive_url_settings(pools_dir):
    at = page(
        SELECTION,
        pool="tiny",
        lam="adaptive",
        formula="derived",
        scale="2",
        offset="0.01",
        floor="0.3",
        strategy="mmr",
    )
    no_error(at)
    assert at.selectbox(key="sb_formula").value == "derived"
    assert at.number_input(key="sb_scale").value == 2.0
    assert at.number_input(key="sb_floor").value == pytest.approx(0.3)
    assert at.selectbox(key="sb_strategy").value == "mmr"


@pytest.mark.parametrize(
    ("path", "params", "ignored"),
    [
        ("../../app_pages/2_selection.py", {"topn": "9" * 30}, "topn"),
        ("../../app_pages/2_selection.py", {"topn": str(2**60)}, "topn"),
        ("../../app_pages/4_lambda.py", {"lam": "1e12"}, None),
        ("../../app_pages/5_compare.py", {"a_lam": "1e13"}, "a_lam"),
        ("../../app_pages/5_compare.py", {"b_lam": "nan", "a_budget": "9" * 30}, "b_lam"),
    ],
)
def test_links_past_the_limits_are_ignored_with_a_word_not_a_traceback(path, params, ignored):
    """A 30-digit top-n once reached a number box whose maximum the browser cannot hold, a
    λ of 1e12 put the λ page's sweep past the core's bound on λ, and Compare took any λ."""
    at = page(path, pool="medium", **params)
    no_error(at)
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")  # markdown escapes
    if ignored is None:  # a valid λ at the bound: the page draws its sweep
        assert at.get("plotly_chart")
    else:
        assert f"ignored {ignored}=" in warnings, warnings


@pytest.mark.parametrize(
    "key",
    ["fanoutqa-²", "fanoutqa-" + "1" * 5000, "fanoutqa-١٢", "fanoutqa-", "fanoutqa-0042"],
    ids=["superscript", "5000-digits", "arabic-indic", "empty", "leading-zeros"],
)
@pytest.mark.parametrize("path", [SELECTION, APP])
def test_a_fanoutqa_link_that_names_no_pool_warns_instead_of_a_traceback(pools_dir, path, key):
    """'²' passed str.isdigit() and int() refused it; 5,000 digits passed too and int()
    refused the length: both ended the page in a traceback."""
    at = page(path, pool=key)
    no_error(at)
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")  # markdown escapes
    assert "fanoutqa-" in warnings
    assert at.selectbox(key="sb_pool").value != key
    assert pools.fanoutqa_index(key) is None
