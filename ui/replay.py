"""The Selection page's replay: the step slider, play/pause, and one line about the step."""

from __future__ import annotations

import streamlit as st

from adagres.core.result import Selection
from adagres.pools.pool import Pool

from . import state
from .state import Settings

__all__ = ["replay_controls", "shown_step", "step_summary"]


def shown_step(settings: Settings, selection: Selection) -> int:
    """The 1-based step the replay shows: the settings' step, or the last one."""
    last = len(selection.steps)
    return settings.step if settings.step is not None and settings.step <= last else last


def _toggle_play() -> None:
    playing = not st.session_state.get("sel_playing", False)
    st.session_state["sel_playing"] = playing
    if playing and state.current().step is None:
        state.update(step=1)  # at the end: replay from the first step


@st.fragment(run_every=0.8)
def _player(last: int) -> None:
    """Advance the replay one step per tick while playing; stop at the last step."""
    if not st.session_state.get("sel_playing"):
        return
    current = state.current().step or last
    if current + 1 >= last:
        state.update(step=None)
        st.session_state["sel_playing"] = False
    else:
        state.update(step=current + 1)
    st.rerun(scope="app")


def replay_controls(last: int) -> None:
    """The step slider (bound to ``step``; the last step is ``None``) and play/pause."""
    controls = st.columns([6, 1])
    with controls[0]:
        if last > 1:
            state.bind(
                st.slider,
                "step",
                "sel_step",
                "Replay step",
                min_value=1,
                max_value=last,
                to_widget=lambda s: last if s is None or s > last else s,
                from_widget=lambda value: None if value == last else value,
            )
    playing = bool(st.session_state.get("sel_playing"))
    controls[1].button(
        "⏸ Pause" if playing else "▶ Play",
        key="sel_play",
        disabled=last < 2,
        on_click=_toggle_play,
        width="stretch",
    )
    if playing:
        _player(last)


def step_summary(pool: Pool, selection: Selection, step: int) -> str:
    """One line: what the step picked and why, or why the run stopped there."""
    record = selection.steps[step - 1]
    if record.accepted:
        what = (
            f"picked {pool.ids[record.winner]} · gain {record.gain:+.4f} = relevance "
            f"{record.relevance_term:.4f} − redundancy {record.redundancy_term:.4f} · "
            f"{record.tokens_left} tokens left"
        )
    else:
        nxt = "" if record.winner is None else (
            f" (next best: {pool.ids[record.winner]}, gain {record.gain:+.4f})"
        )  # fmt: skip
        what = f"stopped: {selection.stop_reason}{nxt}"
    return f"Step {step} of {len(selection.steps)}: {what}"
