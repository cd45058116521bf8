"""In Chromium: a box dragged on the Pool page's map lists the chunks inside it with their
verdicts and puts them in the address, and a click on a row of the Pool sets table opens
that query's pool and moves the Query box to it."""

from __future__ import annotations

import time

import pytest
from browser_support import (
    chromium,
    rerun,
    server,
    settle_layout,
    table_after,
    table_csv,
    wait_for_app,
)

pytestmark = pytest.mark.browser

#: The explorer map's selectable points in screen coordinates, from plotly's own figure
#: data (``_fullData``): every trace that carries pool positions, with its name.
MAP_POINTS = """() => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')]
      .find(p => p._fullLayout && p._fullLayout.dragmode === 'lasso');
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, r = gd.getBoundingClientRect();
  const out = [];
  for (const t of gd._fullData) {
    if (!t.customdata) continue;
    [...t.customdata].forEach((position, k) => out.push({
      name: t.name, position: position,
      x: r.left + xa._offset + xa.l2p(t.x[k]), y: r.top + ya._offset + ya.l2p(t.y[k])}));
  }
  return out;
}"""


#: Where the Pool page's tables start: the chosen chunks', and the whole pool's.
CHOSEN = "//*[@data-testid='stText'][starts-with(., 'Chosen on the map:')]"
CHUNKS = "//h3[starts-with(normalize-space(.), 'Chunks')]"


@pytest.fixture(scope="module")
def app_url(pools_dir, tmp_path_factory):
    with server(tmp_path_factory.mktemp("logs"), ADAGRES_DATA_DIR=str(pools_dir)) as running:
        yield running.url


def new_tab(browser):
    """A tab whose tables' "Download as CSV" saves through a link (no file picker), which
    Playwright sees as a download."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
    context.add_init_script("window.showSaveFilePicker = undefined;")
    return context.new_page()


def widest_gap(values: list[float], low: float, high: float) -> tuple[float, float]:
    """The middle of the widest gap between neighbouring ``values`` (sorted) whose lower
    end lies in the ``low``–``high`` share of them, and the gap's width."""
    ordered = sorted(values)
    first, last = int(low * len(ordered)), int(high * len(ordered))
    k = max(range(first, last), key=lambda i: ordered[i + 1] - ordered[i])
    return (ordered[k] + ordered[k + 1]) / 2, ordered[k + 1] - ordered[k]


