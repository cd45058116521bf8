"""AppTest tests of the Selection page: budget, manual λ and the step-by-step replay."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from apptest_support import (
    PAPER,
    SELECTION,
    array,
    context_ids,
    figures,
    frame,
    frames,
    metric,
    no_error,
    page,
    paper_selection,
    recommended_selection,
    shown_number,
    trace,
)
from reference import select_inputs
from streamlit.testing.v1 import AppTest

import adagres
from adagres.pools.io import load_pool

# --------------------------------------------------------------------------- budget and λ


def test_smaller_budget_uses_fewer_tokens(pools_dir):
    at = page(SELECTION, pool="medium", budget="3000")
    no_error(at)
    large = int(metric(at, "Tokens used").split(" / ")[0].replace(",", ""))
    at.number_input(key="sb_budget").set_value(600).run()
    no_error(at)
    small = int(metric(at, "Tokens used").split(" / ")[0].replace(",", ""))
    assert small <= 600 < large <= 3000
    assert len(context_ids(at)) < 10
    assert at.query_params["budget"] == "600"


def test_manual_lambda_zero_picks_in_relevance_order(pools_dir):
    """The paper's method with λ = 0 is top-k (the recommended preset is top-k already)."""
    at = page(SELECTION, pool="medium", budget="1500", **PAPER)
    at.radio(key="sb_lam_mode").set_value("manual").run()
    at.slider(key="sb_lam").set_value(0.0).run()
    no_error(at)
    assert metric(at, "λ") == "0.0000"
    pool = load_pool(pools_dir / "medium.json")
    q, C, _ = select_inputs(pool)
    relevance = C @ q
    position = {chunk_id: i for i, chunk_id in enumerate(pool.ids)}
    picked = [position[chunk_id] for chunk_id in context_ids(at)]
    assert len(picked) >= 3
    assert np.all(np.diff(relevance[picked]) <= 1e-6)
    assert picked[0] == int(np.argmax(relevance))
    # With λ = 0 redundancy is ignored: a near-copy (every fifth chunk) can be picked.
    adaptive = page(SELECTION, pool="medium", budget="1500", **PAPER)
    assert context_ids(adaptive) != context_ids(at)


# --------------------------------------------------------------------------- replay


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
        picks.append(step_sentence(at))
    assert len(set(rings)) == 3
    assert picks[0].startswith("Step 1 of ")


def step_sentence(at: AppTest) -> str:
    """The sentence on the step shown ("Step k of n: ..."), wherever the page writes it."""
    (sentence,) = [t.value for t in at.text if t.value.startswith("Step ")]
    return sentence


