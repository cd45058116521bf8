"""Why dropped: pick any chunk (map, table or id) and see its verdict and the numbers behind it."""

import pandas as pd
import streamlit as st

from adagres import figures
from ui import data, render, state
from ui.sidebar import sidebar

# ---- controls
settings = sidebar()
st.title("Why dropped")

# ---- cached call
pool, selection = render.pool_and_selection(settings)
last = len(selection.steps)
position = {chunk_id: i for i, chunk_id in enumerate(pool.ids)}

if settings.chunk not in position:
    if settings.chunk is not None:
        st.warning(render.escape_md(f"No chunk {settings.chunk!r} in this pool."))
    # Default: the most relevant chunk that was not selected (else the first pick).
    dropped = [i for i in selection.relevance.argsort()[::-1] if i not in selection.indices]
    settings = state.update(chunk=pool.ids[dropped[0] if dropped else selection.indices[0]])

# The map at the stop is the Selection page's last-step map, from the same cache.
map_figure, _, _, method, pending = data.step_figures(settings, last)
# Which chunk each clicked point is: only trace membership matters here, not coordinates.
projection, _, _ = data.projection(settings.pool)
layers = figures.map_data(projection, selection, last, ids=pool.ids, texts=pool.texts)
# Trace order of figures.pool_map: candidates, does not fit, selected, winner ring, query.
trace_chunks = [
    layers.candidates.indices,
    layers.unfit.indices,
    layers.picked.indices,
    () if layers.winner is None else (layers.winner,),
]


def _chunk_from_map() -> None:
    points = st.session_state["why_map"]["selection"]["points"]
    for point in points:
        curve, index = point.get("curve_number"), point.get("point_index")
        if curve is not None and curve < len(trace_chunks) and index is not None:
            state.update(chunk=pool.ids[trace_chunks[curve][index]])
            return


def _chunk_from_table() -> None:
    rows = st.session_state["why_table"]["selection"]["rows"]
    if rows:
        state.update(chunk=pool.ids[rows[0]])


state.bind(st.selectbox, "chunk", "why_chunk", "Chunk id", options=pool.ids)
chunk = position[state.current().chunk]
verdict = selection.verdict(chunk)

# ---- render: the verdict and its numbers
st.subheader("Verdict")
st.text(f"{pool.ids[chunk]}: {verdict.summary(pool.ids)}")
numbers = st.columns(4)
numbers[0].metric("Verdict", str(verdict.kind).replace("_", " "))
numbers[1].metric("Tokens", verdict.tokens)
numbers[2].metric(
    "Relevance term", "–" if verdict.relevance_term is None else f"{verdict.relevance_term:.4f}"
)
numbers[3].metric("Gain", "–" if verdict.gain is None else f"{verdict.gain:+.4f}")
if verdict.tokens_left is not None and str(verdict.kind) == "did_not_fit":
    st.text(
        f"Needed {verdict.tokens} tokens; {verdict.tokens_left} were left at step {verdict.step}."
    )

if verdict.history:
    st.plotly_chart(
        figures.verdict_figure(selection, chunk, ids=pool.ids), key="why_verdict", width="stretch"
    )
    history = pd.DataFrame(
        {
            "step": [h.step for h in verdict.history],
            "its gain": [round(h.gain, 4) for h in verdict.history],
            "fits": [h.eligible for h in verdict.history],
            "winner": [None if h.winner is None else pool.ids[h.winner] for h in verdict.history],
            "winner gain": [
                None if h.winner_gain is None else round(h.winner_gain, 4) for h in verdict.history
            ],
        }
    )
    st.dataframe(history, key="why_history", hide_index=True, width="stretch")
if verdict.redundancy_sources:
    st.text("Selected chunks that made it redundant (cosine to this chunk):")
    sources = pd.DataFrame(
        {
            "selected chunk": [pool.ids[j] for j, _ in verdict.redundancy_sources],
            "cosine": [round(s, 4) for _, s in verdict.redundancy_sources],
        }
    )
    st.dataframe(sources, key="why_sources", hide_index=True)
render.chunk_text(pool, chunk)

# ---- pick another chunk: on the map or in the table
st.subheader("Pick a chunk on the map or in the table")
st.plotly_chart(
    map_figure, key="why_map", on_select=_chunk_from_map, selection_mode="points", width="stretch"
)
render.projection_note(method, pending)
if pending:
    render.wait_for_projection(settings.pool)
st.dataframe(
    data.pool_frame(pool, selection),
    key="why_table",
    on_select=_chunk_from_table,
    selection_mode="single-row",
    hide_index=True,
    width="stretch",
)
state.sync_url()
