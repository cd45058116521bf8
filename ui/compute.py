"""Cached computations, keyed by the settings value: selections, λ derivations, sweeps,
metrics, the guarantee and the exact optimum, near-duplicates.

:func:`selection_key` is the one place a cache key is made from the app's settings; every
function here takes that key (or its :class:`PoolKey`) and changes only what it must
(``key.replace(strategy=...)``), so each setting reaches the core in one value, validated
once. The core runs on ``Pool.prepared``; results are kept in :class:`ui.cache.Slot` s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from adagres import Settings as Selector
from adagres.core import baselines, metrics
from adagres.core.calibration import FORMULAS, Calibration, calibrate_prepared
from adagres.core.guarantee import Guarantee, guarantee
from adagres.core.metrics import Metrics
from adagres.core.result import Selection
from adagres.core.strategies import ADAGRES, strategy
from adagres.core.sweep import BudgetSweep, LamSweep, budget_sweep, lam_sweep_prepared
from adagres.errors import AdagresError, SolverError
from adagres.optimum import EXACT
from adagres.optimum.exact import ExactResult
from adagres.pools.pool import Pool

from . import pools, progress
from .cache import Slot
from .state import AppSettings

__all__ = [
    "EXACT_AUTO_MAX",
    "NearDuplicates",
    "PoolKey",
    "SelectionKey",
    "adaptive_lam",
    "budget_sweep_of",
    "calibrations",
    "clear",
    "derived",
    "exact",
    "exact_ready",
    "gold_positions",
    "guarantee_of",
    "lam_sweep_of",
    "metrics_of",
    "near_duplicate_groups",
    "near_duplicates",
    "pool_key",
    "selection",
    "selection_key",
]

#: The exact optimum is computed without asking when at most this many chunks fit the
#: budget (the branch and bound of ``adagres/optimum/exact.py`` proved it within 0.08 s on every
#: 20-chunk slice of the demo pools tried, at 300–1,500 tokens); up to
#: ``EXACT_MAX_CHUNKS`` (``adagres.optimum.exact``), on a button.
EXACT_AUTO_MAX = 20


# --------------------------------------------------------------------------- keys


@dataclass(frozen=True)
class PoolKey:
    """A registered pool: its key in ``ui.pools`` and the fingerprint of its contents (the
    key itself tells pools with other gold labels or answers apart: ``ui.pools.pool_digest``)."""

    name: str
    fingerprint: str

    def get(self) -> Pool:
        """The pool itself (from the registry)."""
        return pools.get_pool(self.name)


@dataclass(frozen=True)
class SelectionKey:
    """Everything a selection depends on, as small values: the cache key of every result."""

    pool: PoolKey
    budget: int
    strategy: str
    selector: Selector

    def replace(self, **changes: Any) -> SelectionKey:
        """A copy with some fields changed (e.g. ``strategy="adagres"``)."""
        return dataclasses.replace(self, **changes)


def pool_key(name: str) -> PoolKey:
    """The key of the registered pool ``name`` (PoolError if there is none)."""
    return PoolKey(name, pools.get_pool(name).fingerprint)


def selection_key(settings: AppSettings) -> SelectionKey:
    """The cache key of what ``settings`` select: the one place a key is made from them.

    The budget is capped at the pool's total tokens (a larger one buys nothing more; the
    settings keep the user's value for the next pool).
    """
    pool = pools.get_pool(settings.pool)
    budget = min(settings.budget, pools.budget_max(pool))
    return SelectionKey(
        PoolKey(settings.pool, pool.fingerprint), budget, settings.strategy, settings.selector
    )


def gold_positions(pool: Pool) -> list[int] | None:
    """Pool positions of the chunks marked gold; None when the pool marks none."""
    gold = [i for i, chunk in enumerate(pool.chunks) if chunk.gold]
    return gold or None


# --------------------------------------------------------------------------- slots


@st.cache_resource(max_entries=64, show_spinner=False)
def _selections(key: SelectionKey) -> Slot[Selection]:
    return Slot()


@st.cache_resource(max_entries=64, show_spinner=False)
def derived(kind: str, *key: Hashable) -> Slot[Any]:
    """The slot of a result of ``kind`` derived from ``key`` (small values)."""
    return Slot()


@st.cache_resource(max_entries=32, show_spinner=False)
def _sweeps(kind: str, *key: Hashable) -> Slot[Any]:
    return Slot()


def clear() -> None:
    """Forget every cached result (tests count recomputations after it)."""
    for slots in (_selections, derived, _sweeps):
        slots.clear()


# --------------------------------------------------------------------------- selection


def selection(key: SelectionKey) -> Selection:
    """The traced selection for ``key``; cached, refusals too (AdagresError re-raised)."""

    def run() -> Selection:
        pool, chosen = key.pool.get(), strategy(key.strategy)
        # a strategy that takes its size from another's run (topk_same_k from AdaGReS) gets
        # that run from (and keeps it in) the same cache
        options: dict[str, Any] = {}
        if chosen.reference is not None:
            options["reference"] = selection(key.replace(strategy=chosen.reference))
        with progress.spinner(chosen.working):
            return baselines.run_prepared(
                key.strategy, pool.prepared, key.budget, key.selector, texts=pool.texts, **options
            )

    return _selections(key).fill(run)


def exact_ready(key: SelectionKey) -> bool:
    """Whether the exact optimum (or its refusal) for ``key``'s settings is already known."""
    return _selections(key.replace(strategy=EXACT.name)).filled


