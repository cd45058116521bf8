"""The evaluation harness's pool-set files and command line: a set as JSON Lines or a folder,
the CLI on a pool file and its report, the drug-review queries and the quick run end to end."""

from __future__ import annotations

import json

import pytest

from adagres.eval import cases as harness_cases
from adagres.eval import report, results
from adagres.eval.__main__ import main
from adagres.pools.io import save_pool, save_pools

# --------------------------------------------------------------------------- pool-set files


def test_a_pool_set_as_jsonl_or_folder_round_trips(demo, tmp_path):
    pools = [case.pool for case in demo]
    save_pools(pools, tmp_path / "set.jsonl")
    folder = tmp_path / "folder"
    folder.mkdir()
    for case in demo:
        save_pool(case.pool, folder / f"{case.query_id}.json")
    for source in (tmp_path / "set.jsonl", folder):
        cases = harness_cases.path_cases(source)
        assert [c.pool.fingerprint for c in cases] == [p.fingerprint for p in pools]
        assert [c.pool.gold_ids for c in cases] == [p.gold_ids for p in pools]
        rebuilt = harness_cases.rebuild(json.loads(json.dumps(cases[1].source)))
        assert rebuilt.fingerprint == pools[1].fingerprint
    assert [c.query_id for c in harness_cases.path_cases(tmp_path / "set.jsonl")] == [
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
    queries = harness_cases.drug_queries(3)
    # 65 (drug, condition) pairs have 3+ reviews; one of them has no condition named.
    assert len(queries) == 64 and next(iter(queries)) == (
        "Ethinyl estradiol / norethindrone | Birth Control"
    )
    (case,) = harness_cases.drug_cases([next(iter(queries))], cache_dir=tmp_path)
    from adagres.corpora import datasets

    label = {r["id"]: (r["drug"], r["condition"]) for r in datasets.drug_review_rows()}
    for chunk in case.pool.chunks:
        assert chunk.metadata is not None  # each review chunk names its review
        wanted = label[chunk.metadata["doc_id"]] == queries[case.query_id]
        assert chunk.gold is wanted
    assert case.answers == () and len(case.pool) == 60 and case.gold_positions
    rebuilt = harness_cases.rebuild(case.source, cache_dir=tmp_path)
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
    rebuilt = harness_cases.rebuild(source)
    assert len(rebuilt) == 60 and sum(bool(c.gold) for c in rebuilt.chunks) == fanout[0]["n_gold"]
    text = (tmp_path / "quick" / "report.md").read_text()
    assert text.count("**fanoutqa at 600 tokens**") == 1  # folded with the other tables
    section = text.split("## Where each strategy loses or ties")[1].split("## Notes")[0]
    lines = [line for line in section.splitlines() if line.startswith("- ")]
    assert len(lines) == 2 * (len(document["strategies"]) - 1)  # all but topk_budget, 2 corpora
    for name in document["strategies"]:
        if name != "topk_budget":
            assert sum(line.split()[1].rstrip(":") == name for line in lines) == 2, name
    png = tmp_path / "quick" / "frontier_fanoutqa.png"
    assert png.is_file() or "PNG figures not written" in text
