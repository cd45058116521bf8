"""Why dropped: pick any chunk (map, table or id) and see its verdict and the numbers behind it."""

import streamlit as st

from adagres import figures
from ui import charts, render, state, tables
from ui.sidebar import sidebar

# ---- controls
settings = sidebar()
st.title("Why dropped")

# ---- cached call
pool, key, selection = render.pool_and_selection(settings)
position = {chunk_id: i for i, chunk_id in enumerate(pool.ids)}
if settings.chunk not in position:
    if settings.chunk is not None:
        st.warning(render.escape_md(f"No chunk {settings.chunk!r} in this pool."))
    # Default: the most relevant chunk that was not selected (else the first pick).
    dropped = [i for i in selection.relevance.argsort()[::-1] if i not in selection.indices]
    settings = state.update(chunk=pool.ids[dropped[0] if dropped else selection.indices[0]])
# The map at the stop is the Selection page's last-step map, from the same cache.
map_figure, _, _, method, pending = charts.step_figures(key, len(selection.steps))


def chunk_from_map() -> None:
    """A click on the map: each point carries its pool position (``customdata``)."""
    clicked = render.clicked_position(st.session_state["why_map"]["selection"]["points"])
    if clicked is not None:
        state.update(chunk=pool.ids[clicked])


def chunk_from_table() -> None:
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
    render.table(tables.history_frame(pool, verdict), "why_history")
if verdict.redundancy_sources:
    st.text("Selected chunks that made it redundant (cosine to this chunk):")
    st.dataframe(tables.sources_frame(pool, verdict), key="why_sources", hide_index=True)
render.chunk_text(pool, chunk)

# ---- pick another chunk: on the map or in the table
st.subheader("Pick a chunk on the map or in the table")
st.plotly_chart(
    map_figure, key="why_map", on_select=chunk_from_map, selection_mode="points", width="stretch"
)
render.projection_note(method, pending)
if pending:
    render.wait_for_projection(key.pool)
render.table(tables.pool_frame(pool, selection), "why_table", on_select=chunk_from_table,
             selection_mode="single-row")  # fmt: skip
state.sync_url()
