"""In Chromium: the Selection map and the timeline speak the same score. Hovering the step's
runner-up on the map (under the default preset, whose rule is not the paper's gain) reads
the score the timeline draws as that step's runner-up."""

from __future__ import annotations

import re

import pytest
from browser_support import POINT_OF, chromium, server, settle_layout, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: The map's candidates at the shown step, from plotly's own figure data: each one's pool
#: position and the score its hover text gives; and the timeline's runner-up at each step.
READ = """(step) => {
  const plots = [...document.querySelectorAll('.js-plotly-plot')].filter(p => p._fullData);
  const map = plots.find(p => p._fullData.some(t => t.name === 'query'));
  const timeline = plots.find(p => p._fullData.some(t => t.name === 'runner-up'));
  const cands = map._fullData.find(t => t.name === 'candidates');
  const pattern = new RegExp('score at step ' + step + ': ([+-][0-9.]+)');
  const scores = [...cands.hovertext].map(h => Number((h.match(pattern) || [0, NaN])[1]));
  const runner = timeline._fullData.find(t => t.name === 'runner-up');
  const k = [...runner.x].indexOf(step);
  return {positions: [...cands.customdata], scores, runner_up: k < 0 ? null : runner.y[k]};
}"""


@pytest.fixture(scope="module")
def app_url(pools_dir, tmp_path_factory):
    with server(tmp_path_factory.mktemp("logs"), ADAGRES_DATA_DIR=str(pools_dir)) as running:
        yield running.url


def isolated_runner_up(page, step: int) -> tuple[int, float, tuple[float, float]] | None:
    """The step's runner-up (pool position, the timeline's score, its point on screen) when
    no other candidate's marker lies within 10 px of it (near-duplicates sit on top of each
    other, and the hover then names the other one); None otherwise."""
    seen = page.evaluate(READ, step)
    best = max(range(len(seen["scores"])), key=lambda k: seen["scores"][k])
    # The best candidate left at the step is the runner-up the timeline draws.
    assert seen["runner_up"] is not None
    assert f"{seen['runner_up']:+.4f}" == f"{seen['scores'][best]:+.4f}"
    where = [page.evaluate(POINT_OF, p) for p in seen["positions"]]
    x, y = where[best]
    near = [k for k, (u, v) in enumerate(where) if k != best and (u - x) ** 2 + (v - y) ** 2 < 100]
    return None if near else (seen["positions"][best], seen["runner_up"], (x, y))


def test_a_hovered_candidate_shows_the_score_the_timeline_draws(app_url):
    with chromium() as browser:
        # the map shares its row with the timeline: a wide window spreads its markers apart
        page = browser.new_page(viewport={"width": 1900, "height": 1100})
        found = None
        for step in range(2, 16):
            page.goto(f"{app_url}/?pool=medium&budget=1500&step={step}")  # the default preset
            wait_for_app(page)
            # the rule, named, with its one term (in the note that λ changes no pick here)
            rule = "topk_budget: score = relevance,"
            assert rule in page.locator("body").inner_text()
            page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')]
                .find(p => p.data && p.data.some(t => t.name === 'query'))
                .scrollIntoView({block: 'center', behavior: 'instant'})""")
            settle_layout(page)
            found = isolated_runner_up(page, step)
            if found is not None:
                break
        assert found is not None, "every step's runner-up sits under another marker"
        _, runner_up, (x, y) = found
        page.mouse.move(5, 5)
        page.mouse.move(x, y, steps=4)  # plotly hovers on mouse moves over its drag layer
        label = page.locator(".hoverlayer .hovertext").first
        label.wait_for(timeout=30_000)
        text = label.evaluate("e => [...e.querySelectorAll('text')].map(t => t.textContent).join()")
        shown = re.search(rf"score at step {step}: ([+-][0-9.]+)", text)
        assert shown, text
        assert shown.group(1) == f"{runner_up:+.4f}", text
