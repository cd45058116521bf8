"""Pool: choose, upload or build a pool; see its chunks, distributions and near-duplicates."""

import streamlit as st

from adagres import figures
from ui import compute, render, state, tables
from ui.pool_sources import pool_sources
from ui.sidebar import sidebar


def open_pool(key: str) -> None:
    """Make the newly loaded or built pool the current one, from its first step."""
    state.update(pool=key, step=None, chunk=None)
    st.rerun()


# ---- controls
settings = sidebar()
st.title("Pool")
pool_sources(open_pool)

# ---- cached call
pool, key, selection = render.pool_and_selection(settings)
frame = tables.pool_frame(pool, selection)

# ---- render
st.subheader("Query")
st.text(pool.query)
if pool.answers:
    st.text("Answers: " + " · ".join(pool.answers))
summary = st.columns(4)
summary[0].metric("Chunks", len(pool))
summary[1].metric("Tokens in the pool", int(frame["tokens"].sum()))
summary[2].metric("Tokenizer", render.escape_md(str(pool.tokenizer)))  # from the file
summary[3].metric("Selected now", selection.size)
if pool.embedding_model:
    st.text(f"Embedding model: {pool.embedding_model}")

st.subheader("Chunks")
st.caption("Verdict under the current sidebar settings (see Why dropped for the numbers).")
render.table(frame, "pool_table")

st.subheader("Relevance and length")
st.plotly_chart(
    figures.distributions_figure(selection.relevance, pool.token_counts),
    key="pool_distributions",
    width="stretch",
)

st.subheader("Near-duplicates")
threshold = st.slider("Cosine at least", 0.5, 1.0, 0.9, 0.01, key="pool_dup_threshold")
groups = compute.near_duplicate_groups(key.pool, threshold)
if not groups:
    st.text(f"No two chunks have cosine ≥ {threshold:.2f}.")
else:
    st.text(f"{len(groups)} group(s) of chunks with cosine ≥ {threshold:.2f} between members.")
    render.table(tables.duplicate_groups_frame(frame, groups), "pool_duplicates")
state.sync_url()
