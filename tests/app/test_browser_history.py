"""In Chromium: Back and Forward move between views, one change makes one history entry,
a page switch one more, and a deep link on a fresh server lands on its page."""

from __future__ import annotations

import pytest
from browser_support import chromium, server

pytestmark = pytest.mark.browser

IDLE = "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')"
BUDGET = 'input[aria-label="Budget (tokens)"]'


@pytest.fixture(scope="module")
def app_url(pools_dir, tmp_path_factory):
    with server(tmp_path_factory.mktemp("logs"), ADAGRES_DATA_DIR=str(pools_dir)) as running:
        yield running.url


def settle(page, condition: str, arg=None) -> None:
    """Wait until ``condition`` holds in the page and no script runs."""
    page.wait_for_function(condition, arg=arg, timeout=90_000)
    page.wait_for_function(IDLE, timeout=90_000)


def budget_is(page, value: int) -> None:
    settle(page, f"(v) => document.querySelector('{BUDGET}')?.value === String(v)", value)


def set_budget(page, value: int) -> None:
    box = page.locator(BUDGET)
    box.fill(str(value))
    box.press("Enter")
    settle(page, "(v) => location.search.includes('budget=' + v)", value)


def title_is(page, title: str) -> None:
    settle(page, "(t) => document.querySelector('h1')?.innerText === t", title)


def test_back_and_forward_move_between_views(app_url):
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{app_url}/why?pool=medium&budget=600")  # a fresh server's first request
        title_is(page, "Why dropped")
        budget_is(page, 600)
        start = page.evaluate("history.length")
        set_budget(page, 800)
        assert page.evaluate("history.length") == start + 1  # one change, one entry
        set_budget(page, 900)
        page.go_back()
        budget_is(page, 800)
        page.go_back()
        budget_is(page, 600)
        assert "budget=600" in page.url  # not rewritten to the newer view
        page.go_forward()
        budget_is(page, 800)
        assert "budget=800" in page.url
        # A page switch is one entry (it replaces the forward entries): one Back returns to
        # the page with its view.
        page.locator('[data-testid="stSidebar"]').get_by_role("link", name="Compare").click()
        title_is(page, "Compare")
        assert "budget=800" in page.url
        page.go_back()
        title_is(page, "Why dropped")
        budget_is(page, 800)
        page.go_forward()
        title_is(page, "Compare")
        assert page.evaluate("history.length") == start + 2


ORDER_IS = """(v) => { const radios = [...document.querySelectorAll('[data-testid="stRadio"]')]
    .filter(r => r.innerText.startsWith('Order'));
  const on = radios.length && radios[0].querySelector('input:checked');
  return on && on.value !== undefined
      && on.closest('label').innerText.split('\\n')[0].trim() === v; }"""


def test_page_controls_bound_by_streamlit_stay_beside_the_settings(app_url):
    """Similarity's controls are bound to the address by Streamlit: the sidebar's settings,
    which the app writes, leave them there; moving one rewrites the address in place
    (Streamlit's way: no history entry), so Back returns to the view before the last
    setting, with the order it had."""
    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(f"{app_url}/similarity?pool=medium&budget=600&order=cluster")
        title_is(page, "Similarity")
        settle(page, ORDER_IS, "cluster")
        start = page.evaluate("history.length")
        set_budget(page, 800)
        assert "order=cluster" in page.url and "budget=800" in page.url
        assert page.evaluate("history.length") == start + 1
        order = page.locator('[data-testid="stRadio"]').filter(has_text="Order")
        order.get_by_text("pick", exact=True).click()
        settle(page, "() => !location.search.includes('order=')")
        settle(page, ORDER_IS, "pick")
        assert "budget=800" in page.url  # the default order leaves the address
        assert page.evaluate("history.length") == start + 1
        page.go_back()
        budget_is(page, 600)
        settle(page, ORDER_IS, "cluster")
        assert "order=cluster" in page.url and "budget=600" in page.url
