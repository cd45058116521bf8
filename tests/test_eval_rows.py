"""The evaluation harness's runs: serial = parallel, the rows against
``adagres.core.metrics.evaluate`` on the same selections, exact against the greedy and the
paper's bound, and the aggregates, results file and figure points built from the rows."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from adagres import Settings, SolverError, metrics
from adagres.eval import cases as harness_cases
from adagres.eval import harness, results, strategies
from adagres.eval.aggregate import metric_values
from adagres.eval.frontier import tradeoff_points
from adagres.eval.run import ROW_COLUMNS, evaluate_cases
from adagres.figures.evaluation import tradeoff_figure
from adagres.pools.pool import Chunk, Pool


@pytest.fixture(scope="module")
def demo_run(demo):
    config = harness.Config(
        pools=("demo",), budgets=(300, 900), workers=1, resamples=500, exact_queries=0
    )
    return harness.run(config, cases=demo)


def without_time(rows):
    return [{k: v for k, v in row.items() if k != "time_ms"} for row in rows]


# --------------------------------------------------------------------------- runs


def test_serial_and_parallel_runs_give_the_same_rows(demo):
    # Every strategy but exact, whose time-limited search proves an optimum or not
    # depending on the machine's speed (its rows are checked by the next tests).
    chosen = [s for s in strategies.resolve(None) if s.name != "exact"]
    serial = evaluate_cases(demo, chosen, [300, 1200], workers=1)
    parallel = evaluate_cases(demo, chosen, [300, 1200], workers=2)
    assert len(serial) == len(demo) * len(chosen) * 2
    assert without_time(parallel) == without_time(serial)  # exact: same bits


def test_rows_are_the_metrics_of_the_same_selections(demo, demo_run):
    by_id = {case.query_id: case for case in demo}
    for row in demo_run["rows"]:
        if not row["solved"] or row["strategy"] == "exact":  # exact: see the next test
            continue
        case = by_id[row["query_id"]]
        pool = case.pool
        entry = strategies.get(row["strategy"])
        selection = entry.fn(pool.prepared, row["budget"], pool.texts)
        # An independent path: raw embeddings, gold by chunk id.
        expected = metrics.evaluate(
            selection,
            pool.embeddings,
            gold=list(pool.gold_ids),
            answers=pool.answers,
            texts=pool.texts,
            ids=pool.ids,
        )
        assert row["size"] == expected.size and row["tokens_used"] == expected.tokens_used
        assert row["answer_found"] == expected.answer_found
        assert row["near_duplicates"] == expected.near_duplicates
        for name, value in (
            ("gold_recall", expected.recall),
            ("gold_precision", expected.precision),
            ("iou", expected.iou),
            ("redundancy_mean", expected.redundancy_mean),
            ("redundancy_max", expected.redundancy_max),
            ("objective", expected.objective),
        ):
            assert row[name] == pytest.approx(value, abs=1e-6), (row["strategy"], name)
        assert row["tokens_used"] <= row["budget"]
        # what packing did adds up: the picks apart, less what the budget paid
        apart = sum(pool.chunks[i].tokens for i in selection.indices)
        assert row["tokens_saved"] == apart - row["tokens_used"] >= 0
        assert row["stitched"] <= max(0, row["size"] - 1)
        assert (row["left_out"] == 0) == (row["left_out_words"] == 0)


def tiny_case() -> harness_cases.Case:
    """Ten chunks of 20-40 tokens: small enough for the exact solver at any budget."""
    rng = np.random.default_rng(4)
    vectors = rng.normal(size=(11, 16))
    chunks = tuple(
        Chunk(f"c{i}", f"text {i}", tokens=int(20 + 2 * i), gold=i in (1, 4)) for i in range(10)
    )
    pool = Pool(
        "q",
        chunks,
        raw_embeddings=vectors[:10] + vectors[10],
        raw_query_embedding=vectors[10],
        answers=("text 4",),
    )
    return harness_cases.Case("tiny", "q0", pool, {})


def packing_case() -> harness_cases.Case:
    """Two windows of one text (w0-w59 and w40-w99: 20 words shared) and two leaflets that
    open with the same 11-word sentence, by relevance in that order; tokens by "words"
    (a word or a punctuation mark: each leaflet 15 words + 2 full stops = 17)."""
    a = " ".join(f"w{i}" for i in range(60)) + " "
    b = " ".join(f"w{i}" for i in range(40, 100))
    keep = "Keep the tablets out of the sight and reach of children."
    c, d = f"{keep} Take one a day.", f"{keep} Store below thirty degrees."
    chunks = (
        Chunk("a", a, tokens=60, source="doc", extra={"offset": 0}),
        Chunk("b", b, tokens=60, source="doc", extra={"offset": a.index("w40 ")}),
        Chunk("c", c, tokens=17, source="leaflet 1"),
        Chunk("d", d, tokens=17, source="leaflet 2"),
    )
    rng = np.random.default_rng(3)
    query = rng.normal(size=16)
    query /= np.linalg.norm(query)
    vectors = []
    for r in (0.9, 0.85, 0.8, 0.75):
        noise = rng.normal(size=16)
        noise -= noise @ query * query
        noise /= np.linalg.norm(noise)
        vectors.append(r * query + np.sqrt(1 - r * r) * noise)
    pool = Pool(
        "q",
        chunks,
        raw_embeddings=np.array(vectors),
        raw_query_embedding=query,
        tokenizer="words",
        answers=("store below thirty degrees",),
    )
    return harness_cases.Case("tiny", "q0", pool, {})


def test_the_rows_say_what_packing_did_by_hand():
    """top-k pays for the 20 shared words and the shared sentence again: 154 tokens, 31 of
    150 words repeated (20 + 11). Packed, the windows are stitched (100 tokens instead of
    120) and the second leaflet's first sentence is left out: "[…] Store below thirty
    degrees." costs 8 tokens instead of 17. Saved: 20 + 9 = 29 tokens, 11 words left out,
    nothing repeated, and the answer is still there."""
    rows = evaluate_cases([packing_case()], strategies.resolve(["packed_topk"]), [1000], workers=1)
    by_name = {r["strategy"]: r for r in rows}
    fields = ("size", "tokens_used", "stitched", "left_out", "left_out_words", "tokens_saved")
    assert [by_name["topk_budget"][f] for f in fields] == [4, 154, 0, 0, 0, 0]
    assert by_name["topk_budget"]["repeated_text"] == pytest.approx(31 / 150)
    assert [by_name["packed_topk"][f] for f in fields] == [4, 125, 1, 1, 11, 29]
    assert by_name["packed_topk"]["repeated_text"] == 0.0
    assert by_name["packed_topk"]["answer_found"] and by_name["topk_budget"]["answer_found"]


def test_exact_is_never_below_a_strategy_with_the_same_settings():
    rows = evaluate_cases([tiny_case()], strategies.resolve(None), [60, 120], workers=1)
    same = [
        n for n, e in strategies.registered().items() if e.settings == Settings() and n != "exact"
    ]
    by_key = {(r["strategy"], r["budget"]): r for r in rows}
    for budget in (60, 120):
        exact = by_key["exact", budget]
        assert exact["solved"], exact["error"]
        # F at the λ of Settings(): the optimum bounds every run reported at those terms.
        for name in same:
            assert exact["objective"] >= by_key[name, budget]["objective"] - 1e-9, name


def test_the_greedy_against_the_optimum_with_the_papers_bound():
    """The report's optimality numbers are F(greedy)/F(opt) of the same rows, and the
    paper's bound is (1 - 1/e)·OPT - k·ε/e with δ, k, ε of the pool (brute force here)."""
    import itertools
    import math

    from adagres.eval.optimality import GREEDY, optimality_markdown, optimality_rows

    case = tiny_case()
    rows = evaluate_cases([case], strategies.resolve([GREEDY, "exact"]), [60, 120], workers=1)
    by_key = {(r["strategy"], r["budget"]): r for r in rows}
    unit = case.pool.prepared.chunks.astype(float)
    delta = max(float(unit[i] @ unit[j]) for i, j in itertools.combinations(range(10), 2))
    tokens = [c.tokens for c in case.pool.chunks if c.tokens is not None]
    assert len(tokens) == len(case.pool.chunks)  # the case's pool is counted
    for budget in (60, 120):
        exact = by_key["exact", budget]
        k = max(
            len(s)
            for n in range(11)
            for s in itertools.combinations(range(10), n)
            if sum(tokens[i] for i in s) <= budget
        )
        epsilon = exact["lam"] * k * max(0.0, delta)
        expected = (1 - 1 / math.e) * exact["objective"] - k * epsilon / math.e
        # δ comes from float32 products there, from float64 here: 1e-6 relative
        assert exact["paper_bound"] == pytest.approx(expected, rel=1e-6)
        assert by_key[GREEDY, budget]["paper_bound"] is None
    table = optimality_rows(rows, "tiny", [60, 120])
    for line, budget in zip(table, (60, 120), strict=True):
        ratio = by_key[GREEDY, budget]["objective"] / by_key["exact", budget]["objective"]
        assert line["solved"] == 1 and line["mean_ratio"] == pytest.approx(ratio, rel=1e-12)
        assert line["optimal_share"] == (1.0 if ratio >= 1 - 1e-9 else 0.0)
        # A proven optimum is its own upper bound: the proven floor is the ratio itself.
        assert by_key["exact", budget]["upper_bound"] == by_key["exact", budget]["objective"]
        assert line["bounded"] == 1 and line["min_proven"] == pytest.approx(ratio, rel=1e-12)
    document = {"stamp": {"config": {"budgets": [60, 120]}}, "corpora": {"tiny": {}}, "rows": rows}
    text = "\n".join(optimality_markdown(document))
    assert (
        "## The greedy against the optimum" in text
        and f"| 60 | 1 | {table[0]['mean_ratio']:.3f} |" in text
    )