def step_views(at: AppTest) -> dict[str, Any]:
    """What each view of the Selection page shows as "the step"."""
    map_figure, timeline, budget_figure = figures(at)[:3]
    marker = [sh["x0"] for sh in timeline["layout"]["shapes"] if sh["x0"] == sh.get("x1")]
    return {
        "slider": next(w.value for w in at.slider if w.key in ("sel_step", "sel_step_playing")),
        "sentence": step_sentence(at).split(":")[0],
        "map": map_figure["layout"]["title"]["text"].split(":")[0],
        "timeline": marker[0] if marker else None,
        "bar": len(next(t for t in budget_figure["data"] if t["name"] == "picks").get("x", [])),
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
    expected = {
        "slider": 1,
        "sentence": f"Step 1 of {last}",
        "map": f"Step 1 of {last}",
        "timeline": 1,
        "bar": 1,
        "context": 1,
    }
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
    assert views == {
        "slider": 4,
        "sentence": f"Step 4 of {last}",
        "map": f"Step 4 of {last}",
        "timeline": 4,
        "bar": 4,
        "context": 4,
    }


def test_each_tick_advances_one_step_until_the_last():
    from ui.replay import next_step

    step: int | None = 1
    playing, shown = True, [1]
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


def test_the_plain_text_context_is_drawn_only_once_opened(pools_dir):
    """Closed, the expander holds no code block (so the browser does not load the syntax
    highlighter for the first paint); opened, it holds the picked texts in pick order."""
    at = page(SELECTION, pool="medium", budget="1500")
    no_error(at)
    assert "Context as plain text" in [e.label for e in at.expander]
    assert not at.code
    at.session_state["sel_plain_text"] = True
    at.run()
    no_error(at)
    pool = load_pool(pools_dir / "medium.json")
    texts = dict(zip(pool.ids, pool.texts, strict=True))
    assert [c.value for c in at.code] == ["\n\n".join(texts[i] for i in context_ids(at))]


def test_the_context_table_is_drawn_only_once_opened(pools_dir):
    """Closed by default, the context's expander holds no table (its grid costs a new
    visitor's browser about 0.6 s before the first chart); opened, the table lists the
    picks in pick order with their tokens and texts, and stays open on the next run."""
    at = page(SELECTION, pool="medium", budget="1500")
    no_error(at)
    assert "Context as a table" in [e.label for e in at.expander]
    assert not frames(at, "order")
    at.session_state["sel_context_table"] = True
    at.run()
    no_error(at)
    pool = load_pool(pools_dir / "medium.json")
    expected = recommended_selection(pool, 1500)
    table = frame(at, "order")
    assert list(table["id"]) == [pool.ids[i] for i in expected.indices]
    assert list(table["text"]) == [pool.texts[i] for i in expected.indices]
    counts = select_inputs(pool)[2]
    assert list(table["tokens"]) == [int(counts[i]) for i in expected.indices]
    assert list(table["total"]) == list(np.cumsum(table["tokens"]))
    at.run()  # another run (e.g. a slider move): still open
    assert list(frame(at, "order")["id"]) == [pool.ids[i] for i in expected.indices]


# --------------------------------------------------------------------------- a step's numbers


def download_url(text: str, file_name: str) -> str:
    """Where AppTest's media storage serves a text download of ``text`` (its id is a hash
    of the bytes, the type and the file name)."""
    from streamlit.runtime.media_file_storage import MediaFileKind
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

    storage = MemoryMediaFileStorage("/mock/media")
    data = text.encode("utf-8")
    return storage.get_url(
        storage.load_and_get_id(data, "text/plain", MediaFileKind.DOWNLOADABLE, file_name)
    )


def test_replayed_step_shows_its_own_numbers_and_context_download(pools_dir):
    """At step 3 of the replay the header says what the first 3 steps picked, used and
    scored, and "Download context" gives the context after step 3, not the whole run."""
    pool = load_pool(pools_dir / "medium.json")
    whole = recommended_selection(pool, 1500)
    assert len(whole.steps) > 4  # else step 3 is not a step of a longer run
    at = page(SELECTION, pool="medium", budget="1500", step="3")
    no_error(at)
    picks = [s for s in whole.steps[:3] if s.accepted]
    assert len(picks) == 3 and len(context_ids(at)) == 3
    assert metric(at, "Chunks selected") == "3"
    assert metric(at, "Tokens used") == f"{picks[-1].tokens_used:,} / 1,500"
    chosen = [s.winner for s in picks if s.winner is not None]
    assert len(chosen) == len(picks)  # each shown step took a chunk
    # top-k does not maximise F: the folded line gives the paper's F of the whole run.
    assert shown_number(at, "F(S)") == f"{whole.objective:.4f}"
    assert metric(at, "Stop reason") == "not yet"
    # Under the paper's method F(S) is a headline number, that of the first 3 picks.
    paper = paper_selection(pool, 1500)
    first = [s.winner for s in paper.steps[:3] if s.accepted and s.winner is not None]
    expected_f = adagres.objective(
        *select_inputs(pool)[:2],
        first,
        paper.lam,
        alpha=paper.alpha,
        redundancy_floor=paper.redundancy_floor,
    )
    assert (
        metric(page(SELECTION, pool="medium", budget="1500", step="3", **PAPER), "F(S)")
        == f"{expected_f:.4f}"
    )
    (button,) = [b for b in at.get("download_button") if "context" in b.proto.label]
    assert button.proto.label == "Download context after step 3 (text)"
    text = "\n\n".join(pool.texts[i] for i in chosen)
    assert button.proto.url == download_url(text, "context-medium-1500-step3.txt")
    # At the last step: the whole run's numbers and context.
    last = page(SELECTION, pool="medium", budget="1500")
    assert metric(last, "Chunks selected") == str(whole.size)
    assert shown_number(last, "F(S)") == f"{whole.objective:.4f}"
    (button,) = [b for b in last.get("download_button") if "context" in b.proto.label]
    text = "\n\n".join(pool.texts[i] for i in whole.indices)
    assert button.proto.url == download_url(text, "context-medium-1500.txt")


def test_the_context_marks_and_lists_the_sentences_left_out_as_repeats(data_dir):
    """biomedical_redundant at 4,000 tokens: the recommended preset leaves out sentences the
    context already holds (a label's warning repeated in another label); the context shows
    […] where each was, and the expander lists each sentence with the pick it was left out
    of and the pick that holds it, as the record says."""
    pool = load_pool(data_dir / "biomedical_redundant.json")
    expected = recommended_selection(pool, 4000)
    omitted = [o for p in expected.passages for o in p.omissions]
    assert omitted  # the pool repeats sentences at this budget
    at = page(SELECTION, pool="biomedical_redundant", budget="4000")
    no_error(at)
    label = f"Left out as repeats: {len(omitted)} sentences ([…] in the context)"
    assert label in [e.label for e in at.expander]
    at.session_state["sel_left_out"] = at.session_state["sel_plain_text"] = True
    at.run()
    no_error(at)
    table = frame(at, "sentence")
    assert list(table["sentence"]) == [o.text for o in omitted]
    assert list(table["left out of"]) == [pool.ids[o.chunk] for o in omitted]
    assert list(table["already held by"]) == [pool.ids[o.holder] for o in omitted]
    (context,) = [c.value for c in at.code]
    assert context.count("[…]") == len(omitted)
    for o in omitted:  # the sentence stands in the context once, where its holder put it
        assert " ".join(context.split()).count(" ".join(o.text.split())) >= 1
