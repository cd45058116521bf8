"""Blocks of the Compare page: the two configurations' controls, the metrics shown, the
budget sweep's controls. A's and B's strategy, budget and λ are in the URL (``a_strategy``,
``a_budget``, ``a_lam``, ``b_…``); the sweep's controls are page-local (``cmp_`` keys)."""

from __future__ import annotations

from typing import Any, cast

import numpy as np
import pandas as pd
import streamlit as st

from adagres import Settings as Selector
from adagres.core.strategies import ADAGRES, STRATEGIES, SWEPT, TOPK_BUDGET, TOPK_SAME_K
from adagres.figures import METRIC_LABELS
from adagres.pools.pool import Pool

from . import compute, params, pools, state
from .sidebar import LAM_SLIDER_MAX, manual_start
from .state import AppSettings
from .tables import as_percent
from .text import STRATEGY_HELP, strategy_short

__all__ = [
    "METRIC_COLUMNS",
    "configurations",
    "metric_names",
    "metric_text",
    "metrics_frame",
    "metrics_view",
    "missing_note",
    "sweep_controls",
]

GOLD_METRICS = ("iou", "recall", "precision")
METRIC_COLUMNS = {
    "size": st.column_config.NumberColumn("chunks"),
    "tokens_used": st.column_config.NumberColumn("tokens used"),
    "budget_use": st.column_config.NumberColumn("budget use", format="%.1f%%"),  # as_percent
    "objective": st.column_config.NumberColumn("F", format="%.4f"),
    "relevance_sum": st.column_config.NumberColumn("Σ relevance", format="%.4f"),
    "relevance_mean": st.column_config.NumberColumn("mean relevance", format="%.4f"),
    "redundancy_mean": st.column_config.NumberColumn("mean pair cosine", format="%.4f"),
    "redundancy_max": st.column_config.NumberColumn("max pair cosine", format="%.4f"),
    "near_duplicates": st.column_config.NumberColumn("near-duplicate pairs"),
    # share of words in a word 8-gram already in the context (metrics.repeated_text)
    "repeated_text": st.column_config.NumberColumn("repeated text", format="%.1f%%"),
    "iou": st.column_config.NumberColumn("IoU with gold", format="%.3f"),
    "recall": st.column_config.NumberColumn("gold recall", format="%.3f"),
    "precision": st.column_config.NumberColumn("gold precision", format="%.3f"),
    "answer_found": st.column_config.CheckboxColumn("answer found"),
    "lam": st.column_config.NumberColumn("λ", format="%.4f"),
}


#: The URL options of each side: ``a_strategy``, ``a_budget``, ``a_lam`` (``adaptive`` or a
#: number), and the same with ``b_``.
SIDE_OPTIONS: dict[str, tuple[state.Option, state.Option, state.Option]] = {
    side: (
        state.Option(f"{side}_strategy", lambda s: params.one_of(s, STRATEGIES)),
        state.Option(f"{side}_budget", lambda s: params.whole(s, minimum=1)),
        # the core's own bounds on λ (NaN and inf too)
        state.Option(f"{side}_lam", lambda s: Selector(lam=params.lam(s)).lam, params.lam_text),
    )
    for side in ("a", "b")
}


#: The budget sweep's metric (``sweep=iou``); a metric the pool cannot have falls back.
SWEEP_METRIC = state.Option("sweep", lambda s: params.one_of(s, METRIC_LABELS))


def _follow_sidebar(settings: AppSettings) -> None:
    """Reset A and B to the sidebar's settings when the user changed those since the last
    run here (not when the view was just read from the address, which names A and B)."""
    lam = settings.selector.lam
    source = (settings.pool, settings.strategy, settings.budget, lam)
    previous = st.session_state.get("cmp_source")
    st.session_state["cmp_source"] = source
    if previous is None or previous == source or state.adopted():
        return
    for side, (strategy, budget, side_lam) in SIDE_OPTIONS.items():
        if side == "a":
            state.set_option(strategy, settings.strategy)
        state.set_option(budget, settings.budget)
        state.set_option(side_lam, lam)


def configurations(settings: AppSettings, high: int) -> dict[str, AppSettings]:
    """A and B: strategy, budget and λ of each, over the sidebar's other settings.

    A follows the sidebar (and B its budget and λ) until the user changes them here; a
    change of pool, strategy, budget or λ in the sidebar resets them to the new values.
    All six values are in the URL (:data:`SIDE_OPTIONS`).
    """
    _follow_sidebar(settings)
    configs = {}
    # B: top-k with AdaGReS's k against AdaGReS, AdaGReS against top-k until the budget (the
    # recommended preset's strategy), top-k until the budget against the rest.
    b_default = {ADAGRES.name: TOPK_SAME_K.name, TOPK_BUDGET.name: ADAGRES.name}.get(
        settings.strategy, TOPK_BUDGET.name
    )
    defaults = {"a": settings.strategy, "b": b_default}
    step = pools.budget_step(high)
    for column, (side, options) in zip(st.columns(2), SIDE_OPTIONS.items(), strict=True):
        strategy_option, budget_option, lam_option = options
        lam_default = settings.selector.lam

        def to_manual(mode: str, side: str = side) -> float | str:
            if mode == "adaptive":
                return "adaptive"
            budget = int(state.option(SIDE_OPTIONS[side][1], settings.budget))
            return manual_start(settings.replace(budget=budget))

        with column:
            st.subheader(side.upper())
            choice = state.bind_option(
                st.selectbox,
                strategy_option,
                f"cmp_{side}_strategy",
                "Strategy",
                options=list(STRATEGIES),
                default=defaults[side],
                format_func=strategy_short,
                help=STRATEGY_HELP,
            )
            budget = state.bind_option(
                st.number_input,
                budget_option,
                f"cmp_{side}_budget",
                "Budget (tokens)",
                default=settings.budget,
                min_value=1,
                max_value=high,
                step=step,
                to_widget=lambda b: min(max(int(b), 1), high),
                from_widget=int,
            )
            side_lam = state.bind_option(
                st.radio,
                lam_option,
                f"cmp_{side}_lam_mode",
                "λ",
                default=lam_default,
                options=("adaptive", "manual"),
                horizontal=True,
                to_widget=lambda v: "adaptive" if v == "adaptive" else "manual",
                from_widget=to_manual,
            )
            if side_lam != "adaptive":
                top = max(LAM_SLIDER_MAX, float(side_lam))
                side_lam = state.bind_option(
                    st.number_input,
                    lam_option,
                    f"cmp_{side}_lam",
                    "λ value",
                    default=lam_default,
                    min_value=0.0,
                    max_value=top,
                    step=0.01,
                    format="%.4f",
                    to_widget=float,
                    from_widget=float,
                )
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


