"""The evaluation harness: statistics on hand cases, the registry, serial = parallel, pool-set
files, and the rows against ``adagres.core.metrics.evaluate`` on the same selections."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np
import pytest

from adagres import Settings, metrics
from adagres.core.baselines import run_prepared
from adagres.errors import InputError
from adagres.eval import harness, poolsets, report, results, stats, strategies
from adagres.eval.__main__ import main
from adagres.eval.aggregate import metric_values
from adagres.eval.run import NOT_RUN, ROW_COLUMNS, evaluate_cases
from adagres.pools.io import save_pool, save_pools
from adagres.pools.pool import Chunk, Pool

DEMO = Path(__file__).resolve().parents[1] / "data"
FLOATS = (
    "budget_use",
    "objective",
    "lam",
    "iou",
    "gold_recall",
    "gold_precision",
    "redundancy_mean",
    "redundancy_max",
)


@pytest.fixture(scope="module")
def demo():
    return poolsets.demo_cases(DEMO)


@pytest.fixture(scope="module")
def demo_run(demo):
    config = harness.Config(
        pools=("demo",), budgets=(300, 900), workers=1, resamples=500, exact_queries=0
    )
    return harness.run(config, cases=demo)


def without_time(rows):
    return [{k: v for k, v in row.items() if k != "time_ms"} for row in rows]


# --------------------------------------------------------------------------- statistics


def test_bootstrap_interval_of_a_hand_case():
    # n = 4 values 0,0,0,1: a resample mean is 0 with probability (3/4)^4 = 0.32 (so the
    # 2.5 % quantile is 0), 1 with probability 1/256 = 0.004 and >= 0.75 with 0.051 (so the
    # 97.5 % quantile is 0.75).
    ci = stats.bootstrap_ci([0.0, 0.0, 0.0, 1.0], rng=np.random.default_rng(3), resamples=20000)
    assert (ci.mean, ci.low, ci.high, ci.n) == (0.25, 0.0, 0.75, 4)
    constant = stats.bootstrap_ci([0.4, 0.4, np.nan], rng=np.random.default_rng(0))
    assert (constant.mean, constant.low, constant.high, constant.n) == (0.4, 0.4, 0.4, 2)
    empty = stats.bootstrap_ci([np.nan], rng=np.random.default_rng(0))
    assert (empty.mean, empty.n) == (None, 0)


def test_bootstrap_matches_the_normal_interval_on_many_queries():
    values = (np.random.default_rng(11).random(900) < 0.4).astype(float)
    ci = stats.bootstrap_ci(values, rng=stats.stream(7, "x", 300), resamples=4000)
    half = 1.96 * values.std() / np.sqrt(values.size)
    assert ci.low == pytest.approx(values.mean() - half, abs=0.006)
    assert ci.high == pytest.approx(values.mean() + half, abs=0.006)
    again = stats.bootstrap_ci(values, rng=stats.stream(7, "x", 300), resamples=4000)
    assert again == ci  # seeded: the same interval on a rerun


def test_wins_ties_losses_of_a_hand_case():
    wtl = stats.wins_ties_losses(
        [1.0, 0.0, 0.5, None, 1.0, float("nan")], [0.0, 0.0, 0.7, 1.0, 1.0, 0.0]
    )
    assert (wtl.wins, wtl.ties, wtl.losses) == (1, 2, 1)
    with pytest.raises(InputError, match="3 values, 2 baseline"):
        stats.wins_ties_losses([1, 2, 3], [1, 2])


def test_sample_ids_split_is_disjoint_seeded_and_limited():
    ids = [f"q{i}" for i in range(100)]
    dev = poolsets.sample_ids(ids, seed=5, split="dev", held_out=0.7)
    test = poolsets.sample_ids(ids, seed=5, split="test", held_out=0.7)
    assert (len(dev), len(test)) == (30, 70)
    assert set(dev).isdisjoint(test) and sorted(dev + test, key=ids.index) == ids
    assert poolsets.sample_ids(ids, seed=5, split="test", held_out=0.7) == test
    few = poolsets.sample_ids(ids, seed=5, split="test", held_out=0.7, limit=9)
    assert len(few) == 9 and set(few) <= set(test)
    assert poolsets.sample_ids(ids, seed=6, split="test", held_out=0.7) != test


# --------------------------------------------------------------------------- registry


def module_level_strategy(pool, budget, texts):
    """The two most relevant chunks that fit, a strategy another module could register."""
    return run_prepared("topk_same_k", pool, budget, Settings(), k=2, trace=False)


def test_registry_has_every_configuration_and_takes_new_ones(demo):
    names = strategies.registered()
    for formula in ("paper", "derived"):
        for policy in ("skip", "stop", "ratio", "fill"):
            entry = names[f"adagres_{formula}_{policy}"]
            assert (entry.core, entry.settings) == (
                "adagres",
                Settings(formula=formula, policy=policy),
            )
    assert [names[f"adagres_lam_{v}"].settings.lam for v in ("0.55", "0.65", "0.7")] == [
        0.55,
        0.65,
        0.7,
    ]
    for name in ("topk_same_k", "topk_budget", "mmr", "reference_code", "exact"):
        assert names[name].core == name
    from adagres.core.variants import VARIANTS

    assert all(n in names or f"variant_{n}" in names for n in VARIANTS)
    assert [s.name for s in strategies.resolve(["mmr"])] == ["topk_same_k", "topk_budget", "mmr"]

    strategies.register("two_best", module_level_strategy)
    try:
        with pytest.raises(InputError, match="registered already"):
            strategies.register("two_best", module_level_strategy)
        chosen = strategies.resolve(["two_best"])
        rows = evaluate_cases(demo[:1], chosen, [600], workers=1)
        mine = next(r for r in rows if r["strategy"] == "two_best")
        direct = module_level_strategy(demo[0].pool.prepared, 600, demo[0].pool.texts)
        assert mine["size"] == 2 and mine["tokens_used"] == direct.tokens_used
    finally:
        strategies.unregister("two_best")
    assert "two_best" not in strategies.registered()
    with pytest.raises(InputError, match="unknown strategy 'two_best'"):
        strategies.get("two_best")


def test_exact_runs_on_the_first_queries_and_a_refusal_is_a_row(demo):
    rows = evaluate_cases(demo, strategies.resolve(["exact"]), [600], workers=1, exact_queries=1)
    exact = [r for r in rows if r["strategy"] == "exact"]
    assert [r["query_id"] for r in exact] == [c.query_id for c in demo]
    # An 88-chunk pool: solved, or refused / out of time, recorded and not raised.
    first = exact[0]
    assert first["solved"] or (first["error"].startswith("exact: ") and first["size"] is None)
    assert [r["error"] for r in exact[1:]] == [NOT_RUN, NOT_RUN]  # beyond exact_queries
    assert all(r["solved"] for r in rows if r["strategy"] != "exact")


def test_a_lambda_cannot_go_to_a_worker_and_says_so(demo):
    strategies.register(
        "inline", lambda pool, budget, texts: module_level_strategy(pool, budget, texts)
    )
    try:
        with pytest.raises(InputError, match="'inline' cannot be sent to a worker"):
            evaluate_cases(demo, strategies.resolve(["inline"]), [300], workers=2)
    finally:
        strategies.unregister("inline")


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


def tiny_case() -> poolsets.Case:
    """Ten chunks of 20-40 tokens: small enough for the exact solver at any budget."""
    rng = np.random.default_rng(4)
    vectors = rng.normal(size=(11, 16))
    chunks = tuple(Chunk(f"c{i}", f"text {i}", tokens=int(20 + 2 * i), gold=i in (1, 4))
                   for i in range(10))  # fmt: skip
    pool = Pool("q", chunks, raw_embeddings=vectors[:10] + vectors[10],
                raw_query_embedding=vectors[10], answers=("text 4",))  # fmt: skip
    return poolsets.Case("tiny", "q0", pool, {})


def test_exact_is_never_below_a_strategy_with_the_same_settings():
    rows = evaluate_cases([tiny_case()], strategies.resolve(None), [60, 120], workers=1)
    same = [n for n, e in strategies.registered().items()
            if e.settings == Settings() and n != "exact"]  # fmt: skip
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
    tokens = [c.tokens for c in case.pool.chunks]
    for budget in (60, 120):
        exact = by_key["exact", budget]
        k = max(len(s) for n in range(11) for s in itertools.combinations(range(10), n)
                if sum(tokens[i] for i in s) <= budget)  # fmt: skip
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
    document = {"stamp": {"config": {"budgets": [60, 120]}}, "corpora": {"tiny": {}}, "rows": rows}
    text = "\n".join(optimality_markdown(document))
    assert (
        "## The greedy against the optimum" in text
        and f"| 60 | 1 | {table[0]['mean_ratio']:.3f} |" in text
    )


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
    points = report.tradeoff_points(demo_run, "demo")
    entry = next(e for e in demo_run["aggregates"] if (e["strategy"], e["budget"]) == ("mmr", 900))
    point = next(p for p in points if (p["strategy"], p["budget"]) == ("mmr", 900))
    assert point["y"] == entry["metrics"]["answer_recall"]["mean"]
    assert point["x"] == entry["delta"]["redundancy_mean"]["mean"]
    assert next(p for p in points if p["strategy"] == "topk_budget")["x"] == 0.0
    figure = report.tradeoff_figure(demo_run, "demo").to_dict()
    assert len(figure["data"]) == len(points)
    assert [t["y"][0] for t in figure["data"]] == [p["y"] for p in points]


# --------------------------------------------------------------------------- pool-set files


def test_a_pool_set_as_jsonl_or_folder_round_trips(demo, tmp_path):
    pools = [case.pool for case in demo]
    save_pools(pools, tmp_path / "set.jsonl")
    folder = tmp_path / "folder"
    folder.mkdir()
    for case in demo:
        save_pool(case.pool, folder / f"{case.query_id}.json")
    for source in (tmp_path / "set.jsonl", folder):
        cases = poolsets.path_cases(source)
        assert [c.pool.fingerprint for c in cases] == [p.fingerprint for p in pools]
        assert [c.pool.gold_ids for c in cases] == [p.gold_ids for p in pools]
        rebuilt = poolsets.rebuild(json.loads(json.dumps(cases[1].source)))
        assert rebuilt.fingerprint == pools[1].fingerprint
    assert [c.query_id for c in poolsets.path_cases(tmp_path / "set.jsonl")] == [
        "set:0",
        "set:1",
        "set:2",
    ]


def test_the_cli_runs_a_pool_file_and_writes_the_report(demo, tmp_path, capsys):
    save_pools([case.pool for case in demo], tmp_path / "mine.jsonl")
    status = main(
        [
            "--pools",
            str(tmp_path / "mine.jsonl"),
            "--budgets",
            "400",
            "--strategies",
            "mmr,adagres_derived_fill",
            "--workers",
            "1",
            "--no-png",
            "--out",
            str(tmp_path / "reports"),
            "--name",
            "mine",
        ]
    )
    assert status == 0
    folder = tmp_path / "reports" / "mine"
    document = results.read_results(folder / "results.json")
    assert len(document["rows"]) == 3 * 4  # 3 pools × (2 strategies + 2 baselines) × 1 budget
    assert (tmp_path / "reports" / report.PLOTLY_JS).stat().st_size > 1_000_000
    html = (folder / "tradeoff_mine.html").read_text()
    assert f'src="../{report.PLOTLY_JS}"' in html and "cdn.plot.ly" not in html
    text = (folder / "report.md").read_text()
    assert "## Where each strategy loses or ties" in text and "- mmr against topk_budget" in text
    assert main(["--pools", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path)]) == 2
    assert "no such pool set" in capsys.readouterr().err


@pytest.mark.data
def test_drug_queries_mark_the_reviews_of_that_drug_and_condition(tmp_path, fake_encoder):
    queries = poolsets.drug_queries(3)
    # 65 (drug, condition) pairs have 3+ reviews; one of them has no condition named.
    assert len(queries) == 64 and next(iter(queries)) == (
        "Ethinyl estradiol / norethindrone | Birth Control"
    )
    (case,) = poolsets.drug_cases([next(iter(queries))], cache_dir=tmp_path)
    from adagres.pools import datasets

    label = {r["id"]: (r["drug"], r["condition"]) for r in datasets.drug_review_rows()}
    for chunk in case.pool.chunks:
        wanted = label[chunk.metadata["doc_id"]] == queries[case.query_id]
        assert chunk.gold is wanted
    assert case.answers == () and len(case.pool) == 60 and case.gold_positions
    rebuilt = poolsets.rebuild(case.source, cache_dir=tmp_path)
    assert rebuilt.fingerprint == case.pool.fingerprint and rebuilt.gold_ids == case.pool.gold_ids


@pytest.mark.slow
@pytest.mark.data
@pytest.mark.model
def test_quick_run_end_to_end(tmp_path):
    status = main(["--quick", "--out", str(tmp_path)])
    assert status == 0
    document = results.read_results(tmp_path / "quick" / "results.json")
    assert list(document["corpora"]) == ["demo", "fanoutqa"]
    assert len(document["rows"]) == 8 * len(document["strategies"])  # 3 + 5 queries, 1 budget
    fanout = [q for q in document["queries"] if q["corpus"] == "fanoutqa"]
    assert all(q["n_chunks"] == 60 and q["n_gold"] >= 1 for q in fanout)
    source = fanout[0]["source"]
    assert source["chunking"] == {
        "size": 64,
        "overlap": 16,
        "top_n": 60,
        "articles": 40,
        "min_reviews": 3,
        "tokenizer": "cl100k",
    }
    rebuilt = poolsets.rebuild(source)
    assert len(rebuilt) == 60 and sum(c.gold for c in rebuilt.chunks) == fanout[0]["n_gold"]
    text = (tmp_path / "quick" / "report.md").read_text()
    assert text.count("### fanoutqa at 600 tokens") == 1
    section = text.split("## Where each strategy loses or ties")[1].split("## Notes")[0]
    lines = [line for line in section.splitlines() if line.startswith("- ")]
    assert len(lines) == 2 * (len(document["strategies"]) - 1)  # all but topk_budget, 2 corpora
    for name in document["strategies"]:
        if name != "topk_budget":
            assert sum(line.split()[1].rstrip(":") == name for line in lines) == 2, name
    png = tmp_path / "quick" / "tradeoff_fanoutqa.png"
    assert png.is_file() or "PNG figures not written" in text


def test_the_registry_entries_pickle_by_reference():
    import pickle

    for entry in strategies.registered().values():
        again = pickle.loads(pickle.dumps(entry.fn))
        assert isinstance(again, functools.partial)
