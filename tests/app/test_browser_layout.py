"""In Chromium at 1024, 1400 and 1920 px: every page reads in full (no value cut short with
an ellipsis, no select box's value clipped, no formula cut off, no figure title under the
mode bar or a legend, no segment label shrunk to a few pixels), and nothing is fetched from
outside this machine.

Screenshots of every page at every width go to ``artifacts/screenshots/widths/``.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from browser_support import CHROMIUM, FLAGS, ROOT, SHOTS, server, settle_layout, wait_for_app, watch
from playwright.sync_api import sync_playwright

WIDTHS = (1024, 1400, 1920)
# url path, file name, whether the page draws charts
PAGES = [
    ("pool", "pool", True),
    ("", "selection", True),
    ("similarity", "similarity", True),
    ("lambda", "lambda", True),
    ("compare", "compare", True),
    ("why", "why_dropped", True),
    ("evidence", "evidence", True),
    ("live", "live_pool", False),  # a store with a collection: the controls, no pool yet
    ("pool_sets", "pool_sets", True),  # the data folder's three pools as a set
]
QUERY = "pool=medium&budget=1500&chunk=c0012"

#: Every place the page cuts text short, and every figure whose parts overlap.
PROBLEMS = """() => {
  const out = [];
  const name = (e) => (e.getAttribute('data-testid') || e.tagName) + ': '
      + (e.innerText || '').trim().slice(0, 60);
  // Text that an ellipsis or a hidden overflow cuts short (metrics, labels, select boxes).
  const all = '[data-testid="stMain"] *, [data-testid="stSidebar"] *';
  for (const e of document.querySelectorAll(all)) {
    const s = getComputedStyle(e);
    const cuts = s.textOverflow === 'ellipsis' || e.matches('[data-testid="stMetricValue"] *');
    if (cuts && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
      out.push('elided ' + name(e));
  }
  // A select box's chosen value, clipped by its closed box.
  for (const e of document.querySelectorAll('[data-testid="stSelectbox"] input')) {
    if (e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
      out.push('select value cut: ' + e.value.slice(0, 60));
  }
  for (const e of document.querySelectorAll('[data-testid="stMetricValue"]')) {
    if (e.scrollWidth > e.clientWidth + 1) out.push('metric cut ' + name(e));
  }
  // Formulas wider than their box (KaTeX scrolls them, so the right end is hidden).
  for (const e of document.querySelectorAll('.katex-display')) {
    if (e.scrollWidth > e.clientWidth + 1) out.push('formula cut: ' + e.innerText.slice(0, 40));
  }
  // Figures: the title clear of the mode bar and the legend, inside the figure; bar labels
  // readable.
  const box = (e) => { if (!e) return null; const r = e.getBoundingClientRect();
                       return r.width && r.height ? r : null; };
  const hit = (a, b) => a && b && a.left < b.right - 1 && b.left < a.right - 1
                            && a.top < b.bottom - 1 && b.top < a.bottom - 1;
  document.querySelectorAll('.js-plotly-plot').forEach((plot, n) => {
    const fig = box(plot), title = box(plot.querySelector('.infolayer .gtitle'));
    const legend = box(plot.querySelector('.infolayer .legend'));
    const modebar = box(plot.querySelector('.modebar'));
    const what = `figure ${n} (${(plot.layout && plot.layout.title && plot.layout.title.text || '')
        .replace(/<[^>]*>/g, '').slice(0, 40)})`;
    if (hit(title, modebar)) out.push(what + ': title under the mode bar');
    // The title fits the top margin given: had plotly grown it, it drew the figure twice.
    const given = plot.layout && plot.layout.margin && plot.layout.margin.t;
    if (title && given !== undefined && plot._fullLayout._size.t > given + 0.5)
      out.push(what + `: top margin grown from ${given} to ${plot._fullLayout._size.t} px`);
    if (hit(title, legend)) out.push(what + ': legend over the title');
    if (title && fig && (title.right > fig.right + 1 || title.left < fig.left - 1
                       || title.top < fig.top - 1))
      out.push(what + ': title outside the figure');
    for (const t of plot.querySelectorAll('.bartext')) {
      const h = t.getBoundingClientRect().height;
      if (h > 0 && h < 9) out.push(what + `: a bar label ${h.toFixed(1)} px tall`);
    }
  });
  return JSON.stringify(out);
}"""


@pytest.fixture(scope="module")
def app(pools_dir, tmp_path_factory):
    """The app on the synthetic pools and an embedded store holding one collection."""
    from milvus_lite.server_manager import server_manager_instance

    from adagres.embed.tokens import DEFAULT_TOKENIZER
    from adagres.pools.io import load_pool
    from adagres.stores import milvus

    data = tmp_path_factory.mktemp("data")
    for path in pools_dir.glob("*.json"):
        (data / path.name).symlink_to(path)
    medium = load_pool(pools_dir / "medium.json")
    store = str(data / "live.db")
    milvus.index_chunks(
        store,
        "synthetic",
        medium.chunks,
        medium.embeddings,
        model="synthetic",
        tokenizer=DEFAULT_TOKENIZER,
    )
    server_manager_instance.release_server(store)  # the app's process opens it next
    reports = evidence_reports(tmp_path_factory.mktemp("reports"))
    logs = tmp_path_factory.mktemp("logs")
    with server(logs, ADAGRES_DATA_DIR=str(data), ADAGRES_REPORTS_DIR=str(reports)) as running:
        yield running


def evidence_reports(folder: Path) -> Path:
    """A report for the Evidence page, written as `make eval` writes one (git keeps no
    results.json): the demo pools as three corpora at two budgets, so that its tables are
    as wide as a report's across several corpora."""
    from adagres.eval import cases, harness
    from adagres.eval.report import write_report

    demo = cases.demo_cases(ROOT / "data")
    three = [replace(c, corpus=name) for name in ("demo", "second", "third") for c in demo]
    config = harness.Config(
        pools=("demo",), budgets=(300, 900), workers=1, resamples=200, exact_queries=0
    )
    write_report(harness.run(config, cases=three, command="test"), folder / "latest", png=False)
    return folder


@pytest.mark.parametrize("width", WIDTHS)
def test_every_page_reads_in_full(app, width):
    folder = SHOTS / "widths"
    folder.mkdir(parents=True, exist_ok=True)
    problems: dict[str, list[str]] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            # Tall enough to hold most of each page (Streamlit scrolls inside the page).
            page = browser.new_page(viewport={"width": width, "height": 2400})
            seen = watch(page)
            for path, name, charts in PAGES:
                page.goto(f"{app.url}/{path}?{QUERY}")
                wait_for_app(page, charts=charts)
                settle_layout(page)
                page.screenshot(path=str(folder / f"{name}-{width}.png"))
                found = json.loads(page.evaluate(PROBLEMS))
                if found:
                    problems[name] = found
            assert not seen.outside, seen.outside  # no favicon or font from another host
            assert not seen.failed, seen.failed
            assert not seen.errors, seen.errors
        finally:
            browser.close()
    assert not problems, problems
