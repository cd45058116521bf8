"""The shared sidebar: pool, budget, strategy and how to select, bound to the URL."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import streamlit as st

from adagres.core.presets import PRESETS
from adagres.core.settings import FORMULAS, MAX_WEIGHT, POLICIES
from adagres.core.strategies import STRATEGIES
from adagres.errors import AdagresError

from . import compute, corpora, live, pools, progress, render, state
from .params import url_number
from .state import AppSettings
from .text import STRATEGY_HELP, lam_note, strategy_short

__all__ = ["LAM_SLIDER_MAX", "manual_start", "register_pages", "sidebar"]

#: Upper end of the manual λ slider (a URL may carry a larger value; the slider then extends).
LAM_SLIDER_MAX = 2.0
#: Chunks the calibration starts with when the user switches to "top N".
DEFAULT_TOP_N = 20

_POLICIES = {
    "skip": "stop only when nothing fits or no gain is positive",
    "stop": "the paper's Algorithm 1, stop when the best chunk does not fit",
    "ratio": "gain per token",
    "fill": "keep spending the budget after the gains turn ≤ 0",
}


# Which preset uses which policy, from the presets themselves (no policy is "the default":
# each preset has its own).
def _presets_using(policy: str) -> str:
    """ " (the paper and recommended presets')": the presets whose policy it is, if any."""
    names = [p.name for p in PRESETS.values() if p.settings.policy == policy]
    if len(names) < 2:
        return f" (the {names[0]} preset's)" if names else ""
    return f" (the {', '.join(names[:-1])} and {names[-1]} presets')"


_POLICY_HELP = " ".join(
    f"{policy}: {what}{_presets_using(policy)}." for policy, what in _POLICIES.items()
)
#: How to keep a pool a link cannot bring back (said where a link fails to open one).
KEEP_A_POOL = (
    " To share or keep such a pool, download it on the Pool page of the browser that made it "
    '("Download this pool") and open that file on the Pool page here.'
)
_TOP_N_HELP = (
    "Take L̄, r̄ and ρ̄ (and the τ = ρ̄ floor) over the N chunks most relevant to the query, "
    "the paper's top-N pool, instead of the whole pool."
)


def manual_start(settings: AppSettings) -> float:
    """Where a manual λ starts: the adaptive λ these settings give now, as the URL writes it."""
    return float(url_number(compute.adaptive_lam(compute.selection_key(settings))))


def _floor_from_mode(mode: str) -> object:
    if mode in ("off", "pool"):
        return None if mode == "off" else "pool"
    previous = state.current().selector.redundancy_floor
    return previous if isinstance(previous, float) else 0.5


def _top_n_from_mode(mode: str, n_chunks: int) -> int | None:
    if mode == "whole pool":
        return None
    return state.current().selector.calibration_top_n or max(2, min(DEFAULT_TOP_N, n_chunks))


# Every setting below the pool changes the selection, so moving one starts the replay over.
_bind_setting = functools.partial(state.bind, reset={"step": None})


def sidebar() -> AppSettings:
    """Draw the shared controls in the sidebar and return the settings they give.

    Stops the page (``st.stop``) with a message when the pool cannot be loaded. The budget
    in the returned settings is the one in use: the user's, or the pool's total tokens when
    the user's is larger (the session keeps the user's value, so a larger pool gets it back).
    """
    state.begin_run()
    _page_links()
    settings = state.current()
    with st.sidebar:
        for message in state.url_warnings():
            st.warning(render.escape_md(message))
        keys = _pool_keys(settings.pool)
        if not keys:
            st.info("No pool yet: upload one or build one from documents on the Pool page.")
            return settings
        settings = state.current()  # a pool set's query may have been read again above
        if settings.pool not in keys:
            if settings.pool:  # said in the page itself, where the user looks
                st.session_state["sb_missing_pool"] = (
                    f"{pools.unavailable_reason(settings.pool)} Showing {keys[0]!r} instead."
                    + (KEEP_A_POOL if pools.is_private(settings.pool) else "")
                )
            state.update(pool=keys[0], step=None, chunk=None, record=False)
        labels = {key: pools.pool_label(key) for key in keys}  # read now, in this session
        state.bind(
            st.selectbox,
            "pool",
            "sb_pool",
            "Pool",
            options=keys,
            format_func=labels.__getitem__,
            reset={"step": None, "chunk": None},
        )
        try:
            pool = pools.get_pool(state.current().pool)
        except AdagresError as error:
            render.error(str(error))
            state.stop()
        high = pools.budget_max(pool)
        _selection_controls(len(pool), high)
    missing = st.session_state.pop("sb_missing_pool", None)
    if missing:
        st.warning(render.escape_md(missing), icon=":material/link_off:")
    chosen = state.current()
    return chosen.replace(budget=min(max(chosen.budget, 1), high))


def register_pages(pages: Sequence[Any]) -> None:
    """The pages of the sidebar's page list, in order (``st.Page`` objects; ``app.py``
    calls it). Streamlit's own list drops the query string on a page switch (it keeps only
    widgets bound with ``bind="query-params"``, and the settings are not: ``ui.state``), so
    ``app.py`` hides it and the sidebar draws these links with the view's address. Pages
    run on their own (AppTest) draw no list."""
    st.session_state["nav_pages"] = list(pages)


def _page_links() -> None:
    """The page list at the top of the sidebar; the end of the run (:func:`state.sync_url`)
    draws it again if the run changed the address."""
    pages = st.session_state.get("nav_pages")
    if not pages:
        return
    slot = st.sidebar.empty()

    def links(params: dict[str, str]) -> None:
        with slot.container(gap=None):
            for page in pages:
                st.page_link(
                    page, label=page.title, icon=page.icon, query_params=params, width="stretch"
                )

    state.on_view_written(links)


def _pool_keys(wanted: str) -> list[str]:
    """The pools this session can choose; a pool the URL names that this session lacks is
    brought back first where the URL says how: a Live pool retrieved again, a question
    asked of its pool again, a pool set's query read from the set again, a FanOutQA pool
    rebuilt from its key."""
    keys = pools.pool_keys()
    if not wanted or wanted in keys:
        return keys
    kind = pools.kind(wanted)
    restored = None
    if kind == "live":
        restored = live.restore_from_url()
    elif kind == "asked":
        from . import asking  # pandas and the embedder: only when a link needs them

        restored = asking.restore_from_url()
    elif kind == "poolset":
        from . import poolsets  # the pool sets' readers: only when a link needs them

        restored = poolsets.restore_from_url()
    elif (index := pools.fanoutqa_index(wanted)) is not None:  # rebuilt from its key
        try:
            pool = progress.follow(corpora.fanoutqa_job(index), key="sb_rebuild_cancel")
        except Exception as error:  # AdagresError, or the user cancelled the rebuild
            message = str(error) if isinstance(error, AdagresError) else "cancelled"
            st.warning(render.escape_md(f"Could not rebuild pool {wanted!r}: {message}"))
        else:
            pools.add_pool(pool, "fanoutqa", f"FanOutQA #{index}: {pool.query[:40]}", wanted)
    if restored is not None and restored != wanted:  # its source changed since the link
        state.update(pool=restored, step=None, chunk=None, record=False)
    return pools.pool_keys()


def _preset_controls() -> None:
    """Say which preset the settings are, and switch to either with one click."""
    current = state.current()
    names = [
        p.name
        for p in PRESETS.values()
        if (p.strategy, p.settings) == (current.strategy, current.selector)
    ]
    st.caption(
        f"Preset: {names[0]} ({PRESETS[names[0]].description})"
        if names
        else "Preset: none (custom settings)"
    )
    if names and PRESETS[names[0]].caveat:
        st.caption(PRESETS[names[0]].caveat)
    # Buttons as wide as their labels, side by side while they fit (two half-width columns
    # cut "Recommended" short in the sidebar).
    with st.container(horizontal=True, gap="small"):
        for name, label in (("recommended", "Recommended"), ("paper", "Paper")):
            st.button(
                label,
                key=f"sb_preset_{name}",
                on_click=apply_preset,
                args=(name,),
                help=PRESETS[name].description,
                disabled=name in names,
            )


def apply_preset(name: str) -> None:
    """Switch to the preset ``name`` (a button's callback), from the last step."""
    chosen = PRESETS[name]
    state.update(strategy=chosen.strategy, selector=chosen.settings, step=None, chunk=None)


_PACKING_HELP = (
    "Picks that overlap in their source (windows of one document) are stitched into one "
    "passage, and the budget pays only for the tokens each adds. Chunks are placed by the "
    "offsets the pool carries, or by eight or more words they share at their edges. On in "
    "the recommended preset, off in the paper's."
)


def _selection_controls(n_chunks: int, high: int) -> None:
    """Budget, strategy and the fields of the core's settings (λ, policy, formula, τ, N)."""
    budget = state.current().budget
    _bind_setting(
        st.number_input,
        "budget",
        "sb_budget",
        "Budget (tokens)",
        min_value=1,
        max_value=high,
        step=pools.budget_step(high),
        to_widget=lambda b: min(max(int(b), 1), high),
        help=f"Any whole number from 1 to {high:,} (all the pool's tokens); the buttons "
        f"step by {pools.budget_step(high):,}.",
    )
    if budget > high:
        st.caption(
            f"The budget you set, {budget:,} tokens, is more than the whole pool "
            f"({high:,} tokens): {high:,} is used here. Your {budget:,} stays set for "
            "a larger pool."
        )
    _preset_controls()
    _bind_setting(
        st.selectbox,
        "strategy",
        "sb_strategy",
        "Strategy",
        options=list(STRATEGIES),
        format_func=strategy_short,
        help=STRATEGY_HELP,
    )
    _bind_setting(
        st.selectbox, "policy", "sb_policy", "Policy (AdaGReS)", options=POLICIES, help=_POLICY_HELP
    )
    _bind_setting(
        st.toggle, "packing", "sb_packing", "Pay once for overlapping text", help=_PACKING_HELP
    )
    _bind_setting(
        st.radio,
        "lam",
        "sb_lam_mode",
        "λ (redundancy weight)",
        options=("adaptive", "manual"),
        horizontal=True,
        to_widget=lambda lam: "adaptive" if lam == "adaptive" else "manual",
        from_widget=lambda mode: mode if mode == "adaptive" else manual_start(state.current()),
        help="Switching to manual starts from the adaptive λ of the current settings.",
    )
    if state.current().lam_mode == "manual":
        top = max(LAM_SLIDER_MAX, state.current().selector.lam)
        _bind_setting(
            st.slider, "lam", "sb_lam", "λ", min_value=0.0, max_value=top, step=0.005, format="%.4f"
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
        for name, label, step, digits in (
            ("scale", "Scale of λ*", 0.1, 2),
            ("offset", "Offset of λ", 0.01, 3),
        ):
            _bind_setting(
                st.number_input,
                name,
                f"sb_{name}",
                label,
                step=step,
                format=f"%.{digits}f",
                min_value=-MAX_WEIGHT,
                max_value=MAX_WEIGHT,
            )
    note = lam_note(state.current().strategy)
    if note:  # λ changes no pick here: say why, right under it, and offer the paper's method
        st.caption(note)
        st.button(
            "Use the paper's method",
            key="sb_lam_paper",
            on_click=apply_preset,
            args=("paper",),
            help=PRESETS["paper"].description,
        )
    with st.expander("Calibration pool (top N)"):
        _bind_setting(
            st.radio,
            "calibration_top_n",
            "sb_topn_mode",
            "λ statistics over",
            options=("whole pool", "top N"),
            horizontal=True,
            to_widget=lambda n: "whole pool" if n is None else "top N",
            from_widget=lambda mode: _top_n_from_mode(mode, n_chunks),
            help=_TOP_N_HELP,
        )
        top_n = state.current().selector.calibration_top_n
        if top_n is not None:
            _bind_setting(
                st.number_input,
                "calibration_top_n",
                "sb_topn",
                "N (most relevant)",
                min_value=2,
                max_value=max(n_chunks, top_n, 2),
                step=1,
            )
    with st.expander("Redundancy floor τ"):
        _bind_setting(
            st.radio,
            "redundancy_floor",
            "sb_floor_mode",
            "Count similarity above",
            options=("off", "pool", "value"),
            horizontal=True,
            to_widget=lambda f: "off" if f is None else "pool" if f == "pool" else "value",
            from_widget=_floor_from_mode,
            format_func=lambda m: {"off": "0 (off)", "pool": "ρ̄ (pool)", "value": "a value"}[m],
        )
        if isinstance(state.current().selector.redundancy_floor, float):
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
