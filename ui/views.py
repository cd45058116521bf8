"""Cached computations of the analysis pages (Similarity, λ derivation, Compare).

Every function here is keyed on small values (pool key and fingerprint, budget, λ
settings, a threshold), never on arrays, like ``ui.data``. Long computations that report
progress (the λ and budget sweeps) go through :func:`with_progress`: Streamlit's own caches
would replay a progress bar drawn inside the cached function, so these results are kept in
a small process-wide store instead and the bar is drawn by the caller.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import streamlit as st

from adagres import baselines, metrics
from adagres.core.baselines import EXACT_MAX_CHUNKS as EXACT_MAX
from adagres.core.baselines import EXACT_TIME_LIMIT
from adagres.core.calibration import FORMULAS, Calibration, calibrate
from adagres.core.guarantee import Guarantee, guarantee
from adagres.core.metrics import Metrics, evaluate
from adagres.core.result import Selection
from adagres.core.sweep import BudgetSweep, LamSweep, budget_sweep, lam_sweep
from adagres.errors import AdagresError
from adagres.pools.pool import Pool

from . import data
from .state import Settings

__all__ = [
    "EXACT_AUTO_MAX",
    "EXACT_MAX",
    "EXACT_TIME_LIMIT",
    "ExactResult",
    "NearDuplicates",
    "budget_sweep_result",
    "calibrations",
    "chunks_that_fit",
    "configuration",
    "exact_cached",
    "exact_result",
    "gold_positions",
    "guarantee_for",
    "heatmap",
    "lam_sweep_result",
    "metrics_of",
    "near_duplicates",
    "with_progress",
]

#: The exact optimum is computed without asking when at most this many chunks fit the
#: budget (HiGHS proves it in about a second); up to :data:`EXACT_MAX`, on a button.
EXACT_AUTO_MAX = 20

T = TypeVar("T")


# --------------------------------------------------------------------------- pools


def gold_positions(pool: Pool) -> list[int] | None:
    """Pool positions of the chunks marked gold; None when the pool marks none."""
    gold = [i for i, chunk in enumerate(pool.chunks) if chunk.gold]
    return gold or None


def chunks_that_fit(pool: Pool, budget: int) -> int:
    """How many chunks are no longer than ``budget`` tokens (the exact solver's size)."""
    return int((np.asarray(pool.token_counts) <= budget).sum())


# --------------------------------------------------------------------------- progress store


class _Store:
    """A bounded, thread-safe map from small keys to results (least recently used dropped)."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self.lock = threading.Lock()
        self.items: OrderedDict[Hashable, Any] = OrderedDict()

    def get(self, key: Hashable) -> Any:
        with self.lock:
            if key not in self.items:
                return None
            self.items.move_to_end(key)
            return self.items[key]

    def put(self, key: Hashable, value: Any) -> None:
        with self.lock:
            self.items[key] = value
            self.items.move_to_end(key)
            while len(self.items) > self.max_entries:
                self.items.popitem(last=False)


@st.cache_resource(show_spinner=False)
def _store(name: str) -> _Store:
    del name  # one store per name
    return _Store(max_entries=32)


def with_progress(
    name: str, key: Hashable, compute: Callable[[Callable[[float], None]], T], label: str
) -> T:
    """``compute(progress)``, cached under ``(name, key)``; a progress bar while it runs.

    ``progress`` takes the fraction done (0 to 1). On a hit no bar is drawn.
    """
    store = _store(name)
    hit = store.get(key)
    if hit is not None:
        return hit
    bar = st.progress(0.0, text=label)

    def progress(fraction: float) -> None:
        bar.progress(min(max(float(fraction), 0.0), 1.0), text=label)

    result = compute(progress)
    bar.empty()
    store.put(key, result)
    return result


# --------------------------------------------------------------------------- similarity


@st.cache_resource(max_entries=16, show_spinner="Drawing the similarity heatmap…")
def _heatmap(
    selection_key: tuple[Any, ...], method: str, max_chunks: int, _settings: Settings
) -> tuple[Any, tuple[int, ...], int]:
    from adagres import figures

    pool = data.get_pool(selection_key[0])
    selection = data.run_selection(_settings)
    # Clustering is limited to the first M of the pick order, so the title is set here.
    order = figures.heatmap_order(selection, pool.embeddings, method=method, limit=max_chunks)
    n = len(pool)
    what = f"top {len(order)} of {n} chunks" if len(order) < n else f"{n} chunks"
    by = "pick order, then relevance" if method == "pick" else "clustered"
    figure = figures.similarity_heatmap(
        pool.embeddings,
        order=order,
        ids=pool.ids,
        texts=pool.texts,
        selected=selection.indices,
        max_chunks=max_chunks,
        title=f"Pairwise cosine similarity, {what} ({by})",
    )
    return figure, order, n


def heatmap(settings: Settings, method: str, max_chunks: int) -> tuple[Any, tuple[int, ...], int]:
    """(figure, pool positions shown in row order, pool size) for the current selection."""
    return _heatmap(data.selection_key(settings), method, int(max_chunks), settings)


@dataclass(frozen=True)
class NearDuplicates:
    """Pairs (i, j, cosine) with i < j and cosine ≥ ``threshold``, most similar first.

    ``total`` counts every such pair of the pool; ``pairs`` holds at most ``limit`` of them.
    """

    threshold: float
    total: int
    pairs: tuple[tuple[int, int, float], ...]


@st.cache_data(max_entries=32, show_spinner="Finding near-duplicate pairs…")
def _near_duplicates(key: str, fingerprint: str, threshold: float, limit: int) -> NearDuplicates:
    del fingerprint  # part of the cache key only
    pairs = metrics.near_duplicate_pairs(data.get_pool(key).embeddings, None, threshold)
    shown = sorted(pairs, key=lambda p: (-p[2], p[0], p[1]))[:limit]  # most similar first
    return NearDuplicates(threshold=threshold, total=len(pairs), pairs=tuple(shown))


def near_duplicates(key: str, threshold: float, limit: int = 1000) -> NearDuplicates:
    """Near-duplicate pairs of the whole pool at ``threshold`` (cosine, inclusive)."""
    return _near_duplicates(key, data.get_pool(key).fingerprint, float(threshold), int(limit))


# --------------------------------------------------------------------------- λ derivation


@st.cache_data(max_entries=64, show_spinner=False)
def _calibrations(
    key: str, fingerprint: str, budget: int, scale: float, offset: float
) -> dict[str, Calibration]:
    del fingerprint
    pool = data.get_pool(key)
    return {
        formula: calibrate(
            pool.query_embedding,
            pool.embeddings,
            pool.token_counts,
            budget,
            formula=formula,
            scale=scale,
            offset=offset,
        )
        for formula in FORMULAS
    }


def calibrations(settings: Settings) -> dict[str, Calibration]:
    """The adaptive-λ derivation of the pool at the budget, for each formula variant."""
    pool = data.get_pool(settings.pool)
    return _calibrations(
        settings.pool, pool.fingerprint, settings.budget, settings.scale, settings.offset
    )


def lam_sweep_result(settings: Settings, lams: tuple[float, ...]) -> LamSweep:
    """AdaGReS at every λ of ``lams`` (sidebar policy, formula and floor); cached, with a bar."""
    pool = data.get_pool(settings.pool)
    key = (settings.pool, pool.fingerprint, settings.budget, settings.policy, settings.formula,
           settings.scale, settings.offset, settings.redundancy_floor, lams)  # fmt: skip

    def compute(progress: Callable[[float], None]) -> LamSweep:
        return lam_sweep(
            pool.query_embedding,
            pool.embeddings,
            pool.token_counts,
            settings.budget,
            lams,
            policy=settings.policy,
            formula=settings.formula,
            scale=settings.scale,
            offset=settings.offset,
            redundancy_floor=settings.redundancy_floor,
            progress=progress,
        )

    return with_progress("lam_sweep", key, compute, f"Selecting at {len(lams)} values of λ…")


@st.cache_data(max_entries=64, show_spinner=False)
def _guarantee(key: str, fingerprint: str, budget: int, lam: float) -> Guarantee:
    del fingerprint
    pool = data.get_pool(key)
    return guarantee(pool.embeddings, pool.token_counts, budget, lam)


def guarantee_for(settings: Settings, lam: float) -> Guarantee:
    """δ, k and ε of the paper's bound for the pool, the budget and ``lam``."""
    pool = data.get_pool(settings.pool)
    return _guarantee(settings.pool, pool.fingerprint, settings.budget, float(lam))


@dataclass(frozen=True)
class ExactResult:
    """The exact optimum (``selection``) or why there is none (``message``)."""

    selection: Selection | None
    message: str | None


def _exact_key(pool_key: str, greedy: Selection) -> tuple[Any, ...]:
    pool = data.get_pool(pool_key)
    return (pool_key, pool.fingerprint, greedy.budget, float(greedy.lam), float(greedy.alpha),
            greedy.redundancy_floor)  # fmt: skip


def exact_cached(pool_key: str, greedy: Selection) -> ExactResult | None:
    """The exact optimum for ``greedy``'s pool, budget, λ, α and floor if already computed."""
    return _store("exact").get(_exact_key(pool_key, greedy))


def exact_result(pool_key: str, greedy: Selection) -> ExactResult:
    """The best F within the greedy's budget at the greedy's λ, α and floor (cached).

    A refusal or a timeout is cached too (as ``message``), so it is not retried.
    """
    key = _exact_key(pool_key, greedy)
    hit = _store("exact").get(key)
    if hit is not None:
        return hit
    pool = data.get_pool(pool_key)
    try:
        selection = baselines.exact(
            pool.query_embedding,
            pool.embeddings,
            pool.token_counts,
            greedy.budget,
            lam=float(greedy.lam),
            alpha=float(greedy.alpha),
            redundancy_floor=greedy.redundancy_floor,
        )
    except AdagresError as error:
        result = ExactResult(None, str(error))
    else:
        result = ExactResult(selection, None)
    _store("exact").put(key, result)
    return result


# --------------------------------------------------------------------------- compare


@st.cache_resource(max_entries=64, show_spinner=False)
def _metrics(selection_key: tuple[Any, ...], _settings: Settings) -> Metrics:
    pool = data.get_pool(selection_key[0])
    selection = data.run_selection(_settings)
    return evaluate(
        selection,
        pool.embeddings,
        gold=gold_positions(pool),
        answers=pool.answers or None,
        texts=pool.texts,
    )


def metrics_of(settings: Settings) -> Metrics:
    """Every metric of the selection these settings give (gold and answers when present)."""
    return _metrics(data.selection_key(settings), settings)


def configuration(settings: Settings, **changes: Any) -> Settings:
    """``settings`` with some fields replaced and no replay step or inspected chunk."""
    return dataclasses.replace(settings, **changes, step=None, chunk=None)


def budget_sweep_result(
    settings: Settings, budgets: tuple[int, ...], strategies: tuple[str, ...]
) -> BudgetSweep:
    """Every strategy at every budget, at the sidebar's λ setting; cached, with a bar."""
    pool = data.get_pool(settings.pool)
    key = (settings.pool, pool.fingerprint, budgets, strategies, settings.lam_arg,
           settings.formula, settings.policy, settings.scale, settings.offset,
           settings.redundancy_floor)  # fmt: skip

    def compute(progress: Callable[[float], None]) -> BudgetSweep:
        return budget_sweep(
            pool.query_embedding,
            pool.embeddings,
            pool.token_counts,
            budgets,
            strategies=strategies,
            texts=pool.texts,
            gold=gold_positions(pool),
            answers=pool.answers or None,
            lam=settings.lam_arg,
            formula=settings.formula,
            policy=settings.policy,
            scale=settings.scale,
            offset=settings.offset,
            redundancy_floor=settings.redundancy_floor,
            progress=progress,
        )

    label = f"Running {len(strategies)} strategies at {len(budgets)} budgets…"
    return with_progress("budget_sweep", key, compute, label)