def metrics_frame(pool: Pool, configs: dict[str, AppSettings], names: list[str]) -> pd.DataFrame:
    """One row per configuration: its metrics (from the cache)."""
    rows = []
    for name, config in configs.items():
        values = compute.metrics_of(compute.selection_key(config)).as_dict()
        rows.append({"config": name, **{m: values[m] for m in names}})
    return as_percent(as_percent(pd.DataFrame(rows), "budget_use"), "repeated_text")


def metric_text(name: str, value: Any) -> str:
    """A metric's value as the Compare table writes it (``budget_use`` and ``repeated_text``
    already in percent, written as the Selection page writes a share: "2.4%").

    >>> metric_text("tokens_used", 1234), metric_text("budget_use", 98.94), metric_text("iou", 0.5)
    ('1,234', '98.9%', '0.500')
    >>> metric_text("repeated_text", 2.4173)
    '2.4%'
    >>> metric_text("answer_found", True), metric_text("redundancy_mean", float("nan"))
    ('yes', '–')
    """
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "–"
    if name == "answer_found":
        return "yes" if value else "no"
    # the table's own format (counts have none: thousands separated)
    fmt = cast(dict[str, Any], METRIC_COLUMNS[name])["type_config"].get("format")
    return str(fmt % float(value)) if fmt else f"{int(value):,}"


def metrics_view(frame: pd.DataFrame) -> pd.DataFrame:
    """:func:`metrics_frame` turned on its side for reading: one row per metric (its full
    name), one column per configuration, values as text. Two narrow columns fit any width,
    where a column per metric was cut at 1024 px."""
    names = [c for c in frame.columns if c != "config"]
    view = {
        "metric": [
            str(METRIC_COLUMNS[m].get("label", m)) if m in METRIC_COLUMNS else m for m in names
        ]
    }
    for _, row in frame.iterrows():
        view[str(row["config"])] = [metric_text(m, row[m]) for m in names]
    return pd.DataFrame(view)


def sweep_controls(
    pool: Pool, high: int, strategy: str
) -> tuple[tuple[int, ...], tuple[str, ...], str]:
    """The budget range, the number of budgets, the strategies and the metric to draw.

    The strategies start as the sidebar's ``strategy`` and :data:`adagres.core.strategies.SWEPT`.
    Returns (budgets, strategies, metric); strategies may be empty.
    """
    options = [
        name
        for name, s in STRATEGIES.items()
        if not s.proves_optimum or len(pool) <= compute.EXACT_AUTO_MAX
    ]
    metrics = metric_names(pool, METRIC_LABELS)
    # Defaults before the widgets are drawn; values kept from another pool are brought in range.
    st.session_state.setdefault("cmp_sweep_range", (min(100, high - 1), min(2000, high)))
    st.session_state.setdefault("cmp_sweep_points", 10)
    st.session_state.setdefault("cmp_sweep_strategies", list(dict.fromkeys((strategy, *SWEPT))))
    first, last = (min(max(int(b), 1), high) for b in st.session_state["cmp_sweep_range"])
    st.session_state["cmp_sweep_range"] = (min(first, last), max(first, last))
    chosen = [s for s in st.session_state["cmp_sweep_strategies"] if s in options]
    st.session_state["cmp_sweep_strategies"] = chosen
    default_metric = "iou" if compute.gold_positions(pool) is not None else "objective"
    if state.option(SWEEP_METRIC, default_metric) not in metrics:  # e.g. no gold in this pool
        state.set_option(SWEEP_METRIC, default_metric, record=False)

    controls = st.columns([2, 1])
    picked = controls[0].slider(
        "Budgets from … to (tokens)", min_value=1, max_value=high, key="cmp_sweep_range"
    )
    lo, hi = cast(tuple[int, int], picked)
    points = controls[1].number_input(
        "Budgets", min_value=2, max_value=30, step=1, key="cmp_sweep_points"
    )
    # The strategies on a row of their own: their chips do not wrap.
    strategies = st.multiselect(
        "Strategies",
        options=options,
        key="cmp_sweep_strategies",
        help="exact is offered only for pools of at most "
        f"{compute.EXACT_AUTO_MAX} chunks (it can take seconds per budget).",
    )
    with st.columns([1, 2])[0]:
        metric = state.bind_option(
            st.selectbox,
            SWEEP_METRIC,
            "cmp_sweep_metric",
            "Metric",
            default=default_metric,
            options=metrics,
            format_func=METRIC_LABELS.get,
        )
    budgets = tuple(sorted({round(float(x)) for x in np.linspace(lo, hi, int(points))}))
    return budgets, tuple(strategies), metric
