"""λ derivation: Eq. 7 with the pool's numbers, sensitivity to λ, the bound against the optimum."""

import streamlit as st

from adagres import figures
from adagres.core.strategies import ADAGRES, STRATEGIES
from adagres.core.sweep import default_lams
from adagres.errors import AdagresError
from ui import compute, derivation, render, state, tables
from ui.sidebar import sidebar
from ui.text import count, strategy_label

GRID_POINTS = 60

# ---- controls
settings = sidebar()
st.title("λ derivation")
pool, key = render.current_pool(settings)
# This page explains AdaGReS, whatever strategy the sidebar shows elsewhere.
key = key.replace(strategy=ADAGRES.name)
if settings.strategy != ADAGRES.name:
    chosen = STRATEGIES.get(settings.strategy)
    uses = (
        "selects with this λ"
        if chosen is not None and chosen.weighs_lam
        else "does not select with λ; it only reports F at this λ"
    )
    st.caption(
        "This page derives λ for AdaGReS, the paper's method, from the sidebar's formula, "
        f"scale, offset and calibration pool. The sidebar's strategy, "
        f"{strategy_label(settings.strategy)}, {uses}. The λ sweep and the bound below run "
        "AdaGReS with the sidebar's settings."
    )

# ---- cached calls
try:
    calibrations = compute.calibrations(key)
    greedy = compute.selection(key)
except AdagresError as error:
    render.error(str(error))
    state.stop()
used = calibrations[settings.selector.formula]

# ---- render: the pool's numbers and Eq. 7
st.subheader("The pool's numbers")
derivation.pool_numbers(pool, settings, used, greedy)
st.subheader("Eq. 7: both readings")
derivation.formula_variants(settings, calibrations)

# ---- sensitivity: control, cached sweep, figure
st.subheader("Sensitivity to λ")
adaptive_lam = used.lam
manual_lam = None if settings.selector.adaptive else float(settings.selector.lam)
default_top = round(max(3.0 * max(adaptive_lam, 0.1), 1.25 * (manual_lam or 0.0)), 3)
top = st.number_input(
    "λ from 0 up to",
    min_value=0.001,
    value=default_top,
    step=0.05,
    format="%.3f",
    key="lam_sweep_top",
    help=f"{GRID_POINTS} evenly spaced values, plus the adaptive and the manual λ exactly.",
)
marks = [] if manual_lam is None else [manual_lam]
lams = tuple(default_lams(adaptive_lam, points=GRID_POINTS, include=marks, top=top).tolist())
sweep = compute.lam_sweep_of(key, lams)
render.chart(
    figures.sensitivity_figure(sweep, adaptive_lam=adaptive_lam, manual_lam=manual_lam),
    "lam_sensitivity",
)
st.caption(
    f"AdaGReS (policy {settings.selector.policy}) at every λ, budget {settings.budget} "
    "tokens. Diamonds mark the λ values where the picked set changes."
)
if not sweep.change_positions:
    st.info("The picked set is the same at every λ of this range.")
else:
    changes = len(sweep.change_positions)
    st.text(f"The picked set changes at {count(changes, 'value')} of λ:")
    render.table(
        tables.lam_changes_frame(pool, sweep),
        "lam_changes",
        {"λ": render.FOUR_PLACES, "F": render.FOUR_PLACES},
    )

# ---- the paper's guarantee, measured
st.subheader("The paper's guarantee, measured")
derivation.bound_against_optimum(pool, key, greedy, compute.guarantee_of(key))
state.sync_url()
