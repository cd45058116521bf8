"""In Chromium: the replay plays every step with every figure in step, a click on a chunk
opens its verdict in view, uploads stay in their browser session, and the server stops
promptly on SIGTERM."""

from __future__ import annotations

import json
import re
import statistics
import time

import pytest
from browser_support import (
    CHROMIUM,
    FLAGS,
    RUNS,
    click_chunk,
    in_view,
    rerun,
    server,
    step_views,
    wait_for_app,
)
from playwright.sync_api import sync_playwright
from reference import select_inputs
from synthetic import synthetic_pool

from adagres import select
from adagres.pools.io import load_pool

PACE = 1.5  # seconds per step, chosen in the page


@pytest.fixture(scope="module")
def app(pools_dir, tmp_path_factory):
    with server(tmp_path_factory.mktemp("logs"), ADAGRES_DATA_DIR=str(pools_dir)) as running:
        yield running


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


def eight_step_budget(pools_dir) -> int:
    """A budget at which the paper's method (``preset=paper`` in the URL) takes 8 steps."""
    pool = load_pool(pools_dir / "medium.json")
    for budget in range(300, 4000, 10):
        run = select(*select_inputs(pool), budget, trace=False)
        if len(run.steps) == 8:
            return budget
    raise AssertionError("no budget gives an 8-step run")


def play_and_watch(page, last_step: int) -> list[tuple[float, dict]]:
    """Click Play and record every change of what the views show, with its time, until the
    replay has shown ``last_step`` and stopped (Play is back): the player's own state ends
    the watch, not a clock (a hang fails after two minutes)."""
    page.get_by_role("button", name="Play").click()
    start, seen, last = time.monotonic(), [], None
    playing = False
    while time.monotonic() - start < 120:
        views = step_views(page)
        if views != last:
            seen.append((time.monotonic() - start, views))
            last = views
        stopped = page.get_by_role("button", name="Pause").count() == 0
        playing = playing or not stopped
        if playing and stopped and views["sentence"] == last_step:
            return seen
        page.evaluate("() => new Promise(r => requestAnimationFrame(r))")  # the next frame
    raise AssertionError(f"the replay did not reach step {last_step} and stop: {seen[-3:]}")


