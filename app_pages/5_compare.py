"""Compare: two configurations side by side, and every strategy across a range of budgets."""

import streamlit as st

from adagres.core.result import Selection
from adagres.errors import AdagresError
from adagres.figures import budget_sweep_figure
from ui import charts, comparison, compute, pools, render, state, tables
from ui.comparison import METRIC_COLUMNS
from ui.sidebar import sidebar
from ui.text import count, reference_code_note

GAIN = {"gain": st.column_config.NumberColumn(format="%+.4f")}

# ---- controls
settings = sidebar()
st.title("Compare")
pool, key = render.current_pool(settings)
high = pools.budget_max(pool)
configs = comparison.configurations(settings, high)
st.caption(
    f"Both use the sidebar's policy ({settings.selector.policy}), formula "
    f"({settings.selector.formula}), scale, offset, calibration pool and redundancy floor. "
    "Baselines report F at the λ AdaGReS uses for the same budget, so F is comparable."
)

# ---- cached calls
selections: dict[str, Selection] = {}
for name, config in configs.items():
    try:
        selections[name] = compute.selection(compute.selection_key(config))
    except AdagresError as error:
        st.warning(render.escape_md(f"{name} ({config.strategy}) gives no selection: {error}"))

# ---- render: picks, difference, metrics
for column, (name, selection) in zip(st.columns(2), selections.items(), strict=False):
    with column:
        st.text(
            f"{name}: {selection.strategy} · {selection.budget} tokens · λ {selection.lam:.4f} "
            f"({configs[name].lam_mode})"
        )
        if selection.size == 0:
            st.info(f"{name} selects nothing at these settings.")
        note = reference_code_note(selection)
        if note:
            st.caption(render.escape_md(note))
        render.table(tables.pick_frame(pool, selection), f"cmp_{name.lower()}_picks", GAIN)

if len(selections) == 2:
    in_a, in_b = set(selections["A"].indices), set(selections["B"].indices)
    st.subheader("Difference")
    render.metrics(
        [
            ("only in A", len(in_a - in_b)),
            ("in both", len(in_a & in_b)),
            ("only in B", len(in_b - in_a)),
        ]
    )
    difference = tables.difference_frame(pool, selections["A"], selections["B"])
    map_column, table_column = st.columns(2)
    with map_column:
        overlay, method, pending = charts.overlay(key, selections["A"], selections["B"])
        render.chart(overlay, "cmp_overlay")
        render.projection_note(method, pending)
    with table_column:
        render.table(difference, "cmp_difference", render.RELEVANCE)

if selections:
    st.subheader("Metrics")
    shown = comparison.metric_names(pool, [m for m in METRIC_COLUMNS if m != "lam"])
    ready = {name: configs[name] for name in selections}
    metrics = comparison.metrics_frame(pool, ready, shown)
    render.table(comparison.metrics_view(metrics), "cmp_metrics")
    note = comparison.missing_note(pool)
    if note:
        st.info(note)

# ---- budget sweep: controls, cached call, figure
st.subheader("Across budgets")
if high < 2:
    st.info("The pool has too few tokens for a budget sweep.")
    state.stop()
budgets, strategies, metric = comparison.sweep_controls(pool, high, settings.strategy)
if not strategies:
    st.info("Choose at least one strategy to sweep.")
    state.stop()
sweep = compute.budget_sweep_of(key, budgets, strategies)
render.chart(budget_sweep_figure(sweep, metric=metric), "cmp_sweep")
lam_note = (
    f"AdaGReS's adaptive λ at each budget ({settings.selector.formula} formula)"
    if settings.lam_mode == "adaptive"
    else f"λ = {settings.selector.lam:g}"
)
st.caption(
    f"{count(len(budgets), 'budget')} from {budgets[0]} to {budgets[-1]} tokens; F at {lam_note}; "
    f"policy {settings.selector.policy}."
)
failed = [row for row in sweep.rows if row["error"]]
if failed:
    first = failed[0]
    st.warning(
        render.escape_md(
            f"{count(len(failed), 'run')} gave no selection (gaps in the lines), e.g. "
            f"{first['strategy']} at {first['budget']} tokens: {first['error']}"
        )
    )
with st.expander("Sweep table"):
    render.table(tables.sweep_frame(sweep), "cmp_sweep_rows", METRIC_COLUMNS)
state.sync_url()