def test_a_stopped_exact_run_keeps_its_upper_bound_and_bounds_the_ratio():
    from adagres.eval.optimality import GREEDY, optimality_rows
    from adagres.eval.run import Task, evaluate_task
    from adagres.optimum.exact import ExactResult

    stopped = ExactResult((0,), 1.5, 2.5, False, 7, 10.0, 10, 10, 3)

    def out_of_time(pool, budget, texts):
        raise SolverError("exact: no proven optimum within 10 s (…)", result=stopped)

    chosen = {s.name: s for s in strategies.resolve([GREEDY, "exact"])}
    exact = dataclasses.replace(chosen["exact"], fn=out_of_time)
    rows = evaluate_task(Task.of(tiny_case()), [chosen[GREEDY], exact], [60])
    row = next(r for r in rows if r["strategy"] == "exact")
    assert (row["solved"], row["upper_bound"], row["objective"]) == (False, 2.5, None)
    assert row["error"] == "exact: no proven optimum within 10 s"
    line = optimality_rows(rows, "tiny", [60])[0]
    found = next(r for r in rows if r["strategy"] == GREEDY)["objective"]
    # Not solved, so not in the measured ratios; bounded: F(greedy) / 2.5 <= F(greedy)/OPT.
    assert line["solved"] == 0 and line["mean_ratio"] is None
    assert line["bounded"] == 1 and line["min_proven"] == pytest.approx(found / 2.5, rel=1e-12)


