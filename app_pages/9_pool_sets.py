"""Pool sets: many queries at once; top-k against AdaGReS per query; open one in every page."""

import streamlit as st

from adagres import figures
from adagres.errors import AdagresError
from ui import pools, render, state
from ui import poolsets as ps
from ui.sidebar import sidebar
from ui.text import count

# ---- controls
settings = sidebar()
st.title("Pool sets")
st.caption(
    "A JSONL file of pools, a folder of pool files, a .json spec of queries against a "
    "Milvus collection, or a trace export (OTLP JSON, Phoenix's span table as Parquet or "
    "JSON lines, LangSmith runs: one pool per retrieval, a request's retrievals together). "
    "Each query's pool is summarised at the budget below by top-k, by AdaGReS with the "
    "sidebar's settings and by the recommended preset."
)
st.session_state.setdefault("ps_path", str(pools.data_dir()))  # the bundled demo pools
st.session_state.setdefault("ps_budget", settings.budget)
upload = st.file_uploader(
    "Upload a pool set or a trace export", type=["jsonl", "json", "parquet"], key="ps_upload"
)
if upload is not None and st.session_state.get("ps_uploaded") != upload.file_id:
    st.session_state["ps_uploaded"] = upload.file_id
    st.session_state["ps_path"] = ps.save_upload(upload.name, upload.getvalue())
path = st.text_input("Or a path on this server", key="ps_path")
budget = st.number_input("Budget (tokens)", min_value=1, step=100, key="ps_budget")

# ---- cached call
try:
    pool_set = ps.open_set(path)
    with st.spinner(f"Summarising {count(len(pool_set), 'piece')} on the local cores…"):
        found = ps.rows(pool_set, settings.selector, int(budget))
except AdagresError as error:
    render.error(str(error))
    state.stop()

# ---- render
ps.follow_set(pool_set, found)
st.text(f"{ps.display_name(pool_set)}: {count(len(found), 'query', 'queries')}")
left, middle, right = st.columns(3)
text = left.text_input("Query contains", key="ps_filter")
min_dropped = middle.number_input(
    "AdaGReS drops at least", min_value=0, value=0, step=1, key="ps_min_dropped"
)
gold_only = right.checkbox(
    "Gold only", key="ps_gold_only", help="Only the queries whose pool marks gold chunks"
)
left, right = st.columns([3, 1])
sort = left.selectbox("Sort by", ps.SORTABLE, format_func=lambda c: ps.COLUMNS[c], key="ps_sort")
descending = right.toggle("Descending", key="ps_descending")
shown = ps.filter_rows(
    found,
    text=text,
    min_dropped=int(min_dropped),
    gold_only=gold_only,
    sort=sort or "query_id",
    descending=descending,
)
st.caption(
    f"{count(len(shown), 'query', 'queries')} of {len(found)}. cos: mean pairwise cosine of "
    "the picks; repeated text: share of the picks' words in a word 8-gram already in the "
    "context; dropped: chunks top-k keeps that AdaGReS (or the preset) drops. Click a row "
    "to open its pool in every page."
)
render.table(
    ps.frame(shown),
    "ps_table",
    on_select=ps.pick_from_table(pool_set, shown),
    selection_mode="single-row",
)
ps.show_open_error()
if shown:
    render.metrics(
        [
            ("Mean top-k cos", f"{sum(r['topk_redundancy'] for r in shown) / len(shown):.3f}"),
            ("Mean AdaGReS cos", f"{sum(r['adagres_redundancy'] for r in shown) / len(shown):.3f}"),
            ("Mean top-k repeated text", ps.mean_share(shown, "topk_repeated")),
            ("Mean rec. repeated text", ps.mean_share(shown, "recommended_repeated")),
            ("Queries with drops", sum(1 for r in shown if r["dropped"] > 0)),
        ]
    )
    render.chart(figures.redundancy_figure(shown), "ps_redundancy")
    render.chart(figures.dropped_figure(shown), "ps_dropped")

    # ---- open a query's pool in every page (a click in the table, or this choice)
    by_id = {row["query_id"]: row for row in shown}
    chosen = st.selectbox(
        "Query",
        list(by_id),
        key="ps_query",
        format_func=lambda i: f"#{i} · {by_id[i]['query'][:90]}",
    )
    if st.button("Open in every page", key="ps_open", type="primary"):
        ps.open_query(pool_set, by_id[chosen])
        state.sync_url()
        st.rerun()
    if ps.is_upload(pool_set):  # said before the user copies an address that cannot work
        st.caption(
            "An uploaded file stays with this browser session: a link to one of its queries "
            "opens nothing in another browser. To keep or share a query's pool, open it and "
            "use “Download this pool” on the Pool page, or ask the server's operator to "
            "share a folder holding the file and type its path above."
        )
state.sync_url()
