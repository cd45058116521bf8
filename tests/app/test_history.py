"""History: the address is the view. Back and Forward (the browser bringing back an older
address, with no widget change) restore the view the address names; only a user's change
writes the address, once. AppTest cannot press Back, so a test sets the older address and
reruns, which is what the browser's Back sends."""

from __future__ import annotations

from apptest_support import APP, COMPARE, SELECTION, metric, no_error, page


def go_to(at, params: dict[str, str]):
    """The browser brings back the address ``params`` (Back or Forward): rerun with it."""
    at.query_params.clear()
    at.query_params.update(params)
    return at.run()


def test_back_and_forward_restore_the_budget(pools_dir):
    at = page(SELECTION, pool="medium", budget="600")
    no_error(at)
    before = dict(at.query_params)
    at.number_input(key="sb_budget").set_value(800).run()
    after = dict(at.query_params)
    assert after["budget"] == "800" and metric(at, "Tokens used").endswith("/ 800")
    go_to(at, before)  # Back
    no_error(at)
    assert at.number_input(key="sb_budget").value == 600
    assert metric(at, "Tokens used").endswith("/ 600")
    assert dict(at.query_params) == before  # not rewritten to the newer view
    go_to(at, after)  # Forward
    assert at.number_input(key="sb_budget").value == 800
    assert dict(at.query_params) == after


def test_a_run_without_a_change_writes_nothing(pools_dir):
    """Opening a link, or switching page, leaves the address as it was (each write is a
    history entry the user would have to press Back through)."""
    at = page(APP, pool="medium", budget="600")
    assert dict(at.query_params) == {"pool": "medium", "budget": "600"}
    at.switch_page("app_pages/6_why.py").run()
    no_error(at)
    assert at.title[0].value == "Why dropped"
    assert dict(at.query_params) == {"pool": "medium", "budget": "600"}


def test_back_restores_page_options(pools_dir):
    at = page(COMPARE, pool="medium", budget="1500")
    at.number_input(key="cmp_b_budget").set_value(600).run()
    changed = dict(at.query_params)
    assert changed["b_budget"] == "600"
    at.number_input(key="cmp_b_budget").set_value(700).run()
    go_to(at, changed)  # Back
    no_error(at)
    assert at.number_input(key="cmp_b_budget").value == 600
    go_to(at, {"pool": "medium", "budget": "1500"})  # Back to the first view
    assert at.number_input(key="cmp_b_budget").value == 1500  # B follows the sidebar


def test_back_after_a_sidebar_change_does_not_reset_compare(pools_dir):
    """Compare resets A and B when the user changes the sidebar; Back to an address that
    names A and B shows them, not the sidebar's values."""
    first = {"pool": "medium", "budget": "1500", "a_budget": "900"}
    at = page(COMPARE, **first)
    assert at.number_input(key="cmp_a_budget").value == 900
    at.number_input(key="sb_budget").set_value(1200).run()
    assert at.number_input(key="cmp_a_budget").value == 1200  # follows the user's change
    go_to(at, first)
    assert at.number_input(key="cmp_a_budget").value == 900
    assert dict(at.query_params) == first
