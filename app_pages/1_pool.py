"""Pool: choose, upload or build a pool; see its chunks, distributions and near-duplicates."""

import json

import streamlit as st

from adagres import figures
from adagres.errors import AdagresError
from ui import asking, compute, explorer, pools, poolsets, render, state, tables
from ui.pool_sources import pool_sources
from ui.projection_store import projection
from ui.sidebar import sidebar
from ui.text import count

# ---- controls
settings = sidebar()
st.title("Pool")
pool_sources()

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
# A link or a reload elsewhere cannot bring this pool back (a Live pool's or a shared pool
# set's query can: the address says where to read it again).
lost_by_links = not (
    pools.kind(settings.pool) in ("live", "asked") or poolsets.linkable(settings.pool)
)
if pools.is_private(settings.pool) and lost_by_links:
    keep = st.container(horizontal=True, vertical_alignment="center")
    keep.caption(
        "This pool lives in this browser session only: a link to it opens nothing in another "
        "browser, nor here once the server restarts. Download it to keep or share it; the "
        "file opens again under “Upload a pool file”, above.",
        width="stretch",
    )
    keep.download_button(
        "Download this pool",
        data=lambda: json.dumps(pool.to_dict(), ensure_ascii=False),
        file_name=f"{settings.pool}.json",
        mime="application/json",
        key="pool_keep",
        on_click="ignore",
        icon=":material/download:",
    )

st.subheader("Map")
explore = st.columns([2, 1])
with explore[0]:
    found_text = st.text_input(  # bound to the address by its key: find=<text>
        "Find text",
        placeholder="a word in the chunks",
        key="find",
        bind="query-params",
        persist_state="session",
    )
with explore[1]:
    # color=<field>; a field this pool lacks (from a link or another pool) is dropped.
    color_by = st.selectbox(
        "Colour by",
        options=explorer.color_fields(pool),
        key="color",
        bind="query-params",
        persist_state="session",
    )
ask_row = st.columns([3, 1], vertical_alignment="bottom")
with ask_row[0]:
    state.bind_option(
        st.text_input,
        asking.ASK,
        "pool_ask",
        "Ask a new question",
        default="",
        placeholder="embedded offline by the pool's model",
    )
# A pool opened from a question has it as its query already: no new query on top of it.
question_text = "" if pools.kind(settings.pool) == "asked" else asking.asked()
with ask_row[1]:
    st.button(
        "Original query",
        key="pool_ask_clear",
        on_click=asking.clear,
        help="Back to the pool's own query: clears the new question.",
        disabled=not question_text,
    )
values, numeric = explorer.color_values(pool, selection, color_by)
found = explorer.matches(pool, found_text)
projected, method, _pending = projection(key.pool)
asked = placed = reselected = None
if question_text:
    try:
        asked = asking.question(key.pool, question_text)
        placed = asking.place(key.pool, asked, projected.chunks, method)
        reselected = asking.reselect(key, asked)
    except AdagresError as exc:
        asked = placed = reselected = None
        st.warning(render.md_line(f"No new query: {exc}"))
chosen = explorer.picked(pool)
facets = explorer.facets(pool, selection, color_by, chosen)
# Linked views beside the map: the facets count the chunks chosen there, and bars clicked or
# boxed on the facets choose their chunks on the map.
map_column, facets_column = st.columns([3, 2])
with map_column:
    render.chart(
        figures.explorer_map(
            projected.chunks,
            ids=pool.ids,
            texts=pool.texts,
            values=values,
            numeric=numeric,
            color_by=color_by,
            matches=found,
            query=projected.query,
            asked=None if placed is None else (placed.x, placed.y),
            neighbours=asked.neighbours if asked else (),
            new_picks=reselected.indices if reselected else (),
            chosen=chosen or None,
            title=f"{method.upper()} map of the pool",
        ),
        "pool_map",
        on_select=lambda: explorer.record_pick("pool_map"),
        selection_mode=("lasso", "box", "points"),
    )
with facets_column:
    render.chart(
        figures.facets_figure(
            facets, chosen_name=f"chosen on the map ({len(chosen)})" if chosen else "chosen"
        ),
        "pool_facets",
        modebar=False,
        on_select=lambda: explorer.record_facet_pick("pool_facets", facets),
        selection_mode=("points", "box"),
    )
    st.caption("Box bars (drag across their tops) to choose their chunks on the map.")
if asked is not None and placed is not None and reselected is not None:
    st.caption(
        render.md_line(
            f"New query {question_text!r} (green star, placed by {placed.how}): its "
            f"{len(asked.neighbours)} nearest chunks ringed in green, its selection "
            f"({count(len(reselected.indices), 'chunk')}, same strategy and settings) crossed."
        )
    )
    relevance = {"relevance to the question": render.FOUR_PLACES}
    render.table(asking.beside_frame(pool, selection, reselected), "pool_ask_picks", relevance)
    st.button(
        "Open this question in every page",
        key="pool_ask_open",
        on_click=asking.open_everywhere,
        args=(settings.pool, asked),
        help="Selection, Why dropped and every other page then select for the question "
        "(the same chunks, the question as the query); the link keeps it.",
    )
if found is not None:
    st.caption(
        render.md_line(
            f"{count(len(found), 'chunk')} contain {found_text.strip()!r} (ringed), listed below."
        )
    )
    if found:
        render.table(frame.iloc[list(found)], "pool_found", render.RELEVANCE)
if chosen:
    st.text(f"Chosen on the map: {count(len(chosen), 'chunk')}")
    name = st.text_input(  # named=<text> in the address, bound by Streamlit
        "Name this choice",
        placeholder="e.g. dosage chunks",
        key="named",
        bind="query-params",
        persist_state="session",
    )
    verdicts = frame.iloc[list(chosen)]["verdict"].value_counts()
    st.text("Their verdicts: " + " · ".join(f"{n} {v}" for v, n in verdicts.items()))
    render.table(frame.iloc[list(chosen)], "pool_chosen", render.RELEVANCE)
    st.download_button(
        "Download the chosen chunks as a pool (JSON)",
        data=lambda: explorer.export_text(pool, chosen),
        file_name=f"pool-{settings.pool}-{name.strip() or f'{len(chosen)}-chosen'}.json",
        mime="application/json",
        key="pool_chosen_download",
        on_click="ignore",
    )
else:
    st.caption("Lasso or box chunks on the map to list them here and export them as a pool.")

st.subheader("Chunks")
st.caption("Verdict under the current sidebar settings (see Why dropped for the numbers).")
render.table(frame, "pool_table", render.RELEVANCE)

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
