"""Selection: replay the greedy step by step on the pool map, timeline, budget bar, context."""

import json

import streamlit as st

from ui import charts, compute, render, state, tables
from ui.replay import replay, step_summary
from ui.sidebar import sidebar
from ui.text import count, plain_name, reference_code_note

# ---- controls
settings = sidebar()
st.title("Selection")

# ---- cached call
pool, key, selection = render.pool_and_selection(settings)

render.metrics(
    [
        ("Chunks selected", selection.size),
        ("Tokens used", f"{selection.tokens_used:,} / {selection.budget:,}"),
        ("λ", f"{selection.lam:.4f}"),
        ("F(S)", f"{selection.objective:.4f}"),
        ("Stop reason", plain_name(selection.stop_reason)),
    ]
)
# What the context pays for twice: repeated text next to the mean pairwise cosine.
measured = compute.metrics_of(key)
render.metrics(
    [
        ("Mean pair cosine", f"{measured.redundancy_mean:.3f}"),
        ("Repeated text", f"{100 * (measured.repeated_text or 0.0):.1f}%"),
        ("Near-duplicate pairs", measured.near_duplicates),
        ("Duplicates dropped", len(selection.duplicates)),
    ],
    help={
        "Repeated text": "Share of the context's words (lower-cased) that lie in a word "
        "8-gram already earlier in the context, chunks in pick order.",
        "Duplicates dropped": "Chunks the near-duplicate guard made ineligible because they "
        "duplicate a pick (see Why dropped).",
    },
)
# What the rule maximised at each step; with the adaptive λ, its derivation.
st.caption(f"{settings.strategy}: {selection.scoring.formula}")
if selection.calibration is not None and "λ" in selection.scoring.redundancy:
    st.text(selection.calibration.describe())
if selection.note:
    st.text(selection.note)
note = reference_code_note(selection)
if note:
    st.info(render.escape_md(note))


def open_verdict() -> None:
    """A click on the map: show that chunk's verdict on "Why dropped"."""
    clicked = render.clicked_position(st.session_state["sel_map"]["selection"]["points"])
    if clicked is not None:
        state.update(chunk=pool.ids[clicked])
        st.session_state["sel_playing"] = False
        st.session_state["sel_open_why"] = True
        # The page switch may keep this page's scroll position: Why dropped scrolls its
        # verdict into view on every new pick.
        st.session_state["why_picks"] = st.session_state.get("why_picks", 0) + 1


def draw_step(step: int) -> None:
    """Everything that shows one step (drawn by the replay, step after step)."""
    st.text(step_summary(pool, selection, step))
    map_figure, timeline, budget_figure, method, pending = charts.step_figures(key, step)
    render.chart(map_figure, "sel_map", on_select=open_verdict, selection_mode="points")
    if st.session_state.pop("sel_open_why", False):
        st.switch_page("pages/6_why.py")
    render.projection_note(method, pending)
    st.caption("Click a chunk on the map to see why it was picked or dropped.")
    render.chart(budget_figure, "sel_budget")
    render.chart(timeline, "sel_timeline")
    picked = tuple(s.winner for s in selection.steps[:step] if s.accepted and s.winner is not None)
    st.subheader(f"Context after step {step}: {count(len(picked), 'chunk')}")
    render.table(tables.context_frame(pool, picked), "sel_context",
                 {"text": st.column_config.TextColumn("text", width="large")})  # fmt: skip
    # Drawn only once opened: the code block makes the browser load Streamlit's syntax
    # highlighter, about 0.3 s of its main thread before the page's first chart otherwise.
    plain_text = st.expander("Context as plain text", key="sel_plain_text", on_change="rerun")
    if plain_text.open:
        plain_text.code("\n\n".join(pool.texts[i] for i in picked), language=None,
                        wrap_lines=True)  # fmt: skip


replay(selection, draw_step)
if charts.projection_pending(key):
    render.wait_for_projection(key.pool)

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
state.sync_url()
