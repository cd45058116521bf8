"""The evaluation harness's statistics on hand cases: bootstrap intervals, wins/ties/losses
and the seeded dev/test split of query ids."""

from __future__ import annotations

import numpy as np
import pytest

from adagres.errors import InputError
from adagres.eval import cases as harness_cases
from adagres.eval import stats

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
    dev = harness_cases.sample_ids(ids, seed=5, split="dev", held_out=0.7)
    test = harness_cases.sample_ids(ids, seed=5, split="test", held_out=0.7)
    assert (len(dev), len(test)) == (30, 70)
    assert set(dev).isdisjoint(test) and sorted(dev + test, key=ids.index) == ids
    assert harness_cases.sample_ids(ids, seed=5, split="test", held_out=0.7) == test
    few = harness_cases.sample_ids(ids, seed=5, split="test", held_out=0.7, limit=9)
    assert len(few) == 9 and set(few) <= set(test)
    assert harness_cases.sample_ids(ids, seed=6, split="test", held_out=0.7) != test
