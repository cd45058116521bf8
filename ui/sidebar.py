"""The shared sidebar: pool, budget, strategy, policy and λ controls, bound to the URL."""

from __future__ import annotations

import functools

import streamlit as st

from adagres.core.baselines import STRATEGIES
from adagres.core.settings import FORMULAS, POLICIES
from adagres.errors import AdagresError

from . import data, render, state
from .routing import route_through_app
from .state import Settings

__all__ = ["LAM_SLIDER_MAX", "sidebar"]

#: Upper end of the manual λ slider (a URL may carry a larger value; the slider then extends).
LAM_SLIDER_MAX = 2.0

_POLICY_HELP = (
    "skip: stop only when nothing fits or no gain is positive (default). "
    "stop: the paper's Algorithm 1, stop when the best chunk does not fit. "
    "ratio: gain per token. fill: keep spending the budget after the gains turn ≤ 0."
)
_FLOOR_MODES = ("off", "pool", "value")


def _floor_mode(floor: object) -> str:
    return "off" if floor is None else "pool" if floor == "pool" else "value"


def _floor_from_mode(mode: str) -> object:
    if mode == "off":
        return None
    if mode == "pool":
        return "pool"
    previous = state.current().redundancy_floor
    return previous if isinstance(previous, float) else 0.5


# Every sidebar setting changes the selection, so moving one starts the replay over.
_bind_setting = functools.partial(state.bind, reset={"step": None})


def sidebar() -> Settings:
    """Draw the shared controls in the sidebar and return the settings they give.

    Stops the page (``st.stop``) with a message when there is no pool to show.
    """
    route_through_app()
    settings = state.current()
    keys = data.pool_keys()
    with st.sidebar:
        for message in state.url_warnings():
            st.warning(render.escape_md(message))
        if settings.pool not in keys and data.resolvable(settings.pool):
            # A key that names its own data (fanoutqa-<i>): rebuild it rather than fall back.
            try:
                data.get_pool(settings.pool)
            except AdagresError as error:
                st.warning(render.escape_md(f"Could not rebuild pool {settings.pool!r}: {error}"))
            keys = data.pool_keys()
        if not keys:
            st.info("No pool yet: upload one or build one from documents on the Pool page.")
            state.sync_url()
            return settings
        if settings.pool not in keys:
            if settings.pool:
                st.warning(
                    render.escape_md(
                        f"Pool {settings.pool!r} is not available here; showing {keys[0]!r}."
                    )
                )
            state.update(pool=keys[0], step=None, chunk=None)
        state.bind(
            st.selectbox,
            "pool",
            "sb_pool",
            "Pool",
            options=keys,
            format_func=data.pool_label,
            reset={"step": None, "chunk": None},
        )
        try:
            pool = data.get_pool(state.current().pool)
        except AdagresError as error:
            render.error(str(error))
            st.stop()
        low, high = data.budget_limits(pool)
        budget = state.current().budget
        if not low <= budget <= high:
            state.update(budget=min(max(budget, low), high))
        _bind_setting(
            st.slider,
            "budget",
            "sb_budget",
            "Budget (tokens)",
            min_value=low,
            max_value=high,
            step=1,
        )
        _bind_setting(
            st.selectbox,
            "strategy",
            "sb_strategy",
            "Strategy",
            options=STRATEGIES,
        )
        _bind_setting(
            st.selectbox,
            "policy",
            "sb_policy",
            "Policy (AdaGReS)",
            options=POLICIES,
            help=_POLICY_HELP,
        )
        _bind_setting(
            st.radio,
            "lam_mode",
            "sb_lam_mode",
            "λ (redundancy weight)",
            options=("adaptive", "manual"),
            horizontal=True,
        )
        if state.current().lam_mode == "manual":
            top = max(LAM_SLIDER_MAX, state.current().lam)
            _bind_setting(
                st.slider,
                "lam",
                "sb_lam",
                "λ",
                min_value=0.0,
                max_value=top,
                step=0.005,
                format="%.3f",
            )
        else:
            _bind_setting(
                st.selectbox,
                "formula",
                "sb_formula",
                "Formula (Eq. 7)",
                options=FORMULAS,
                help="paper: Eq. 7 as printed; derived: what Eqs. 5–6 give.",
            )
            _bind_setting(
                st.number_input,
                "scale",
                "sb_scale",
                "Scale of λ*",
                step=0.1,
                format="%.2f",
            )
            _bind_setting(
                st.number_input,
                "offset",
                "sb_offset",
                "Offset of λ",
                step=0.01,
                format="%.3f",
            )
        with st.expander("Redundancy floor τ"):
            _bind_setting(
                st.radio,
                "redundancy_floor",
                "sb_floor_mode",
                "Count similarity above",
                options=_FLOOR_MODES,
                horizontal=True,
                to_widget=_floor_mode,
                from_widget=_floor_from_mode,
                format_func=lambda m: {"off": "0 (off)", "pool": "ρ̄ (pool)", "value": "a value"}[m],
            )
            if isinstance(state.current().redundancy_floor, float):
                _bind_setting(
                    st.number_input,
                    "redundancy_floor",
                    "sb_floor",
                    "τ (cosine)",
                    min_value=-1.0,
                    max_value=1.0,
                    step=0.05,
                    format="%.2f",
                )
    state.sync_url()
    return state.current()
