"""AppTest tests of the Compare page: A and B against the core's metrics, the budget sweep."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from apptest_support import (
    COMPARE,
    DEMO,
    PAPER,
    array,
    figures,
    frame,
    metric,
    no_error,
    page,
    pool_of,
    recommended_selection,
)
from reference import select_inputs

from adagres import PRESETS, Settings, baselines
from adagres.core.metrics import evaluate
from adagres.pools.pool import Pool
from ui.comparison import METRIC_COLUMNS, metric_text

pytestmark = pytest.mark.usefixtures("data_dir")


def gold_of(pool: Pool) -> list[int] | None:
    gold = [i for i, chunk in enumerate(pool.chunks) if chunk.gold]
    return gold or None


def expected_metrics(
    pool: Pool, budget: int, strategy: str, settings: Settings | None = None, **fields: Any
) -> dict[str, Any]:
    """Metrics of A/B computed with the core: the library runs ``strategy`` with the same
    settings (a baseline's F at AdaGReS's λ, topk_same_k's k from AdaGReS: its rule)."""
    args = (*select_inputs(pool), budget)
    settings = Settings.of(settings, **fields)
    selection = baselines.run(strategy, *args, settings=settings, texts=pool.texts)
    return evaluate(
        selection,
        pool.prepared,
        gold=gold_of(pool),
        answers=pool.answers or None,
        texts=pool.texts,
    ).as_dict()


def metrics_table(at) -> Any:
    """The metrics table: one row per metric (its label), a text column per config."""
    return frame(at, "metric")


def check_metrics(table: Any, config: str, expected: dict[str, Any], columns: list[str]) -> None:
    for column in columns:
        value = expected[column]
        if column == "budget_use":  # every table shows a share in percent
            value = 100.0 * value
        label = METRIC_COLUMNS[column]["label"]
        (shown,) = table.loc[table["metric"] == label, config]
        assert shown == metric_text(column, value), column


def shown_number(table: Any, config: str, column: str) -> float:
    (shown,) = table.loc[table["metric"] == METRIC_COLUMNS[column]["label"], config]
    return float(shown.replace(",", "").rstrip("%"))


@pytest.mark.parametrize("preset", ["recommended", "paper"])
@pytest.mark.parametrize("pool_name", ["medium", DEMO])
def test_compare_metrics_equal_evaluate(data_dir, pool_name, preset):
    """A is the sidebar's preset; B is top-k with AdaGReS's k against the paper's method and
    the paper's method (with the sidebar's settings) against the recommended preset, top-k
    until the budget with the guard and packing (the default)."""
    budget = 1000
    params = {"pool": pool_name, "budget": str(budget)}
    at = page(COMPARE, **(params if preset == "recommended" else {**params, **PAPER}))
    no_error(at)
    chosen = PRESETS[preset]
    b_strategy = "topk_same_k" if preset == "paper" else "adagres"
    assert at.selectbox(key="cmp_a_strategy").value == chosen.strategy
    assert at.selectbox(key="cmp_b_strategy").value == b_strategy
    pool = pool_of(data_dir, pool_name)
    table = metrics_table(at)
    assert list(table.columns) == ["metric", "A", "B"]  # a row per metric: nothing cut
    columns = [
        "size",
        "tokens_used",
        "budget_use",
        "objective",
        "relevance_sum",
        "redundancy_mean",
        "redundancy_max",
        "near_duplicates",
    ]
    if pool_name == DEMO:  # gold labels and answers
        columns += ["iou", "recall", "precision", "answer_found"]
    else:
        assert not {"IoU with gold", "answer found"} & set(table["metric"])
        assert any("no gold labels" in info.value for info in at.info)
    a_expected = expected_metrics(pool, budget, chosen.strategy, chosen.settings)
    check_metrics(table, "A", a_expected, columns)
    check_metrics(table, "B", expected_metrics(pool, budget, b_strategy, chosen.settings), columns)
    # The pick lists and the set difference agree with the selections.
    args = (*select_inputs(pool), budget)
    a = baselines.run(chosen.strategy, *args, settings=chosen.settings, texts=pool.texts)
    picks = frame(at, "gain", 0)
    assert list(picks["id"]) == [pool.ids[i] for i in a.indices]
    assert list(picks["gain"]) == pytest.approx([s.gain for s in a.steps if s.accepted])
    b_ids = set(frame(at, "gain", 1)["id"])
    diff = frame(at, "in")
    a_ids = {pool.ids[i] for i in a.indices}
    assert set(diff.loc[diff["in"] == "A only", "id"]) == a_ids - b_ids
    assert set(diff.loc[diff["in"] == "B only", "id"]) == b_ids - a_ids
    assert set(diff.loc[diff["in"] == "both", "id"]) == a_ids & b_ids
    assert metric(at, "in both") == str(len(a_ids & b_ids))
    # One map overlays both: each layer holds exactly its chunks (customdata: positions).
    overlay = next(f for f in figures(at) if any(t["name"].startswith("both") for t in f["data"]))
    layers = {
        t["name"].split(" (")[0]: {pool.ids[i] for i in t["customdata"]}
        for t in overlay["data"]
        if t["name"] != "query"
    }
    assert layers["A only"] == a_ids - b_ids and layers["B only"] == b_ids - a_ids
    assert layers["both"] == a_ids & b_ids
    assert layers["picked by neither"] == set(pool.ids) - a_ids - b_ids


def test_compare_smaller_budget_and_other_settings_in_b(data_dir):
    at = page(COMPARE, pool="medium", budget="1500", **PAPER)
    no_error(at)
    assert at.selectbox(key="cmp_a_strategy").value == "adagres"
    assert at.selectbox(key="cmp_b_strategy").value == "topk_same_k"
    assert at.number_input(key="cmp_b_budget").value == 1500
    at.number_input(key="cmp_b_budget").set_value(300).run()
    no_error(at)
    table = metrics_table(at)
    a_tokens, b_tokens = (shown_number(table, c, "tokens_used") for c in ("A", "B"))
    assert b_tokens <= 300 < a_tokens <= 1500
    # B as MMR with a manual λ: the metrics follow.
    at.selectbox(key="cmp_b_strategy").set_value("mmr").run()
    at.radio(key="cmp_b_lam_mode").set_value("manual").run()
    at.number_input(key="cmp_b_lam").set_value(0.3).run()
    no_error(at)
    pool = pool_of(data_dir, "medium")
    columns = ["size", "tokens_used", "objective", "relevance_sum", "redundancy_mean"]
    check_metrics(metrics_table(at), "B", expected_metrics(pool, 300, "mmr", lam=0.3), columns)
    # A follows the sidebar when the sidebar changes.
    at.number_input(key="sb_budget").set_value(700).run()
    no_error(at)
    assert at.number_input(key="cmp_a_budget").value == 700
    assert shown_number(metrics_table(at), "A", "tokens_used") <= 700


@pytest.mark.parametrize("pool_name", ["medium", DEMO])
def test_budget_sweep(data_dir, pool_name):
    """The sweep starts with the sidebar's strategy (the default preset's) and the four of
    the paper's comparison, all with the sidebar's settings."""
    at = page(COMPARE, pool=pool_name)
    no_error(at)
    pool = pool_of(data_dir, pool_name)
    rows = frame(at, "error")
    assert pool.token_counts is not None
    high = int(pool.token_counts.sum())
    budgets = sorted({round(float(x)) for x in np.linspace(100, min(2000, high), 10)})
    assert sorted(set(rows["budget"])) == budgets
    assert set(rows["strategy"]) == {"adagres", "topk_same_k", "topk_budget", "mmr"}
    assert rows["error"].isna().all()
    assert (rows["tokens_used"] <= rows["budget"]).all()
    # The preset's row and AdaGReS's (with the preset's settings) at each budget are those
    # selections at that budget.
    settings = PRESETS["recommended"].settings
    for strategy, expected in (
        ("topk_budget", lambda b: recommended_selection(pool, b, trace=False)),
        (
            "adagres",
            lambda b: baselines.run_prepared(
                "adagres", pool.prepared, b, settings, texts=pool.texts, trace=False
            ),
        ),
    ):
        mine = rows[rows["strategy"] == strategy]
        assert len(mine) == len(budgets)
        for _, row in mine.iterrows():
            selection = expected(int(row["budget"]))
            assert row["size"] == selection.size
            assert row["objective"] == pytest.approx(selection.objective, abs=1e-9)
    # The figure draws the chosen metric per strategy.
    at.selectbox(key="cmp_sweep_metric").set_value("tokens_used").run()
    no_error(at)
    figure = figures(at)[-1]
    for trace in figure["data"]:  # a line equal to an earlier one: "name (same as …)"
        mine = rows[rows["strategy"] == trace["name"].split(" ")[0]].sort_values("budget")
        assert list(array(trace["x"])) == list(mine["budget"])
        assert list(array(trace["y"])) == list(mine["tokens_used"])
    # The metric is in the address: a link opens the same plot.
    assert at.query_params["sweep"] == "tokens_used"
    again = page(COMPARE, **dict(at.query_params))
    assert again.selectbox(key="cmp_sweep_metric").value == "tokens_used"
    if pool_name == DEMO:
        assert "IoU with gold" in at.selectbox(key="cmp_sweep_metric").options
    else:
        assert "IoU with gold" not in at.selectbox(key="cmp_sweep_metric").options


def test_budget_sweep_controls(data_dir):
    at = page(COMPARE, pool="medium")
    at.slider(key="cmp_sweep_range").set_value((200, 800)).run()
    at.number_input(key="cmp_sweep_points").set_value(4).run()
    at.multiselect(key="cmp_sweep_strategies").set_value(["adagres", "topk_budget"]).run()
    no_error(at)
    rows = frame(at, "error")
    assert sorted(set(rows["budget"])) == [200, 400, 600, 800]
    assert set(rows["strategy"]) == {"adagres", "topk_budget"}
    assert (rows["tokens_used"] <= rows["budget"]).all()
    at.multiselect(key="cmp_sweep_strategies").set_value([]).run()
    no_error(at)
    assert any("at least one strategy" in info.value for info in at.info)


def test_a_sweep_metric_the_pool_cannot_have_falls_back(data_dir):
    at = page(COMPARE, pool="medium", sweep="iou")  # the medium pool has no gold chunks
    no_error(at)
    assert at.selectbox(key="cmp_sweep_metric").value == "objective"
    bad = page(COMPARE, pool="medium", sweep="vibes")
    assert any("sweep='vibes'" in w.value.replace("\\", "") for w in bad.warning)
