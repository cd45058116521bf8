"""λ derivation: Eq. 7 with the pool's numbers, sensitivity to λ, the bound against the optimum."""

import math

import pandas as pd
import streamlit as st

from adagres import figures
from adagres.core.calibration import FALLBACK_LAM
from adagres.core.sweep import default_lams
from adagres.errors import AdagresError
from ui import data, render, state, views
from ui.sidebar import sidebar

GRID_POINTS = 60
FALLBACK_WHY = {
    "pool_too_small": "the pool has fewer than 2 chunks, so ρ̄ (a mean over pairs) is undefined",
    "expected_k_at_most_one": "k̄ = T / L̄ ≤ 1: the budget holds about one average chunk or "
    "less, so (k̄ − 1) ≤ 0 and there is no pair whose redundancy λ could balance",
    "mean_similarity_not_positive": "ρ̄ ≤ 0: on average the chunks are not similar, so the "
    "formula's denominator is not positive",
}


def tex(value: float | None, fmt: str = ".4f") -> str:
    """A number for st.latex (n/a for None, NaN or infinity)."""
    if value is None or not math.isfinite(value):
        return r"\text{n/a}"
    return format(value, fmt)


def text(value: float | None, fmt: str = ".4f") -> str:
    """A number for a metric (– for None, NaN or infinity)."""
    if value is None or not math.isfinite(value):
        return "–"
    return format(value, fmt)


# ---- controls
settings = sidebar()
st.title("λ derivation")
pool = render.current_pool(settings)
# This page explains AdaGReS, whatever strategy the sidebar shows elsewhere.
greedy_settings = views.configuration(settings, strategy="adagres")

# ---- cached calls
try:
    calibrations = views.calibrations(settings)
    greedy = data.run_selection(greedy_settings)
except AdagresError as error:
    render.error(str(error))
    st.stop()
used = calibrations[settings.formula]

# ---- the pool's numbers
st.subheader("The pool's numbers")
st.caption(
    f"N = {len(pool)} chunks, budget T = {settings.budget} tokens, α = {used.alpha:g}. "
    "Numbers only: no chunk text is used here."
)
cells = st.columns(5)
cells[0].metric("L̄ (mean tokens)", text(used.mean_tokens, ".2f"))
cells[1].metric("k̄ = T / L̄", text(used.expected_k, ".3f"))
cells[2].metric("r̄ (mean relevance)", text(used.mean_relevance))
cells[3].metric("ρ̄ (mean pair cosine)", text(used.mean_similarity))
cells[4].metric("λ used", text(greedy.lam))
st.latex(
    rf"\bar L = \frac{{1}}{{N}}\sum_i \ell_i = {tex(used.mean_tokens, '.2f')}"
    rf"\qquad \bar k = \frac{{T}}{{\bar L}} = \frac{{{settings.budget}}}"
    rf"{{{tex(used.mean_tokens, '.2f')}}} = {tex(used.expected_k, '.3f')}"
)
st.latex(
    rf"\bar r = \frac{{1}}{{N}}\sum_i q \cdot c_i = {tex(used.mean_relevance)}"
    rf"\qquad \bar\rho = \frac{{\lVert \sum_i c_i \rVert^2 - N}}{{N(N-1)}}"
    rf" = {tex(used.mean_similarity)}"
)

# ---- both formula variants
st.subheader("Eq. 7: both readings")
if used.fallback is not None:
    st.warning(
        f"Fallback: {FALLBACK_WHY[used.fallback]}. λ falls back to {FALLBACK_LAM:g}, the value "
        f"in the authors' code (case: {used.fallback.replace('_', ' ')})."
    )
variants = st.columns(2)
titles = {"paper": "paper: Eq. 7 as printed", "derived": "derived: what Eqs. 5–6 give"}
k_tex = {"paper": r"\frac{\bar k - 1}{2}", "derived": r"(\bar k - 1)"}
for column, (formula, calibration) in zip(variants, calibrations.items(), strict=True):
    with column:
        in_use = settings.lam_mode == "adaptive" and formula == settings.formula
        st.markdown(f"**{titles[formula]}**" + (" · in use" if in_use else ""))
        if calibration.fallback is None:
            st.latex(
                rf"\lambda^* = \frac{{\alpha\,\bar r}}{{{k_tex[formula]}\,\bar\rho}}"
                rf" = \frac{{{calibration.alpha:g} \cdot {tex(calibration.mean_relevance)}}}"
                rf"{{{tex(calibration.k_factor)} \cdot {tex(calibration.mean_similarity)}}}"
                rf" = {tex(calibration.lam_star)}"
            )
            clip = r",\ \text{clipped}" if calibration.clipped else ""
            st.latex(
                rf"\lambda = \max(0,\ {calibration.scale:g}\,\lambda^* {calibration.offset:+g})"
                rf" = {tex(calibration.lam)}{clip}"
            )
        else:
            st.latex(rf"\lambda = {tex(calibration.lam)}\quad\text{{(fallback)}}")
        metrics = st.columns(2)
        metrics[0].metric(f"λ* ({formula})", text(calibration.lam_star))
        metrics[1].metric(f"λ ({formula})", text(calibration.lam))
if settings.lam_mode == "manual":
    st.info(
        f"λ is set by hand to {settings.lam:g} in the sidebar; the adaptive values are shown "
        "for reference and marked on the plot below."
    )

