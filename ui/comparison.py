"""Blocks of the Compare page: the two configurations' controls, the metrics shown, the
budget sweep's controls. Widgets here are page-local (``cmp_`` keys, not in the URL)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from adagres.core.baselines import STRATEGIES
from adagres.figures import METRIC_LABELS
from adagres.pools.pool import Pool

from . import compute
from .sidebar import LAM_SLIDER_MAX, manual_start
from .state import Settings

__all__ = [
    "METRIC_COLUMNS",
    "SWEEP_STRATEGIES",
    "configurations",
    "metric_names",
    "metrics_frame",
    "missing_note",
    "sweep_controls",
]

SWEEP_STRATEGIES = ("adagres", "topk_same_k", "topk_budget", "mmr")
GOLD_METRICS = ("iou", "recall", "precision")
METRIC_COLUMNS = {
    "size": st.column_config.NumberColumn("chunks"),
    "tokens_used": st.column_config.NumberColumn("tokens used"),
    "budget_use": st.column_config.NumberColumn("budget use", format="percent"),
    "objective": st.column_config.NumberColumn("F", format="%.4f"),
    "relevance_sum": st.column_config.NumberColumn("Σ relevance", format="%.4f"),
    "relevance_mean": st.column_config.NumberColumn("mean relevance", format="%.4f"),
    "redundancy_mean": st.column_config.NumberColumn("mean pair cosine", format="%.4f"),
    "redundancy_max": st.column_config.NumberColumn("max pair cosine", format="%.4f"),
    "near_duplicates": st.column_config.NumberColumn("near-duplicate pairs"),
    "iou": st.column_config.NumberColumn("IoU with gold", format="%.3f"),
    "recall": st.column_config.NumberColumn("gold recall", format="%.3f"),
    "precision": st.column_config.NumberColumn("gold precision", format="%.3f"),
    "answer_found": st.column_config.CheckboxColumn("answer found"),
    "lam": st.column_config.NumberColumn("λ", format="%.4f"),
}


def _init(key: str, value: object, force: bool = False) -> None:
    """Give a page widget its default (before it is drawn) unless the user set it already."""
    if force or key not in st.session_state:
        st.session_state[key] = value


def _manual_from_adaptive(settings: Settings, side: str) -> None:
    """On switching a side to manual λ: start at that side's adaptive λ."""
    if st.session_state[f"cmp_{side}_lam_mode"] == "manual":
        budget = int(st.session_state[f"cmp_{side}_budget"])
        st.session_state[f"cmp_{side}_lam"] = manual_start(settings.replace(budget=budget))


def configurations(settings: Settings, low: int, high: int) -> dict[str, Settings]:
    """A and B: strategy, budget and λ of each, over the sidebar's other settings.

    A follows the sidebar (and B its budget and λ) until the user changes them here; a
    change of pool, strategy, budget or λ in the sidebar resets them to the new values.
    """
    lam = settings.selector.lam
    source = (settings.pool, settings.strategy, settings.budget, lam)
    changed = st.session_state.get("cmp_source") != source
    st.session_state["cmp_source"] = source
    start = manual_start(settings) if lam == "adaptive" else float(lam)
    configs = {}
    for column, (side, strategy) in zip(
        st.columns(2), (("a", settings.strategy), ("b", "topk_same_k")), strict=True
    ):
        _init(f"cmp_{side}_strategy", strategy, changed and side == "a")
        _init(f"cmp_{side}_budget", settings.budget, changed)
        _init(f"cmp_{side}_lam_mode", settings.lam_mode, changed)
        _init(f"cmp_{side}_lam", start, changed)
        budget_key = f"cmp_{side}_budget"
        st.session_state[budget_key] = min(max(int(st.session_state[budget_key]), low), high)
        with column:
            st.subheader(side.upper())
            choice = st.selectbox("Strategy", options=STRATEGIES, key=f"cmp_{side}_strategy")
            budget = st.number_input("Budget (tokens)", min_value=low, max_value=high, step=50,
                                     key=budget_key)  # fmt: skip
            mode = st.radio("λ", options=("adaptive", "manual"), horizontal=True,
                            key=f"cmp_{side}_lam_mode", on_change=_manual_from_adaptive,
                            args=(settings, side))  # fmt: skip
            side_lam: Any = "adaptive"
            if mode == "manual":
                top = max(LAM_SLIDER_MAX, float(st.session_state[f"cmp_{side}_lam"]))
                side_lam = st.number_input("λ value", min_value=0.0, max_value=top, step=0.01,
                                           format="%.4f", key=f"cmp_{side}_lam")  # fmt: skip
        configs[side.upper()] = settings.replace(
            strategy=choice, budget=int(budget), lam=side_lam, step=None, chunk=None
        )
    return configs


