"""In Chromium, a pool whose texts, ids, titles and query are hostile: HTML with an
``onerror``, a ``<script>``, a ``javascript:`` link, Markdown and KaTeX, a 20,000-character
line, Arabic and Hebrew behind U+202E, stacked combining marks and terminal escapes.

On every page that shows pool text: no dialog opens, no script of the pool runs
(``window.__pwned`` stays undefined), no element with ``onerror``, no ``javascript:`` link
and no Markdown rendering comes from the pool, and the text shows as written: in the
context view, the chunk view, the headings, the map's hover labels, the tables (their CSV
download: ``st.dataframe`` draws on a canvas) and the download buttons.

Screenshots go to ``artifacts/screenshots/hostile/``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from browser_support import POINT_OF, SHOTS, chromium, server, wait_for_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: name -> hostile text. Each is a chunk's text and title; its id is the same text (the long
#: line cut to 300 characters: an id is a label) and the query holds them all.
HOSTILE = {
    "img": '<img src=x onerror="window.__pwned=1">',
    "script": "<script>window.__pwned=2</script>",
    "link": "[click](javascript:window.__pwned=3)",
    "markdown": "**bold**\n# heading\n$x$ and $$y$$ &lt;i&gt; &amp; :smile: _u_",
    "long": "Z" * 20_000,
    "rtl": "مرحبا \u202eשלום abc",
    "combining": "e" + "\u0301" * 40 + " a" + "\u0308" * 25,
    "terminal": "\x1b[2J\x1b[31mred\x1b[0m",
}
NAMES = list(HOSTILE)
IDS = [text[:300] for text in HOSTILE.values()]
TEXTS = list(HOSTILE.values())
TOKENS = [10 + k for k in range(len(TEXTS))]
QUERY = " ".join(TEXTS)
BUDGET = sum(TOKENS)  # top-k until the budget then takes every chunk
SETTINGS = f"pool=hostile&budget={BUDGET}&strategy=topk_budget"

#: What the pool must not have turned into: live HTML, links, Markdown or KaTeX.
INJECTED = """() => {
  const out = [], add = (kind, e) => out.push(kind + ' ' + e.outerHTML.slice(0, 80));
  document.querySelectorAll('[onerror], img[src="x"]').forEach(e => add('element', e));
  for (const e of document.querySelectorAll('[href]'))
    if (/^\\s*javascript:/i.test(e.getAttribute('href'))) add('link', e);
  for (const e of document.querySelectorAll('script'))
    if (e.textContent.includes('__pwned')) add('script', e);
  for (const e of document.querySelectorAll('strong, b, em, i, h1, h2, h3, h4, h5, h6'))
    if (/^(bold|heading|u)$/.test(e.textContent.trim())) add('markdown', e);
  for (const e of document.querySelectorAll('.katex annotation'))
    if (/^(x|y)$/.test(e.textContent.trim())) add('katex', e);
  if (document.body.innerText.includes('\\u{1F604}')) out.push('emoji for :smile:');
  if (typeof window.__pwned !== 'undefined') out.push('window.__pwned = ' + window.__pwned);
  return out;
}"""


def hostile_pool() -> dict:
    """The pool: chunk k's embedding on a circle (well apart on the map), the query near
    angle 0.3, so every relevance differs."""
    chunks = []
    for k, (text, chunk_id, tokens) in enumerate(zip(TEXTS, IDS, TOKENS, strict=True)):
        angle = 2 * math.pi * k / len(TEXTS)
        embedding = [math.cos(angle), math.sin(angle)] + [0.05 * ((k * j) % 3) for j in range(6)]
        chunks.append(
            {
                "id": chunk_id,
                "title": text,
                "text": text,
                "tokens": tokens,
                "embedding": [round(x, 6) for x in embedding],
            }
        )
    query = [math.cos(0.3), math.sin(0.3)] + [0.0] * 6
    return {"query": QUERY, "query_embedding": query, "chunks": chunks}


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile-pools")
    pool = json.dumps(hostile_pool(), ensure_ascii=False)
    (folder / "hostile.json").write_text(pool, encoding="utf-8")
    logs, cache = tmp_path_factory.mktemp("logs"), tmp_path_factory.mktemp("cache")
    with server(logs, ADAGRES_DATA_DIR=str(folder), ADAGRES_CACHE_DIR=str(cache)) as running:
        yield running


@pytest.fixture(scope="module")
def page(app):
    with chromium() as browser:
        # No file picker: a table's "Download as CSV" then saves through a link, which
        # Playwright sees as a download.
        context = browser.new_context(
            viewport={"width": 1400, "height": 1400}, accept_downloads=True
        )
        context.add_init_script("window.showSaveFilePicker = undefined;")
        tab = context.new_page()
        tab.dialogs = []
        tab.on("dialog", lambda dialog: (tab.dialogs.append(dialog.message), dialog.dismiss()))
        yield tab
        context.close()


def visit(page, app, path: str, shot: str, *, charts: bool = True) -> None:
    """Open a page, check that it shows no error and nothing injected, screenshot it."""
    page.goto(f"{app.url}/{path}")
    wait_for_app(page, charts=charts)
    assert page.locator('[data-testid="stException"]').count() == 0, path
    errors = page.locator('[data-testid="stAlertContentError"]').all_inner_texts()
    assert not errors, (path, errors)
    check_nothing_ran(page, path)
    folder = SHOTS / "hostile"
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / f"{shot}.png"))


def check_nothing_ran(page, where: str) -> None:
    assert page.evaluate("() => typeof window.__pwned") == "undefined", where
    assert not page.dialogs, (where, page.dialogs)
    assert page.evaluate(INJECTED) == [], where


def table_rows(page, *headings: str) -> list[dict[str, str]]:
    """The rows of the ``st.dataframe`` whose first columns have these headings (from its
    "Download as CSV": the grid itself is drawn on a canvas)."""
    tables = page.locator("[data-testid='stDataFrame']")
    index = -1
    for k in range(tables.count()):  # a grid draws its header once it is in view
        tables.nth(k).scroll_into_view_if_needed()
        tables.nth(k).locator("thead th").first.wait_for(state="attached", timeout=30_000)
        first = tables.nth(k).locator("thead th").all_text_contents()[: len(headings)]
        if first == list(headings):
            index = k
            break
    assert index >= 0, f"no table with columns {headings}"
    table = tables.nth(index)
    table.scroll_into_view_if_needed()
    table.hover()  # shows the table's toolbar
    with page.expect_download(timeout=30_000) as download:
        # The click event goes to the button itself. A pointer click needs the toolbar
        # hovered, and once Playwright has scrolled the button into view the grid can lie
        # over it; and after a user's click Chromium offers Streamlit's export its
        # save-file picker (a download event after 1 of 10 pointer clicks here), while
        # without one the export falls back to a plain download.
        table.get_by_role("button", name="Download as CSV").dispatch_event("click")
    text = Path(download.value.path()).read_text(encoding="utf-8-sig")
    return list(csv.DictReader(io.StringIO(text, newline="")))


def downloaded(page, label: str) -> str:
    with page.expect_download(timeout=30_000) as download:
        page.get_by_role("button", name=label).click()
    return Path(download.value.path()).read_text(encoding="utf-8")


def hover_label(page, position: int) -> str:
    """The text of the map's hover label over the chunk at that pool position."""
    page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')]
        .find(p => p.data && p.data.some(t => t.name === 'query'))
        .scrollIntoView({block: 'center'})""")
    page.mouse.move(5, 5)
    page.wait_for_function("() => !document.querySelector('.hoverlayer .hovertext')")
    x, y = page.evaluate(POINT_OF, position)
    page.mouse.move(x, y)
    label = page.locator(".hoverlayer .hovertext").first
    label.wait_for(timeout=10_000)
    return label.evaluate("e => [...e.querySelectorAll('text')].map(t => t.textContent).join('')")


def by_id(rows: list[dict[str, str]], column: str) -> dict[str, str]:
    return {row["id"]: row[column] for row in rows}


def test_selection_shows_the_texts_as_written(app, page):
    visit(page, app, f"?{SETTINGS}", "selection")
    # The context, in pick order (the table's, drawn once opened), as plain text: each
    # text as written.
    page.get_by_text("Context as a table").click()
    page.wait_for_function(  # the rerun has drawn the table inside the expander
        """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].some(t =>
            t.offsetParent && (t.querySelector('thead th') || {}).textContent === 'order')""",
        timeout=30_000,
    )
    rows = table_rows(page, "order", "id")
    order = [row["id"] for row in rows]
    assert sorted(order) == sorted(IDS)
    assert by_id(rows, "text") == dict(zip(IDS, TEXTS, strict=True))
    page.get_by_text("Context as plain text").click()
    context = page.locator("[data-testid='stExpander'] [data-testid='stCode'] code").last
    context.wait_for(timeout=10_000)
    picked_texts = [TEXTS[IDS.index(i)] for i in order]
    assert context.evaluate("e => e.textContent") == "\n\n".join(picked_texts)
    assert context.inner_text() == "\n\n".join(picked_texts)
    # Hover labels: each chunk's id as written, its line breaks as spaces (plotly draws a
    # label's newlines as spaces: its line break is <br>).
    for position, chunk_id in enumerate(IDS):
        label = hover_label(page, position)
        shown = re.sub(r"\r\n?|\n", " ", chunk_id)
        assert label.startswith(f"{shown} · "), (NAMES[position], label[:120])
    check_nothing_ran(page, "selection, after hovering")
    # The downloads hold the texts and ids as loaded.
    assert downloaded(page, "Download context (text)") == "\n\n".join(picked_texts)
    record = json.loads(downloaded(page, "Download selection + steps (JSON)"))
    assert record["selected"] == order
    assert [v["chunk"] for v in record["verdicts"]] == IDS
    check_nothing_ran(page, "selection, after the downloads")


def test_pool_page_shows_query_and_chunks_as_written(app, page):
    visit(page, app, f"pool?{SETTINGS}", "pool")
    query = page.locator("[data-testid='stText']").first
    assert query.evaluate("e => e.textContent") == QUERY
    rows = table_rows(page, "id", "verdict")
    assert [row["id"] for row in rows] == IDS
    assert [row["title"] for row in rows] == TEXTS
    assert [row["text"] for row in rows] == TEXTS


def test_why_dropped_shows_ids_and_text_as_written(app, page):
    for name in ("markdown", "link", "terminal", "img"):
        k = NAMES.index(name)
        visit(page, app, f"why?{SETTINGS}&chunk={quote(IDS[k], safe='')}", f"why_{name}")
        # Headings and captions are one line: a line break shows as a space there.
        one_line = IDS[k].replace("\n", " ")
        assert page.locator("#verdict").evaluate("e => e.textContent") == f"Verdict on {one_line}"
        captions = page.locator("[data-testid='stCaptionContainer']").all_text_contents()
        assert f"{one_line} is ringed. Click another chunk on the map or in the table below." in (
            captions
        ), (name, captions)
        header = f"{IDS[k]} · {TOKENS[k]} tokens · {TEXTS[k]}"
        texts = page.locator("[data-testid='stText']").evaluate_all(
            "es => es.map(e => e.textContent)"
        )
        assert header in texts, (name, [t[:80] for t in texts])
        code = page.locator("[data-testid='stCode'] code").last
        assert code.evaluate("e => e.textContent") == TEXTS[k], name
    rows = table_rows(page, "id", "verdict")
    assert by_id(rows, "text") == dict(zip(IDS, TEXTS, strict=True))


def test_similarity_compare_and_lambda_show_the_texts_as_written(app, page):
    visit(page, app, f"similarity?{SETTINGS}", "similarity")
    page.get_by_text("chunks of the heatmap, in row order").click()
    page.wait_for_function(  # the table inside the expander is drawn, with its header
        """() => [...document.querySelectorAll('[data-testid="stDataFrame"]')].some(t =>
            t.offsetParent && (t.querySelector('thead th') || {}).textContent === 'row')""",
        timeout=30_000,
    )
    rows = table_rows(page, "row", "id")
    assert by_id(rows, "text") == dict(zip(IDS, TEXTS, strict=True))
    visit(page, app, f"compare?{SETTINGS}", "compare")
    rows = table_rows(page, "id", "in")
    assert rows and all(row["text"] == TEXTS[IDS.index(row["id"])] for row in rows)
    visit(page, app, f"lambda?{SETTINGS}", "lambda")


def test_pool_sets_shows_the_query_as_written(app, page):
    visit(page, app, f"pool_sets?{SETTINGS}", "pool_sets")
    rows = table_rows(page, "#", "query")
    assert [row["query"] for row in rows] == [QUERY]
    # The query chooser's label: its number and the query's first 90 characters.
    chooser = page.locator(".st-key-ps_query input[role='combobox']").input_value()
    assert chooser == f"#{rows[0]['#']} · {QUERY[:90]}", chooser
    check_nothing_ran(page, "pool sets, at the end")
