"""The command line: output values, JSON shape, and one-line errors with status 2."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from adagres import select
from adagres.cli import main

POOL: dict[str, Any] = {
    "query": "q",
    "query_embedding": [1, 0],
    "answers": ["alpha"],
    "chunks": [
        {"id": "a", "text": "alpha one", "embedding": [0.9, 0.1], "tokens": 50, "gold": True},
        {"id": "b", "text": "alpha two", "embedding": [0.9, 0.11], "tokens": 50},
        {"id": "c", "text": "gamma", "embedding": [0.6, 0.8], "tokens": 50, "gold": True},
    ],
}


@pytest.fixture
def pool_file(tmp_path):
    path = tmp_path / "pool.json"
    path.write_text(json.dumps(POOL))
    return path


def test_json_output_matches_the_library(pool_file, capsys):
    assert main(["select", str(pool_file), "--budget", "100", "--lam", "0.2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    C = np.array([c["embedding"] for c in POOL["chunks"]])
    expected = select([1, 0], C, [50, 50, 50], 100, lam=0.2)
    assert out["selected"] == [POOL["chunks"][i]["id"] for i in expected.indices]
    assert out["objective"] == pytest.approx(expected.objective, abs=1e-6)
    assert out["stop_reason"] == expected.stop_reason.value
    assert out["metrics"]["recall"] == pytest.approx(0.5)
    assert out["calibration"]["expected_k"] == 2.0
    assert {v["chunk"] for v in out["verdicts"]} == {"a", "b", "c"}


@pytest.mark.parametrize(
    "strategy", ["topk_same_k", "topk_budget", "mmr", "exact", "reference_code"]
)
def test_every_strategy_runs_within_budget(pool_file, capsys, strategy):
    assert (
        main(["select", str(pool_file), "--budget", "100", "--strategy", strategy, "--json"]) == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["strategy"] == strategy and out["tokens_used"] <= 100


def test_text_output_names_the_numbers(pool_file, capsys):
    assert main(["select", str(pool_file), "--budget", "100", "--lam", "1"]) == 0
    text = capsys.readouterr().out
    assert "tokens  50 of 100 (50%)" in text
    assert "stop    no_positive_gain" in text
    assert "k̄ = 2.00" in text and "IoU 0.500" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--budget", "-1"], "--budget: must be >= 0 tokens, got -1"),
        (["--budget", "x"], "argument --budget: invalid int value: 'x'"),
        (["--budget", "10", "--lam", "big"], "expected 'adaptive' or a number, got 'big'"),
        (["--budget", "10", "--lam", "-2"], "lam: expected 'adaptive' or a number >= 0, got -2.0"),
    ],
)
def test_bad_arguments_exit_2_with_one_line(pool_file, args, message):
    proc = subprocess.run(
        [sys.executable, "-m", "adagres", "select", str(pool_file), *args],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]
    assert "Traceback" not in proc.stderr


def test_bad_files_exit_2_naming_the_problem(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"query": "q", "chunks": [\n  {"id": "a", "text": }\n]}')
    missing = tmp_path / "missing.json"
    for path, needle in ((broken, "broken.json"), (missing, "missing.json")):
        proc = subprocess.run(
            [sys.executable, "-m", "adagres", "select", str(path), "--budget", "10"],
            capture_output=True,
            text=True,
        )
        assert proc.returncode == 2, proc.stderr
        assert needle in proc.stderr and "Traceback" not in proc.stderr
    assert (
        "line 2"
        in subprocess.run(
            [sys.executable, "-m", "adagres", "validate", str(broken)],
            capture_output=True,
            text=True,
        ).stderr
    )


def test_validate_reports_the_pool(pool_file, capsys):
    assert main(["validate", str(pool_file)]) == 0
    assert "3 chunks" in capsys.readouterr().out


def test_calibration_top_n_flag(pool_file, capsys):
    assert (
        main(["select", str(pool_file), "--budget", "100", "--calibration-top-n", "2", "--json"])
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["calibration"]["top_n"] == 2 and out["calibration"]["n_chunks"] == 2


def test_a_loader_limit_is_named_and_raised_with_limit(tmp_path, capsys):
    """A file past a loader limit is refused with the flag that raises it; with the flag
    it loads and selects like any pool."""
    pool = json.loads(json.dumps(POOL))
    pool["chunks"][0]["metadata"] = {"deep": [[[[[[1]]]]]]}  # 7 levels below the pool
    path = tmp_path / "deep.json"
    path.write_text(json.dumps(pool))
    assert main(["select", str(path), "--budget", "100", "--limit", "max_depth=5"]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "--limit max_depth=..." in error, error
    assert main(["select", str(path), "--budget", "100", "--limit", "max_depth=50"]) == 0
    assert main(["validate", str(path), "--limit", "max_depth=50"]) == 0
    assert main(["select", str(path), "--budget", "100"]) == 0  # the default allows 100
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit:  # argparse's own error: exit 2, one line
        main(["validate", str(path), "--limit", "depth=5"])
    assert exit.value.code == 2 and "NAME one of max_bytes" in capsys.readouterr().err
