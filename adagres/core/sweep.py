"""Sweeps for the app's sensitivity views: λ at a fixed budget, budgets across strategies.

numpy only. Each sweep runs the public selectors with ``trace=False`` (the fast path, same
picks) and returns a frozen result of plain numbers the figure builders draw.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import AdagresError, InputError
from . import validate as v
from .arrays import frozen
from .baselines import run_prepared
from .calibration import calibrate_prepared
from .metrics import NEAR_DUPLICATE, evaluate
from .overlaps import Spans
from .prepared import PreparedPool, prepare
from .selection import select_prepared
from .settings import MAX_WEIGHT, Settings
from .strategies import ADAGRES, STRATEGIES, SWEPT

__all__ = [
    "BUDGET_COLUMNS",
    "LAM_GRID_POINTS",
    "BudgetSweep",
    "LamSweep",
    "budget_sweep",
    "default_lams",
    "lam_sweep",
    "lam_sweep_prepared",
]

#: Number of points of the default λ grid (the adaptive λ and any extra values are added).
LAM_GRID_POINTS = 60


@dataclass(frozen=True, eq=False)
class LamSweep:
    """One selection per λ of a grid, at a fixed pool and budget.

    Arrays are aligned with ``lams`` (increasing): ``objective`` (F at that λ),
    ``relevance_sum`` (Σ r_i over the set), ``redundancy_sum`` (Σ_{i<j} s_ij, cosine) and
    ``redundancy_mean`` (its mean over pairs, 0 below two chunks), ``size``, ``tokens``.
    ``indices`` are the picks in pick order. ``changes`` are the grid values at which the
    picked *set* differs from the one at the previous grid value (a change of order alone
    does not count).
    """

    lams: NDArray[np.float64]
    adaptive_lam: float
    budget: int
    policy: str
    objective: NDArray[np.float64]
    relevance_sum: NDArray[np.float64]
    redundancy_sum: NDArray[np.float64]
    redundancy_mean: NDArray[np.float64]
    size: NDArray[np.int64]
    tokens: NDArray[np.int64]
    indices: tuple[tuple[int, ...], ...]
    changes: tuple[float, ...]

    @property
    def change_positions(self) -> tuple[int, ...]:
        """Positions in ``lams`` of the values in ``changes``."""
        return tuple(int(k) for k in np.searchsorted(self.lams, self.changes))


def default_lams(
    adaptive_lam: float,
    *,
    points: int = LAM_GRID_POINTS,
    include: Iterable[float] = (),
    top: float | None = None,
) -> NDArray[np.float64]:
    """A grid from 0 to ``top`` (default 3·max(adaptive λ, 0.1)) with ``points`` values,
    plus the adaptive λ and ``include`` exactly; sorted, without duplicates. No value passes
    :data:`~adagres.core.settings.MAX_WEIGHT`, the largest λ a Settings value takes.

    >>> grid = default_lams(0.25, points=4)
    >>> grid.tolist()
    [0.0, 0.25, 0.5, 0.75]
    >>> 0.3 in default_lams(0.3).tolist()
    True
    """
    if top is None:
        top = 3.0 * max(float(adaptive_lam), 0.1)
    grid = np.linspace(0.0, min(float(top), MAX_WEIGHT), points)
    extra = [float(adaptive_lam), *(float(x) for x in include)]
    return np.unique(np.concatenate([grid, np.asarray(extra, dtype=np.float64)]))


def lam_sweep(
    query_embedding: ArrayLike,
    chunk_embeddings: ArrayLike,
    token_counts: ArrayLike,
    budget: int,
    lams: Iterable[float] | None = None,
    *,
    settings: Settings | None = None,
    include: Iterable[float] = (),
    progress: Callable[[float], None] | None = None,
    **options: object,
) -> LamSweep:
    """Run :func:`adagres.select` at every λ of a grid and record what the set becomes.

    ``settings`` (or its fields as keywords) apply to every run but λ; ``lams`` defaults to
    :func:`default_lams` around the adaptive λ of these settings (``formula``, ``scale``,
    ``offset``, ``lam_max``, ``calibration_top_n`` shape it), with ``include`` (e.g. a
    manual λ) added exactly. The pool is validated once for the whole sweep.

    >>> q = np.array([1.0, 0.0, 0.0])
    >>> C = np.array([[0.8, 0.6, 0.0], [0.8, 0.61, 0.0], [0.7, 0.0, 0.714]])  # 0, 1 near-twins
    >>> s = lam_sweep(q, C, [50, 50, 50], 100, [0.0, 1.0])
    >>> s.indices, s.changes
    (((0, 1), (0, 2)), (1.0,))
    """
    settings = Settings.of(settings, **options)
    pool = prepare(query_embedding, chunk_embeddings, token_counts)
    extra = [v.real(x, "include", minimum=0.0) for x in v.items(include, "include")]
    if lams is not None:
        lams = [v.real(x, "lams", minimum=0.0) for x in v.items(lams, "lams")]
        if not lams:
            raise InputError("lams: the grid is empty")
    return lam_sweep_prepared(
        pool, v.budget(budget), settings, lams, include=extra, progress=progress
    )


def lam_sweep_prepared(
    pool: PreparedPool,
    budget: int,
    settings: Settings,
    lams: Iterable[float] | None = None,
    *,
    include: Iterable[float] = (),
    progress: Callable[[float], None] | None = None,
) -> LamSweep:
    """:func:`lam_sweep` on a prepared pool (inputs trusted)."""
    adaptive = calibrate_prepared(pool, budget, settings.replace(lam="adaptive")).lam
    grid = default_lams(adaptive, include=include) if lams is None else np.unique(list(lams))
    columns: dict[str, list[float]] = {k: [] for k in ("F", "rel", "red", "mean", "size", "tok")}
    picks: list[tuple[int, ...]] = []
    for done, lam in enumerate(grid, start=1):
        s = select_prepared(pool, budget, settings.replace(lam=float(lam)), trace=False)
        k = s.size
        sub = pool.chunks[list(s.indices)]  # Σ_{i<j} s_ij over the picks
        pair_sum = float(np.triu((sub @ sub.T).astype(np.float64), k=1).sum()) if k >= 2 else 0.0
        columns["F"].append(s.objective)
        columns["rel"].append(float(s.relevance[list(s.indices)].sum()) if k else 0.0)
        columns["red"].append(pair_sum)
        columns["mean"].append(pair_sum / (k * (k - 1) / 2) if k >= 2 else 0.0)
        columns["size"].append(k)
        columns["tok"].append(s.tokens_used)
        picks.append(s.indices)
        if progress is not None:
            progress(done / len(grid))
    changes = tuple(
        float(grid[i]) for i in range(1, len(grid)) if sorted(picks[i]) != sorted(picks[i - 1])
    )
    return LamSweep(
        lams=frozen(np.asarray(grid, dtype=np.float64)),
        adaptive_lam=float(adaptive),
        budget=budget,
        policy=settings.policy,
        objective=frozen(np.asarray(columns["F"], dtype=np.float64)),
        relevance_sum=frozen(np.asarray(columns["rel"], dtype=np.float64)),
        redundancy_sum=frozen(np.asarray(columns["red"], dtype=np.float64)),
        redundancy_mean=frozen(np.asarray(columns["mean"], dtype=np.float64)),
        size=frozen(np.asarray(columns["size"], dtype=np.int64)),
        tokens=frozen(np.asarray(columns["tok"], dtype=np.int64)),
        indices=tuple(picks),
        changes=changes,
    )


#: Columns of every :class:`BudgetSweep` row, in order.
BUDGET_COLUMNS: tuple[str, ...] = (
    "strategy",
    "budget",
    "lam",
    "stop_reason",
    "size",
    "tokens_used",
    "budget_use",
    "objective",
    "relevance_sum",
    "relevance_mean",
    "redundancy_mean",
    "redundancy_max",
    "near_duplicates",
    "indices",
    "iou",
    "recall",
    "precision",
    "answer_found",
    "error",
)


@dataclass(frozen=True)
class BudgetSweep:
    """Metrics of every strategy at every budget, as a tidy table.

    ``rows`` holds one dict per (budget, strategy), keys :data:`BUDGET_COLUMNS`, budgets
    increasing and strategies in the order given; ``indices`` are the picks (pool positions,
    pick order). A strategy that refused a budget (the
    exact solver on a large pool) has its message in ``error`` and None metrics.
    ``objective`` is F at the λ in ``lam`` (the adaptive λ of that budget by default, the
    same for every strategy, so F is comparable across strategies).
    """

    budgets: tuple[int, ...]
    strategies: tuple[str, ...]
    rows: tuple[dict[str, object], ...]

    def series(self, metric: str) -> dict[str, list[object]]:
        """``metric`` per strategy, aligned with ``budgets`` (None where it is missing)."""
        if metric not in BUDGET_COLUMNS:
            raise InputError(f"metric: expected one of {', '.join(BUDGET_COLUMNS)}, got {metric!r}")
        out: dict[str, list[object]] = {s: [] for s in self.strategies}
        for row in self.rows:
            out[cast(str, row["strategy"])].append(row[metric])
        return out


def budget_sweep(
    query_embedding: ArrayLike,
    chunk_embeddings: ArrayLike,
    token_counts: ArrayLike,
    budgets: Iterable[int],
    *,
    strategies: Sequence[str] = SWEPT,
    settings: Settings | None = None,
    texts: Sequence[str] | None = None,
    gold: Iterable[int] | None = None,
    answers: Sequence[str] | None = None,
    near_duplicate: float = NEAR_DUPLICATE,
    progress: Callable[[float], None] | None = None,
    spans: Spans | None = None,
    **options: object,
) -> BudgetSweep:
    """Run each strategy at each budget (``trace=False``) and evaluate it.

    ``settings`` (or its fields as keywords) decide AdaGReS's run and, through
    :func:`adagres.baselines.run`, the λ and τ at which every baseline's F is reported.
    ``gold`` (pool positions) adds IoU, recall and precision; ``answers`` with ``texts``
    adds whether an answer occurs in the selected text. ``progress`` is called with the
    fraction done (0 < f <= 1) after each run. The pool is validated once. ``spans`` (a
    pool's ``prepared.spans``: where its chunks sit, and its tokenizer) lets packing read
    the pool's own offsets; without it, ``texts`` place the chunks by their shared edges.

    >>> q = np.array([1.0, 0.0, 0.0])
    >>> C = np.array([[0.8, 0.6, 0.0], [0.8, 0.61, 0.0], [0.7, 0.0, 0.714]])
    >>> sweep = budget_sweep(q, C, [50, 50, 50], [50, 100], strategies=("adagres", "topk_budget"))
    >>> sweep.series("size")
    {'adagres': [1, 1], 'topk_budget': [1, 2]}
    """
    settings = Settings.of(settings, **options)
    pool = prepare(query_embedding, chunk_embeddings, token_counts)
    budget_list = sorted({v.budget(b) for b in v.items(budgets, "budgets")})
    if not budget_list:
        raise InputError("budgets: no budget given")
    strategies = tuple(v.items(strategies, "strategies"))  # a single name is refused
    if not strategies:
        raise InputError("strategies: no strategy given")
    for name in strategies:
        v.choice(name, "strategies", STRATEGIES)
    if len(set(strategies)) != len(strategies):
        raise InputError(f"strategies: a strategy appears more than once in {strategies}")
    if texts is not None:
        texts = v.texts(texts, pool.n_chunks)
        pool = pool.with_texts(texts)
    if spans is not None:
        pool = pool.with_spans(spans)
    if answers is not None:
        answers = v.strings(answers, "answers")
    wordy = [name for name in strategies if STRATEGIES[name].needs_texts]
    if wordy and texts is None:
        raise InputError(f"strategies: {wordy[0]} needs the chunk texts (texts=...)")
    if answers and texts is None:
        raise InputError("answers: checking answers needs the chunk texts (texts=...)")
    # Pool positions, checked (a string, a fraction or a position outside the pool is refused).
    gold_list = None if gold is None else [int(g) for g in v.indices(gold, pool.n_chunks, "gold")]
    rows: list[dict[str, object]] = []
    total = len(budget_list) * len(strategies)
    for b in budget_list:
        reference = select_prepared(pool, b, settings, trace=False, texts=texts)
        for name in strategies:
            row: dict[str, object] = dict.fromkeys(BUDGET_COLUMNS)
            row["strategy"], row["budget"] = name, b
            # AdaGReS's run is the reference run; a strategy that takes its size from it gets it
            given = {"reference": reference} if STRATEGIES[name].reference == ADAGRES.name else {}
            try:
                if name == ADAGRES.name:
                    s = reference
                else:
                    s = run_prepared(name, pool, b, settings, texts=texts, trace=False, **given)
            except AdagresError as exc:
                row["error"] = str(exc)
            else:
                m = evaluate(
                    s,
                    pool,
                    gold=gold_list,
                    answers=answers,
                    texts=texts,
                    near_duplicate=near_duplicate,
                )
                row.update({k: val for k, val in m.as_dict().items() if k in row})
                row["lam"], row["stop_reason"] = s.lam, s.stop_reason.value
                row["indices"] = list(s.indices)
            rows.append(row)
            if progress is not None:
                progress(len(rows) / total)
    return BudgetSweep(budgets=tuple(budget_list), strategies=strategies, rows=tuple(rows))
