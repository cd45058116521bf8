"""Fuzzing the inputs of the core's public functions: ``adagres.select``, ``calibrate``,
``objective``, ``metrics.evaluate``, ``baselines.run`` and ``sweep.lam_sweep`` take hostile
arrays, budgets and settings (NaN, inf, 1e308, huge integers, wrong shapes, strings,
Fractions, None, booleans). Each call gives a valid, finite result or raises InputError
(an AdagresError) with one line; none may hang (each test has a time limit)."""

from __future__ import annotations

import dataclasses
import functools
import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from fuzzing import all_finite, outcome, time_limit
from hypothesis import given
from hypothesis import strategies as st

import adagres
from adagres import baselines, metrics, sweep

pytestmark = time_limit(1.0)

HOSTILE_SCALARS = st.sampled_from(
    [
        float("nan"),
        float("inf"),
        -float("inf"),
        1e308,
        -1e308,
        5e-324,
        1e-310,
        2**70,
        -(2**70),
        -1,
        0,
        True,
        False,
        None,
        "3",
        "nan",
        Fraction(7, 2),
        Decimal("1e400"),
        Decimal("NaN"),
        np.float16(3),
        np.float64("nan"),
        np.int64(2**62),
        np.uint64(2**63),
        complex(1, 1),
        [],
        (),
        10**400,
        -(10**400),
        Fraction(10**400, 3),
        2**63,
        np.array([0.3]),
        np.array([1.0, 2.0]),
        np.array("skip"),
        np.array(["fill"]),
        "800",
        1.5,
    ]
)
STRATEGIES = tuple(baselines.STRATEGIES)  # every registered strategy, the variants too
SETTINGS = (
    "lam",
    "alpha",
    "scale",
    "offset",
    "lam_max",
    "redundancy_floor",
    "calibration_top_n",
    "lambda_mmr",
    "policy",
    "formula",
)


def filled(shape, value) -> np.ndarray:
    """An object array of ``shape`` holding ``value`` everywhere (a list or tuple too)."""
    out = np.empty(shape, dtype=object)
    for position in np.ndindex(out.shape):
        out[position] = value
    return out


@st.composite
def pools(draw):
    """A valid pool (q, C, tokens) of 1-6 chunks, then at most one of its parts made hostile."""
    n = draw(st.integers(1, 6))
    d = draw(st.integers(1, 4))
    unit = st.floats(-1, 1, allow_nan=False)
    q = np.array(draw(st.lists(unit, min_size=d, max_size=d).filter(any)))
    C = np.array(
        draw(st.lists(st.lists(unit, min_size=d, max_size=d).filter(any), min_size=n, max_size=n))
    )
    tokens = np.array(draw(st.lists(st.integers(0, 60), min_size=n, max_size=n)))
    part = draw(st.sampled_from(["none", "q", "C", "tokens"]))
    scalar = draw(HOSTILE_SCALARS)
    shapes = {
        "q": [
            filled(d, scalar),
            np.ones(d + 1),
            np.zeros(d),
            np.full(d, 1e308),
            np.full(d, 1e-310),
            q[None, :],
            "abc",
            None,
            [Fraction(1, 3)] * d,
            [True] * d,
        ],
        "C": [
            filled((n, d), scalar),
            np.full((n, d), 1e200),
            np.full((n, d), 1e-310),
            np.ones((n, d + 1)),
            np.ones((n, d, 1)),
            np.ones((0, d)),
            np.ones((n, 0)),
            "abc",
            [[Fraction(1, 3)] * d] * n,
            np.ones((n, d), bool),
            [[None] * d] * n,
        ],
        "tokens": [
            filled(n, scalar),
            [1] * (n + 1),
            np.full(n, 2**62),
            [2**70] * n,
            [1.5] * n,
            [Fraction(2, 1)] * n,
            [-1] * n,
            np.full(n, 10**12),
            "abc",
            None,
        ],
    }
    if part != "none":
        hostile = draw(st.sampled_from(shapes[part]))
        q, C, tokens = (
            hostile if part == "q" else q,
            hostile if part == "C" else C,
            hostile if part == "tokens" else tokens,
        )
    return q, C, tokens, n


budgets = st.one_of(st.integers(0, 200), st.just(10**12), HOSTILE_SCALARS)
settings_fields = st.dictionaries(
    st.sampled_from(SETTINGS), HOSTILE_SCALARS | st.floats(), max_size=2
)


