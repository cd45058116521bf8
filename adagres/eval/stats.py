"""Numbers over queries: bootstrap confidence intervals and paired wins, ties and losses.

numpy only. Every random draw comes from a :class:`numpy.random.Generator` the caller
seeds; :func:`stream` derives one per (seed, corpus, budget, metric), so every strategy of
one comparison is resampled with the same query draws (a paired bootstrap) and a rerun
gives the same intervals.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError

__all__ = ["Interval", "WinsTiesLosses", "bootstrap_ci", "stream", "wins_ties_losses"]

#: Differences at most this large count as ties (metrics are means of 0/1 or ratios).
TIE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Interval:
    """A mean over ``n`` queries with its bootstrap interval [``low``, ``high``]
    (all None when n = 0)."""

    mean: float | None
    low: float | None
    high: float | None
    n: int


@dataclass(frozen=True)
class WinsTiesLosses:
    """Queries where a strategy beats, ties or trails a baseline on one metric."""

    wins: int
    ties: int
    losses: int

    def __str__(self) -> str:
        return f"{self.wins}/{self.ties}/{self.losses}"


def stream(seed: int, *names: str | int) -> np.random.Generator:
    """A generator for one comparison: ``default_rng([seed, crc32(name) or int, ...])``.

    >>> float(stream(7, "fanoutqa", 300).random()) == float(stream(7, "fanoutqa", 300).random())
    True
    """
    words = [int(seed)] + [n if isinstance(n, int) else zlib.crc32(n.encode()) for n in names]
    return np.random.default_rng(words)


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    *,
    rng: np.random.Generator,
    resamples: int = 2000,
    level: float = 0.95,
) -> Interval:
    """The mean of ``values`` and its percentile bootstrap interval at ``level``.

    ``resamples`` means of ``len(values)`` draws with replacement (indices from ``rng``);
    the interval is their (1 − level)/2 and (1 + level)/2 quantiles (linear interpolation).
    NaN values are dropped first.

    >>> ci = bootstrap_ci([1.0, 1.0, 1.0], rng=np.random.default_rng(0))
    >>> ci.mean, ci.low, ci.high, ci.n
    (1.0, 1.0, 1.0, 3)
    """
    if not 0.0 < level < 1.0:
        raise InputError(f"level: expected a share between 0 and 1, got {level!r}")
    if resamples < 1:
        raise InputError(f"resamples: expected at least 1, got {resamples!r}")
    array = np.asarray(values, dtype=np.float64)
    array = array[~np.isnan(array)]
    n = int(array.size)
    if n == 0:
        return Interval(None, None, None, 0)
    draws = rng.integers(0, n, size=(resamples, n))
    means = array[draws].mean(axis=1)
    low, high = np.quantile(means, [(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    return Interval(float(array.mean()), float(low), float(high), n)


def wins_ties_losses(
    values: Sequence[float | None],
    baseline: Sequence[float | None],
    *,
    tolerance: float = TIE_TOLERANCE,
) -> WinsTiesLosses:
    """Count queries where ``values`` beat (by more than ``tolerance``), tie or trail
    ``baseline``; pairs with a None or NaN on either side are left out.

    >>> str(wins_ties_losses([1, 0, 1, None], [0, 0, 1, 1]))
    '1/2/0'
    """
    if len(values) != len(baseline):
        raise InputError(f"wins_ties_losses: {len(values)} values, {len(baseline)} baseline values")
    a, b = np.array(values, dtype=np.float64), np.array(baseline, dtype=np.float64)  # None: NaN
    both = ~(np.isnan(a) | np.isnan(b))
    wins = int(np.sum(a[both] > b[both] + tolerance))
    losses = int(np.sum(b[both] > a[both] + tolerance))
    return WinsTiesLosses(wins, int(both.sum()) - wins - losses, losses)
