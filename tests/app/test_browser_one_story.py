"""In Chromium at 1280×900: one chunk's verdict reads the same on the four views that show it.

The view is the app's default (the recommended preset) with the near-duplicate guard in the
address, on the biomedical demo pool at 1,000 tokens: faq-02 is dropped at step 1 as a
duplicate of faq-01, blog-06 would have won step 11 but did not fit, label-19 was outscored
(closest at step 10, by leaflet-01). For each, the Selection map's hover (plotly's own
figure data in the page), the Selection page's sentence of the step, the Pool page's table
(its "Download as CSV") and Why dropped's sentence, tiles, table and chart must name the
verdict the selection's record gives (``Selection.verdict``), its step and the pick it lost
to; at the last step the map counts each verdict as the Pool table does.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest
from apptest_support import DEMO, pool_of, recommended_selection
from browser_support import chromium, server, table_after, table_csv, wait_for_app

from adagres.figures.layout import plain_name

pytestmark = [pytest.mark.browser, pytest.mark.slow]

VIEW = f"pool={DEMO}&budget=1000&guard=0.9,0.8"
GUARD = (0.9, 0.8)
CHUNKS = ("faq-02", "blog-06", "label-19")  # duplicate, did not fit, outscored

#: The chunk map's layers (plotly's own figure data): each layer's name and, per chunk it
#: draws, the chunk's pool position and hover text. The rings (winner, next, inspected)
#: repeat a chunk drawn in its own layer and are left out.
MAP = """() => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')]
      .find(p => p._fullData && p._fullData.some(t => t.name === 'query'));
  return JSON.stringify(gd._fullData
    .filter(t => t.name !== 'query' && t.name !== 'winner'
        && !/^(next|inspected)/.test(t.name || ''))
    .map(t => ({name: t.name, points: [...(t.x || [])].length,
        positions: t.customdata ? [...t.customdata] : [],
        hovers: t.hovertext ? [...t.hovertext] : []})));
}"""

#: Why dropped's chart of the chunk: its trace names, the label and step of its marker line,
#: its x range and y axis title.
WHY_CHART = """(title) => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')]
      .find(p => p._fullLayout && (p._fullLayout.title.text || '').includes(title));
  if (!gd) return null;
  return JSON.stringify({names: gd._fullData.map(t => t.name),
      events: (gd._fullLayout.annotations || []).map(a => a.text),
      marks: (gd._fullLayout.shapes || []).filter(s => s.x0 === s.x1).map(s => s.x0),
      range: gd._fullLayout.xaxis.range, y: gd._fullLayout.yaxis.title.text});
}"""


@pytest.fixture(scope="module")
def app_url(data_dir, tmp_path_factory):
    with server(tmp_path_factory.mktemp("logs"), ADAGRES_DATA_DIR=str(data_dir)) as running:
        yield running.url


@pytest.fixture(scope="module")
def story(data_dir):
    """The demo pool and the record every view should read."""
    pool = pool_of(data_dir, DEMO)
    return pool, recommended_selection(pool, 1000, duplicate_guard=GUARD)


def expected(pool, selection, chunk_id: str) -> dict:
    """What every view must say of the chunk: the verdict's words, its step and the pick it
    lost to (the one it duplicates, the winner that outscored it; none for did not fit)."""
    verdict = selection.verdict(pool.ids.index(chunk_id))
    rival = verdict.duplicate_of if verdict.duplicate_of is not None else verdict.winner
    return {
        "kind": verdict.kind.value,
        "words": plain_name(verdict.kind),
        "step": verdict.step,
        "rival": None if rival is None else pool.ids[rival],
        "summary": verdict.summary(pool.ids),
    }


def map_layers(page) -> list[dict]:
    return json.loads(page.evaluate(MAP))


def hover_of(layers: list[dict], position: int) -> tuple[str, str]:
    found = [
        (layer["name"], layer["hovers"][k])
        for layer in layers
        for k, p in enumerate(layer["positions"])
        if p == position and layer["hovers"]
    ]
    assert len(found) == 1, (position, found)
    return found[0]


def verdict_line(hover: str) -> str:
    """The map hover's verdict line, without its "verdict: " label."""
    lines = [line for line in hover.split("<br>") if line.startswith("verdict: ")]
    assert len(lines) == 1, hover
    return lines[0].removeprefix("verdict: ")


def sentence(page, start: str) -> str:
    texts = page.locator('[data-testid="stText"]').all_inner_texts()
    found = [t for t in texts if t.startswith(start)]
    assert found, (start, texts)
    return found[0]