def check_calibration(calibration) -> None:
    """Every number of a derivation is finite, but one: rho-bar of a one-chunk pool is NaN
    (no pairs, documented)."""
    numbers = {k: v for k, v in dataclasses.asdict(calibration).items() if isinstance(v, float)}
    if calibration.n_chunks < 2:
        numbers.pop("mean_similarity")
    assert all(math.isfinite(v) for v in numbers.values()), numbers


def check_selection(selection, budget) -> None:
    assert isinstance(selection, adagres.Selection)
    if selection.calibration is not None:
        check_calibration(selection.calibration)
    assert all_finite(selection.to_dict())
    assert math.isfinite(selection.objective) and math.isfinite(selection.lam)
    assert len(set(selection.indices)) == len(selection.indices)
    if isinstance(budget, int) and not isinstance(budget, bool):
        assert selection.tokens_used <= budget


@given(pools(), budgets, settings_fields)
def test_select(pool, budget, fields):
    q, C, tokens, _ = pool
    selection, _ = outcome(lambda: adagres.select(q, C, tokens, budget, **fields))
    if selection is not None:
        check_selection(selection, budget)


@given(pools(), budgets, settings_fields)
def test_calibrate(pool, budget, fields):
    q, C, tokens, _ = pool
    calibration, _ = outcome(lambda: adagres.calibrate(q, C, tokens, budget, **fields))
    if calibration is not None:
        assert math.isfinite(calibration.lam) and calibration.lam >= 0
        # rho-bar is NaN for a one-chunk pool (no pairs); every other number is finite
        check_calibration(calibration)
        assert isinstance(calibration.describe(), str)


indices = st.one_of(
    st.lists(st.integers(-3, 8), max_size=4),
    st.sampled_from([[0, 0], ["a"], [True], [1.5], None, "0", [np.int64(0)], [[0]], [2**70]]),
)


@given(pools(), indices, HOSTILE_SCALARS | st.floats(0, 10))
def test_objective(pool, picks, lam):
    q, C, _, _ = pool
    value, _ = outcome(lambda: adagres.objective(q, C, picks, lam))
    if value is not None:
        assert isinstance(value, float) and math.isfinite(value)


@given(
    st.integers(1, 6),
    st.sampled_from([None, [0], [9], ["zz"], [float("nan")], "abc", [True], [-1], [0, 0], [None]]),
    st.sampled_from([None, ["x"], [None], "abc", [1], [""], ["\ud800"]]),
    st.sampled_from(["ok", "short", "none", "objects", None]),
    HOSTILE_SCALARS | st.floats(0, 1),
)
def test_evaluate(n, gold, answers, texts, near):
    rng = np.random.default_rng(n)
    q, C = rng.standard_normal(3), rng.standard_normal((n, 3))
    selection = adagres.select(q, C, [10] * n, 40)
    given_texts: Any = {  # any value a caller may pass
        "ok": ["t"] * n,
        "short": ["t"],
        "none": [None] * n,
        "objects": [1] * n,
        None: None,
    }[texts]
    result, _ = outcome(
        lambda: metrics.evaluate(
            selection, C, gold=gold, answers=answers, texts=given_texts, near_duplicate=near
        )
    )
    if result is not None:
        assert all_finite(result.as_dict())


@given(pools(), budgets, st.sampled_from(STRATEGIES), settings_fields)
def test_baselines(pool, budget, strategy, fields):
    q, C, tokens, n = pool
    selection, _ = outcome(
        lambda: baselines.run(strategy, q, C, tokens, budget, texts=["x"] * n, **fields)
    )
    if selection is not None:
        check_selection(selection, budget)


@given(
    pools(),
    budgets,
    st.sampled_from(
        [
            None,
            [0.0, 1.0],
            [float("nan")],
            [float("inf")],
            [-1],
            [1e308],
            [],
            ["x"],
            [True],
            [2**70],
        ]
    ),
    settings_fields,
)
def test_lam_sweep(pool, budget, lams, fields):
    q, C, tokens, _ = pool
    result, _ = outcome(lambda: sweep.lam_sweep(q, C, tokens, budget, lams, **fields))
    if result is None:
        return
    for field in dataclasses.fields(result):
        value = getattr(result, field.name)
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            assert np.isfinite(value).all(), field.name
        elif isinstance(value, float):
            assert math.isfinite(value), field.name


@st.composite
def prepared_pools(draw):
    """A valid prepared pool of 1-6 chunks (the prepared path trusts the pool, not the rest)."""
    n = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    q, C = rng.standard_normal(3), rng.standard_normal((n, 3))
    return adagres.prepare(q, C, rng.integers(0, 60, n)), n