def choose_pace(page, seconds: float) -> None:
    """Choose the replay's pace; the box is in the replay's fragment, which reruns alone."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text="Pace")
    box.click()
    page.get_by_role("option", name=f"{seconds:g} s", exact=True).click()
    page.wait_for_function(  # the box shows the pace and the fragment's run has ended
        """(label) => [...document.querySelectorAll('[data-testid="stSelectbox"]')]
            .some(e => e.innerText.includes('Pace') && e.querySelector('input').value === label)
            && !document.querySelector('[data-testid="stStatusWidget"]')
            && !document.querySelector('[data-stale="true"]')""",
        arg=f"{seconds:g} s",
        timeout=60_000,
    )


def test_play_draws_every_step_in_turn_with_every_figure(app, browser, pools_dir):
    budget = eight_step_budget(pools_dir)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{app.url}/?pool=medium&budget={budget}&preset=paper")  # 8 steps: the paper's
    wait_for_app(page)
    choose_pace(page, PACE)
    assert step_views(page)["sentence"] == 8
    seen = play_and_watch(page, 8)

    # Every step in turn: from Play on, the step sentence went 1, 2, …, 8, none skipped.
    start = next(k for k, (_, views) in enumerate(seen) if views["sentence"] == 1)
    seen = seen[start:]
    order = [
        v["sentence"]
        for k, (_, v) in enumerate(seen)
        if k == 0 or v["sentence"] != seen[k - 1][1]["sentence"]
    ]
    assert order == list(range(1, 9)), order
    firsts: dict[int, float] = {}
    for at, views in seen:
        firsts.setdefault(views["sentence"], at)
    # At every step there was a moment when all the views showed that step, the winner's
    # ring on the last pick and the budget bar holding the picks so far.
    rings = {}
    for step in range(1, 9):
        agreed = [v for _, v in seen if v["sentence"] == v["map"] == v["timeline"] == step]
        assert agreed, f"step {step}: the views never agreed: {[v for _, v in seen][:40]}"
        views = agreed[-1]
        assert views["bar"] == views["picks"] == min(step, 7)
        if step <= 7:  # an accepted pick: the ring is on it
            assert views["ring"] == pytest.approx(views["last_pick"])
        rings[step] = None if views["ring"] is None else tuple(views["ring"])  # None: nothing fits
    assert all(rings[k] != rings[k + 1] for k in range(1, 8)), rings  # the winner moved
    # Never faster than the pace chosen (the old player ended an 8-step run in about 3 s); a
    # busy machine can only make it slower, so only the lower bound is checked.
    gaps = [firsts[k + 1] - firsts[k] for k in range(1, 8)]
    assert statistics.median(gaps) >= 0.7 * PACE, gaps
    assert firsts[8] - firsts[1] >= 7 * PACE * 0.8, gaps
    assert page.get_by_role("button", name="Play").count() == 1  # stopped at the end
    page.close()


def test_pause_holds_the_step(app, browser, pools_dir):
    budget = eight_step_budget(pools_dir)
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{app.url}/?pool=medium&budget={budget}&preset=paper")  # 8 steps: the paper's
    wait_for_app(page)
    page.get_by_role("button", name="Play").click()
    # Click Pause the moment a step from 3 on shows (a click from the page itself:
    # Playwright's own click waits for the button to hold still, and the playing fragment
    # redraws it); the step shown then is what the user paused at, and the app's run count
    # then is what the pause's own run must pass.
    clicked, before = page.wait_for_function(
        """() => {
          const text = [...document.querySelectorAll('[data-testid="stText"]')]
              .map(e => e.innerText).find(t => /^Step \\d+ of/.test(t));
          const step = text ? Number(text.match(/^Step (\\d+) of/)[1]) : 0;
          const pause = [...document.querySelectorAll('button')]
              .find(b => b.innerText.trim().endsWith('Pause'));
          if (step >= 3 && step < 7 && pause) {
            const before = (RUNS)(); pause.click(); return [step, before];
          }
          return false;
        }""".replace("RUNS", RUNS),
        timeout=60_000,
        polling=20,
    ).json_value()
    wait_for_app(page, after=before)
    held = step_views(page)
    # That step, or one the server had already sent (the browser draws a step a moment
    # after the server sends it; on a loaded machine, up to two).
    assert clicked <= held["sentence"] <= clicked + 2, (clicked, held)
    # Paused: Play is offered again, the step is in the address and every view agrees.
    assert page.get_by_role("button", name="Play").count() == 1
    assert held["sentence"] == held["map"] == held["timeline"]
    assert f"step={held['sentence']}" in page.url
    page.close()


def test_a_click_on_a_chunk_opens_its_verdict_in_view(app, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    # The paper's preset: its map leaves chunks 5, 30 and 2 clear of other markers (under
    # the recommended preset a click at chunk 5's point lands on c0008's marker).
    page.goto(f"{app.url}/?pool=medium&budget=1500&preset=paper")
    wait_for_app(page)
    # On the Selection page's map: the Why-dropped page opens on that chunk's verdict.
    with rerun(page):
        click_chunk(page, 5)
        page.wait_for_url("**/why?**", timeout=30_000)
    assert "chunk=c0005" in page.url
    assert page.locator("#verdict").inner_text() == "Verdict on c0005"
    assert in_view(page, "verdict")
    ringed = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')]
        .flatMap(p => (p.data || []).map(t => t.name)).filter(n => n.startsWith('inspected'))""")
    assert ringed == ["inspected: c0005"]
    # On the Why page's map, below the verdict: the new verdict comes into view.
    with rerun(page):
        click_chunk(page, 30)
        page.wait_for_url("**chunk=c0030**", timeout=30_000)
    assert page.locator("#verdict").inner_text() == "Verdict on c0030"
    assert in_view(page, "verdict")
    # A click on the ringed chunk again leaves the figure as it is, so the chart keeps the
    # click's selection: the map dims none of the other points (the ring marks the chunk).
    with rerun(page):  # the click's selection event reruns the page once
        click_chunk(page, 30)
    assert page.locator("#verdict").inner_text() == "Verdict on c0030"
    dimmed = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot .point')]
        .filter(p => parseFloat(getComputedStyle(p).opacity) < 0.99).length""")
    assert dimmed == 0
    # In the table at the bottom: the same.
    table = page.locator('[data-testid="stDataFrame"]').last
    table.scroll_into_view_if_needed()
    page.wait_for_function(  # scrolled: the verdict has left the window
        """() => { const e = document.getElementById('verdict');
            return e && e.getBoundingClientRect().bottom < 0; }""",
        timeout=30_000,
    )
    assert not in_view(page, "verdict")
    box = table.bounding_box()
    with rerun(page):
        page.mouse.click(box["x"] + 18, box["y"] + 35 * 3 + 17)  # the checkbox of row 2
        page.wait_for_url("**chunk=c0002**", timeout=30_000)
    assert page.locator("#verdict").inner_text() == "Verdict on c0002"
    assert in_view(page, "verdict")
    page.close()


def test_uploads_stay_in_their_browser_context(app, browser, tmp_path):
    secret = "SECRET-c41e: only the uploading browser may see this"
    pool = synthetic_pool(12, seed=41)
    pool["query"] = secret  # shown as text on the Pool page (chunk texts are in a canvas)
    path = tmp_path / "team-notes.json"
    path.write_text(json.dumps(pool), encoding="utf-8")

    mine = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = mine.new_page()
    page.goto(f"{app.url}/pool?pool=tiny")
    wait_for_app(page)
    with rerun(page):
        uploader = page.locator('[data-testid="stFileUploader"] input[type="file"]').first
        uploader.set_input_files(path)
        page.wait_for_url("**pool=upload-**", timeout=60_000)
    key = page.url.split("pool=")[1].split("&")[0]
    assert secret in page.locator("body").inner_text()

    theirs = browser.new_context(viewport={"width": 1400, "height": 1000})
    other = theirs.new_page()
    other.goto(f"{app.url}/pool?pool=tiny")
    wait_for_app(other)
    other.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').first.click()
    options = other.get_by_role("option").all_inner_texts()
    assert options and not any("team-notes" in o or "upload" in o for o in options), options
    other.keyboard.press("Escape")
    # A link to the other session's upload opens nothing of it and says so.
    other.goto(f"{app.url}/pool?pool={key}")
    wait_for_app(other)
    text = other.locator("body").inner_text()
    assert "not available in this session" in text and key in text
    assert "team-notes" not in text and secret not in text
    # The address is left as it was typed (rewriting it would add a history entry that Back
    # returns to); the page names the pool it shows instead.
    mine.close()
    theirs.close()


def test_the_pool_page_tabs_draw_on_a_click_and_keep_what_was_typed(app, browser):
    """The source tabs rerun the page on a click: Real corpora draws its inputs once it is
    opened, and a search typed there shows (and filters) after a visit of another tab."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{app.url}/pool?pool=tiny")
    wait_for_app(page)
    search = page.get_by_label("Search the sub-questions")
    assert search.count() == 0  # the upload tab is open: Real corpora is not drawn
    with rerun(page, charts=False):
        page.get_by_role("tab", name="Real corpora").click()
        search.wait_for(timeout=30_000)
    everything = page.get_by_text("sub-questions match").first.inner_text()
    search.fill("which year")
    with rerun(page, charts=False):
        search.press("Enter")
        page.wait_for_function(
            "(before) => [...document.querySelectorAll('[data-testid=stCaptionContainer]')]"
            ".some((e) => e.textContent.includes('sub-questions match')"
            " && e.textContent !== before)",
            arg=everything,
            timeout=30_000,
        )
    matching = page.get_by_text("sub-questions match").first.inner_text()
    with rerun(page, charts=False):
        page.get_by_role("tab", name="Build from documents").click()
        page.get_by_role("textbox", name="Documents").wait_for(timeout=30_000)
    with rerun(page, charts=False):
        page.get_by_role("tab", name="Real corpora").click()
        search.wait_for(timeout=30_000)
    assert search.input_value() == "which year"
    assert page.get_by_text("sub-questions match").first.inner_text() == matching
    assert page.locator('[data-testid="stException"]').count() == 0
    page.close()


