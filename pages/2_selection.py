"""Selection: replay the greedy step by step on the pool map, timeline, budget bar, context."""

import json

import streamlit as st

from ui import charts, render, state, tables
from ui.replay import replay_controls, shown_step, step_summary
from ui.sidebar import sidebar

# ---- controls
settings = sidebar()
st.title("Selection")

# ---- cached call
pool, key, selection = render.pool_and_selection(settings)
step = shown_step(settings, selection)

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

replay_controls(len(selection.steps))
st.text(step_summary(pool, selection, step))

# ---- figures
map_figure, timeline, budget_figure, method, pending = charts.step_figures(key, step)
st.plotly_chart(map_figure, key="sel_map", width="stretch")
render.projection_note(method, pending)
if pending:
    render.wait_for_projection(key.pool)

left, right = st.columns([3, 2])
left.plotly_chart(timeline, key="sel_timeline", width="stretch")
right.plotly_chart(budget_figure, key="sel_budget", width="stretch")

# ---- context as it would be sent
picked = tuple(s.winner for s in selection.steps[:step] if s.accepted)
st.subheader(f"Context after step {step}: {len(picked)} chunks")
render.table(tables.context_frame(pool, picked), "sel_context",
             {"text": st.column_config.TextColumn("text", width="large")})  # fmt: skip

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
    st.code("\n\n".join(pool.texts[i] for i in picked), language=None, wrap_lines=True)
state.sync_url()
