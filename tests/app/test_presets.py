"""AppTest tests of the presets: the app opens on the recommended preset, the paper's method
is one click away, and a URL opens what it names (``preset`` for what it does not)."""

from __future__ import annotations

import pytest
from apptest_support import (
    APP,
    DEMO,
    PAPER,
    SELECTION,
    context_ids,
    metric,
    no_error,
    page,
    paper_selection,
    pool_of,
    recommended_selection,
)
from streamlit.testing.v1 import AppTest

from adagres import PRESETS, Settings

pytestmark = pytest.mark.usefixtures("data_dir")
RECOMMENDED, THE_PAPER = PRESETS["recommended"], PRESETS["paper"]


def preset_caption(at: AppTest) -> str:
    captions = [c.value for c in at.caption if c.value.startswith("Preset: ")]
    assert len(captions) == 1, captions
    return captions[0]


def shown_settings(at: AppTest) -> tuple[str, str, str]:
    """Strategy, policy and formula as the sidebar shows them."""
    return (
        str(at.selectbox(key="sb_strategy").value),
        str(at.selectbox(key="sb_policy").value),
        str(at.selectbox(key="sb_formula").value),
    )


def test_the_default_is_the_recommended_preset(data_dir):
    """A URL naming only the pool and budget (as an old hand-written link would) opens the
    recommended preset, with the picks run_preset("recommended", ...) gives."""
    at = page(SELECTION, pool=DEMO, budget="1000")
    no_error(at)
    assert preset_caption(at) == f"Preset: recommended ({RECOMMENDED.description})"
    assert shown_settings(at) == ("topk_budget", "skip", "paper")
    assert at.button(key="sb_preset_recommended").disabled
    assert not at.button(key="sb_preset_paper").disabled
    expected = recommended_selection(pool_of(data_dir, DEMO), 1000)
    assert expected.strategy == "topk_budget"
    pool = pool_of(data_dir, DEMO)
    assert context_ids(at) == [pool.ids[i] for i in expected.indices]
    # top-k maximises neither F nor uses λ: they are no headline numbers, but the paper's
    # F(S) at λ, named as such, in the folded whole-run line.
    assert {m.label for m in at.metric}.isdisjoint({"F(S)", "λ"})
    paper_f = f"the paper's F(S) {expected.objective:.4f} at λ {expected.lam:.4f}"
    assert any(paper_f in e.label for e in at.expander)
    assert metric(at, "Tokens used") == f"{expected.tokens_used:,} / 1,000"
    # The address is written once the user changes something, and then names every field
    # of the preset (a saved link keeps its view if the default preset changes).
    assert "strategy" not in at.query_params
    at.number_input(key="sb_budget").set_value(980).run()
    at.number_input(key="sb_budget").set_value(1000).run()
    params = at.query_params
    assert (params["strategy"], params["policy"], params["formula"]) == shown_settings(at)
    assert (params["lam"], params["scale"], params["offset"], params["floor"]) == (
        "adaptive",
        "1",
        "0",
        "off",
    )
    # top-k does not select with λ: its derivation is left to the λ page.
    assert expected.calibration is not None
    assert expected.calibration.describe() not in [t.value for t in at.text]
    # faq-02, a paraphrase of the first pick with facts of its own, is kept: the preset
    # pays once for repeated text and keeps every new fact (no guard drops it).
    assert expected.duplicates == () and "faq-02" in context_ids(at)


def test_the_app_with_no_url_opens_the_recommended_preset(data_dir):
    at = AppTest.from_file(APP, default_timeout=120).run()
    no_error(at)
    assert at.title[0].value == "Selection"
    assert preset_caption(at).startswith("Preset: recommended (")
    assert at.query_params == {}  # a bare address is the default view; nothing written


def test_one_click_gives_the_papers_picks_and_another_gives_back_the_default(data_dir):
    pool = pool_of(data_dir, DEMO)
    at = page(SELECTION, pool=DEMO, budget="1000")
    at.button(key="sb_preset_paper").click().run()
    no_error(at)
    assert preset_caption(at) == f"Preset: paper ({THE_PAPER.description})"
    assert shown_settings(at) == ("adagres", "skip", "paper")
    expected = paper_selection(pool, 1000)  # adagres.select with its defaults
    assert context_ids(at) == [pool.ids[i] for i in expected.indices]
    assert metric(at, "F(S)") == f"{expected.objective:.4f}"  # the paper's own number
    assert metric(at, "Stop reason") == "no positive gain"
    # The paper's method stops early here; the recommended preset spends the budget.
    assert expected.tokens_used < recommended_selection(pool, 1000).tokens_used
    # Its URL opens the paper's method in a new session too.
    again = page(SELECTION, **dict(at.query_params))
    assert preset_caption(again).startswith("Preset: paper (")
    assert context_ids(again) == context_ids(at)
    at.button(key="sb_preset_recommended").click().run()
    no_error(at)
    assert preset_caption(at).startswith("Preset: recommended (")
    recommended = recommended_selection(pool, 1000)
    assert context_ids(at) == [pool.ids[i] for i in recommended.indices]