def metric_names(pool: Pool, names: Any) -> list[str]:
    """``names`` without the gold metrics when the pool marks no gold chunk, and without
    ``answer_found`` when it has no answer strings."""
    shown = [m for m in names if m in METRIC_COLUMNS]
    if compute.gold_positions(pool) is None:
        shown = [m for m in shown if m not in GOLD_METRICS]
    if not pool.answers:
        shown = [m for m in shown if m != "answer_found"]
    return shown


def missing_note(pool: Pool) -> str | None:
    """Which metrics this pool cannot have, and why (None when it has them all)."""
    missing = []
    if compute.gold_positions(pool) is None:
        missing.append("gold labels (IoU, recall, precision)")
    if not pool.answers:
        missing.append("answer strings (answer found)")
    if not missing:
        return None
    return f"This pool has no {' and no '.join(missing)}, so those metrics are not shown."


def metrics_frame(pool: Pool, configs: dict[str, Settings], names: list[str]) -> pd.DataFrame:
    """One row per configuration: its metrics (from the cache)."""
    rows = []
    for name, config in configs.items():
        values = compute.metrics_of(compute.selection_key(config)).as_dict()
        rows.append({"config": name, **{m: values[m] for m in names}})
    return pd.DataFrame(rows)


def sweep_controls(pool: Pool, high: int) -> tuple[tuple[int, ...], tuple[str, ...], str]:
    """The budget range, the number of budgets, the strategies and the metric to draw.

    Returns (budgets, strategies, metric); strategies may be empty.
    """
    options = [s for s in STRATEGIES if s != "exact" or len(pool) <= compute.EXACT_AUTO_MAX]
    metrics = metric_names(pool, METRIC_LABELS)
    # Defaults before the widgets are drawn; values kept from another pool are brought in range.
    _init("cmp_sweep_range", (min(100, high - 1), min(2000, high)))
    _init("cmp_sweep_points", 10)
    _init("cmp_sweep_strategies", list(SWEEP_STRATEGIES))
    _init("cmp_sweep_metric", "iou" if compute.gold_positions(pool) is not None else "objective")
    first, last = (min(max(int(b), 1), high) for b in st.session_state["cmp_sweep_range"])
    st.session_state["cmp_sweep_range"] = (min(first, last), max(first, last))
    chosen = [s for s in st.session_state["cmp_sweep_strategies"] if s in options]
    st.session_state["cmp_sweep_strategies"] = chosen
    if st.session_state["cmp_sweep_metric"] not in metrics:
        st.session_state["cmp_sweep_metric"] = "objective"

    controls = st.columns([3, 1])
    lo, hi = controls[0].slider("Budgets from … to (tokens)", min_value=1, max_value=high,
                                key="cmp_sweep_range")  # fmt: skip
    points = controls[1].number_input("Budgets", min_value=2, max_value=30, step=1,
                                      key="cmp_sweep_points")  # fmt: skip
    controls = st.columns([3, 1])
    strategies = controls[0].multiselect(
        "Strategies",
        options=options,
        key="cmp_sweep_strategies",
        help="exact is offered only for pools of at most "
        f"{compute.EXACT_AUTO_MAX} chunks (it can take up to {compute.EXACT_TIME_LIMIT:g} s "
        "per budget).",
    )
    metric = controls[1].selectbox("Metric", options=metrics, format_func=METRIC_LABELS.get,
                                   key="cmp_sweep_metric")  # fmt: skip
    budgets = tuple(sorted({round(float(x)) for x in np.linspace(lo, hi, int(points))}))
    return budgets, tuple(strategies), metric