def test_aggregates_are_the_means_and_counts_of_the_rows(demo_run):
    rows, queries = demo_run["rows"], demo_run["queries"]
    assert {q["query_id"] for q in queries} == {
        "biomedical_redundant",
        "distinct_topics",
        "open_domain_scattered",
    }
    for entry in demo_run["aggregates"]:
        mine = {
            r["query_id"]: r
            for r in rows
            if (r["strategy"], r["budget"]) == (entry["strategy"], entry["budget"])
        }
        base = {
            r["query_id"]: r
            for r in rows
            if (r["strategy"], r["budget"]) == ("topk_budget", entry["budget"])
        }
        found = [
            float(mine[q["query_id"]]["answer_found"])
            for q in queries
            if q["answer_in_pool"] and mine[q["query_id"]]["solved"]
        ]
        recall = entry["metrics"]["answer_recall"]
        if found:
            assert recall["mean"] == pytest.approx(np.mean(found))
            assert recall["low"] <= recall["mean"] <= recall["high"]
        else:
            assert recall["mean"] is None
        pairs = [
            (mine[q]["answer_found"], base[q]["answer_found"]) for q in mine if mine[q]["solved"]
        ]
        wtl = entry["wtl"]["topk_budget"]["answer_recall"]
        assert wtl == {
            "wins": sum(a > b for a, b in pairs),
            "ties": sum(a == b for a, b in pairs),
            "losses": sum(a < b for a, b in pairs),
        }
    values = metric_values(
        {r["query_id"]: r for r in rows if r["strategy"] == "mmr" and r["budget"] == 300},
        queries,
        "gold_recall",
    )
    assert values.shape == (3,) and not np.isnan(values).any()


