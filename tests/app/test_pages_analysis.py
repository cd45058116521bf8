"""AppTest tests of the Similarity, λ derivation and Compare pages.

Reference values are computed here from the pool files with the core (``select``,
``calibrate``, ``guarantee``, ``baselines``, ``evaluate``) or by brute force, and compared
with what the pages show.
"""

from __future__ import annotations

import base64
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from synthetic import INJECTION

from adagres import Settings, baselines, select
from adagres.core.baselines import EXACT_MAX_CHUNKS
from adagres.core.calibration import calibrate
from adagres.core.guarantee import guarantee
from adagres.core.metrics import evaluate
from adagres.pools.io import load_pool
from adagres.pools.pool import Pool

ROOT = Path(__file__).resolve().parents[2]
SIMILARITY = "../../pages/3_similarity.py"
LAMBDA = "../../pages/4_lambda.py"
COMPARE = "../../pages/5_compare.py"
TITLES = {SIMILARITY: "Similarity", LAMBDA: "λ derivation", COMPARE: "Compare"}
DEMO = "biomedical_redundant"  # a bundled demo pool (88 chunks, gold labels and answers)
TIMEOUT = 120


@pytest.fixture(scope="module", autouse=True)
def data_dir(pools_dir: Path) -> Iterator[Path]:
    """The synthetic pools and the bundled demo pools in one data folder (links)."""
    folder = Path(tempfile.mkdtemp(prefix="adagres-analysis-"))
    for path in [*pools_dir.glob("*.json"), *(ROOT / "data").glob("*.json")]:
        (folder / path.name).symlink_to(path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ADAGRES_DATA_DIR", str(folder))
        patch.setenv("ADAGRES_PROJECTION", "pca")
        yield folder


def page(path: str, **params: str) -> AppTest:
    at = AppTest.from_file(path, default_timeout=TIMEOUT)
    at.query_params.update(params)
    return at.run()


def pool_of(folder: Path, name: str) -> Pool:
    return load_pool(folder / f"{name}.json")


def no_error(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def metric(at: AppTest, label: str) -> str:
    values = [m.value for m in at.metric if m.label == label]
    assert values, f"no metric {label!r} in {[m.label for m in at.metric]}"
    return values[0]


def frames(at: AppTest, column: str) -> list[Any]:
    """The tables shown that have ``column`` (AppTest does not expose dataframe keys)."""
    return [df.value for df in at.dataframe if column in df.value.columns]


def frame(at: AppTest, column: str, index: int = 0) -> Any:
    found = frames(at, column)
    assert len(found) > index, f"no table with a column {column!r}"
    return found[index]


def figures(at: AppTest) -> list[dict[str, Any]]:
    return [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")]


def array(values: Any) -> np.ndarray:
    """A plotly array from the spec: nested lists, or {"dtype", "bdata", "shape"} (base64)."""
    if isinstance(values, dict):
        flat = np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
        shape = values.get("shape")
        if shape:
            flat = flat.reshape([int(x) for x in str(shape).split(",")])
        return flat.astype(float)
    return np.asarray(values, dtype=float)


def adagres_selection(pool: Pool, budget: int, **options: Any):
    return select(pool.query_embedding, pool.embeddings, pool.token_counts, budget, **options)


def gold_of(pool: Pool) -> list[int] | None:
    gold = [i for i, chunk in enumerate(pool.chunks) if chunk.gold]
    return gold or None


# --------------------------------------------------------------------------- every page


@pytest.mark.parametrize("pool", ["tiny", "medium", DEMO])
@pytest.mark.parametrize("path", [SIMILARITY, LAMBDA, COMPARE])
def test_pages_load(data_dir, path, pool):
    at = page(path, pool=pool)
    no_error(at)
    assert at.title[0].value == TITLES[path]
    assert at.selectbox(key="sb_pool").value == pool
    assert len(at.get("plotly_chart")) >= 1


@pytest.mark.parametrize("path", [SIMILARITY, LAMBDA, COMPARE])
def test_bad_states_show_messages(data_dir, path):
    # The exact solver refuses 2000 chunks that fit: a warning, not a traceback.
    at = page(path, pool="large", budget="1500", strategy="exact")
    no_error(at)
    assert at.title[0].value == TITLES[path]
    if path != LAMBDA:  # the λ page always explains AdaGReS
        refusal = f"limits: {EXACT_MAX_CHUNKS} chunks"
        assert any(refusal in w.value.replace("\\", "") for w in at.warning)
    # A budget smaller than every chunk: nothing is selected.
    at = page(path, pool="medium", budget="1")
    no_error(at)
    messages = " ".join(element.value for element in [*at.info, *at.warning])
    if path == SIMILARITY:
        assert "Nothing is selected" in messages
    if path == LAMBDA:
        assert "Fallback" in messages
        assert metric(at, "F(greedy)") == metric(at, "F(optimum)") == "0.0000"
    if path == COMPARE:
        assert "A selects nothing" in messages and "B selects nothing" in messages
        assert list(frame(at, "config")["size"]) == [0, 0]


@pytest.mark.parametrize("path", [SIMILARITY, LAMBDA, COMPARE])
def test_chunk_text_is_never_markdown(data_dir, path):
    at = page(path, pool="tiny", budget="2000")
    no_error(at)
    kinds = ("markdown", "caption", "title", "subheader", "info", "warning", "success", "error")
    for kind in kinds:
        for element in at.get(kind):
            assert "alert(1)" not in element.value and "**bold**" not in element.value
    plain = [df.value[c] for df in at.dataframe for c in df.value.columns if "text" in c]
    if path != LAMBDA:  # the λ page shows numbers only
        assert any(INJECTION in set(column) for column in plain)
    for figure in figures(at):
        assert "<script>" not in json.dumps(figure)


# --------------------------------------------------------------------------- similarity


@pytest.mark.parametrize("pool_name", ["tiny", "medium"])
@pytest.mark.parametrize("order", ["pick", "cluster"])
def test_heatmap_is_the_cosine_matrix_of_the_shown_order(data_dir, pool_name, order):
    at = page(SIMILARITY, pool=pool_name, budget="1200")
    if order == "cluster":
        at.radio(key="sim_order").set_value("cluster").run()
    no_error(at)
    pool = pool_of(data_dir, pool_name)
    rows = frame(at, "row")
    position = {chunk_id: i for i, chunk_id in enumerate(pool.ids)}
    shown = [position[chunk_id] for chunk_id in rows["id"]]
    heat = figures(at)[0]["data"][0]
    z = array(heat["z"])
    unit = pool.embeddings.astype(np.float64)
    np.testing.assert_allclose(z, unit[shown] @ unit[shown].T, atol=1e-5)

    selection = adagres_selection(pool, 1200)
    k = selection.size
    rest = sorted(
        (i for i in range(len(pool)) if i not in selection.indices),
        key=lambda i: (-selection.relevance[i], i),
    )
    pick_order = [*selection.indices, *rest][:150]
    if order == "pick":
        # Picks in pick order, then the others by decreasing relevance.
        assert shown == pick_order
        # One outline around the block of selected chunks (the first k rows).
        shapes = figures(at)[0]["layout"]["shapes"]
        assert [(s["x0"], s["x1"], s["y0"], s["y1"]) for s in shapes] == [
            (-0.5, k - 0.5, -0.5, k - 0.5)
        ]
    else:
        # The same chunks, grouped by clustering.
        assert sorted(shown) == sorted(pick_order) and shown != pick_order
    if len(pool) > 150:
        assert len(shown) == 150
        assert any("shows the top 150" in info.value for info in at.info)
    else:
        assert len(shown) == len(pool)
        assert not any("shows the top" in info.value for info in at.info)
    # Hover names both chunks of a cell.
    hover = heat["hovertext"][0][1]
    assert pool.ids[shown[0]] in hover and pool.ids[shown[1]] in hover


def test_heatmap_size_control(data_dir):
    at = page(SIMILARITY, pool="medium")
    at.select_slider(key="sim_max_chunks").set_value(50).run()
    no_error(at)
    assert len(frame(at, "row")) == 50
    assert array(figures(at)[0]["data"][0]["z"]).shape == (50, 50)
    assert "top 50 of 200" in figures(at)[0]["layout"]["title"]["text"]


@pytest.mark.parametrize("threshold", [0.9, 0.8])
def test_near_duplicate_table_lists_exactly_the_pairs_above_the_threshold(data_dir, threshold):
    at = page(SIMILARITY, pool="medium")
    at.slider(key="sim_threshold").set_value(threshold).run()
    no_error(at)
    pool = pool_of(data_dir, "medium")
    unit = pool.embeddings.astype(np.float64)
    gram = unit @ unit.T
    a, b = np.triu_indices(len(pool), k=1)
    close = np.abs(gram[a, b] - threshold) < 1e-5  # too close to call in float32
    assert not close.any()
    hits = gram[a, b] >= threshold
    expected = {
        (pool.ids[i], pool.ids[j]): gram[i, j] for i, j in zip(a[hits], b[hits], strict=True)
    }
    table = frame(at, "id A")
    shown = {
        (x, y): s for x, y, s in zip(table["id A"], table["id B"], table["cosine"], strict=True)
    }
    assert len(table) == len(expected) > 0
    assert shown.keys() == expected.keys()
    for pair, cosine in expected.items():
        assert shown[pair] == pytest.approx(cosine, abs=1e-5)
    assert list(table["cosine"]) == sorted(table["cosine"], reverse=True)
    # Snippets are the chunks' own text, as plain text.
    first = table.iloc[0]
    assert pool.texts[pool.ids.index(first["id A"])].startswith(first["text A"].rstrip("…"))


def test_near_duplicate_table_is_capped(data_dir):
    at = page(SIMILARITY, pool="medium")
    at.slider(key="sim_threshold").set_value(0.7).run()
    no_error(at)
    pool = pool_of(data_dir, "medium")
    unit = pool.embeddings.astype(np.float64)
    a, b = np.triu_indices(len(pool), k=1)
    cosines = np.sort((unit @ unit.T)[a, b])[::-1]
    total = int((cosines >= 0.7).sum())
    assert total > 1000
    table = frame(at, "id A")
    assert len(table) == 1000
    np.testing.assert_allclose(table["cosine"], cosines[:1000], atol=1e-5)
    assert any(f"{total} pairs" in c.value and "1000 most similar" in c.value for c in at.caption)


def test_no_pair_above_the_threshold(data_dir):
    at = page(SIMILARITY, pool="tiny")
    at.slider(key="sim_threshold").set_value(1.0).run()
    no_error(at)
    assert any("No pair" in info.value for info in at.info)
    assert not frames(at, "id A")


# --------------------------------------------------------------------------- λ derivation


@pytest.mark.parametrize("pool_name", ["tiny", "medium", DEMO])
def test_lambda_page_shows_the_calibration(data_dir, pool_name):
    budget = 900
    at = page(LAMBDA, pool=pool_name, budget=str(budget))
    no_error(at)
    pool = pool_of(data_dir, pool_name)
    args = (pool.query_embedding, pool.embeddings, pool.token_counts, budget)
    paper = calibrate(*args, formula="paper")
    derived = calibrate(*args, formula="derived")
    assert metric(at, "L̄ (mean tokens)") == f"{paper.mean_tokens:.2f}"
    assert metric(at, "k̄ = T / L̄") == f"{paper.expected_k:.3f}"
    assert metric(at, "r̄ (mean relevance)") == f"{paper.mean_relevance:.4f}"
    assert metric(at, "ρ̄ (mean pair cosine)") == f"{paper.mean_similarity:.4f}"
    assert metric(at, "λ* (paper)") == f"{paper.lam_star:.4f}"
    assert metric(at, "λ* (derived)") == f"{derived.lam_star:.4f}"
    assert metric(at, "λ used") == f"{paper.lam:.4f}"
    # The same numbers are filled into the formulas.
    latex = " ".join(element.value for element in at.latex)
    for number in (
        f"{paper.mean_tokens:.2f}",
        f"{paper.expected_k:.3f}",
        f"{paper.mean_relevance:.4f}",
        f"{paper.mean_similarity:.4f}",
        f"{paper.lam_star:.4f}",
        f"{derived.lam_star:.4f}",
        f"{(paper.expected_k - 1) / 2:.4f}",
        f"{paper.expected_k - 1:.4f}",
    ):
        assert number in latex
    # The paper's ε = λ·k·δ for the λ in use.
    terms = guarantee(pool.embeddings, pool.token_counts, budget, paper.lam)
    assert metric(at, "δ (max pair cosine)") == f"{terms.delta:.4f}"
    assert metric(at, "k (largest set that fits)") == str(terms.k_max)
    assert metric(at, "ε = λ·k·δ") == f"{terms.epsilon:.4f}"


def test_lambda_fallback_is_explained(data_dir):
    at = page(LAMBDA, pool="medium", budget="60")  # k̄ = 60 / 113 < 1
    no_error(at)
    assert metric(at, "λ used") == "0.0100"
    assert metric(at, "λ* (paper)") == "–"
    warning = " ".join(w.value for w in at.warning)
    assert "Fallback" in warning and "k̄ = T / L̄ ≤ 1" in warning and "0.01" in warning


def test_sensitivity_plot_marks_lambdas_and_lists_changes(data_dir):
    at = page(LAMBDA, pool="medium", budget="1500", lam="0.4")
    no_error(at)
    pool = pool_of(data_dir, "medium")
    adaptive = calibrate(pool.query_embedding, pool.embeddings, pool.token_counts, 1500).lam
    figure = figures(at)[0]
    lines = sorted({s["x0"] for s in figure["layout"]["shapes"] if s["type"] == "line"})
    assert lines == pytest.approx(sorted([adaptive, 0.4]))  # one line per panel, same λ
    f_trace = figure["data"][0]
    lams, f_values = array(f_trace["x"]), array(f_trace["y"])
    assert lams[0] == 0.0 and lams[-1] == pytest.approx(round(max(3 * adaptive, 1.25 * 0.4), 3))
    assert np.isclose(lams, adaptive).any() and np.isclose(lams, 0.4).any()
    # F at each λ is what select gives at that λ.
    for k in (0, len(lams) // 2, len(lams) - 1):
        expected = adagres_selection(pool, 1500, lam=float(lams[k]), trace=False).objective
        assert f_values[k] == pytest.approx(expected, abs=1e-9)
    changes = frame(at, "added")
    assert len(changes) >= 2
    for lam_value, added, removed in zip(
        changes["λ"], changes["added"], changes["removed"], strict=True
    ):
        before = lams[np.searchsorted(lams, lam_value) - 1]
        old = set(adagres_selection(pool, 1500, lam=float(before), trace=False).indices)
        new = set(adagres_selection(pool, 1500, lam=float(lam_value), trace=False).indices)
        assert old != new
        assert {pool.ids[i] for i in new - old} == set(filter(None, added.split(", ")))
        assert {pool.ids[i] for i in old - new} == set(filter(None, removed.split(", ")))


def test_exact_optimum_and_bound_on_a_small_pool(data_dir):
    budget = 500
    at = page(LAMBDA, pool="tiny", budget=str(budget))
    no_error(at)
    pool = pool_of(data_dir, "tiny")
    greedy = adagres_selection(pool, budget)
    optimum = baselines.exact(
        pool.query_embedding, pool.embeddings, pool.token_counts, budget, lam=greedy.lam
    )
    bound = guarantee(pool.embeddings, pool.token_counts, budget, greedy.lam).bound(
        optimum.objective
    )
    assert metric(at, "F(greedy)") == f"{greedy.objective:.4f}"
    assert metric(at, "F(optimum)") == f"{optimum.objective:.4f}"
    assert float(metric(at, "F(optimum)")) >= float(metric(at, "F(greedy)"))
    assert metric(at, "paper's bound") == f"{bound:.4f}"
    assert metric(at, "bound held") == ("yes" if greedy.objective >= bound else "no")
    sets = frame(at, "optimum")
    assert set(sets.loc[sets["optimum"], "id"]) == {pool.ids[i] for i in optimum.indices}
    assert set(sets.loc[sets["greedy"], "id"]) == {pool.ids[i] for i in greedy.indices}


def test_exact_on_a_button_for_mid_sized_problems(data_dir):
    pool = pool_of(data_dir, "medium")
    budget = 55
    fit = int((pool.token_counts <= budget).sum())
    assert 20 < fit <= 40
    at = page(LAMBDA, pool="medium", budget=str(budget))
    no_error(at)
    assert not any(m.label == "F(optimum)" for m in at.metric)
    at.button(key="lam_solve_exact").click().run()
    no_error(at)
    greedy = adagres_selection(pool, budget)
    optimum = baselines.exact(
        pool.query_embedding, pool.embeddings, pool.token_counts, budget, lam=greedy.lam
    )
    assert metric(at, "F(optimum)") == f"{optimum.objective:.4f}"
    assert optimum.objective >= greedy.objective - 1e-9


def test_exact_refused_for_a_large_problem(data_dir):
    at = page(LAMBDA, pool="large", budget="1500")
    no_error(at)
    assert any("Not solved exactly: 2000 chunks fit" in info.value for info in at.info)
    assert not any(m.label == "F(optimum)" for m in at.metric)


# --------------------------------------------------------------------------- compare


def expected_metrics(pool: Pool, budget: int, strategy: str, **settings: Any) -> dict[str, Any]:
    """Metrics of A/B computed with the core: the library runs ``strategy`` with the same
    settings (a baseline's F at AdaGReS's λ, topk_same_k's k from AdaGReS: its rule)."""
    args = (pool.query_embedding, pool.embeddings, pool.token_counts, budget)
    selection = baselines.run(strategy, *args, settings=Settings(**settings), texts=pool.texts)
    return evaluate(
        selection,
        pool.embeddings,
        gold=gold_of(pool),
        answers=pool.answers or None,
        texts=pool.texts,
    ).as_dict()


def check_metrics(row: Any, expected: dict[str, Any], columns: list[str]) -> None:
    for column in columns:
        value = expected[column]
        if column == "budget_use":  # every table shows a share in percent
            value = 100.0 * value
        if isinstance(value, float):
            assert row[column] == pytest.approx(value, abs=1e-9, rel=1e-12), column
        else:
            assert row[column] == value, column


@pytest.mark.parametrize("pool_name", ["medium", DEMO])
def test_compare_metrics_equal_evaluate(data_dir, pool_name):
    budget = 1000
    at = page(COMPARE, pool=pool_name, budget=str(budget))
    no_error(at)
    pool = pool_of(data_dir, pool_name)
    table = frame(at, "config")
    assert list(table["config"]) == ["A", "B"]
    columns = ["size", "tokens_used", "budget_use", "objective", "relevance_sum",
               "redundancy_mean", "redundancy_max", "near_duplicates"]  # fmt: skip
    if pool_name == DEMO:  # gold labels and answers
        columns += ["iou", "recall", "precision", "answer_found"]
    else:
        assert "iou" not in table.columns and "answer_found" not in table.columns
        assert any("no gold labels" in info.value for info in at.info)
    check_metrics(table.iloc[0], expected_metrics(pool, budget, "adagres"), columns)
    check_metrics(table.iloc[1], expected_metrics(pool, budget, "topk_same_k"), columns)
    # The pick lists and the set difference agree with the selections.
    a = adagres_selection(pool, budget)
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


def test_compare_smaller_budget_and_other_settings_in_b(data_dir):
    at = page(COMPARE, pool="medium", budget="1500")
    no_error(at)
    assert at.selectbox(key="cmp_a_strategy").value == "adagres"
    assert at.selectbox(key="cmp_b_strategy").value == "topk_same_k"
    assert at.number_input(key="cmp_b_budget").value == 1500
    at.number_input(key="cmp_b_budget").set_value(300).run()
    no_error(at)
    table = frame(at, "config")
    a_tokens, b_tokens = table["tokens_used"]
    assert b_tokens <= 300 < a_tokens <= 1500
    # B as MMR with a manual λ: the metrics follow.
    at.selectbox(key="cmp_b_strategy").set_value("mmr").run()
    at.radio(key="cmp_b_lam_mode").set_value("manual").run()
    at.number_input(key="cmp_b_lam").set_value(0.3).run()
    no_error(at)
    pool = pool_of(data_dir, "medium")
    row = frame(at, "config").iloc[1]
    columns = ["size", "tokens_used", "objective", "relevance_sum", "redundancy_mean"]
    check_metrics(row, expected_metrics(pool, 300, "mmr", lam=0.3), columns)
    # A follows the sidebar when the sidebar changes.
    at.number_input(key="sb_budget").set_value(700).run()
    no_error(at)
    assert at.number_input(key="cmp_a_budget").value == 700
    assert frame(at, "config")["tokens_used"].iloc[0] <= 700


@pytest.mark.parametrize("pool_name", ["medium", DEMO])
def test_budget_sweep(data_dir, pool_name):
    at = page(COMPARE, pool=pool_name)
    no_error(at)
    pool = pool_of(data_dir, pool_name)
    rows = frame(at, "error")
    high = int(pool.token_counts.sum())
    budgets = sorted({round(float(x)) for x in np.linspace(100, min(2000, high), 10)})
    assert sorted(set(rows["budget"])) == budgets
    assert set(rows["strategy"]) == {"adagres", "topk_same_k", "topk_budget", "mmr"}
    assert rows["error"].isna().all()
    assert (rows["tokens_used"] <= rows["budget"]).all()
    # AdaGReS's row at each budget is the selection at that budget.
    for _, row in rows[rows["strategy"] == "adagres"].iterrows():
        selection = adagres_selection(pool, int(row["budget"]), trace=False)
        assert row["size"] == selection.size
        assert row["objective"] == pytest.approx(selection.objective, abs=1e-9)
    # The figure draws the chosen metric per strategy.
    at.selectbox(key="cmp_sweep_metric").set_value("tokens_used").run()
    no_error(at)
    figure = figures(at)[-1]
    for trace in figure["data"]:
        mine = rows[rows["strategy"] == trace["name"]].sort_values("budget")
        assert list(array(trace["x"])) == list(mine["budget"])
        assert list(array(trace["y"])) == list(mine["tokens_used"])
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
