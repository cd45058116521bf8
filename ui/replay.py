"""The Selection page's replay: everything that shows one step, in one fragment that plays.

:func:`replay` draws the step slider, Play/Pause and the pace, then the page's
``draw(step)``, all in one ``st.fragment``. Playing gives the fragment a timer (the pace):
each tick reruns only the fragment, which advances one step and draws all of it, so every
figure shows the same step and none is skipped. A full page run never advances; whatever
changes the timer (Play, Pause, a pace, the end) reruns the whole page once. While playing
the slider only shows the step (a tick can carry the browser's older value); Pause to drag.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import streamlit as st

from adagres.core.result import Selection
from adagres.figures import verdict_phrase
from adagres.pools.pool import Pool

from . import state
from .text import plain_name

__all__ = [
    "next_step",
    "picked_after",
    "replay",
    "step_summary",
    "step_totals",
]

#: Seconds per step the user can choose; the default gives a 12-step run in 12 s.
PACES = (0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
DEFAULT_PACE = 1.0
_PLAYING = "sel_playing"
_PACE = "sel_pace"
_TIMER = "sel_timer"  # the run_every the fragment was given by the last full run
_FULL_RUN = "sel_full_run"  # set by a full run just before it calls the fragment

Draw = Callable[[int], None]


def picked_after(selection: Selection, step: int) -> tuple[int, ...]:
    """The chunks picked in the first ``step`` steps, in pick order."""
    return tuple(s.winner for s in selection.steps[:step] if s.accepted and s.winner is not None)


def step_totals(selection: Selection, step: int) -> tuple[int, int, float]:
    """(chunks picked, tokens used, F) after the first ``step`` steps: F is the sum of the
    picks' marginal gains (F of the empty set is 0), so after the last step it is
    ``selection.objective``."""
    steps = selection.steps[:step]
    gains = sum(s.gain for s in steps if s.accepted and s.gain is not None)
    used = steps[-1].tokens_used if steps else 0
    return len(picked_after(selection, step)), used, float(gains)


def next_step(step: int | None, last: int) -> tuple[int | None, bool]:
    """One tick of the replay from ``step`` (None: the last step) of ``last``: the step to
    show next (None for the last) and whether to keep playing.

    >>> next_step(1, 4), next_step(3, 4), next_step(None, 4)
    ((2, True), (None, True), (None, False))
    """
    current = last if step is None else step
    if current >= last:
        return None, False
    after = current + 1
    return (None if after >= last else after), True


def pace() -> float:
    """The replay's seconds per step (the user's choice)."""
    chosen = st.session_state.get(_PACE, DEFAULT_PACE)
    return float(chosen) if chosen in PACES else DEFAULT_PACE


def _toggle_play() -> None:
    playing = not st.session_state.get(_PLAYING, False)
    st.session_state[_PLAYING] = playing
    if playing and state.current().step is None:
        state.update(step=1)  # at the end: replay from the first step
    else:
        state.update()  # Pause: the address gets the step shown


def _step_moved(last: int) -> None:
    """The slider moved (only drawn while paused): show that step."""
    value = int(st.session_state["sel_step"])
    state.update(step=None if value >= last else value)
    st.session_state[_PLAYING] = False


def replay(selection: Selection, draw: Draw, header: Draw | None = None) -> None:
    """The replay block of the Selection page (see the module docstring); ``header(step)``
    is drawn above the controls, in the same fragment (the page's numbers at that step)."""
    last = len(selection.steps)
    playing = bool(st.session_state.get(_PLAYING)) and last > 1
    st.session_state[_PLAYING] = playing
    timer = pace() if playing else None
    st.session_state[_TIMER] = timer
    st.session_state[_FULL_RUN] = True
    st.fragment(run_every=timer)(_replay_view)(last, draw, header)


def _replay_view(last: int, draw: Draw, header: Draw | None) -> None:
    full_run = st.session_state.pop(_FULL_RUN, False)
    playing = bool(st.session_state.get(_PLAYING))
    if not full_run:
        if (pace() if playing else None) != st.session_state.get(_TIMER):
            st.rerun(scope="app")  # Play, Pause, a new pace or a scrub: set the timer anew
        if playing:  # a tick of the timer
            step, playing = next_step(state.current().step, last)
            state.update(step=step, record=False)  # a tick: Pause writes the step
            if not playing:
                st.session_state[_PLAYING] = False
                # The address follows: it held the step Play started from; now the last.
                state.update()
                st.rerun(scope="app")  # the last step was shown for a whole tick: stop
    step = state.current().step
    shown = last if step is None or step > last else step
    if header is not None:
        header(shown)
    _controls(last, shown, playing)
    draw(shown)
    if not full_run:
        state.sync_url(links=False)  # the page list is outside this fragment


def _controls(last: int, shown: int, playing: bool) -> None:
    # The button cell fits "Pause" with its icon at a 1024 px window (1.3 cut it to "Pa…").
    cells = st.columns([4.4, 1.8, 1.5], vertical_alignment="bottom")
    if last > 1:
        # While playing, a slider that only shows the step: a tick can carry the value the
        # browser had before it drew the last step, which a live slider would take for a
        # scrub. Pause to scrub.
        key = "sel_step_playing" if playing else "sel_step"
        st.session_state[key] = shown
        cells[0].slider(
            "Replay step",
            min_value=1,
            max_value=last,
            key=key,
            disabled=playing,
            help="Pause to choose a step." if playing else None,
            on_change=None if playing else _step_moved,
            args=(last,),
        )
    cells[1].button(
        "Pause" if playing else "Play",
        icon=":material/pause:" if playing else ":material/play_arrow:",
        key="sel_play",
        disabled=last < 2,
        on_click=_toggle_play,
        width="stretch",
        help="Replay the selection step by step from the first pick; pause at any step.",
    )
    cells[2].selectbox(
        "Pace (per step)",
        PACES,
        index=PACES.index(DEFAULT_PACE),
        format_func=lambda s: f"{s:g} s",
        key=_PACE,
        disabled=last < 2,
    )


def step_summary(pool: Pool, selection: Selection, step: int) -> str:
    """One line: what the step picked and why, or why the run stopped there."""
    record = selection.steps[step - 1]
    if record.accepted:
        assert record.winner is not None  # an accepted step has a winner
        what = (
            f"picked {pool.ids[record.winner]} · score {record.score:+.4f} = relevance "
            f"{record.score_relevance:.4f} − redundancy {record.score_redundancy:.4f} · "
            f"{record.tokens_left} tokens left"
        )
        merge = next((m for m in selection.merges if m.step == step), None)
        if merge is not None:  # overlap-aware packing joined it to earlier picks
            joined = ", ".join(pool.ids[i] for i in merge.joined)
            what += (
                f" · overlaps {joined}: one passage, charged {merge.tokens} of its "
                f"{merge.tokens + merge.saved} tokens"
            )
    else:
        nxt = (
            ""
            if record.winner is None
            else (f" (next best: {pool.ids[record.winner]}, score {record.score:+.4f})")
        )
        what = f"stopped: {plain_name(selection.stop_reason)}{nxt}"
    return f"Step {step} of {len(selection.steps)}: {what}{dropped_at(pool, selection, step)}"


def dropped_at(pool: Pool, selection: Selection, step: int) -> str:
    """What the step's sentence adds about chunks whose verdict falls at the step, read
    from their verdicts: each duplicate the near-duplicate guard dropped after the step's
    pick (and the pick it duplicates), and the best chunk that would have won the step but
    did not fit the tokens left ("" when neither)."""
    parts = [
        f"{pool.ids[d.chunk]}: {verdict_phrase(v.kind, v.step, pool.ids[v.duplicate_of])}"
        for d in selection.duplicates
        if (v := selection.verdict(d.chunk)).step == step and v.duplicate_of is not None
    ]
    unfit = [
        selection.verdict(i)
        for i, (kind, at) in enumerate(selection.verdict_kinds)
        if at == step and str(kind.value) == "did_not_fit"
    ]
    if unfit:
        best = max(unfit, key=lambda v: -np.inf if v.score is None else v.score)
        more = f" and {len(unfit) - 1} more" if len(unfit) > 1 else ""
        parts.append(
            f"would have won but did not fit: {pool.ids[best.chunk]} (needs {best.tokens} "
            f"tokens, {best.tokens_left} left){more}"
        )
    return "".join(f" · {part}" for part in parts)