def test_results_json_round_trip(demo_run, tmp_path):
    path = results.write_results(
        tmp_path / "results.json",
        demo_run,
        row_columns=ROW_COLUMNS,
        query_columns=tuple(demo_run["queries"][0]),
    )
    back = results.read_results(path)
    assert len(back["rows"]) == len(demo_run["rows"])

    def key(row):
        return row["corpus"], row["query_id"], row["strategy"], row["budget"]

    stored = {key(row): row for row in back["rows"]}
    for theirs in demo_run["rows"]:
        mine = stored[key(theirs)]
        for name in ROW_COLUMNS:
            if isinstance(theirs[name], float):
                assert mine[name] == pytest.approx(theirs[name], abs=5e-5)  # 4 decimals kept
            else:
                assert mine[name] == theirs[name]
    assert back["aggregates"][0]["metrics"]["answer_recall"] == results.rounded(
        demo_run["aggregates"][0]["metrics"]["answer_recall"]
    )
    table = results.strategy_table(back, "demo", 300)
    assert [r["strategy"] for r in table] == list(back["strategies"])


def test_figure_points_are_the_aggregates(demo_run):
    points = tradeoff_points(demo_run, "demo")
    entry = next(e for e in demo_run["aggregates"] if (e["strategy"], e["budget"]) == ("mmr", 900))
    point = next(p for p in points if (p["strategy"], p["budget"]) == ("mmr", 900))
    assert point["y"] == entry["metrics"]["answer_recall"]["mean"]
    assert point["x"] == entry["delta"]["redundancy_mean"]["mean"]
    assert next(p for p in points if p["strategy"] == "topk_budget")["x"] == 0.0
    built = tradeoff_figure(points, corpus="demo", label=results.primary_label(demo_run, "demo"))
    figure = built.to_dict()
    assert len(figure["data"]) == len(points)
    assert [t["y"][0] for t in figure["data"]] == [p["y"] for p in points]
    # Each budget's markers and its x = 0 line sit in that budget's panel (row by row).
    budgets = sorted({p["budget"] for p in points})
    for trace, p in zip(figure["data"], points, strict=True):
        panel = built.get_subplot(
            budgets.index(p["budget"]) // 2 + 1, budgets.index(p["budget"]) % 2 + 1
        )
        assert (trace.get("xaxis", "x"), trace.get("yaxis", "y")) == (
            panel.xaxis.plotly_name.replace("axis", ""),
            panel.yaxis.plotly_name.replace("axis", ""),
        )
    lines = figure["layout"]["shapes"]
    assert [s["xref"] for s in lines] == [
        "x" if i == 0 else f"x{i + 1}" for i in range(len(budgets))
    ]
    assert all(s["x0"] == s["x1"] == 0 and s["yref"].endswith("domain") for s in lines)
