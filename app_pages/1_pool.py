"""Pool: choose, upload or build a pool; see its chunks, distributions and near-duplicates."""

import streamlit as st

from adagres import figures
from ui import compute, render, state, tables
from ui.pool_sources import pool_sources
from ui.sidebar import sidebar
from ui.text import count


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
render.metrics(
    [
        ("Chunks", len(pool)),
        ("Tokens in the pool", f"{int(frame['tokens'].sum()):,}"),
        ("Tokenizer", render.escape_md(str(pool.tokenizer))),  # from the file
        ("Selected now", selection.size),
    ]
)
if pool.embedding_model:
    st.text(f"Embedding model: {pool.embedding_model}")

st.subheader("Chunks")
st.caption("Verdict under the current sidebar settings (see Why dropped for the numbers).")
render.table(frame, "pool_table", {"relevance": st.column_config.NumberColumn(format="%.4f")})

st.subheader("Relevance and length")
render.chart(figures.distributions_figure(selection.relevance, pool.token_counts),
             "pool_distributions")  # fmt: skip

st.subheader("Near-duplicates")
threshold = st.slider("Cosine at least", 0.5, 1.0, 0.9, 0.01, key="pool_dup_threshold")
groups = compute.near_duplicate_groups(key.pool, threshold)
if not groups:
    st.text(f"No two chunks have cosine ≥ {threshold:.2f}.")
else:
    linked = f"cosine ≥ {threshold:.2f} between members"
    st.text(f"{count(len(groups), 'group')} of chunks with {linked}.")
    render.table(tables.duplicate_groups_frame(frame, groups), "pool_duplicates")
state.sync_url()
