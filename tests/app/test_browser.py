"""A real browser (Debian's Chromium via Playwright) opens every page of the running app.

Starts ``streamlit run app.py`` on a free port with the synthetic pools and the PCA
projection, waits for each page's charts, asserts that no exception or error box shows,
and saves one screenshot per page under ``artifacts/screenshots/``.
"""

from __future__ import annotations

import pytest
from browser_support import SHOTS, chromium, server, wait_for_app

# url path (Selection is the default page, at the root), file name, whether it has charts
PAGES = [
    ("pool", "pool", True),
    ("", "selection", True),
    ("similarity", "similarity", False),
    ("lambda", "lambda", False),
    ("compare", "compare", False),
    ("why", "why_dropped", True),
]


@pytest.fixture(scope="module")
def app_url(pools_dir, tmp_path_factory):
    with server(tmp_path_factory.mktemp("logs"), ADAGRES_DATA_DIR=str(pools_dir)) as running:
        yield running.url


def test_every_page_renders_in_chromium(app_url):
    SHOTS.mkdir(parents=True, exist_ok=True)
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        # The first request of a fresh server is a bookmarked deep link: it must land on
        # that page, with app.py's navigation and the URL's settings (no pages/ folder).
        page.goto(f"{app_url}/why?pool=medium&budget=700&chunk=c0003")
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        assert page.locator("h1").first.inner_text() == "Why dropped"
        links = page.locator('[data-testid="stSidebar"] [data-testid="stPageLink"]')
        nav = " ".join(links.all_inner_texts())
        assert "Why dropped" in nav and "λ derivation" in nav, nav
        assert "budget=700" in page.url and "chunk=c0003" in page.url, page.url
        page.goto(f"{app_url}/?pool=medium")
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        assert page.locator("h1").first.inner_text() == "Selection"
        # The default page's name typed as an address forwards to "/" with its settings.
        page.goto(f"{app_url}/selection?pool=medium&budget=700")
        page.wait_for_url("**/?pool=medium&budget=700*", timeout=60_000)
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        assert page.locator("h1").first.inner_text() == "Selection"
        assert page.get_by_text("Page not found").count() == 0
        for path, name, charts in PAGES:
            page.goto(f"{app_url}/{path}?pool=medium&budget=1500&chunk=c0012")
            page.wait_for_selector('[data-testid="stSidebar"]', timeout=60_000)
            page.wait_for_selector("h1", timeout=60_000)
            if charts:
                page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
            wait_for_app(page, charts=charts)  # the run has finished: no element is stale
            assert page.get_by_text("Page not found").count() == 0, path
            assert page.locator('[data-testid="stException"]').count() == 0, path
            errors = page.locator('[data-testid="stAlertContentError"]')
            assert errors.count() == 0, (path, errors.all_inner_texts())
            # The URL carries the state of the view.
            assert "pool=medium" in page.url and "budget=1500" in page.url, page.url
            page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)
        # The map drew every chunk of the pool as a point.
        page.goto(f"{app_url}/?pool=medium&budget=1500")
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
        assert page.locator(".js-plotly-plot").count() >= 3
