"""Selection: replay the greedy step by step on the pool map, timeline, budget bar, context."""

import json

import streamlit as st

from ui import data, render, state
from ui.sidebar import sidebar

# ---- controls
settings = sidebar()
st.title("Selection")

# ---- cached call
pool, selection = render.pool_and_selection(settings)
k = len(selection.steps)
step = settings.step if settings.step is not None and settings.step <= k else k
record = selection.steps[step - 1]

top = st.columns([1, 1.3, 1, 1, 1.8])
top[0].metric("Chunks selected", selection.size)
top[1].metric("Tokens used", f"{selection.tokens_used} / {selection.budget}")
top[2].metric("λ", f"{selection.lam:.4f}")
top[3].metric("F(S)", f"{selection.objective:.4f}")
top[4].metric("Stop reason", str(selection.stop_reason).replace("_", " "))
if selection.calibration is not None and settings.strategy == "adagres":
    st.text(selection.calibration.describe())
if selection.note:
    st.text(selection.note)

# ---- step control
controls = st.columns([6, 1])
with controls[0]:
    if k > 1:
        state.bind(
            st.slider,
            "step",
            "sel_step",
            "Replay step",
            min_value=1,
            max_value=k,
            to_widget=lambda s: k if s is None or s > k else s,
            from_widget=lambda value: None if value == k else value,
        )
with controls[1]:

    def _toggle_play() -> None:
        playing = not st.session_state.get("sel_playing", False)
        st.session_state["sel_playing"] = playing
        if playing and state.current().step is None:
            state.update(step=1)  # at the end: replay from the first step

    playing = bool(st.session_state.get("sel_playing"))
    st.button(
        "⏸ Pause" if playing else "▶ Play",
        key="sel_play",
        disabled=k < 2,
        on_click=_toggle_play,
        width="stretch",
    )

if record.accepted:
    what = (
        f"picked {pool.ids[record.winner]} · gain {record.gain:+.4f} = relevance "
        f"{record.relevance_term:.4f} − redundancy {record.redundancy_term:.4f} · "
        f"{record.tokens_left} tokens left"
    )
else:
    nxt = (
        ""
        if record.winner is None
        else f" (next best: {pool.ids[record.winner]}, gain {record.gain:+.4f})"
    )
    what = f"stopped: {selection.stop_reason}{nxt}"
st.text(f"Step {step} of {k}: {what}")


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


if playing:
    _player(k)

# ---- figures
map_figure, timeline, budget_figure, method, pending = data.step_figures(settings, step)
st.plotly_chart(map_figure, key="sel_map", width="stretch")
render.projection_note(method, pending)
if pending:
    render.wait_for_projection(settings.pool)

left, right = st.columns([3, 2])
with left:
    st.plotly_chart(timeline, key="sel_timeline", width="stretch")
with right:
    st.plotly_chart(budget_figure, key="sel_budget", width="stretch")

# ---- context as it would be sent
picked = tuple(s.winner for s in selection.steps[:step] if s.accepted)
st.subheader(f"Context after step {step}: {len(picked)} chunks")
context = data.context_frame(pool, picked)
st.dataframe(
    context,
    key="sel_context",
    hide_index=True,
    width="stretch",
    column_config={"text": st.column_config.TextColumn("text", width="large")},
)
context_text = "\n\n".join(pool.texts[i] for i in picked)

downloads = st.columns(2)
downloads[0].download_button(
    "Download selection + steps (JSON)",
    data=lambda: json.dumps(
        selection.to_dict(pool.ids, candidates=True), ensure_ascii=False, indent=1
    ),
    file_name=f"selection-{settings.pool}-{settings.budget}.json",
    mime="application/json",
    key="sel_download_json",
    on_click="ignore",
)
downloads[1].download_button(
    "Download context (text)",
    data="\n\n".join(pool.texts[i] for i in selection.indices),
    file_name=f"context-{settings.pool}-{settings.budget}.txt",
    mime="text/plain",
    key="sel_download_text",
    on_click="ignore",
)
with st.expander("Context as plain text"):
    st.code(context_text, language=None, wrap_lines=True)
state.sync_url()
