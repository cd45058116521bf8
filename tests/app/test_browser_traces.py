"""In Chromium: a trace export recorded for real (a LangChain retriever instrumented with
OpenInference, its spans from the OpenTelemetry SDK's in-memory exporter, written as
OTLP/JSON) opened on the Pool sets page from a path on the server; one request opened in
every page and shown on Selection; that page's address opened in a fresh browser context
(no cookies, no session) shows the same request's pool with the same numbers."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from apptest_support import recommended_selection
from browser_support import chromium, rerun, server, table_after, table_csv, wait_for_app
from trace_export import REQUESTS, TOP_K, record_export

from adagres.poolsets import summaries as poolsets
from adagres.traces import read_pools

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.frameworks, pytest.mark.model]

BUDGET = 900
#: The request opened: the second retrieval of trace A (third to run, second in the set).
ASKED = REQUESTS[2][1]
VIEWPORT = {"width": 1400, "height": 1000}
CONTEXT_TABLE = "//summary[contains(., 'Context as a table')]"


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("traces")
    record_export(folder / "spans.jsonl")
    return folder / "spans.jsonl"


@pytest.fixture(scope="module")
def app_url(pools_dir, export, tmp_path_factory):
    """The app with the synthetic pools as its data and the export's folder shared."""
    with server(
        tmp_path_factory.mktemp("logs"),
        ADAGRES_DATA_DIR=str(pools_dir),
        ADAGRES_SERVER_PATHS=str(export.parent),
        ADAGRES_CACHE_DIR=str(tmp_path_factory.mktemp("cache")),
    ) as running:
        yield running.url


def new_tab(browser):
    """A tab of a new browser context (its own cookies and storage: a fresh browser) whose
    tables' "Download as CSV" saves through a link, which Playwright sees as a download."""
    context = browser.new_context(viewport=VIEWPORT, accept_downloads=True)
    context.add_init_script("window.showSaveFilePicker = undefined;")
    return context.new_page()


def tile(page, label: str) -> str:
    metric = page.locator('[data-testid="stMetric"]').filter(has_text=label).first
    return metric.locator('[data-testid="stMetricValue"]').inner_text()


def context_ids(page) -> list[str]:
    """The Selection page's context, chunk ids in pick order (its table, opened: the
    replay's fragment draws it, so :func:`table_csv` waits for its grid, not for a run)."""
    page.locator(f"xpath={CONTEXT_TABLE}").click()
    return [row["id"] for row in table_csv(page, table_after(page, CONTEXT_TABLE))]


def test_a_trace_request_opened_on_pool_sets_comes_back_from_its_address(app_url, export):
    [recorded] = [p for p in read_pools(export) if p.query == ASKED]
    expected = recommended_selection(poolsets.prepare_pool(recorded), BUDGET)
    want_ids = [recorded.ids[i] for i in expected.indices]
    with chromium() as browser:
        page = new_tab(browser)
        page.goto(f"{app_url}/pool_sets?pool=tiny&budget={BUDGET}")
        wait_for_app(page)
        # The export, typed as a path on the server.
        with rerun(page):
            path_box = page.locator(".st-key-ps_path input")
            path_box.fill(str(export))
            path_box.press("Enter")
        assert f"{export}: 3 queries" in page.locator('[data-testid="stMain"]').inner_text()
        table = table_after(
            page, "//*[@data-testid='stCaptionContainer'][contains(., 'Click a row')]"
        )
        rows = table_csv(page, table)
        assert [row["query"] for row in rows] == [REQUESTS[0][1], ASKED, REQUESTS[1][1]]
        [row] = [row for row in rows if row["query"] == ASKED]
        assert int(row["chunks"]) == TOP_K

        # The request chosen in the Query box and opened in every page.
        query_box = page.locator(".st-key-ps_query input[role='combobox']")
        assert query_box.input_value() == f"#{rows[0]['#']} · {rows[0]['query']}"
        with rerun(page):
            query_box.click()
            if query_box.get_attribute("aria-expanded") != "true":  # focused, not opened
                query_box.press("ArrowDown")
            page.get_by_role("option", name=f"#{row['#']} · {ASKED}", exact=True).click()
        assert query_box.input_value() == f"#{row['#']} · {ASKED}"
        with rerun(page):
            page.locator(".st-key-ps_open button").click()
        with rerun(page):
            page.locator('[data-testid="stSidebar"]').get_by_role(
                "link", name="Selection", exact=True
            ).click()
            page.wait_for_url(lambda url: "/pool_sets" not in url, timeout=60_000)
        assert page.locator("h1").first.inner_text() == "Selection"
        address = page.url
        params = {k: v[0] for k, v in parse_qs(urlsplit(address).query).items()}
        assert params["pool"].startswith("poolset-") and params["set"] == str(export)
        assert params["setspan"] == recorded.extra["trace"]["span_id"]
        shown = (tile(page, "Chunks selected"), tile(page, "Tokens used"))
        assert shown == (str(expected.size), f"{expected.tokens_used:,} / {BUDGET:,}")
        assert context_ids(page) == want_ids

        # A fresh browser context opens the address: the same request, the same numbers.
        again = new_tab(browser)
        again.goto(address)
        wait_for_app(again)
        assert again.locator("h1").first.inner_text() == "Selection"
        main = again.locator('[data-testid="stMain"]').inner_text()
        assert "not available" not in main and "Could not reopen" not in main
        pool_box = again.locator(".st-key-sb_pool input[role='combobox']")
        assert pool_box.input_value().endswith(f": {ASKED}")
        assert (tile(again, "Chunks selected"), tile(again, "Tokens used")) == shown
        assert context_ids(again) == want_ids
        assert f"pool={params['pool']}" in again.url
