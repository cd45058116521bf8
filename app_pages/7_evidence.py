"""Evidence: every strategy measured on real QA pools (a report of ``python -m adagres.eval``)."""

import streamlit as st

from adagres.errors import AdagresError
from adagres.eval.frontier import mid_budget, verdict
from adagres.eval.results import corpus_summary
from ui import evidence, render, state
from ui.sidebar import sidebar

NUMBER = st.column_config.NumberColumn(format="%.3f")
PERCENT = st.column_config.NumberColumn(format="percent")
DELTA = st.column_config.NumberColumn(format="%+.3f")

# ---- controls
sidebar()
st.title("Evidence")
names = evidence.report_names()
if not names:
    st.info(
        f"No report yet in {evidence.reports_dir().name}/: `make eval-quick` builds one in "
        "about a minute (`make eval`: every strategy on every query of the real pools)."
    )
    state.stop()
name = st.selectbox("Report", names, key="ev_report")
if not evidence.has_results(name):  # a fresh clone: git keeps the report's Markdown only
    st.info(
        "The summary of this report only: `make eval-quick` builds a full report with every "
        "query and figure in about a minute (`make eval` rebuilds this one)."
    )
    for title, text in evidence.summary_blocks(name):
        if title is None:
            st.markdown(text)
        else:
            with st.expander(title):
                st.markdown(text)
    state.stop()
doc = evidence.document(name)
stamp = doc["stamp"]
st.caption(  # the command names the user's pool files: text, not Markdown
    render.escape_md(
        f"{stamp['command']} · {stamp['created']} · commit {stamp['commit']} · seed "
        f"{stamp['config']['seed']} · budgets in {stamp['tokens']}"
    )
)

# ---- the lead: a sentence per corpus, the compared strategies across corpora, the targets
st.subheader("Summary: recall against repeated text")
for corpus in doc["corpora"]:  # names come from the report's file: text, not Markdown
    st.markdown("- " + render.escape_md(verdict(doc, corpus)))
lead = evidence.summary_frame(doc)
render.table(
    lead,
    "ev_summary",
    {
        label: PERCENT if label.endswith("repeated text") else DELTA if "Δ" in label else NUMBER
        for label in lead.columns
        if label != "strategy"
    },
)
st.caption(
    f"At {mid_budget(doc)} tokens. Recall: the corpus's primary metric (gold recall where it "
    "has no answer strings); Δ: its paired mean difference with topk_budget over the same "
    "queries; repeated text: share of the context's words in a word 8-gram already earlier "
    "in it. Every other strategy is in the tables below."
)
st.subheader("Targets of the recommended preset")
targets = evidence.targets_frame(doc)
if targets.empty:
    st.caption("This report did not measure the recommended preset.")
else:
    render.table(targets, "ev_targets")
    st.caption(
        "Each against topk_budget on the same queries. –: the target does not apply there "
        "(top-k repeats under 2 % of its words)."
    )
packed = evidence.packing_frame(doc)
if not packed.empty:
    st.subheader("What packing did")
    render.table(
        packed,
        "ev_packing",
        {
            label: PERCENT if label.endswith("repeated text") else NUMBER
            for label in packed.columns
            if label not in ("corpus", "budget", "strategy")
        },
    )
    st.caption(
        "Means per query, for each strategy that packs. Stitched: picks joined to a passage "
        "of their source (overlapping windows); left out: sentences of at least six words "
        "the context already held (a marker stands in their place); tokens saved: what the "
        "picks would have cost apart, less what the budget paid."
    )

# ---- one corpus: its frontier, then what folds away
corpora = list(doc["corpora"])
left, right = st.columns(2)
corpus = left.selectbox("Corpus", corpora, key="ev_corpus")
budgets = [int(b) for b in stamp["config"]["budgets"]]
budget = right.selectbox("Budget (tokens)", budgets, key="ev_budget")
info = doc["corpora"][corpus]
st.text(info["description"])
st.caption(render.escape_md(corpus_summary(info)))
st.subheader(f"{corpus}: recall against repeated text")
render.chart(evidence.figure(name, corpus, tradeoff=False), "ev_frontier")

with st.expander(f"Every strategy on {corpus} at {budget} tokens"):
    table = evidence.table_frame(doc, corpus, budget)
    formats = {label: NUMBER for label in table.columns if table[label].dtype.kind == "f"}
    formats["budget use"] = PERCENT
    render.table(table, "ev_table", formats)
    st.caption(
        "Primary metric with its 95 % bootstrap interval over queries; Δ: paired mean "
        "difference with topk_budget; W/T/L: queries above / equal to / below the baseline."
    )
with st.expander(f"{corpus}: recall against mean pairwise cosine, per budget"):
    render.chart(evidence.figure(name, corpus, tradeoff=True), "ev_tradeoff")
with st.expander("Where each strategy loses or ties"):
    for finding in doc["findings"]:
        if finding["corpus"] == corpus:
            st.text(finding["text"])

# ---- per query, and the way to its pool
st.subheader("Per query")
strategies = list(doc["strategies"])
strategy = st.selectbox("Strategy", strategies, key="ev_strategy")
queries = evidence.query_frame(doc, corpus, budget, strategy)
render.table(
    queries,
    "ev_queries",
    {"gold recall": NUMBER, "topk_budget gold recall": NUMBER, "mean cosine": NUMBER},
)
labels = dict(zip(queries["query id"], queries["query"], strict=True))
query_id = st.selectbox(
    "Query", list(labels), key="ev_query", format_func=lambda q: evidence.query_label(q, labels[q])
)
core, _selector, exact = evidence.app_settings(doc, strategy)
if not exact:
    st.caption(
        render.escape_md(f"{strategy} is not one of the app's strategies: the pool opens with ")
        + "AdaGReS at the default settings."
    )
if st.button("Open this pool in Selection", key="ev_open", icon=":material/open_in_new:"):
    try:
        with st.spinner("Rebuilding the pool of this query (embeddings from the disk cache)…"):
            evidence.open_query(doc, query_id, corpus, strategy, budget)
    except AdagresError as error:
        render.error(f"Could not rebuild the pool of {query_id}: {error}")
    else:
        state.switch_page("app_pages/2_selection.py")
state.sync_url()
