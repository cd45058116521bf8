"""The adapters' shared part, without a framework: options, counts, vectors, the record."""

from __future__ import annotations

import math

import numpy as np
import pytest

from adagres.core import baselines
from adagres.core.presets import PRESETS
from adagres.core.settings import Settings
from adagres.errors import InputError
from adagres.integrations import common
from adagres.pools.io import load_pools


def test_options_take_the_preset_and_replace_either_half():
    assert common.options(10).strategy == "topk_budget"
    assert common.options(10).settings == PRESETS["recommended"].settings
    paper = common.options(10, preset="paper")
    assert (paper.strategy, paper.settings) == ("adagres", Settings())
    mine = Settings(lam=0.3)
    mixed = common.options(10, strategy="topk_budget", settings=mine)
    assert (mixed.strategy, mixed.settings) == ("topk_budget", mine)
    assert common.options(10, tokenizer=len).tokenizer_name == "given"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"budget": 1.5}, "budget: expected a whole number of tokens, got 1.5"),
        ({"budget": 10, "preset": "best"}, "preset: expected one of 'paper', 'recommended'"),
        ({"budget": 10, "strategy": "greedy"}, "strategy: expected one of"),
        ({"budget": 10, "settings": {"lam": 1}}, "settings: expected adagres.Settings, got dict"),
        ({"budget": 10, "tokenizer": "gpt2"}, "tokenizer: expected one of 'cl100k'"),
        ({"budget": 10, "record_to": "runs.json"}, "record_to: expected a .jsonl file"),
    ],
)
def test_bad_options_name_the_argument(kwargs, message):
    with pytest.raises(InputError) as caught:
        common.options(**kwargs)
    assert str(caught.value).startswith(message)


def test_count_checks_what_a_callable_returns():
    assert common.count(["a b c", "d"], "words").tolist() == [3, 1]
    with pytest.raises(InputError, match=r"tokenizer: document 1: .* got -1"):
        common.count(["a", "b"], lambda text: -1 if text == "b" else 1)
    with pytest.raises(InputError, match="document 0: expected a whole number"):
        common.count(["a"], lambda text: 2.5)  # type: ignore[arg-type, return-value]


def test_matrix_names_a_missing_or_odd_sized_vector():
    assert common.matrix([[1, 0], [0, 1]], ["a", "b"]).shape == (2, 2)
    with pytest.raises(InputError, match="document b: has no embedding"):
        common.matrix([[1, 0], None], ["a", "b"])
    with pytest.raises(InputError, match=r"document b: embedding has shape \(3,\), expected 2"):
        common.matrix([[1, 0], [1, 0, 0]], ["a", "b"])


def retrieved(query: str = "which?") -> common.Retrieved:
    vectors = np.array([[1.0, 0.1], [0.9, 0.2], [0.1, 1.0]])
    return common.Retrieved(
        query=query,
        texts=("alpha beta", "alpha gamma", "delta"),
        embeddings=vectors,
        query_embedding=np.array([1.0, 0.3]),
        ids=("x", "y", "z"),
        metadata=({"page": 1, "odd": math.nan}, None, {"when": np.float32(0.5)}),
        scores=(0.9, 0.8, 0.1),
    )


def test_select_is_baselines_run_and_appends_one_line_per_call(tmp_path):
    path = tmp_path / "sub" / "runs.jsonl"
    chosen = common.options(3, tokenizer="words", record_to=path, preset="paper")
    first = common.select(chosen, retrieved(), framework="test")
    want = baselines.run(
        "adagres", retrieved().query_embedding, retrieved().embeddings, [2, 2, 1], 3
    )
    assert first.indices == want.indices and first.objective == pytest.approx(want.objective)
    common.select(chosen, retrieved("another?"), framework="test")
    pools = load_pools(path)
    assert [pool.query for pool in pools] == ["which?", "another?"]
    pool = pools[0]
    assert pool.token_counts is not None and pool.scores is not None
    assert pool.ids == ("x", "y", "z") and pool.token_counts.tolist() == [2, 2, 1]
    assert pool.tokenizer == "words" and pool.scores.tolist() == [0.9, 0.8, 0.1]
    # Metadata JSON cannot hold becomes text; the rest is kept as given.
    assert pool.chunks[0].metadata == {"page": 1, "odd": "nan"}
    assert pool.chunks[2].metadata == {"when": 0.5}
    record = pool.extra["selection"]
    assert record["selected"] == [pool.ids[i] for i in want.indices]
    assert record["gains"] == [pytest.approx(s.gain) for s in want.steps if s.accepted]
    assert record["settings"] == Settings().as_dict() and record["framework"] == "test"


def test_record_falls_back_to_positions_when_ids_repeat_and_needs_a_query(tmp_path):
    item = retrieved()
    repeated = common.Retrieved(**{**item.__dict__, "ids": ("x", "x", None)})
    assert repeated.record_ids() == ["c0", "c1", "c2"]
    chosen = common.options(3, tokenizer="words", record_to=tmp_path / "runs.jsonl")
    with pytest.raises(InputError, match="query: record_to needs the query text"):
        common.select(chosen, retrieved(" "), framework="test")


def test_picks_give_each_pick_its_step_and_gain():
    selection = baselines.run("topk_budget", [1.0, 0.0], [[1.0, 0.0], [0.6, 0.8]], [1, 1], 2)
    assert common.picks(selection) == [
        (0, {"adagres_step": 1, "adagres_gain": pytest.approx(1.0)}),
        (1, {"adagres_step": 2, "adagres_gain": pytest.approx(0.6 - selection.lam * 0.6)}),
    ]


def test_saved_options_are_json_values_and_come_back_as_the_same_options(tmp_path):
    chosen = common.options(
        50,
        preset="paper",
        settings=Settings(lam=0.2),
        tokenizer="words",
        record_to=tmp_path / "r.jsonl",
    )
    saved = common.saved(chosen)
    assert saved == {
        "budget": 50,
        "preset": "paper",
        "strategy": "adagres",
        "settings": Settings(lam=0.2).as_dict(),
        "tokenizer": "words",
        "record_to": str(tmp_path / "r.jsonl"),
    }
    again = common.options(**{**saved, "settings": common.settings_from(saved["settings"])})
    assert again == chosen
    with pytest.raises(InputError, match=r"^settings: unknown field 'lambda'"):
        common.settings_from({"lambda": 0.2})
    with pytest.raises(InputError, match=r"^tokenizer: a callable tokenizer cannot be serialised"):
        common.saved(common.options(50, tokenizer=len))
