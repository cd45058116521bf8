"""Compare: two configurations side by side, and every strategy across a range of budgets."""

import numpy as np
import pandas as pd
import streamlit as st

from adagres.core.baselines import STRATEGIES
from adagres.core.result import Selection
from adagres.errors import AdagresError
from adagres.figures import METRIC_LABELS, budget_sweep_figure
from ui import data, render, state, views
from ui.sidebar import LAM_SLIDER_MAX, sidebar
from ui.state import Settings

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

# ---- controls
settings = sidebar()
st.title("Compare")
pool = render.current_pool(settings)
low, high = data.budget_limits(pool)
gold = views.gold_positions(pool)
has_answers = bool(pool.answers)


def init(key: str, value: object, force: bool) -> None:
    """Give a page widget its default (before it is drawn) unless the user set it already."""
    if force or key not in st.session_state:
        st.session_state[key] = value


# A follows the sidebar (and B its budget and λ) until the user changes them here; a change
# in the sidebar resets them to the new sidebar values.
source = (settings.pool, settings.strategy, settings.budget, settings.lam_mode, settings.lam)
changed = st.session_state.get("cmp_source") != source
st.session_state["cmp_source"] = source
for side, strategy in (("a", settings.strategy), ("b", "topk_same_k")):
    init(f"cmp_{side}_strategy", strategy, changed and side == "a")
    init(f"cmp_{side}_budget", settings.budget, changed)
    init(f"cmp_{side}_lam_mode", settings.lam_mode, changed)
    init(f"cmp_{side}_lam", settings.lam, changed)
    budget_key = f"cmp_{side}_budget"
    st.session_state[budget_key] = min(max(int(st.session_state[budget_key]), low), high)

configs = {}
columns = st.columns(2)
for column, side in zip(columns, ("a", "b"), strict=True):
    with column:
        st.subheader(side.upper())
        strategy = st.selectbox("Strategy", options=STRATEGIES, key=f"cmp_{side}_strategy")
        budget = st.number_input(
            "Budget (tokens)", min_value=low, max_value=high, step=50, key=f"cmp_{side}_budget"
        )
        lam_mode = st.radio(
            "λ", options=("adaptive", "manual"), horizontal=True, key=f"cmp_{side}_lam_mode"
        )
        lam = settings.lam
        if lam_mode == "manual":
            lam = st.number_input(
                "λ value",
                min_value=0.0,
                max_value=max(LAM_SLIDER_MAX, float(st.session_state[f"cmp_{side}_lam"])),
                step=0.01,
                format="%.4f",
                key=f"cmp_{side}_lam",
            )
        configs[side.upper()] = views.configuration(
            settings, strategy=strategy, budget=int(budget), lam_mode=lam_mode, lam=float(lam)
        )
st.caption(
    f"Both use the sidebar's policy ({settings.policy}), formula ({settings.formula}), scale, "
    "offset and redundancy floor. Baselines report F at the λ AdaGReS uses for the same "
    "budget, so F is comparable."
)

# ---- cached calls
selections: dict[str, Selection] = {}
for name, config in configs.items():
    try:
        selections[name] = data.run_selection(config)
    except AdagresError as error:
        st.warning(render.escape_md(f"{name} ({config.strategy}) gives no selection: {error}"))


def describe(config: Settings, selection: Selection) -> str:
    mode = "adaptive" if config.lam_mode == "adaptive" else "manual"
    return f"{selection.strategy} · {selection.budget} tokens · λ {selection.lam:.4f} ({mode})"


def pick_frame(selection: Selection) -> pd.DataFrame:
    """The picks in order with their tokens and the marginal gain they had when picked."""
    accepted = [step for step in selection.steps if step.accepted]
    return pd.DataFrame(
        {
            "order": range(1, len(accepted) + 1),
            "id": [pool.ids[step.winner] for step in accepted],
            "tokens": [int(step.winner_tokens) for step in accepted],
            "gain": [step.gain for step in accepted],
        }
    )


# ---- render: picks, difference, metrics
if selections:
    columns = st.columns(2)
    for column, (name, selection) in zip(columns, selections.items(), strict=False):
        with column:
            st.text(f"{name}: {describe(configs[name], selection)}")
            if selection.size == 0:
                st.info(f"{name} selects nothing at these settings.")
            st.dataframe(
                pick_frame(selection),
                key=f"cmp_{name.lower()}_picks",
                hide_index=True,
                width="stretch",
                column_config={"gain": st.column_config.NumberColumn(format="%+.4f")},
            )

