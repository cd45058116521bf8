"""The evaluation harness's strategy registry: every configuration registered, new ones taken
and refused, exact on the first queries only, and entries that pickle by reference.
The ``demo`` fixture (the bundled demo pools as cases) is in tests/conftest.py."""

from __future__ import annotations

import functools

import pytest

from adagres import Settings
from adagres.core.baselines import run_prepared
from adagres.errors import InputError
from adagres.eval import strategies
from adagres.eval.run import NOT_RUN, evaluate_cases

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
    fixed = [names[f"adagres_lam_{v}"].settings for v in ("0.55", "0.65", "0.7")]
    assert [s.lam if s is not None else None for s in fixed] == [
        0.55,
        0.65,
        0.7,
    ]
    for name in ("topk_same_k", "topk_budget", "mmr", "reference_code", "exact"):
        assert names[name].core == name
    from adagres.core.strategies import STRATEGIES

    assert all(names[n].core == n for n in STRATEGIES if n != "adagres")
    from adagres import PRESETS

    assert names["orthogonal"].settings == STRATEGIES["orthogonal"].tuned
    assert names["topk_budget"].settings == Settings()  # the baseline, whatever the presets
    recommended = PRESETS["recommended"]
    assert [
        n
        for n, e in names.items()
        if (e.core, e.settings) == (recommended.strategy, recommended.settings)
    ] == ["packed_topk"]
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


def test_the_registry_entries_pickle_by_reference():
    import pickle

    for entry in strategies.registered().values():
        again = pickle.loads(pickle.dumps(entry.fn))
        assert isinstance(again, functools.partial)