def test_the_preset_parameter_opens_a_preset_and_named_fields_replace_its_own(data_dir):
    at = page(SELECTION, pool=DEMO, budget="1000", **PAPER)
    no_error(at)
    assert preset_caption(at).startswith("Preset: paper (")
    at.number_input(key="sb_budget").set_value(980).run()
    assert "preset" not in at.query_params  # read once: a change writes the fields instead
    assert at.query_params["strategy"] == "adagres"
    assert preset_caption(at).startswith("Preset: paper (")
    # A named field replaces the preset's: the paper's method with policy fill is custom.
    at = page(SELECTION, pool=DEMO, budget="1000", policy="fill", **PAPER)
    assert shown_settings(at) == ("adagres", "fill", "paper")
    assert preset_caption(at) == "Preset: none (custom settings)"
    # An unknown preset is ignored with a warning: the default opens.
    at = page(SELECTION, pool=DEMO, budget="1000", preset="best")
    assert not at.exception
    assert any("preset='best'" in w.value.replace("\\", "") for w in at.warning)
    assert shown_settings(at) == ("topk_budget", "skip", "paper")


def test_what_a_url_does_not_name_comes_from_the_recommended_preset():
    """The rule of ``ui.state``: named fields as named, the rest from the preset."""
    from ui.state import AppSettings

    full = {
        "pool": "p",
        "budget": "700",
        "strategy": "adagres",
        "policy": "skip",
        "lam": "adaptive",
        "formula": "paper",
        "scale": "1",
        "offset": "0",
        "floor": "off",
        "guard": "off",
        "pack": "off",
    }
    settings, problems = AppSettings.from_params(full)
    assert not problems
    # A URL the app wrote names every field that tells the presets apart: the paper's method.
    assert (settings.strategy, settings.selector) == (THE_PAPER.strategy, Settings())
    # The guard no longer tells the presets apart (off in both): the address leaves it out.
    assert settings.to_params() == {k: v for k, v in full.items() if k != "guard"}
    assert AppSettings.from_params({"pool": "p"})[0].selector == RECOMMENDED.settings
    assert AppSettings.from_params({"pool": "p"})[0].strategy == RECOMMENDED.strategy
    only_strategy, _ = AppSettings.from_params({"strategy": "adagres"})
    assert only_strategy.strategy == "adagres"
    assert only_strategy.selector == RECOMMENDED.settings  # fill, derived: as the rule says
    assert AppSettings() == AppSettings.from_params({})[0]
    paper, _ = AppSettings.from_params({"preset": "paper", "scale": "0.5"})
    assert (paper.strategy, paper.selector) == ("adagres", Settings(scale=0.5))


def test_the_app_says_which_targets_the_recommended_preset_misses():
    """The evaluation found no candidate that meets every target: the sidebar says so next
    to the preset, and says nothing of the kind for the paper's method."""
    assert RECOMMENDED.caveat and not THE_PAPER.caveat
    at = page(SELECTION, pool=DEMO, budget="1000")
    assert RECOMMENDED.caveat in [c.value for c in at.caption]
    at = page(SELECTION, pool=DEMO, budget="1000", **PAPER)
    assert RECOMMENDED.caveat not in [c.value for c in at.caption]


def test_under_the_default_preset_lambda_says_why_it_does_nothing_and_one_click_shows_it(
    data_dir,
):
    """Manual λ under the recommended preset (top-k) changes no pick: the sidebar says so
    under the λ control with a button to the paper's method, the page beside a button to
    the λ page (tested in Chromium); the sidebar's button opens the paper's method, where
    the same λ move changes the picks."""
    pool = pool_of(data_dir, DEMO)
    at = page(SELECTION, pool=DEMO, budget="1000")
    before = context_ids(at)
    at.radio(key="sb_lam_mode").set_value("manual").run()
    at.slider(key="sb_lam").set_value(0.0).run()
    no_error(at)
    assert context_ids(at) == before  # top-k: λ changes nothing
    notes = {c.value for c in at.caption if "with no λ" in c.value}
    assert notes == {
        "topk_budget (top-k until the budget) scores by relevance, with no λ: moving λ "
        "changes none of its picks, only the paper's F(S) reported for them. The paper's "
        "method weighs redundancy by λ.",  # the sidebar, under λ
        "topk_budget: score = relevance, with no λ; moving λ changes no pick.",
    }
    assert not at.button(key="sel_lam_page").disabled
    at.button(key="sb_lam_paper").click().run()
    no_error(at)
    assert shown_settings(at) == ("adagres", "skip", "paper")
    assert preset_caption(at).startswith("Preset: paper (")
    assert not [c.value for c in at.caption if "with no λ" in c.value]
    assert metric(at, "λ") == f"{paper_selection(pool, 1000).lam:.4f}"
    paper = context_ids(at)
    at.radio(key="sb_lam_mode").set_value("manual").run()
    at.slider(key="sb_lam").set_value(0.0).run()
    no_error(at)
    assert context_ids(at) != paper  # under the paper's method λ changes the picks
