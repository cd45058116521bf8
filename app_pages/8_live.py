"""Live: retrieve a query's pool from a Milvus collection; it opens in every page."""

import numpy as np
import streamlit as st

from adagres.stores.milvus import MAX_TOP_N
from ui import live, render, state
from ui.sidebar import sidebar

# ---- controls
settings = sidebar()
st.title("Live pool")
st.caption(
    "Retrieve the top N chunks for a query from a Milvus collection (the embedded Milvus Lite "
    "store, or a server): the chunks, their stored vectors, the store's scores and token "
    "counts become the current pool of every page. Retrieval only reads the store."
)
uri = live.store_input()
names = live.collections(uri)
if names is not None and not names:
    st.info("The store holds no collection yet: `python -m adagres index URI NAME FILES...`.")
if names:
    wanted = state.option(live.COLLECTION, "")
    if wanted not in names:
        if wanted:  # a link to a collection this store does not hold
            render.error(f"No collection {wanted!r} here; showing {names[0]!r}.")
        state.set_option(live.COLLECTION, names[0], record=False)
    collection = state.bind_option(
        st.selectbox,
        live.COLLECTION,
        "live_collection_box",
        "Collection",
        options=names,
        default="",  # "" (none chosen): the first collection, written to the address too
    )
    query = state.bind_option(st.text_input, live.QUERY, "live_query_box", "Query", default="")
    n = state.bind_option(
        st.number_input,
        live.N,
        "live_n_box",
        "N (chunks to retrieve)",
        default=live.DEFAULT_N,
        min_value=1,
        max_value=MAX_TOP_N,
        step=1,
    )
    if st.button("Retrieve", key="live_retrieve", type="primary"):
        if not query.strip():
            render.error("Type a query first.")
        elif live.open_live_pool(uri, collection, query.strip(), int(n)) is not None:
            state.sync_url()
            st.rerun()

# ---- render
pool = live.current_live_pool(state.current())
if pool is None:
    st.caption("The current pool did not come from a collection: retrieve one above.")
else:
    retrieval = pool.extra["retrieval"]
    st.subheader("Retrieved pool")
    st.text(f"Query: {pool.query}")
    render.metrics(
        [
            ("Chunks", len(pool)),
            ("Tokens in the pool", f"{int(np.asarray(pool.token_counts).sum()):,}"),
            ("Tokenizer", render.escape_md(str(pool.tokenizer))),
            ("Collection", render.escape_md(str(retrieval["collection"]))),
        ]
    )
    st.text(f"Store: {retrieval['uri']} · embedding model: {pool.embedding_model}")
    st.caption("Score: the store's cosine to the query; the sidebar's pool is this one.")
    render.table(live.pool_frame(pool), "live_table")
state.sync_url()