def map_box(page) -> tuple[list[dict], tuple[float, float, float, float], float]:
    """The explorer map's points (scrolled into view) and a box whose edges run through the
    widest gaps between them (none sits on an edge): left and top in the first third of the
    points, right and bottom in the second; with the narrowest of those four gaps."""
    page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')]
        .find(p => p._fullLayout && p._fullLayout.dragmode === 'lasso')
        .scrollIntoView({block: 'center', behavior: 'instant'})""")
    settle_layout(page)
    points = page.evaluate(MAP_POINTS)
    xs, ys = [p["x"] for p in points], [p["y"] for p in points]
    (left, gap_l), (right, gap_r) = widest_gap(xs, 0.15, 0.45), widest_gap(xs, 0.55, 0.85)
    (top, gap_t), (bottom, gap_b) = widest_gap(ys, 0.15, 0.45), widest_gap(ys, 0.55, 0.85)
    return points, (left, right, top, bottom), min(gap_l, gap_r, gap_t, gap_b)


def test_a_box_dragged_on_the_map_lists_its_chunks_and_travels_in_the_address(app_url):
    with chromium() as browser:
        page = new_tab(browser)
        page.goto(f"{app_url}/pool?pool=medium&budget=1500")
        wait_for_app(page)
        assert "picked=" not in page.url
        points, (left, right, top, bottom), gap = map_box(page)
        assert gap > 2, "no clear gap for the box's edges"
        inside = [p for p in points if left < p["x"] < right and top < p["y"] < bottom]
        expected = sorted({p["position"] for p in inside})
        verdict_of = {
            p["position"]: p["name"].removeprefix("verdict: ")
            for p in inside
            if p["name"].startswith("verdict: ")
        }
        assert 0 < len(expected) < len({p["position"] for p in points})
        assert set(verdict_of) == set(expected)  # every chunk has its verdict's colour

        # The map's drag mode is the lasso: a path around the box's four corners.
        entries = page.evaluate("history.length")
        with rerun(page):
            page.mouse.move(left, top)
            page.mouse.down()
            for x, y in ((right, top), (right, bottom), (left, bottom), (left, top)):
                page.mouse.move(x, y, steps=8)
            page.mouse.up()
            page.wait_for_function("() => location.search.includes('picked=')", timeout=60_000)
        picked = page.evaluate("() => new URLSearchParams(location.search).get('picked')")
        assert [int(v) for v in picked.split(",")] == expected
        assert page.evaluate("history.length") == entries + 1  # one action, one entry

        def listed() -> list[dict[str, str]]:
            caption = page.get_by_text("Chosen on the map:", exact=False).inner_text()
            assert caption.startswith(f"Chosen on the map: {len(expected)} chunk"), caption
            return table_csv(page, table_after(page, CHOSEN))

        rows = listed()
        assert [int(row["position"]) for row in rows] == expected
        assert {int(row["position"]): row["verdict"] for row in rows} == verdict_of
        everything = {row["id"]: row for row in table_csv(page, table_after(page, CHUNKS))}
        assert all(everything[row["id"]] == row for row in rows)  # the chunks' own rows

        # Back returns to the map with nothing chosen; the address restores the same table
        # in a fresh page.
        address = page.url
        with rerun(page):
            page.go_back()
        assert "picked=" not in page.url
        assert page.get_by_text("Chosen on the map:", exact=False).count() == 0
        assert page.get_by_text("Lasso or box chunks on the map", exact=False).count() == 1
        again = new_tab(browser)
        again.goto(address)
        wait_for_app(again)
        page.close()
        page = again
        assert listed() == rows


def test_a_click_on_a_pool_sets_row_opens_its_pool_and_moves_the_query_box(app_url):
    with chromium() as browser:
        page = new_tab(browser)
        page.goto(f"{app_url}/pool_sets?pool=tiny")
        wait_for_app(page)
        query_box = page.locator(".st-key-ps_query input[role='combobox']")
        table = table_after(
            page, "//*[@data-testid='stCaptionContainer'][contains(., 'Click a row')]"
        )
        rows = table_csv(page, table)
        first = query_box.input_value()
        assert first == f"#{rows[0]['#']} · {rows[0]['query'][:90]}"
        k = 2  # not the row the Query box shows
        row = rows[k]
        table.scroll_into_view_if_needed()
        box = table.bounding_box()
        before = page.url
        with rerun(page):
            page.mouse.click(box["x"] + 18, box["y"] + 35 * (k + 1) + 17)  # row k's checkbox
            page.wait_for_function("(u) => location.href !== u", arg=before, timeout=60_000)
        assert query_box.input_value() == f"#{row['#']} · {row['query'][:90]}"
        pool = page.evaluate("() => new URLSearchParams(location.search).get('pool')")
        assert pool.startswith("poolset-")
        # The pool opened in every page: the Pool page shows its chunks.
        with rerun(page):
            page.locator('[data-testid="stSidebar"]').get_by_role(
                "link", name="Pool", exact=True
            ).click()
            page.wait_for_url("**/pool?**", timeout=60_000)
        assert f"pool={pool}" in page.url
        assert len(table_csv(page, table_after(page, CHUNKS))) == int(row["chunks"])


def test_find_and_colour_are_written_to_the_address_as_typed(app_url):
    """Find text and Colour by are bound to the address by Streamlit: typing a word and
    choosing a colour put ``find`` and ``color`` in it, and a fresh tab from that address
    rings the same matches in the same colours."""
    with chromium() as browser:
        page = new_tab(browser)
        page.goto(f"{app_url}/pool?pool=medium&budget=1500")
        wait_for_app(page)
        box = page.get_by_label("Find text")
        with rerun(page):
            box.fill("the")
            box.press("Enter")
        page.wait_for_function("() => location.search.includes('find=the')", timeout=60_000)
        colour = page.locator('[data-testid="stSelectbox"]').filter(has_text="Colour by")
        with rerun(page):
            colour.click()
            page.get_by_role("option", name="tokens", exact=True).click()
        page.wait_for_function("() => location.search.includes('color=tokens')", timeout=60_000)
        names = """() => [...document.querySelectorAll('.js-plotly-plot')]
            .find(p => p._fullLayout && p._fullLayout.dragmode === 'lasso')
            ._fullData.map(t => t.name).filter(n => n.startsWith('matches') || n === 'tokens')"""
        drawn = page.evaluate(names)
        assert "tokens" in drawn and any(n.startswith("matches (") for n in drawn)
        again = new_tab(browser)
        again.goto(page.url)
        wait_for_app(again)
        assert again.evaluate(names) == drawn
        assert again.get_by_label("Find text").input_value() == "the"


#: The facets chart beside the map: each trace's name and its bars' counts.
FACET_BARS = """() => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')]
      .find(p => p._fullLayout && p._fullLayout.dragmode === 'select'
          && p._fullData.some(t => t.type === 'bar' && t.name === 'pool'));
  return gd ? gd._fullData.map(t => ({name: t.name, y: [...t.y]})) : null;
}"""

#: The screen box of bar ``bin`` of the pool's trace of facet ``facet``.
BAR_BOX = """([facet, bin]) => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')]
      .find(p => p._fullLayout && p._fullLayout.dragmode === 'select'
          && p._fullData.some(t => t.type === 'bar' && t.name === 'pool'));
  const bar = gd.querySelectorAll('.barlayer .trace')[2 * facet].querySelectorAll('.point')[bin];
  const r = bar.getBoundingClientRect();
  return [r.left, r.top, r.right, r.bottom];
}"""

#: The pool positions the explorer map draws selected (plotly's selectedpoints).
MAP_SELECTED = """() => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')]
      .find(p => p._fullLayout && p._fullLayout.dragmode === 'lasso');
  const out = [];
  for (const t of gd._fullData) {
    if (!t.customdata || !t.selectedpoints || (t.name || '').startsWith('matches')) continue;
    for (const k of t.selectedpoints) out.push(Number(t.customdata[k]));
  }
  return out.sort((a, b) => a - b);
}"""


def chosen_counts(page) -> list[int]:
    bars = page.evaluate(FACET_BARS)
    return [sum(t["y"]) for t in bars if t["name"].startswith("chosen")]


def test_a_lasso_fills_the_facets_and_a_bar_chooses_its_chunks_on_the_map(app_url):
    """Linked views: the chunks lassoed on the map are counted in every facet beside it
    (relevance, tokens, verdict, a metadata column); a box on a facet's bar chooses its
    chunks on the map (in the address, drawn selected); a name given to the choice travels
    in the address. Prints the time from the lasso's release to the facets' update."""
    with chromium() as browser:
        page = new_tab(browser)
        page.goto(f"{app_url}/pool?pool=medium&budget=1500")
        wait_for_app(page)
        assert page.evaluate(FACET_BARS) is not None  # the facets sit beside the map
        assert set(chosen_counts(page)) == {0}
        points, (left, right, top, bottom), _ = map_box(page)
        inside = {p["position"] for p in points if left < p["x"] < right and top < p["y"] < bottom}
        with rerun(page):
            page.mouse.move(left, top)
            page.mouse.down()
            for x, y in ((right, top), (right, bottom), (left, bottom), (left, top)):
                page.mouse.move(x, y, steps=8)
            released = time.perf_counter()
            page.mouse.up()
            page.wait_for_function(
                f"() => {{ const b = ({FACET_BARS})(); return b && b.filter("
                f"t => t.name.startsWith('chosen')).every("
                f"t => t.y.reduce((a, c) => a + c, 0) === {len(inside)}); }}",
                timeout=60_000,
                polling="raf",
            )
            updated = time.perf_counter()
        print(f"\nlasso -> facets updated: {updated - released:.3f} s ({len(inside)} chunks)")
        counts = chosen_counts(page)
        assert len(counts) >= 3 and set(counts) == {len(inside)}
        assert page.evaluate(MAP_SELECTED) == sorted(inside)

        # A box around the verdict facet's first bar (plotly selects a bar by its tip)
        # chooses exactly its chunks.
        verdict = page.evaluate(FACET_BARS)[4]
        assert verdict["name"] == "pool"
        left, top, right, bottom = page.evaluate(BAR_BOX, [2, 0])
        with rerun(page):
            page.mouse.move(left - 4, top - 2)  # inside the plot: its top is near
            page.mouse.down()
            page.mouse.move(right + 4, bottom - 4, steps=8)
            page.mouse.up()
            page.wait_for_function(
                f"() => (({MAP_SELECTED})()).length === {verdict['y'][0]}", timeout=60_000
            )
        picked = page.evaluate("() => new URLSearchParams(location.search).get('picked')")
        assert [int(v) for v in picked.split(",")] == page.evaluate(MAP_SELECTED)
        assert set(chosen_counts(page)) == {verdict["y"][0]}

        # The choice takes a name, kept in the address beside it.
        box = page.get_by_label("Name this choice")
        with rerun(page):
            box.fill("first verdict")
            box.press("Enter")
        page.wait_for_function("() => location.search.includes('named=first')", timeout=60_000)
        again = new_tab(browser)
        again.goto(page.url)
        wait_for_app(again)
        assert again.get_by_label("Name this choice").input_value() == "first verdict"
        assert again.evaluate(MAP_SELECTED) == page.evaluate(MAP_SELECTED)