@given(
    prepared_pools(),
    budgets,
    st.sampled_from([*STRATEGIES, "paper", None, ["mmr"]]),
    settings_fields,
)
def test_the_prepared_path_checks_what_it_does_not_trust(prepared, budget, strategy, fields):
    """``select_prepared`` and ``baselines.run_prepared`` ("select as often as you like"):
    a hostile budget, strategy or settings value is an InputError, and every selection keeps
    the budget (NaN once made mmr take the whole pool)."""
    pool, n = prepared
    settings, _ = outcome(lambda: adagres.Settings(**fields))
    values: tuple[Any, ...] = (settings, fields or None, "recommended")
    for value in values:  # a Settings value, or not one
        got, _ = outcome(functools.partial(adagres.select_prepared, pool, budget, value))
        if got is not None:
            kept_the_budget(got, budget)
        got, _ = outcome(
            functools.partial(
                baselines.run_prepared, strategy, pool, budget, value, texts=["x"] * n
            )
        )
        if got is not None:
            kept_the_budget(got, budget)


def kept_the_budget(selection, budget) -> None:
    """A selection was made only for a whole, finite budget >= 0, and keeps it."""
    check_selection(selection, budget)
    assert not isinstance(budget, bool) and float(budget).is_integer() and budget >= 0
    assert selection.budget == int(budget) and selection.tokens_used <= selection.budget


@given(
    st.integers(1, 6),
    HOSTILE_SCALARS | st.integers(-3, 8),
    st.sampled_from([None, [], ["a"], "abcdef", ["a", "b", "c", "d", "e", "f", "g"], 3]),
)
def test_records_name_what_they_are_asked(n, chunk, ids):
    """``Selection.verdict``, ``to_dict`` and a verdict's ``summary`` with hostile positions
    and id lists: a result, or an InputError; ids must be one per chunk."""
    rng = np.random.default_rng(n)
    selection = adagres.select(rng.standard_normal(3), rng.standard_normal((n, 3)), [10] * n, 40)
    verdict, _ = outcome(lambda: selection.verdict(chunk))
    if verdict is not None:
        assert not isinstance(chunk, bool) and 0 <= chunk < n
        text, _ = outcome(lambda: verdict.summary(ids))
        assert text is None or isinstance(text, str)
    as_dict, _ = outcome(lambda: selection.to_dict(ids))
    if as_dict is not None:
        assert ids is None or (not isinstance(ids, str) and len(ids) == n)


@given(HOSTILE_SCALARS | st.sampled_from(["paper", "recommended", "Paper", ["paper"], {}]))
def test_presets_by_name_only(name):
    q, C = np.array([1.0, 0.0]), np.array([[0.94, 0.34], [0.91, 0.42]])
    got, _ = outcome(lambda: adagres.run_preset(name, q, C, [50, 50], 100))
    assert got is None or name in ("paper", "recommended")


@given(
    st.sampled_from([[1.5], "01", [0, 9], [True], [None], [np.int64(1)], [0], (0, 1), 1]),
    st.sampled_from([[50, 100], [10**400], [float("nan")], ["x"], [1.5], 100]),
)
def test_budget_sweep_checks_gold_and_budgets(gold, budgets_):
    q, C = np.array([1.0, 0.0]), np.array([[0.94, 0.34], [0.91, 0.42], [0.1, 0.99]])
    result, _ = outcome(lambda: sweep.budget_sweep(q, C, [50, 50, 50], budgets_, gold=gold))
    if result is not None:  # only whole positions inside the pool count as gold
        assert gold in ([np.int64(1)], [0], (0, 1))


# --------------------------------------------------------------------------- regressions
@pytest.mark.parametrize("call", ["calibrate", "select", "baselines"])
def test_calibration_of_a_pool_of_empty_chunks_is_finite(call):
    """All token counts 0: L-bar = 0, the whole pool fits, so k-bar = N (SPEC.md)."""
    q, C, tokens = [1.0, 0.0], [[1.0, 0.0], [0.6, 0.8]], [0, 0]
    calibration: adagres.Calibration | None
    if call == "calibrate":
        calibration = adagres.calibrate(q, C, tokens, 100)
    elif call == "select":
        calibration = adagres.select(q, C, tokens, 100).calibration
    else:
        calibration = baselines.run("mmr", q, C, tokens, 100).calibration
    assert calibration is not None and calibration.expected_k == 2.0
    assert all(
        math.isfinite(v) for v in dataclasses.asdict(calibration).values() if isinstance(v, float)
    )
