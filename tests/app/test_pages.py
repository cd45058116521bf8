"""AppTest tests of the app shell, the Pool page and what every page renders as text."""

from __future__ import annotations

import json

import pytest
from apptest_support import APP, POOL_PAGE, SELECTION, WHY, metric, no_error, page
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Element
from synthetic import INJECTION

from adagres.optimum.exact import EXACT_MAX_CHUNKS
from adagres.pools.io import load_pool

# --------------------------------------------------------------------------- shell


def test_app_runs_every_page(pools_dir):
    at = page(APP, pool="tiny")
    no_error(at)
    assert at.title[0].value == "Selection"  # the default page
    for path, title in (
        ("app_pages/1_pool.py", "Pool"),
        ("app_pages/3_similarity.py", "Similarity"),
        ("app_pages/4_lambda.py", "λ derivation"),
        ("app_pages/5_compare.py", "Compare"),
        ("app_pages/6_why.py", "Why dropped"),
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
        verdicts = {
            "selected",
            "did not fit",
            "outscored",
            "no positive gain",
            "duplicate of a pick",
        }  # the recommended preset's near-duplicate guard
        assert set(table["verdict"]) <= verdicts
    if path == SELECTION:
        tokens_used = int(metric(at, "Tokens used").split(" / ")[0].replace(",", ""))
        assert 0 < tokens_used <= 1500


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
    assert key is not None and key.startswith("upload-")
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
    return [e.value for kind in kinds for e in at.get(kind) if isinstance(e, Element)]


@pytest.mark.parametrize("path", [SELECTION, WHY, POOL_PAGE])
def test_chunk_text_is_rendered_as_text(pools_dir, path):
    at = page(path, pool="tiny", budget="2000", chunk="c0000")
    no_error(at)
    if path == SELECTION:  # the context's table and plain text are drawn once opened
        at.session_state["sel_context_table"] = at.session_state["sel_plain_text"] = True
        at.run()
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
    refusal = f"limits: {EXACT_MAX_CHUNKS} chunks"
    assert any(refusal in e.value.replace("\\", "") for e in at.error)
    at.run()
    assert any(refusal in e.value.replace("\\", "") for e in at.error)
    assert calls.count("exact") == 1  # the refusal is cached: no second solve
