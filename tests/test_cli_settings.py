"""The CLI, the library and the app's core path give the same picks and F for one Settings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reference import select_inputs

import adagres
from adagres import baselines
from adagres.cli import main

DEMO = Path(__file__).parents[1] / "data" / "biomedical_redundant.json"


@pytest.mark.parametrize("strategy", baselines.STRATEGIES)
def test_cli_equals_the_library_for_every_strategy(strategy, capsys):
    budget = 150 if strategy == "exact" else 900  # exact: a budget it proves at once
    args = [
        "select",
        str(DEMO),
        "--budget",
        str(budget),
        "--strategy",
        strategy,
        "--policy",
        "fill",
        "--scale",
        "0.8",
        "--offset",
        "0.01",
        "--floor",
        "0.2",
        "--calibration-top-n",
        "40",
        "--json",
    ]
    pool = adagres.load_pool(DEMO)
    settings = adagres.Settings(
        policy="fill", scale=0.8, offset=0.01, redundancy_floor=0.2, calibration_top_n=40
    )
    arrays = (*select_inputs(pool), budget)
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    expected = baselines.run(strategy, *arrays, settings=settings, texts=pool.texts)
    assert out["selected"] == [pool.ids[i] for i in expected.indices]
    assert out["objective"] == pytest.approx(expected.objective, rel=1e-12, abs=1e-12)
    assert out["lam"] == pytest.approx(expected.lam, rel=1e-12)
    assert out["settings"] == settings.as_dict()
    if strategy == "topk_same_k":  # k is the size of AdaGReS with the same policy (fill)
        ada = adagres.select(*select_inputs(pool), budget, settings=settings)
        assert out["params"]["k"] == ada.size == len(out["selected"])


def test_output_a_terminal_and_a_parser_can_trust(tmp_path, capsys):
    """Hostile ids and queries are escaped, errors are one line, --json is strict JSON."""
    pool = adagres.load_pool(DEMO)
    hostile = adagres.Pool(
        "clear\x1b[2J the screen?\nsecond line",
        tuple(
            __import__("dataclasses").replace(c, id=f"{c.id}\x1b[31m\u2028") for c in pool.chunks
        ),
        raw_embeddings=pool.raw_embeddings,
        raw_query_embedding=pool.raw_query_embedding,
    )
    path = tmp_path / "hostile.json"
    adagres.save_pool(hostile, path)
    assert main(["select", str(path), "--budget", "300"]) == 0
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\u2028" not in text and "\\x1b[2J" in text
    assert main(["select", str(path), "--budget", "300", "--json"]) == 0
    raw = capsys.readouterr().out
    out = json.loads(raw)  # strict: json.loads would accept NaN, so check the text too
    assert "NaN" not in raw and "Infinity" not in raw and raw.isascii()
    assert out["selected"][0].endswith("\x1b[31m\u2028")  # the data itself is kept
    assert {"chunk", "verdict", "step"} == set(out["verdicts"][0])  # kinds, no trace
    assert main(["select", str(path), "--budget", "300", "--json", "--explain"]) == 0
    explained = json.loads(capsys.readouterr().out)
    assert explained["selected"] == out["selected"] and "summary" in explained["verdicts"][0]
    missing = tmp_path / "no\x1bsuch\nfile.json"
    assert main(["select", str(missing), "--budget", "10"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "\x1b" not in err and "no\\x1bsuch\\nfile.json" in err