# ---- sensitivity
st.subheader("Sensitivity to λ")
adaptive_lam = used.lam
manual_lam = settings.lam if settings.lam_mode == "manual" else None
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
sweep = views.lam_sweep_result(settings, lams)
st.plotly_chart(
    figures.sensitivity_figure(sweep, adaptive_lam=adaptive_lam, manual_lam=manual_lam),
    key="lam_sensitivity",
    width="stretch",
)
st.caption(
    f"AdaGReS (policy {settings.policy}) at every λ, budget {settings.budget} tokens. "
    "Diamonds mark the λ values where the picked set changes."
)
# Grid positions where the picked set (not just its order) differs from the previous λ.
changes = sweep.change_positions
if not changes:
    st.info("The picked set is the same at every λ of this range.")
else:
    rows = []
    for k in changes:
        before, after = set(sweep.indices[k - 1]), set(sweep.indices[k])
        rows.append(
            {
                "λ": float(sweep.lams[k]),
                "chunks": int(sweep.size[k]),
                "tokens": int(sweep.tokens[k]),
                "F": float(sweep.objective[k]),
                "added": ", ".join(pool.ids[i] for i in sweep.indices[k] if i not in before),
                "removed": ", ".join(pool.ids[i] for i in sweep.indices[k - 1] if i not in after),
            }
        )
    st.text(f"The picked set changes at {len(changes)} values of λ:")
    st.dataframe(
        pd.DataFrame(rows),
        key="lam_changes",
        hide_index=True,
        width="stretch",
        column_config={
            "λ": st.column_config.NumberColumn(format="%.4f"),
            "F": st.column_config.NumberColumn(format="%.4f"),
        },
    )

# ---- the paper's guarantee
st.subheader("The paper's guarantee, measured")
bound_terms = views.guarantee_for(settings, greedy.lam)
cells = st.columns(3)
cells[0].metric("δ (max pair cosine)", text(bound_terms.delta))
cells[1].metric("k (largest set that fits)", bound_terms.k_max)
cells[2].metric("ε = λ·k·δ", text(bound_terms.epsilon))
st.latex(
    rf"\varepsilon = \lambda k \delta = {tex(bound_terms.lam)} \cdot {bound_terms.k_max}"
    rf" \cdot {tex(bound_terms.delta)} = {tex(bound_terms.epsilon)}"
    r"\qquad F(S_{\text{greedy}}) \ge \left(1 - \tfrac{1}{e}\right)\mathrm{OPT}"
    r" - \frac{k\,\varepsilon}{e}"
)
st.caption(
    "The paper's proof covers neither the knapsack constraint nor the non-monotone "
    "objective, so the bound is checked here against the exact optimum where it can be solved."
)

fit = views.chunks_that_fit(pool, settings.budget)
solved = views.exact_cached(settings.pool, greedy)
if solved is None and fit <= views.EXACT_AUTO_MAX:
    with st.spinner(f"Solving exactly ({fit} chunks fit the budget)…"):
        solved = views.exact_result(settings.pool, greedy)
elif solved is None and fit <= views.EXACT_MAX:
    st.info(
        f"{fit} chunks fit the budget: the exact solver can take up to "
        f"{views.EXACT_TIME_LIMIT:g} s at this size."
    )
    if st.button("Solve exactly", key="lam_solve_exact"):
        with st.status(f"Solving exactly ({fit} chunks fit the budget)…") as status:
            solved = views.exact_result(settings.pool, greedy)
            status.update(label="Solved" if solved.selection else "Not solved", state="complete")
elif solved is None:
    st.info(
        f"Not solved exactly: {fit} chunks fit within {settings.budget} tokens and the exact "
        f"solver accepts at most {views.EXACT_MAX} (its search grows exponentially with the "
        "number of chunks that fit). Lower the budget or use a smaller pool to measure the gap."
    )

if solved is not None and solved.selection is None:
    st.warning(render.escape_md(f"The exact optimum is not available: {solved.message}"))
elif solved is not None and solved.selection is not None:
    optimum = solved.selection.objective
    bound = bound_terms.bound(optimum)
    held = greedy.objective >= bound - 1e-9
    cells = st.columns(5)
    cells[0].metric("F(greedy)", text(greedy.objective))
    cells[1].metric("F(optimum)", text(optimum))
    cells[2].metric("gap OPT − F(greedy)", text(optimum - greedy.objective))
    cells[3].metric("paper's bound", text(bound))
    cells[4].metric("bound held", "yes" if held else "no")
    verdict = (
        f"F(greedy) = {greedy.objective:.4f} {'≥' if held else '<'} bound {bound:.4f} "
        f"= (1 − 1/e)·{optimum:.4f} − {bound_terms.k_max}·{bound_terms.epsilon:.4f}/e"
    )
    (st.success if held else st.warning)(f"The bound {'held' if held else 'failed'}: {verdict}")
    if optimum > 0:
        st.caption(f"The greedy reaches {greedy.objective / optimum:.1%} of the optimum's F.")
    chosen = sorted(set(greedy.indices) | set(solved.selection.indices))
    st.dataframe(
        pd.DataFrame(
            {
                "id": [pool.ids[i] for i in chosen],
                "greedy": [i in greedy.indices for i in chosen],
                "optimum": [i in solved.selection.indices for i in chosen],
                "tokens": [int(pool.token_counts[i]) for i in chosen],
                "relevance": [float(greedy.relevance[i]) for i in chosen],
            }
        ),
        key="lam_exact_sets",
        hide_index=True,
        width="stretch",
        column_config={"relevance": st.column_config.NumberColumn(format="%.4f")},
    )
state.sync_url()
