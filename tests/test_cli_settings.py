"""The CLI, the library and the app's core path give the same picks and F for one Settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import adagres
from adagres import baselines
from adagres.cli import main

DEMO = Path(__file__).parents[1] / "data" / "biomedical_redundant.json"


@pytest.mark.parametrize("strategy", baselines.STRATEGIES)
def test_cli_equals_the_library_for_every_strategy(strategy, capsys):
    budget = 900
    args = ["select", str(DEMO), "--budget", str(budget), "--strategy", strategy,
            "--policy", "fill", "--scale", "0.8", "--offset", "0.01", "--floor", "0.2",
            "--calibration-top-n", "40", "--json"]  # fmt: skip
    pool = adagres.load_pool(DEMO)
    settings = adagres.Settings(policy="fill", scale=0.8, offset=0.01, redundancy_floor=0.2,
                                calibration_top_n=40)  # fmt: skip
    arrays = (pool.query_embedding, pool.embeddings, pool.token_counts, budget)
    if strategy == "exact":  # 88 chunks fit: both refuse, with the same one-line message
        with pytest.raises(adagres.SolverError) as refused:
            baselines.run(strategy, *arrays, settings=settings)
        assert main(args) == 2
        assert capsys.readouterr().err == f"adagres: error: {refused.value}\n"
        return
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    expected = baselines.run(strategy, *arrays, settings=settings, texts=pool.texts)
    assert out["selected"] == [pool.ids[i] for i in expected.indices]
    assert out["objective"] == pytest.approx(expected.objective, rel=1e-12, abs=1e-12)
    assert out["lam"] == pytest.approx(expected.lam, rel=1e-12)
    assert out["settings"] == settings.as_dict()
    if strategy == "topk_same_k":  # k is the size of AdaGReS with the same policy (fill)
        ada = adagres.select(pool.query_embedding, pool.embeddings, pool.token_counts, budget,
                             settings=settings)  # fmt: skip
        assert out["params"]["k"] == ada.size == len(out["selected"])