def test_each_chunk_reads_the_same_verdict_on_the_four_views(app_url, story):
    pool, selection = story
    wants = {chunk_id: expected(pool, selection, chunk_id) for chunk_id in CHUNKS}
    assert [w["kind"] for w in wants.values()] == ["duplicate", "did_not_fit", "outscored"]
    assert wants["faq-02"]["rival"] == "faq-01" and wants["faq-02"]["step"] == 1
    last = len(selection.steps)
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        # The tables' "Download as CSV" saves through a link, not the save-file dialog.
        page.add_init_script("window.showSaveFilePicker = undefined;")

        # (1) and (2): the Selection page at each chunk's step, then at the last step.
        for chunk_id, want in wants.items():
            page.goto(f"{app_url}/?{VIEW}&step={want['step']}")
            wait_for_app(page)
            _, hover = hover_of(map_layers(page), pool.ids.index(chunk_id))
            said = verdict_line(hover)
            assert said.startswith(want["words"]), (chunk_id, hover)
            assert f"step {want['step']}" in said, (chunk_id, hover)
            if want["kind"] == "duplicate":  # the pick it duplicates, named on the map
                assert f"('{want['rival']}', dropped at step" in said, hover
            told = sentence(page, f"Step {want['step']} of {last}:")
            if want["kind"] == "duplicate":
                assert f"{chunk_id}: {want['words']} ('{want['rival']}'," in told, told
            if want["kind"] == "did_not_fit":
                assert f"would have won but did not fit: {chunk_id}" in told, told
            for other in (c for c in CHUNKS if c != chunk_id):  # no other chunk's story
                assert f"{other}: " not in told, told
        page.goto(f"{app_url}/?{VIEW}")
        wait_for_app(page)
        final_map = map_layers(page)
        for chunk_id, want in wants.items():
            layer, hover = hover_of(final_map, pool.ids.index(chunk_id))
            assert layer.startswith(f"{want['words']} ("), (chunk_id, layer)
            assert verdict_line(hover).startswith(want["words"]), (chunk_id, hover)

        # (3): the Pool page's table.
        page.goto(f"{app_url}/pool?{VIEW}")
        wait_for_app(page)
        rows = table_csv(page, table_after(page, "//h3[starts-with(normalize-space(.), 'Chunks')]"))
        by_id = {row["id"]: row for row in rows}
        assert len(rows) == len(pool)
        for chunk_id, want in wants.items():
            row = by_id[chunk_id]
            assert row["verdict"] == want["words"] and row["step"] == str(want["step"]), row
            if want["kind"] == "duplicate":
                assert row["duplicate of"] == want["rival"], row
        # At the last step the map draws as many chunks of each verdict as the table lists.
        counted = Counter(row["verdict"] for row in rows)
        assert counted == Counter(plain_name(kind) for kind, _ in selection.verdict_kinds)
        drawn = {layer["name"]: layer["points"] for layer in final_map}
        for words, n in counted.items():
            if words != "selected":
                assert drawn.get(f"{words} ({n})") == n, (words, n, drawn)
        assert drawn.get("selected") == counted["selected"], drawn
        assert sum(drawn.values()) == len(pool), drawn

        # (4): Why dropped, the chunk chosen in the address: sentence, tile, table, chart.
        for chunk_id, want in wants.items():
            page.goto(f"{app_url}/why?{VIEW}&chunk={chunk_id}")
            wait_for_app(page)
            told = sentence(page, f"{chunk_id}: ")
            assert told == f"{chunk_id}: {want['summary']}"
            # the record's sentence names the kind ("duplicate of 'faq-01'", not "of a pick")
            assert told.startswith(f"{chunk_id}: {want['words'].removesuffix(' a pick')}"), told
            assert f"step {want['step']}" in told, told
            if want["rival"] is not None:
                assert f"'{want['rival']}'" in told, told
            tile = page.locator('[data-testid="stMetric"]').filter(has_text="Verdict").first
            assert tile.locator('[data-testid="stMetricValue"]').inner_text() == want["words"]
            history = table_csv(
                page, table_after(page, "//h3[starts-with(normalize-space(.), 'Verdict on')]")
            )
            at_step = next(row for row in history if row["step"] == str(want["step"]))
            if want["kind"] == "did_not_fit":
                assert at_step["fits"].lower() == "false", at_step
                assert at_step["could be taken"] == "does not fit", at_step
            else:  # it competed at its step (and lost to the rival); after, the guard barred it
                assert at_step["could be taken"] == "yes", at_step
                assert at_step["winner"] == want["rival"], at_step
            if want["kind"] == "duplicate":
                later = [row["could be taken"] for row in history if row["step"] != "1"]
                assert later and set(later) <= {want["words"], "does not fit"}, later
            drawn_chart = page.wait_for_function(
                WHY_CHART, arg=f"Score of {chunk_id}", timeout=30_000, polling=50
            )
            chart = json.loads(drawn_chart.json_value())
            assert chart["range"] == [0.5, last + 0.5], chart
            event = " ".join(chart["events"])
            assert chart["marks"] == [want["step"]], chart  # the line at the verdict's step
            if want["kind"] == "duplicate":
                assert f"duplicate of '{want['rival']}' (step {want['step']})" in event, chart
            if want["kind"] == "did_not_fit":
                assert event.startswith(want["words"]), chart
