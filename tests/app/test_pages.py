"""AppTest tests of the app shell and the Pool, Selection and Why-dropped pages."""

from __future__ import annotations

import base64
import json
import math
from typing import Any

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from synthetic import INJECTION

import adagres
from adagres import baselines
from adagres.pools.io import load_pool

APP = "../../app.py"
POOL_PAGE = "../../pages/1_pool.py"
SELECTION = "../../pages/2_selection.py"
WHY = "../../pages/6_why.py"
TIMEOUT = 60


def page(path: str, **params: str) -> AppTest:
    at = AppTest.from_file(path, default_timeout=TIMEOUT)
    at.query_params.update(params)
    return at.run()


def figures(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def array(values: Any) -> np.ndarray:
    """A plotly array from the spec: a list, or {"dtype", "bdata"} (base64)."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
    return np.asarray(values, dtype=float)


def trace(figure: dict[str, Any], name: str) -> dict[str, Any]:
    matches = [t for t in figure["data"] if t.get("name", "").startswith(name)]
    assert matches, f"no trace {name!r} in {[t.get('name') for t in figure['data']]}"
    return matches[0]


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def context_ids(at: AppTest) -> list[str]:
    frame = next(df.value for df in at.dataframe if "order" in df.value.columns)
    return list(frame["id"])


def no_error(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


# --------------------------------------------------------------------------- shell


def test_app_runs_every_page(pools_dir):
    at = page(APP, pool="tiny")
    no_error(at)
    assert at.title[0].value == "Selection"  # the default page
    for path, title in (
        ("pages/1_pool.py", "Pool"),
        ("pages/3_similarity.py", "Similarity"),
        ("pages/4_lambda.py", "λ derivation"),
        ("pages/5_compare.py", "Compare"),
        ("pages/6_why.py", "Why dropped"),
    ):
        at.switch_page(path).run()
        no_error(at)
        assert at.title[0].value == title
        # The shared sidebar keeps the pool across pages.
        assert at.selectbox(key="sb_pool").value == "tiny"


@pytest.mark.parametrize("pool", ["tiny", "medium", "large"])
@pytest.mark.parametrize("path", [POOL_PAGE, SELECTION, WHY])
def test_pages_work_at_every_size(pools_dir, pool, path):
    at = page(path, pool=pool, budget="1500")
    no_error(at)
    n = len(load_pool(pools_dir / f"{pool}.json"))
    if path == POOL_PAGE:
        table = next(df.value for df in at.dataframe if "verdict" in df.value.columns)
        assert len(table) == n
        assert set(table["verdict"]) <= {"selected", "did not fit", "outscored", "no positive gain"}
    if path == SELECTION:
        tokens_used = int(metric(at, "Tokens used").split(" / ")[0])
        assert 0 < tokens_used <= 1500


# --------------------------------------------------------------------------- selection


def test_smaller_budget_uses_fewer_tokens(pools_dir):
    at = page(SELECTION, pool="medium", budget="3000")
    no_error(at)
    large = int(metric(at, "Tokens used").split(" / ")[0])
    at.number_input(key="sb_budget").set_value(600).run()
    no_error(at)
    small = int(metric(at, "Tokens used").split(" / ")[0])
    assert small <= 600 < large <= 3000
    assert len(context_ids(at)) < 10
    assert at.query_params["budget"] == "600"


def test_manual_lambda_zero_picks_in_relevance_order(pools_dir):
    at = page(SELECTION, pool="medium", budget="1500")
    at.radio(key="sb_lam_mode").set_value("manual").run()
    at.slider(key="sb_lam").set_value(0.0).run()
    no_error(at)
    assert metric(at, "λ") == "0.0000"
    pool = load_pool(pools_dir / "medium.json")
    relevance = pool.embeddings @ pool.query_embedding
    position = {chunk_id: i for i, chunk_id in enumerate(pool.ids)}
    picked = [position[chunk_id] for chunk_id in context_ids(at)]
    assert len(picked) >= 3
    assert np.all(np.diff(relevance[picked]) <= 1e-6)
    assert picked[0] == int(np.argmax(relevance))
    # With λ = 0 redundancy is ignored: a near-copy (every fifth chunk) can be picked.
    adaptive = page(SELECTION, pool="medium", budget="1500")
    assert context_ids(adaptive) != context_ids(at)


def test_step_control_moves_the_winner(pools_dir):
    at = page(SELECTION, pool="medium", budget="1500", step="1")
    no_error(at)
    rings, picks = [], []
    for step in (1, 2, 3):
        at.slider(key="sel_step").set_value(step).run()
        no_error(at)
        assert at.query_params["step"] == str(step)
        figure = figures(at)[0]
        ring = trace(figure, "winner")
        selected = trace(figure, "selected")
        xs, ys = array(selected["x"]), array(selected["y"])
        assert len(xs) == step  # picks so far, numbered in order
        assert list(selected["text"]) == [str(k) for k in range(1, step + 1)]
        # The ring sits on the step's pick, the last one numbered.
        assert array(ring["x"])[0] == pytest.approx(xs[-1])
        assert array(ring["y"])[0] == pytest.approx(ys[-1])
        rings.append((array(ring["x"])[0], array(ring["y"])[0]))
        picks.append(at.text[1].value)
    assert len(set(rings)) == 3
    assert picks[0].startswith("Step 1 of ")


def step_views(at: AppTest) -> dict[str, Any]:
    """What each view of the Selection page shows as "the step"."""
    map_figure, budget_figure, timeline = figures(at)[:3]
    marker = [sh["x0"] for sh in timeline["layout"]["shapes"] if sh["x0"] == sh.get("x1")]
    return {
        "slider": next(w.value for w in at.slider if w.key in ("sel_step", "sel_step_playing")),
        "sentence": at.text[1].value.split(":")[0],
        "map": map_figure["layout"]["title"]["text"].split(":")[0],
        "timeline": marker[0] if marker else None,
        "bar": sum(1 for t in budget_figure["data"] if t["name"] != "remaining"),
        "context": len(context_ids(at)),
    }


def test_play_starts_from_the_first_step_and_a_page_run_does_not_advance(pools_dir):
    at = page(SELECTION, pool="medium", budget="1500")
    last = int(at.slider(key="sel_step").max)
    assert at.slider(key="sel_step").value == last and last > 2
    assert at.button(key="sel_play").label == "Play"
    at.button(key="sel_play").click().run()
    no_error(at)
    assert at.session_state["sel_playing"] is True
    assert at.button(key="sel_play").label == "Pause"
    assert at.query_params["step"] == "1"
    # Every view of the page shows step 1, drawn in full (the old player restarted the page
    # before the figures were drawn, and advanced on every page run).
    expected = {"slider": 1, "sentence": f"Step 1 of {last}", "map": f"Step 1 of {last}",
                "timeline": 1, "bar": 1, "context": 1}  # fmt: skip
    assert step_views(at) == expected
    for _ in range(2):  # full page runs while playing (a sidebar change, UMAP landing)
        at.run()
        no_error(at)
        assert step_views(at) == expected and at.session_state["sel_playing"] is True
    at.button(key="sel_play").click().run()  # pause
    assert at.session_state["sel_playing"] is False
    assert at.button(key="sel_play").label == "Play"
    assert step_views(at) == expected


def test_while_playing_the_slider_only_shows_and_after_pause_every_view_follows_it(pools_dir):
    at = page(SELECTION, pool="medium", budget="1500", step="2")
    last = int(at.slider(key="sel_step").max)
    at.button(key="sel_play").click().run()  # plays from step 2
    assert at.session_state["sel_playing"] is True and at.query_params["step"] == "2"
    # A tick may carry the browser's previous slider value: the slider shown while playing
    # is not one the user (or a stale value) can move.
    shown = at.slider(key="sel_step_playing")
    assert shown.disabled and shown.value == 2
    at.button(key="sel_play").click().run()  # pause, then scrub
    at.slider(key="sel_step").set_value(4).run()
    no_error(at)
    assert at.session_state["sel_playing"] is False
    views = step_views(at)
    assert views == {"slider": 4, "sentence": f"Step 4 of {last}", "map": f"Step 4 of {last}",
                     "timeline": 4, "bar": 4, "context": 4}  # fmt: skip


def test_each_tick_advances_one_step_until_the_last():
    from ui.replay import next_step

    step, playing, shown = 1, True, [1]
    while playing:
        step, playing = next_step(step, 8)
        shown.append(8 if step is None else step)
    # Steps 2..8 each once, the last shown for one more tick, then the replay stops there.
    assert shown == [1, 2, 3, 4, 5, 6, 7, 8, 8]
    assert next_step(None, 8) == (None, False)
    assert next_step(7, 8) == (None, True)


def test_the_pace_sets_the_timer_of_the_fragment(pools_dir):
    at = page(SELECTION, pool="medium", budget="1500")
    at.selectbox(key="sel_pace").set_value(2.0).run()
    assert at.session_state["sel_timer"] is None  # not playing: no timer
    at.button(key="sel_play").click().run()
    assert at.session_state["sel_timer"] == 2.0


# --------------------------------------------------------------------------- URL


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
    assert metric(at, "λ") == "0.2500"
    assert at.query_params == params  # written back unchanged
    # A second session from the same URL shows the same selection.
    again = page(SELECTION, **params)
    assert context_ids(again) == context_ids(at)


@pytest.mark.parametrize("strategy", ["adagres", "topk_same_k", "mmr"])
def test_url_settings_reach_the_core_unchanged(pools_dir, strategy):
    """Scale, offset, τ and the calibration's top N set in the URL give exactly the selection
    the library gives with the same adagres.Settings."""
    params = {"pool": "medium", "budget": "1500", "strategy": strategy, "policy": "skip",
              "lam": "adaptive", "formula": "derived", "scale": "1.5", "offset": "0.01",
              "floor": "0.2", "topn": "40"}  # fmt: skip
    at = page(SELECTION, **params)
    no_error(at)
    assert at.query_params == params  # topn is written back like the others
    assert at.radio(key="sb_topn_mode").value == "top N"
    assert at.number_input(key="sb_topn").value == 40
    settings = adagres.Settings(formula="derived", scale=1.5, offset=0.01,
                                redundancy_floor=0.2, calibration_top_n=40)  # fmt: skip
    pool = load_pool(pools_dir / "medium.json")
    args = (pool.query_embedding, pool.embeddings, pool.token_counts, 1500)
    expected = (
        adagres.select(*args, settings=settings)
        if strategy == "adagres"
        else baselines.run(strategy, *args, settings=settings, texts=pool.texts)
    )
    assert expected.calibration.top_n == 40 and expected.redundancy_floor == 0.2
    assert context_ids(at) == [pool.ids[i] for i in expected.indices]
    # F is the sum of the accepted step gains; the timeline draws each of them.
    timeline = figures(at)[2]  # map, budget bar, timeline
    gains = array(trace(timeline, "winner")["y"])
    assert math.fsum(gains) == pytest.approx(expected.objective, rel=1e-12)
    assert metric(at, "F(S)") == f"{expected.objective:.4f}"
    assert metric(at, "λ") == f"{expected.lam:.4f}"
    # Without topn the calibration takes the whole pool: another λ.
    whole = page(SELECTION, **{k: v for k, v in params.items() if k != "topn"})
    assert "topn" not in whole.query_params
    over_all = adagres.select(*args, settings=settings.replace(calibration_top_n=None))
    assert metric(whole, "λ") == f"{over_all.lam:.4f}" != metric(at, "λ")


def test_manual_lambda_starts_at_the_adaptive_lambda(pools_dir):
    at = page(SELECTION, pool="medium", budget="1200", scale="0.8")
    adaptive = metric(at, "λ")
    pool = load_pool(pools_dir / "medium.json")
    expected = adagres.select(pool.query_embedding, pool.embeddings, pool.token_counts, 1200,
                              scale=0.8)  # fmt: skip
    at.radio(key="sb_lam_mode").set_value("manual").run()
    no_error(at)
    assert at.slider(key="sb_lam").value == pytest.approx(expected.lam, rel=1e-5)
    assert metric(at, "λ") == adaptive == f"{expected.lam:.4f}"
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
    expected = adagres.select(pool.query_embedding, pool.embeddings, pool.token_counts, 1500,
                              calibration_top_n=60)  # fmt: skip
    assert metric(at, "λ") == f"{expected.lam:.4f}"
    assert context_ids(at) == [pool.ids[i] for i in expected.indices]
    at.radio(key="sb_topn_mode").set_value("whole pool").run()
    assert "topn" not in at.query_params


def test_url_with_bad_values_warns_and_uses_defaults(pools_dir):
    at = page(SELECTION, pool="nope", budget="lots", policy="greedy")
    assert not at.exception
    warnings = " ".join(w.value for w in at.warning)
    assert "budget" in warnings and "policy" in warnings and "nope" in warnings
    assert at.selectbox(key="sb_policy").value == "skip"
    assert at.query_params["pool"] == at.selectbox(key="sb_pool").value != "nope"


def test_url_values_the_core_refuses_are_ignored_with_a_warning(pools_dir):
    at = page(SELECTION, pool="tiny", floor="5", topn="1", lam="-0.2", scale="0.5")
    no_error(at)
    warnings = " ".join(w.value for w in at.warning).replace("\\", "")
    for key in ("floor='5'", "topn='1'", "lam='-0.2'"):
        assert key in warnings
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


# --------------------------------------------------------------------------- pool page


def test_broken_upload_shows_the_error_and_keeps_the_pool(pools_dir):
    at = page(POOL_PAGE, pool="tiny")
    no_error(at)
    broken = b'{"query": "q", "chunks": [{"id": "a", "text": "x"}, {"id": "a", "text": "y"}]}'
    at.file_uploader(key="pool_upload").set_value(("broken.json", broken, "application/json"))
    at.run()
    assert not at.exception
    assert len(at.error) == 1
    message = at.error[0].value.replace("\\", "")  # the message is Markdown-escaped
    assert "broken.json" in message and "duplicate chunk id" in message
    assert at.selectbox(key="sb_pool").value == "tiny"
    table = next(df.value for df in at.dataframe if "verdict" in df.value.columns)
    assert len(table) == 10
    # Not JSON at all: still a message, not a traceback.
    at.file_uploader(key="pool_upload").set_value(("worse.json", b"{not json", "text/plain"))
    at.run()
    assert not at.exception and "worse.json" in at.error[0].value.replace("\\", "")
    assert at.selectbox(key="sb_pool").value == "tiny"


def test_good_upload_becomes_the_current_pool(pools_dir):
    at = page(POOL_PAGE, pool="tiny")
    content = (pools_dir / "medium.json").read_bytes()
    at.file_uploader(key="pool_upload").set_value(("mine.json", content, "application/json"))
    at.run()
    no_error(at)
    key = at.selectbox(key="sb_pool").value
    assert key.startswith("upload-")
    assert at.query_params["pool"] == key
    table = next(df.value for df in at.dataframe if "verdict" in df.value.columns)
    assert len(table) == 200


def test_file_supplied_names_are_shown_literally(pools_dir):
    """A tokenizer name from the file is Markdown-escaped before it reaches st.metric."""
    pool = json.loads((pools_dir / "tiny.json").read_text())
    pool["tokenizer"] = "![x](http://example.invalid/x.png)"
    at = page(POOL_PAGE, pool="tiny")
    content = json.dumps(pool).encode()
    at.file_uploader(key="pool_upload").set_value(("[a](b).json", content, "application/json"))
    at.run()
    no_error(at)
    shown = metric(at, "Tokenizer")
    assert shown == r"\!\[x\]\(http\://example\.invalid/x\.png\)"


def test_near_duplicate_groups(pools_dir):
    at = page(POOL_PAGE, pool="medium")
    no_error(at)
    groups = next(df.value for df in at.dataframe if "group" in df.value.columns)
    # The synthetic pool makes every fifth chunk a near-copy of the one before it.
    assert groups["group"].nunique() >= 30
    assert groups.groupby("group").size().min() >= 2
    at.slider(key="pool_dup_threshold").set_value(1.0).run()
    assert not any("group" in df.value.columns for df in at.dataframe)


# --------------------------------------------------------------------------- why dropped


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
    at = page(WHY, pool="medium", budget="1500")
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


# --------------------------------------------------------------------------- safety


def _markdown_values(at: AppTest) -> list[str]:
    kinds = (
        "markdown",
        "caption",
        "title",
        "header",
        "subheader",
        "error",
        "warning",
        "info",
        "success",
    )
    return [element.value for kind in kinds for element in at.get(kind)]


@pytest.mark.parametrize("path", [SELECTION, WHY, POOL_PAGE])
def test_chunk_text_is_rendered_as_text(pools_dir, path):
    at = page(path, pool="tiny", budget="2000", chunk="c0000")
    no_error(at)
    plain = [e.value for e in at.text] + [e.value for e in at.code]
    frames = [df.value for df in at.dataframe if "text" in df.value.columns]
    shown = any(INJECTION in value for value in plain) or any(
        INJECTION in set(frame["text"]) for frame in frames
    )
    assert shown
    for value in _markdown_values(at):
        assert "alert(1)" not in value and "**bold**" not in value


def test_a_refused_selection_is_cached_not_solved_again(pools_dir, monkeypatch):
    """The exact solver's refusal is shown, and a rerun does not call the solver again."""
    from ui import compute

    calls: list[str] = []
    real_run = compute.baselines.run_prepared

    def counting_run(strategy, *args, **kwargs):
        calls.append(strategy)
        return real_run(strategy, *args, **kwargs)

    monkeypatch.setattr(compute.baselines, "run_prepared", counting_run)
    compute.clear()
    at = page(SELECTION, pool="large", strategy="exact", budget="20000")
    refusal = f"limits: {baselines.EXACT_MAX_CHUNKS} chunks"
    assert any(refusal in e.value.replace("\\", "") for e in at.error)
    at.run()
    assert any(refusal in e.value.replace("\\", "") for e in at.error)
    assert calls.count("exact") == 1  # the refusal is cached: no second solve


def test_the_sidebar_says_which_preset_and_switches_to_either_in_one_click(pools_dir):
    import adagres

    at = page(SELECTION, pool="medium", budget="600")
    assert any("Preset: paper" in c.value for c in at.caption)
    at.button(key="sb_preset_recommended").click().run()
    no_error(at)
    assert any("Preset: recommended" in c.value for c in at.caption)
    assert at.query_params["strategy"] == "orthogonal" and at.query_params["policy"] == "fill"
    at.button(key="sb_preset_paper").click().run()
    assert at.query_params["strategy"] == "adagres"
    assert adagres.PRESETS["paper"].settings.policy == at.query_params["policy"]