def test_the_server_stops_within_seconds_of_sigterm(browser, pools_dir, tmp_path):
    """With the real projection, the server's UMAP worker is busy compiling (numba) right
    after the first page: the server must not wait for it to exit."""
    with server(tmp_path, ADAGRES_DATA_DIR=str(pools_dir), ADAGRES_PROJECTION="umap") as running:
        page = browser.new_page()
        page.goto(f"{running.url}/?pool=tiny")
        wait_for_app(page)  # the first page has run: the warm-up started before it
        page.close()
        running.stop(timeout=60)
    # It exited on SIGTERM itself (0 or -SIGTERM), not by the SIGKILL that stop() sends
    # after 60 s: it did not wait for the compilation, which takes 10-30 s here.
    assert running.process.returncode in (0, -15), running.process.returncode


def _pool_without_vectors(n: int, seed: int) -> dict:
    pool = synthetic_pool(n, seed=seed)
    del pool["query_embedding"]
    for k, chunk in enumerate(pool["chunks"]):
        del chunk["embedding"], chunk["tokens"]
        chunk["text"] = f"Review {seed}-{k}: it helped with sleep but left me tired {k % 7} days"
    return pool


@pytest.mark.model
def test_a_long_load_shows_an_estimate_and_can_be_cancelled(browser, pools_dir, tmp_path):
    """Uploading chunks without embeddings: the real model, a fresh embedding cache, the
    model loaded in the background while the Pool page is open (the default). How quick a
    small upload is belongs to ``make bench-browser``, not to a test."""
    environment = {
        "ADAGRES_DATA_DIR": str(pools_dir),
        "ADAGRES_PREFETCH": "on",
        "ADAGRES_CACHE_DIR": str(tmp_path / "cache"),
    }
    small, large = tmp_path / "forty.json", tmp_path / "many.json"
    small.write_text(json.dumps(_pool_without_vectors(40, 1)), encoding="utf-8")
    large.write_text(json.dumps(_pool_without_vectors(3000, 2)), encoding="utf-8")
    with server(tmp_path, **environment) as running:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{running.url}/pool?pool=tiny")
        wait_for_app(page)
        with rerun(page):
            uploader = page.locator('[data-testid="stFileUploader"] input[type="file"]').first
            uploader.set_input_files(small)
            page.wait_for_url("**pool=upload-**", timeout=120_000)
        opened = page.url
        # A long one: progress with what it does and an estimate, and a Cancel button.
        uploader = page.locator('[data-testid="stFileUploader"] input[type="file"]').first
        uploader.set_input_files(large)
        bar = page.locator('[data-testid="stProgress"]')
        bar.wait_for(timeout=30_000)
        estimate = r"Embedded \d+ of \d+ texts · \d+ s so far, about \d+"
        page.wait_for_function(  # what the bar says, until the embedding reports progress
            """(pattern) => [...document.querySelectorAll('[data-testid="stProgress"]')]
                .some(e => new RegExp(pattern).test(e.innerText))""",
            arg=estimate,
            timeout=180_000,
        )
        assert any(re.search(estimate, t) for t in bar.all_inner_texts())
        page.get_by_role("button", name="Cancel").click()
        page.get_by_text("Cancelled: many.json").wait_for(timeout=60_000)
        assert page.url == opened  # the pool shown is unchanged