if len(selections) == 2:
    in_a, in_b = set(selections["A"].indices), set(selections["B"].indices)
    st.subheader("Difference")
    counts = st.columns(3)
    counts[0].metric("only in A", len(in_a - in_b))
    counts[1].metric("in both", len(in_a & in_b))
    counts[2].metric("only in B", len(in_b - in_a))
    union = sorted(in_a | in_b)
    where = {i: "both" if i in in_a and i in in_b else "A only" if i in in_a else "B only"
             for i in union}  # fmt: skip
    rank = {"A only": 0, "both": 1, "B only": 2}
    union.sort(key=lambda i: (rank[where[i]], i))
    st.dataframe(
        pd.DataFrame(
            {
                "id": [pool.ids[i] for i in union],
                "in": [where[i] for i in union],
                "tokens": [int(pool.token_counts[i]) for i in union],
                "relevance": [float(selections["A"].relevance[i]) for i in union],
                "text": [pool.texts[i] for i in union],
            }
        ),
        key="cmp_difference",
        hide_index=True,
        width="stretch",
        column_config={"relevance": st.column_config.NumberColumn(format="%.4f")},
    )

if selections:
    st.subheader("Metrics")
    shown = [m for m in METRIC_COLUMNS if m != "lam"]
    if gold is None:
        shown = [m for m in shown if m not in GOLD_METRICS]
    if not has_answers:
        shown.remove("answer_found")
    rows = []
    for name in selections:
        values = views.metrics_of(configs[name]).as_dict()
        rows.append({"config": name, **{m: values[m] for m in shown}})
    st.dataframe(
        pd.DataFrame(rows),
        key="cmp_metrics",
        hide_index=True,
        width="stretch",
        column_config=METRIC_COLUMNS,
    )
    missing = []
    if gold is None:
        missing.append("gold labels (IoU, recall, precision)")
    if not has_answers:
        missing.append("answer strings (answer found)")
    if missing:
        st.info(f"This pool has no {' and no '.join(missing)}, so those metrics are not shown.")

# ---- budget sweep
st.subheader("Across budgets")
if high < 2:
    st.info("The pool has too few tokens for a budget sweep.")
    st.stop()
options = [s for s in STRATEGIES if s != "exact" or len(pool) <= views.EXACT_AUTO_MAX]
metrics = [m for m in METRIC_LABELS if m in METRIC_COLUMNS]
if gold is None:
    metrics = [m for m in metrics if m not in GOLD_METRICS]
if not has_answers:
    metrics.remove("answer_found")
# Defaults before the widgets are drawn; values kept from another pool are brought in range.
init("cmp_sweep_range", (min(100, high - 1), min(2000, high)), False)
init("cmp_sweep_points", 10, False)
init("cmp_sweep_strategies", list(SWEEP_STRATEGIES), False)
init("cmp_sweep_metric", "iou" if gold is not None else "objective", False)
first, last = (min(max(int(b), 1), high) for b in st.session_state["cmp_sweep_range"])
st.session_state["cmp_sweep_range"] = (min(first, last), max(first, last))
chosen = [s for s in st.session_state["cmp_sweep_strategies"] if s in options]
st.session_state["cmp_sweep_strategies"] = chosen
if st.session_state["cmp_sweep_metric"] not in metrics:
    st.session_state["cmp_sweep_metric"] = "objective"

controls = st.columns([3, 1])
lo, hi = controls[0].slider(
    "Budgets from … to (tokens)", min_value=1, max_value=high, key="cmp_sweep_range"
)
points = controls[1].number_input(
    "Budgets", min_value=2, max_value=30, step=1, key="cmp_sweep_points"
)
controls = st.columns([3, 1])
strategies = controls[0].multiselect(
    "Strategies",
    options=options,
    key="cmp_sweep_strategies",
    help="exact is offered only for pools of at most "
    f"{views.EXACT_AUTO_MAX} chunks (it can take up to {views.EXACT_TIME_LIMIT:g} s per budget).",
)
metric = controls[1].selectbox(
    "Metric", options=metrics, format_func=METRIC_LABELS.get, key="cmp_sweep_metric"
)
if not strategies:
    st.info("Choose at least one strategy to sweep.")
    st.stop()
budgets = tuple(sorted({round(float(x)) for x in np.linspace(lo, hi, int(points))}))
sweep = views.budget_sweep_result(settings, budgets, tuple(strategies))
st.plotly_chart(budget_sweep_figure(sweep, metric=metric), key="cmp_sweep", width="stretch")
lam_note = (
    f"AdaGReS's adaptive λ at each budget ({settings.formula} formula)"
    if settings.lam_mode == "adaptive"
    else f"λ = {settings.lam:g}"
)
st.caption(
    f"{len(budgets)} budgets from {budgets[0]} to {budgets[-1]} tokens; F at {lam_note}; "
    f"policy {settings.policy}."
)
failed = [row for row in sweep.rows if row["error"]]
if failed:
    first = failed[0]
    st.warning(
        render.escape_md(
            f"{len(failed)} runs gave no selection (gaps in the lines), e.g. "
            f"{first['strategy']} at {first['budget']} tokens: {first['error']}"
        )
    )
with st.expander("Sweep table"):
    table = pd.DataFrame([{k: v for k, v in row.items() if k != "indices"} for row in sweep.rows])
    st.dataframe(
        table, key="cmp_sweep_rows", hide_index=True, width="stretch", column_config=METRIC_COLUMNS
    )
state.sync_url()
