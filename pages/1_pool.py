"""Pool: choose, upload or build a pool; see its chunks, distributions and near-duplicates."""

import streamlit as st

from adagres import figures
from adagres.errors import AdagresError
from ui import data, render, state
from ui.sidebar import sidebar

# ---- controls
settings = sidebar()
st.title("Pool")

upload_tab, corpus_tab = st.tabs(["Upload a pool file", "Build from documents"])
with upload_tab:
    uploaded = st.file_uploader(
        "Pool file (canonical JSON, JSONL, CSV or parquet; LangChain, LlamaIndex or Haystack "
        "document dumps)",
        type=["json", "jsonl", "ndjson", "csv", "parquet"],
        key="pool_upload",
    )
    if uploaded is not None and st.session_state.get("pool_upload_seen") != uploaded.file_id:
        # Handle each uploaded file once; on any error the current pool stays as it was.
        st.session_state["pool_upload_seen"] = uploaded.file_id
        st.session_state["pool_upload_error"] = None
        try:
            with st.status(f"Loading {uploaded.name}…", expanded=True) as status:
                found = data.read_pools(uploaded.getvalue(), uploaded.name)
                status.write(f"{len(found)} pool(s) in the file; using the first.")
                pool_in = data.prepare_pool(found[0], status.write)
                key = data.add_pool(pool_in, "upload", f"upload: {uploaded.name}")
                status.update(label=f"Loaded {uploaded.name}", state="complete", expanded=False)
        except AdagresError as error:
            st.session_state["pool_upload_error"] = str(error)
        else:
            state.update(pool=key, step=None, chunk=None)
            st.rerun()
    if uploaded is not None and st.session_state.get("pool_upload_error"):
        render.error(f"Could not load {uploaded.name}: {st.session_state['pool_upload_error']}")
        st.caption("The pool shown below is unchanged.")

with corpus_tab:
    st.caption(
        "Paste documents separated by a line holding only ---, or upload text files. "
        "They are chunked, embedded with MiniLM on this machine, and the chunks most "
        "similar to the query form the pool."
    )
    pasted = st.text_area("Documents", key="pool_docs_text", height=160)
    files = st.file_uploader(
        "Text files", type=["txt", "md"], accept_multiple_files=True, key="pool_docs_files"
    )
    query = st.text_input("Query", key="pool_docs_query")
    sizes = st.columns(3)
    size = sizes[0].number_input("Chunk size (tokens)", 20, 2000, 200, key="pool_docs_size")
    overlap = sizes[1].number_input("Overlap (tokens)", 0, 1000, 40, key="pool_docs_overlap")
    top_n = sizes[2].number_input("Pool size (top N)", 1, 5000, 50, key="pool_docs_top_n")
    if st.button("Build pool", key="pool_docs_build", type="primary"):
        documents = {
            f"doc{i}": part.strip()
            for i, part in enumerate(pasted.split("\n---\n"))
            if part.strip()
        }
        for file in files or []:
            documents[file.name] = file.getvalue().decode("utf-8", errors="replace")
        try:
            from adagres.corpus import pool_from_documents

            with st.status("Building the pool…", expanded=True) as status:
                progress = st.progress(0.0, text="Embedding…")
                built = pool_from_documents(
                    documents,
                    query,
                    size=int(size),
                    overlap=int(overlap),
                    top_n=int(top_n),
                    progress=lambda done, total: progress.progress(
                        done / max(total, 1), text=f"Embedded {done} of {total} texts"
                    ),
                )
                key = data.add_pool(built, "corpus", f"documents: {query[:40]}")
                status.update(label="Pool built", state="complete", expanded=False)
        except AdagresError as error:
            render.error(f"Could not build the pool: {error}")
        else:
            state.update(pool=key, step=None, chunk=None)
            st.rerun()

# ---- cached call
pool, selection = render.pool_and_selection(settings)
frame = data.pool_frame(pool, selection)

# ---- render
st.subheader("Query")
st.text(pool.query)
summary = st.columns(4)
summary[0].metric("Chunks", len(pool))
summary[1].metric("Tokens in the pool", int(frame["tokens"].sum()))
summary[2].metric("Tokenizer", str(pool.tokenizer))
summary[3].metric("Selected now", selection.size)
if pool.embedding_model:
    st.text(f"Embedding model: {pool.embedding_model}")

st.subheader("Chunks")
st.caption("Verdict under the current sidebar settings (see Why dropped for the numbers).")
st.dataframe(frame, key="pool_table", hide_index=True, width="stretch")

st.subheader("Relevance and length")
st.plotly_chart(
    figures.distributions_figure(selection.relevance, pool.token_counts),
    key="pool_distributions",
    width="stretch",
)

st.subheader("Near-duplicates")
threshold = st.slider("Cosine at least", 0.5, 1.0, 0.9, 0.01, key="pool_dup_threshold")
groups = data.near_duplicate_groups(settings.pool, threshold)
if not groups:
    st.text(f"No two chunks have cosine ≥ {threshold:.2f}.")
else:
    st.text(f"{len(groups)} group(s) of chunks with cosine ≥ {threshold:.2f} between members.")
    rows = frame.iloc[[i for group in groups for i in group]].copy()
    rows.insert(0, "group", [n + 1 for n, group in enumerate(groups) for _ in group])
    st.dataframe(rows, key="pool_duplicates", hide_index=True, width="stretch")
state.sync_url()
