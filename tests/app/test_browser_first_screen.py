"""In Chromium at 1280×900 and 1024×900, the Selection page's first screen: while the replay
plays the map and the step timeline are both in view, and when it ends the address holds the
step shown; under the default preset (top-k, where λ changes no pick) one click from the
first screen shows the picks changing with λ."""

from __future__ import annotations

import json

import pytest
from apptest_support import recommended_selection
from browser_support import chromium, rerun, server, settle_layout, wait_for_app

pytestmark = pytest.mark.browser

DEMO = "pool=biomedical_redundant&budget=1000"  # the default preset: a 12-step run
SIZES = ((1280, 900), (1024, 900))

#: The map's and the timeline's plot areas against the window: [top, bottom] of each, the
#: window's height and the step the sentence shows.
PLACES = """() => {
  const plots = [...document.querySelectorAll('.js-plotly-plot')].filter(p => p._fullData);
  const find = (name) => plots.find(p => p._fullData.some(t => t.name === name));
  const area = (gd) => { if (!gd) return null;
      const r = gd.querySelector('.nsewdrag').getBoundingClientRect();
      return [r.top, r.bottom, r.left, r.right]; };
  const sentence = [...document.querySelectorAll('[data-testid="stText"]')]
      .map(e => e.innerText).find(t => /^Step \\d+ of \\d+:/.test(t));
  return JSON.stringify({map: area(find('query')), timeline: area(find('runner-up')),
      height: innerHeight, width: innerWidth,
      step: sentence ? Number(sentence.match(/^Step (\\d+) of/)[1]) : null,
      playing: [...document.querySelectorAll('button')]
          .some(b => b.innerText.trim().endsWith('Pause'))});
}"""


@pytest.fixture(scope="module")
def app_url(data_dir, tmp_path_factory):
    with server(tmp_path_factory.mktemp("logs"), ADAGRES_DATA_DIR=str(data_dir)) as running:
        yield running.url


def in_view(area: list[float] | None, height: float, width: float) -> bool:
    """Whether a plot area (top, bottom, left, right) shows inside the window."""
    if area is None:
        return False
    top, bottom, left, right = area
    return bottom > 0 and top < height and right > 0 and left < width


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_while_playing_the_map_and_the_timeline_are_in_view(app_url, width, height):
    with chromium() as browser:
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(f"{app_url}/?{DEMO}&step=9")
        wait_for_app(page)
        settle_layout(page)
        page.get_by_role("button", name="Play").click()
        # A step the replay reached on its own (10 or 11), while it plays.
        page.wait_for_function(
            f"() => {{ const p = JSON.parse(({PLACES})()); "
            "return p.playing && p.step >= 10 && p.step < 12; }",
            timeout=60_000,
            polling=50,
        )
        places = json.loads(page.evaluate(PLACES))
        assert in_view(places["map"], height, width), places
        assert in_view(places["timeline"], height, width), places
        # The replay ends at the last step, and the address says so (no step: the last).
        page.wait_for_function(
            f"() => {{ const p = JSON.parse(({PLACES})()); return !p.playing && p.step === 12; }}",
            timeout=60_000,
            polling=50,
        )
        page.wait_for_function("() => !location.search.includes('step=')", timeout=30_000)
        assert "budget=1000" in page.url


def test_one_click_from_the_default_view_shows_lambda_changing_the_picks(app_url):
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{app_url}/?{DEMO}")
        wait_for_app(page)
        note = page.get_by_text("with no λ", exact=False).last
        button = page.get_by_role("button", name="See λ at work")
        for element in (note, button):  # on the first screen, without scrolling
            box = element.bounding_box()
            assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 900
        with rerun(page):
            button.click()
        page.get_by_role("heading", name="λ derivation").wait_for()
        changes = page.get_by_text("The picked set changes at", exact=False)
        changes.wait_for(timeout=60_000)
        assert "pool=biomedical_redundant" in page.url and "budget=1000" in page.url


def test_a_fresh_browser_opens_a_link_to_a_pool_sets_query_with_its_numbers(app_url, data_dir):
    """The address the Pool sets page writes for a query of a set on the server (its path
    and place in the set) opens that query's pool in a browser that never saw it."""
    from adagres.poolsets import summaries as poolsets
    from ui import pools

    set_ = poolsets.load_pool_set(data_dir)
    unit = next(
        k for k, u in enumerate(set_.units) if (u.path or "").endswith("distinct_topics.json")
    )
    pool = poolsets.prepare_pool(poolsets.load_unit(set_.units[unit])[0])
    key = f"poolset-{pools.pool_digest(pool)[:12]}"
    expected = recommended_selection(pool, 1000)
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{app_url}/?pool={key}&budget=1000&set={data_dir}&setq={unit}.0")
        wait_for_app(page)

        def tile(label: str) -> str:
            metric = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
            return metric.locator('[data-testid="stMetricValue"]').inner_text()

        assert "not available" not in page.locator('[data-testid="stMain"]').inner_text()
        assert tile("Chunks selected") == str(expected.size)
        assert tile("Tokens used") == f"{expected.tokens_used:,} / 1,000"
        assert f"pool={key}" in page.url
