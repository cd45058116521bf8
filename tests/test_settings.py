"""The settings value and the prepared pool: validated once, idempotent, one source of numbers."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import adagres
from adagres import InputError, Settings
from adagres.core import validate as v
from adagres.core.sweep import lam_sweep


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"lam": -1}, "lam: expected 'adaptive' or a number >= 0, got -1"),
        ({"lam": float("nan")}, "lam: expected 'adaptive' or a number >= 0, got nan"),
        ({"lam": 1e39}, "lam: must be at most 1e+12 in size, got 1e+39"),
        ({"alpha": -0.5}, "alpha: must be >= 0, got -0.5"),
        ({"policy": "greedy"}, "policy: expected one of 'skip', 'stop', 'ratio', 'fill'"),
        ({"formula": "eq7"}, "formula: expected one of 'paper', 'derived', got 'eq7'"),
        ({"scale": float("inf")}, "scale: expected a finite number, got inf"),
        ({"redundancy_floor": 1.5}, "redundancy_floor: must be at most 1 in size, got 1.5"),
        ({"calibration_top_n": 1}, "calibration_top_n: expected a whole number >= 2"),
        ({"lambda_mmr": 1.2}, "lambda_mmr: must be in [0, 1], got 1.2"),
    ],
)
def test_settings_name_the_field_and_the_value(fields, message):
    with pytest.raises(InputError) as error:
        Settings(**fields)
    assert str(error.value).startswith(message)


def test_settings_are_frozen_hashable_and_normalised() -> None:
    five = np.int64(5)  # a numpy integer, as a caller's array gives, is taken as an int
    s = Settings(lam=1, alpha=2, calibration_top_n=five)  # type: ignore[arg-type]
    assert (s.lam, s.alpha, s.calibration_top_n) == (1.0, 2.0, 5)
    assert type(s.lam) is float and type(s.calibration_top_n) is int
    assert hash(s) == hash(Settings(lam=1.0, alpha=2.0, calibration_top_n=5))
    assert s.replace(policy="fill") == Settings(
        lam=1.0, alpha=2.0, policy="fill", calibration_top_n=5
    )
    assert pickle.loads(pickle.dumps(s)) == s
    with pytest.raises(AttributeError):
        s.lam = 3.0  # type: ignore[misc]
    assert Settings.of(s, scale=2.0).scale == 2.0 and Settings.of(None) == Settings()
    with pytest.raises(InputError, match="unknown setting 'lamda'"):
        Settings.of(s, lamda=0.2)


def test_normalising_is_idempotent_bit_for_bit():
    rng = np.random.default_rng(0)
    for dtype in (np.float64, np.float32):
        raw = (rng.normal(size=(50, 16)) * rng.uniform(0.1, 9, size=(50, 1))).astype(dtype)
        once = v.unit_rows(raw)
        assert once.dtype == dtype
        assert v.unit_rows(once) is once  # already unit: returned as is, no copy
        q = v.unit_vector(raw[0], 16)
        assert v.unit_vector(q, 16) is q
    a = adagres.prepare(raw[0], raw, np.arange(50))
    b = adagres.prepare(a.query, a.chunks, a.tokens)
    for field in ("chunks", "query", "relevance", "column_sum"):
        assert np.array_equal(getattr(a, field), getattr(b, field))
    assert a.squares == b.squares and a.mean_similarity == b.mean_similarity


def test_prepared_pool_is_read_only_and_its_statistics_match_brute_force():
    rng = np.random.default_rng(1)
    C = rng.normal(size=(30, 8))
    q = rng.normal(size=8)
    p = adagres.prepare(q, C, rng.integers(1, 50, 30))
    unit = C / np.linalg.norm(C, axis=1, keepdims=True)
    gram = unit @ unit.T
    brute = (gram.sum() - np.trace(gram)) / (30 * 29)
    assert p.mean_similarity == pytest.approx(brute, abs=1e-12)
    assert np.allclose(p.relevance, unit @ (q / np.linalg.norm(q)), atol=1e-12)
    for array in (p.chunks, p.query, p.tokens, p.relevance):
        assert not array.flags.writeable
    top = p.top(10)
    keep = np.sort(np.argsort(-p.relevance, kind="stable")[:10])
    assert np.array_equal(top.relevance, p.relevance[keep])
    assert p.top(30) is p


def test_select_prepared_equals_select_on_arrays():
    rng = np.random.default_rng(2)
    C, q, tok = rng.normal(size=(40, 8)) + 1, rng.normal(size=8) + 1, rng.integers(5, 60, 40)
    settings = Settings(policy="fill", redundancy_floor="pool", scale=0.7)
    a = adagres.select(q, C, tok, 300, settings=settings)
    b = adagres.select_prepared(adagres.prepare(q, C, tok), 300, settings)
    assert a.indices == b.indices and a.objective == b.objective and a.lam == b.lam
    assert a.settings == settings


def test_extreme_but_valid_vectors_normalise_and_zero_ones_are_named():
    """[1e308, 1e308] used to normalise to zeros and [1e-300, ...] to be called all-zero."""
    C = np.array([[1e308, 1e308], [1e-300, 1e-300], [3.0, 4.0]])
    unit = v.unit_rows(C)
    assert np.allclose(unit, [[2**-0.5, 2**-0.5], [2**-0.5, 2**-0.5], [0.6, 0.8]], atol=1e-15)
    pool = adagres.Pool(
        "q",
        tuple(adagres.Chunk(f"c{i}", "t", tokens=1) for i in range(3)),
        raw_embeddings=C,
        raw_query_embedding=np.array([1e-300, 0.0]),
    )
    assert pool.embeddings is not None
    assert np.allclose(pool.embeddings, unit, atol=1e-7)
    assert pool.prepared.relevance.tolist() == pytest.approx([2**-0.5, 2**-0.5, 0.6], abs=1e-7)
    with pytest.raises(adagres.PoolError, match=r"chunk 'c1': embedding: all 2 values are zero"):
        adagres.Pool("q", pool.chunks, raw_embeddings=np.array([[1.0, 0], [0, 0], [0, 1.0]]))
    with pytest.raises(InputError, match=r"^query_embedding: value 0 is inf"):
        adagres.select([np.inf, 0.0], C, [1, 1, 1], 2)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda q, C: adagres.objective(q, C, 3, 0.1), "indices: expected a sequence"),
        (lambda q, C: adagres.objective(q, C, "ab", 0.1), "indices: expected a sequence"),
        (lambda q, C: adagres.objective(q, C, [2**70], 0.1), "is outside the pool of 3"),
        (lambda q, C: adagres.objective(q, C, [1.5], 0.1), "1.5 is not a pool position"),
        (lambda q, C: adagres.select(q, C, [1, 2**63, 1], 5), "counts must be at most"),
        (lambda q, C: adagres.select(q, C, [1, 1, 1], 5, lam=1e39), "lam: must be at most"),
        (lambda q, C: adagres.calibrate(q, C, [1, 1, 1], 5, scale=1e308), "scale: must be"),
        (lambda q, C: lam_sweep(q, C, [1, 1, 1], 5, include=["x"]), "include: expected a fin"),  # type: ignore[list-item]
    ],
)
def test_hostile_core_inputs_raise_one_line_input_errors(call, message):
    """Reproducers of the fuzzing probe: each used to hang, overflow or raise a raw error."""
    q, C = np.array([1.0, 0.0]), np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], np.float32)
    with pytest.raises(InputError) as error:
        call(q, C)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_metrics_reject_what_they_cannot_count():
    q, C = np.array([1.0, 0.0]), np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])
    s = adagres.select(q, C, [1, 1, 1], 2, lam=0.1)
    for kwargs, message in (
        ({"gold": [None]}, "gold: None is neither"),
        ({"gold": [float("nan")]}, "gold: nan is neither"),
        ({"gold": [1.5]}, "gold: 1.5 is neither"),
        ({"answers": [1], "texts": ["a", "b", "c"]}, "answers: must be a list of strings; item 0"),
        ({"texts": ["a"]}, "texts: got 1 texts, the pool has 3 chunks"),
        ({"near_duplicate": "0.9"}, "near_duplicate: expected a cosine"),
    ):
        with pytest.raises(InputError, match=message):
            adagres.metrics.evaluate(s, C, **kwargs)


def test_a_tiny_positive_mean_similarity_clips_lambda_and_every_number_is_finite():
    import json
    import math

    # Two nearly orthogonal chunks: ρ̄ ≈ 1e-14 makes λ* about 1.6e13.
    C = np.array([[1.0, 0.0], [1e-14, 1.0]])
    q = np.array([1.0, 1.0])
    s = adagres.select(q, C, [1, 1], 10)
    assert s.calibration is not None
    assert s.calibration.clipped and s.lam == adagres.core.settings.MAX_WEIGHT
    assert math.isfinite(s.objective) and all(math.isfinite(st.gain) for st in s.steps if st.gain)
    json.dumps(s.to_dict(), allow_nan=False)
