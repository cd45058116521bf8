"""A real browser (Debian's Chromium via Playwright) opens every page of the running app.

Starts ``streamlit run app.py`` on a free port with the synthetic pools and the PCA
projection, waits for each page's charts, asserts that no exception or error box shows,
and saves one screenshot per page under ``artifacts/screenshots/``.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# url path (Selection is the default page, at the root), file name, whether it has charts
PAGES = [
    ("pool", "pool", True),
    ("", "selection", True),
    ("similarity", "similarity", False),
    ("lambda", "lambda", False),
    ("compare", "compare", False),
    ("why", "why_dropped", True),
]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_until_up(url: str, server: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {server.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"streamlit did not answer at {url} within {timeout:.0f} s")


@pytest.fixture(scope="module")
def app_url(pools_dir):
    port = _free_port()
    env = {**os.environ, "ADAGRES_PROJECTION": "pca", "ADAGRES_DATA_DIR": str(pools_dir)}
    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        "app.py",
        "--server.address",
        "127.0.0.1",
        "--server.port",
        str(port),
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
        "--server.fileWatcherType",
        "none",
    ]
    server = subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_until_up(url, server)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


def test_every_page_renders_in_chromium(app_url):
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            # The first request of a fresh server is a bookmarked deep link: it must land on
            # that page, with app.py's navigation and the URL's settings (ui/routing.py).
            page.goto(f"{app_url}/why?pool=medium&budget=700&chunk=c0003")
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
            assert page.locator("h1").first.inner_text() == "Why dropped"
            nav = page.locator('[data-testid="stSidebarNav"]').inner_text()
            assert "Why dropped" in nav and "λ derivation" in nav, nav
            assert "budget=700" in page.url and "chunk=c0003" in page.url, page.url
            page.goto(f"{app_url}/?pool=medium")
            page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
            assert page.locator("h1").first.inner_text() == "Selection"
            for path, name, charts in PAGES:
                page.goto(f"{app_url}/{path}?pool=medium&budget=1500&chunk=c0012")
                page.wait_for_selector('[data-testid="stSidebar"]', timeout=60_000)
                page.wait_for_selector("h1", timeout=60_000)
                if charts:
                    page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
                page.wait_for_timeout(800)  # let the remaining elements settle
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
        finally:
            browser.close()