@dataclass(frozen=True)
class Optimum:
    """The exact optimum (``selection``) or why there is none (``message``); ``stopped``:
    what a search stopped by its node limit proved (best F found and an upper bound on the
    optimum), None for an optimum or a refusal."""

    selection: Selection | None
    message: str | None
    stopped: ExactResult | None = None


def exact(key: SelectionKey) -> Optimum:
    """The best F within the budget at the λ, α and τ of ``key``'s AdaGReS run (cached:
    the Selection page's ``exact`` strategy is the same entry). A refusal or a timeout is
    kept as ``message``."""
    try:
        return Optimum(selection(key.replace(strategy=EXACT.name)), None)
    except AdagresError as error:
        # A search stopped by its limit: what it proved (None for a refusal, any other error).
        stopped = error.result if isinstance(error, SolverError) else None
        return Optimum(None, str(error), stopped if isinstance(stopped, ExactResult) else None)


# --------------------------------------------------------------------------- λ derivation


def calibrations(key: SelectionKey) -> dict[str, Calibration]:
    """The adaptive-λ derivation of the pool at the budget, for each formula variant."""

    def run() -> dict[str, Calibration]:
        prepared = key.pool.get().prepared
        variants = {formula: key.selector.replace(formula=formula) for formula in FORMULAS}
        return {f: calibrate_prepared(prepared, key.budget, s) for f, s in variants.items()}

    return derived("calibrations", key.replace(strategy=ADAGRES.name)).fill(run)


def adaptive_lam(key: SelectionKey) -> float:
    """The λ that adaptive calibration gives with ``key``'s formula, scale, offset, top-N."""
    return calibrations(key)[key.selector.formula].lam


def lam_sweep_of(key: SelectionKey, lams: tuple[float, ...]) -> LamSweep:
    """AdaGReS at every λ of ``lams`` with ``key``'s other settings; cached, with a bar."""

    def run() -> LamSweep:
        with progress.bar(f"Selecting at {len(lams)} values of λ…") as report:
            return lam_sweep_prepared(
                key.pool.get().prepared, key.budget, key.selector, lams, progress=report
            )

    return _sweeps("lam", key.replace(strategy=ADAGRES.name), lams).fill(run)


def guarantee_of(key: SelectionKey) -> Guarantee:
    """δ, k and ε of the paper's bound at the λ of ``key``'s AdaGReS run."""
    greedy = key.replace(strategy=ADAGRES.name)

    def run() -> Guarantee:
        pool = key.pool.get()
        return guarantee(pool.prepared, pool.prepared.tokens, key.budget, selection(greedy).lam)

    return derived("guarantee", greedy).fill(run)


# --------------------------------------------------------------------------- compare


def metrics_of(key: SelectionKey) -> Metrics:
    """Every metric of the selection for ``key`` (gold and answers when the pool has them)."""

    def run() -> Metrics:
        pool = key.pool.get()
        return metrics.evaluate(
            selection(key),
            pool.prepared,
            gold=gold_positions(pool),
            answers=pool.answers or None,
            texts=pool.texts,
        )

    return derived("metrics", key).fill(run)


def budget_sweep_of(
    key: SelectionKey, budgets: tuple[int, ...], strategies: tuple[str, ...]
) -> BudgetSweep:
    """Every strategy at every budget with ``key``'s settings; cached, with a bar."""
    label = f"Running {len(strategies)} strategies at {len(budgets)} budgets…"

    def run() -> BudgetSweep:
        pool = key.pool.get()
        # budget_sweep takes the arrays and prepares the pool itself, once per sweep.
        with progress.bar(label) as report:
            prepared = pool.prepared
            return budget_sweep(
                prepared.query,
                prepared.chunks,
                prepared.tokens,
                budgets,
                strategies=strategies,
                settings=key.selector,
                texts=pool.texts,
                gold=gold_positions(pool),
                answers=pool.answers or None,
                progress=report,
                spans=prepared.spans,
            )

    # Neither the budget nor the strategy of the key matters here.
    return _sweeps("budget", key.pool, key.selector, budgets, strategies).fill(run)


# --------------------------------------------------------------------------- near-duplicates


@dataclass(frozen=True)
class NearDuplicates:
    """Pairs (i, j, cosine) with i < j and cosine ≥ ``threshold``, most similar first.

    ``total`` counts every such pair of the pool; ``pairs`` holds at most ``limit`` of them.
    """

    threshold: float
    total: int
    pairs: tuple[tuple[int, int, float], ...]


def near_duplicates(key: PoolKey, threshold: float, limit: int = 1000) -> NearDuplicates:
    """Near-duplicate pairs of the whole pool at ``threshold`` (cosine, inclusive)."""
    threshold, limit = float(threshold), int(limit)

    def run() -> NearDuplicates:
        with progress.spinner("Finding near-duplicate pairs…"):
            pairs = metrics.near_duplicate_pairs(key.get().prepared.chunks, None, threshold)
        shown = sorted(pairs, key=lambda p: (-p[2], p[0], p[1]))[:limit]  # most similar first
        return NearDuplicates(threshold=threshold, total=len(pairs), pairs=tuple(shown))

    return derived("pairs", key, threshold, limit).fill(run)


def near_duplicate_groups(key: PoolKey, threshold: float) -> tuple[tuple[int, ...], ...]:
    """Groups of pool positions linked by cosine ≥ ``threshold`` (largest group first)."""
    threshold = float(threshold)

    def run() -> tuple[tuple[int, ...], ...]:
        with progress.spinner("Finding near-duplicates…"):
            groups = metrics.near_duplicate_groups(key.get().prepared.chunks, threshold)
        return tuple(tuple(group) for group in groups)

    return derived("groups", key, threshold).fill(run)
