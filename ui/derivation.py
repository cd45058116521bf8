"""Blocks of the λ derivation page: the pool's numbers, both readings of Eq. 7, the paper's
bound next to the exact optimum. Each draws from finished results (calibrations, the
greedy selection, the guarantee); only the exact optimum is computed here, on demand."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import streamlit as st

from adagres.core.calibration import FALLBACK_LAM, Calibration
from adagres.core.guarantee import Guarantee
from adagres.core.result import Selection
from adagres.optimum.exact import EXACT_MAX_CHUNKS, EXACT_MAX_NODES, ExactResult
from adagres.pools.pool import Pool

from . import compute, render, tables
from .compute import SelectionKey
from .state import AppSettings
from .text import count, percent, plain_name

__all__ = ["bound_against_optimum", "formula_variants", "number", "pool_numbers"]

FALLBACK_WHY = {
    "pool_too_small": "the pool has fewer than 2 chunks, so ρ̄ (a mean over pairs) is undefined",
    "expected_k_at_most_one": "k̄ = T / L̄ ≤ 1: the budget holds about one average chunk or "
    "less, so (k̄ − 1) ≤ 0 and there is no pair whose redundancy λ could balance",
    "mean_similarity_not_positive": "ρ̄ ≤ 0: on average the chunks are not similar, so the "
    "formula's denominator is not positive",
}
TITLES = {"paper": "paper: Eq. 7 as printed", "derived": "derived: what Eqs. 5–6 give"}
K_TEX = {"paper": r"\frac{\bar k - 1}{2}", "derived": r"(\bar k - 1)"}


def number(value: float | None, fmt: str = ".4f", missing: str = "–") -> str:
    """A number for a metric (``missing`` for None, NaN or infinity)."""
    return missing if value is None or not math.isfinite(value) else format(value, fmt)


def tex(value: float | None, fmt: str = ".4f") -> str:
    """A number for st.latex (n/a for None, NaN or infinity)."""
    return number(value, fmt, r"\text{n/a}")


def pool_numbers(pool: Pool, settings: AppSettings, used: Calibration, greedy: Selection) -> None:
    """L̄, k̄, r̄, ρ̄ and the λ in use, as metrics and filled into their formulas."""
    over = (
        f"the {used.n_chunks} most relevant of N = {len(pool)} chunks"
        if used.top_n is not None and used.n_chunks < len(pool)
        else f"N = {len(pool)} chunks"
    )
    st.caption(
        f"Statistics over {over}, budget T = {settings.budget} tokens, α = {used.alpha:g}. "
        "Numbers only: no chunk text is used here."
    )
    render.metrics(
        [
            ("L̄ (mean tokens)", number(used.mean_tokens, ".2f")),
            ("k̄ = T / L̄", number(used.expected_k, ".3f")),
            ("r̄ (mean relevance)", number(used.mean_relevance)),
            ("ρ̄ (mean pair cosine)", number(used.mean_similarity)),
            ("λ used", number(greedy.lam)),
        ]
    )
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


def formula_variants(settings: AppSettings, calibrations: Mapping[str, Calibration]) -> None:
    """Eq. 7 both ways (paper, derived), with the fallback explained when it applies."""
    used = calibrations[settings.selector.formula]
    if used.fallback is not None:
        st.warning(
            f"Fallback: {FALLBACK_WHY[used.fallback]}. λ falls back to {FALLBACK_LAM:g}, the "
            f"value in the authors' code (case: {plain_name(used.fallback)})."
        )
    # One reading after the other, each equation on its own line: side by side, at 1024 px
    # the right-hand sides were cut off (the "0" of "= 0.1836").
    for formula, c in calibrations.items():
        in_use = settings.lam_mode == "adaptive" and formula == settings.selector.formula
        st.markdown(f"**{TITLES[formula]}**" + (" · in use" if in_use else ""))
        if c.fallback is None:
            st.latex(
                rf"\lambda^* = \frac{{\alpha\,\bar r}}{{{K_TEX[formula]}\,\bar\rho}}"
                rf" = \frac{{{c.alpha:g} \cdot {tex(c.mean_relevance)}}}"
                rf"{{{tex(c.k_factor)} \cdot {tex(c.mean_similarity)}}}"
                rf" = {tex(c.lam_star)}"
            )
            clip = r",\ \text{clipped}" if c.clipped else ""
            st.latex(
                rf"\lambda = \max(0,\ {c.scale:g}\,\lambda^* {c.offset:+g})"
                rf" = {tex(c.lam)}{clip}"
            )
        else:
            st.latex(rf"\lambda = {tex(c.lam)}\quad\text{{(fallback)}}")
        render.metrics([(f"λ* ({formula})", number(c.lam_star)), (f"λ ({formula})", number(c.lam))])
    if settings.lam_mode == "manual":
        st.info(
            f"λ is set by hand to {settings.selector.lam:g} in the sidebar; the adaptive values "
            "are shown for reference and marked on the plot below."
        )


def bound_against_optimum(
    pool: Pool, key: SelectionKey, greedy: Selection, terms: Guarantee
) -> None:
    """The paper's δ, k, ε and bound; the exact optimum and the real gap where it is solved.

    Solved at once when at most ``compute.EXACT_AUTO_MAX`` chunks fit the budget, on a
    button up to ``EXACT_MAX_CHUNKS``, and not at all above that.
    """
    render.metrics(
        [
            ("δ (max pair cosine)", number(terms.delta)),
            ("k (largest set that fits)", terms.k_max),
            ("ε = λ·k·δ", number(terms.epsilon)),
        ]
    )
    st.latex(
        rf"\varepsilon = \lambda k \delta = {tex(terms.lam)} \cdot {terms.k_max}"
        rf" \cdot {tex(terms.delta)} = {tex(terms.epsilon)}"
    )
    st.latex(
        r"F(S_{\text{greedy}}) \ge \left(1 - \tfrac{1}{e}\right)\mathrm{OPT}"
        r" - \frac{k\,\varepsilon}{e}"
    )
    st.caption(
        "The paper's proof covers neither the knapsack constraint nor the non-monotone "
        "objective, so the bound is checked here against the exact optimum where it can be "
        "solved."
    )
    fit = int((np.asarray(pool.token_counts) <= key.budget).sum())  # chunks that fit alone
    solved = None
    if fit > EXACT_MAX_CHUNKS:
        st.info(
            f"Not solved exactly: {count(fit, 'chunk')} each fit within {key.budget} tokens on "
            f"their own (at most {terms.k_max} together), and "
            f"this page hands the exact solver at most {EXACT_MAX_CHUNKS} (its branch "
            "and bound's steps grow with the square of the candidates, its search "
            "exponentially). Lower the budget or use a smaller pool to measure the gap."
        )
    elif fit <= compute.EXACT_AUTO_MAX or compute.exact_ready(key):
        solved = compute.exact(key)
    else:
        st.info(
            f"{count(fit, 'chunk')} each fit the budget on their own (at most "
            f"{terms.k_max} together): the exact solver can take seconds at this size (it "
            f"stops after {EXACT_MAX_NODES:,} search nodes and then reports the gap "
            "it proved instead of an optimum)."
        )
        if st.button("Solve exactly", key="lam_solve_exact"):
            solved = compute.exact(key)
    if solved is not None and solved.stopped is not None:
        _stopped(greedy, solved.stopped, terms)
    elif solved is not None and solved.selection is None:
        st.warning(render.escape_md(f"The exact optimum is not available: {solved.message}"))
    elif solved is not None and solved.selection is not None:
        _gap(pool, greedy, solved.selection, terms)


def _stopped(greedy: Selection, stopped: ExactResult, terms: Guarantee) -> None:
    """A search stopped by its node limit: the optimum lies in [best F found, upper bound],
    so F(greedy) / upper bound is a proven share of it, and the paper's bound (rising with
    OPT) is decided when it holds at the upper bound or fails at the best F found."""
    low, high = stopped.objective, stopped.upper_bound
    render.metrics(
        [
            ("F(greedy)", number(greedy.objective)),
            ("best F found", number(low)),
            ("upper bound on F(optimum)", number(high)),
            ("greedy ≥ share of optimum", percent(greedy.objective / high) if high > 0 else "–"),
        ]
    )
    st.info(
        f"The search stopped at its limit of {stopped.nodes:,} nodes "
        f"({count(stopped.n_candidates, 'candidate chunk')}, up to "
        f"{stopped.k_max} fit together) without proving the optimum: it lies between "
        f"{low:.4f} and {high:.4f} (proven gap {percent(stopped.relative_gap)})."
    )
    if terms.bound(high) <= 0:
        st.info(_vacuous(terms.bound(high)))
    elif greedy.objective >= terms.bound(high) - 1e-9:
        st.success(
            f"The bound held for every optimum in that range: F(greedy) = "
            f"{greedy.objective:.4f} ≥ (1 − 1/e)·{high:.4f} − {terms.k_max}·"
            f"{terms.epsilon:.4f}/e = {terms.bound(high):.4f}"
        )
    elif greedy.objective < terms.bound(low) - 1e-9:
        st.warning(
            f"The bound failed: F(greedy) = {greedy.objective:.4f} < (1 − 1/e)·{low:.4f} − "
            f"{terms.k_max}·{terms.epsilon:.4f}/e = {terms.bound(low):.4f}, already at the "
            "best F found"
        )
    else:
        st.info("Whether the paper's bound held depends on where the optimum lies in that range.")


def _vacuous(bound: float) -> str:
    """Why a bound of at most 0 says nothing (F of the empty set is 0, and F(greedy) ≥ 0)."""
    return (
        f"The paper's bound is {bound:.4f} here, not above 0: any selection meets it (the "
        "empty one has F = 0), so it says nothing about the greedy at these settings (k·ε "
        "outweighs (1 − 1/e)·OPT)."
    )


def _gap(pool: Pool, greedy: Selection, optimum: Selection, terms: Guarantee) -> None:
    best = optimum.objective
    bound = terms.bound(best)
    held = greedy.objective >= bound - 1e-9
    render.metrics(
        [
            ("F(greedy)", number(greedy.objective)),
            ("F(optimum)", number(best)),
            ("gap OPT − F(greedy)", number(best - greedy.objective)),
            ("paper's bound", number(bound)),
            ("bound held", "vacuous" if bound <= 0 else "yes" if held else "no"),
        ]
    )
    verdict = (
        f"F(greedy) = {greedy.objective:.4f} {'≥' if held else '<'} bound {bound:.4f} "
        f"= (1 − 1/e)·{best:.4f} − {terms.k_max}·{terms.epsilon:.4f}/e"
    )
    if bound <= 0:
        st.info(_vacuous(bound))
    else:
        (st.success if held else st.warning)(f"The bound {'held' if held else 'failed'}: {verdict}")
    if best > 0:
        st.caption(f"The greedy reaches {percent(greedy.objective / best)} of the optimum's F.")
    render.table(tables.exact_sets_frame(pool, greedy, optimum), "lam_exact_sets", render.RELEVANCE)
