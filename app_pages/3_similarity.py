"""Similarity: the pairwise cosine heatmap (picks outlined) and the near-duplicate pairs."""

import streamlit as st

from adagres.core.metrics import NEAR_DUPLICATE
from adagres.errors import AdagresError, SolverError
from ui import charts, compute, render, state, tables
from ui.sidebar import sidebar
from ui.text import both_in_selection, count

SIZES = (50, 100, 150, 200)  # hover text grows as M²: about 4.5 MB at 200
PAIRS_LISTED = 1000
ORDERS = ("pick", "cluster")


# ---- controls
settings = sidebar()
st.title("Similarity")
pool, key = render.current_pool(settings)

controls = st.columns([2, 2, 3])
# Each control is bound to the address by its key: order=pick|cluster, top=<M>, pairs=<cosine>.
method = controls[0].radio(
    "Order",
    options=ORDERS,  # no format_func: a bound radio writes its label, and links say "cluster"
    captions=("pick order, then relevance", "clusters"),
    help="pick: the selected chunks in pick order, then the rest by decreasing relevance. "
    "clusters: the same chunks grouped by average-linkage clustering on cosine distance.",
    key="order",
    bind="query-params",
    persist_state="session",
)
# Sizes up to the first that shows the whole pool ("all 88", not a 150 the pool lacks); the
# address holds the label ("top=50", "top=all 88"), and one the pool lacks is dropped.
sizes = [m for m in SIZES if m < len(pool)] + [m for m in SIZES if m >= len(pool)][:1]
max_chunks = controls[1].select_slider(
    "Chunks shown (top M)",
    options=sizes,
    value=min(150, sizes[-1]),
    format_func=lambda m: f"all {len(pool)}" if m >= len(pool) else str(m),
    help="Larger pools show the first M chunks of the pick order: the picks, then the most "
    "relevant. The hover text grows as M².",
    key="top",
    bind="query-params",
    persist_state="session",
)

# ---- cached call
try:
    selection = compute.selection(key)
except SolverError as error:
    st.warning(render.escape_md(f"The exact strategy gives no selection here: {error}"))
    st.info("Choose another strategy in the sidebar, or a smaller budget, to see the heatmap.")
    state.stop()
except AdagresError as error:
    render.error(str(error))
    state.stop()
figure, shown, n = charts.heatmap(key, method, max_chunks)

# ---- figure
if len(shown) < n:
    what = (
        f"the first {len(shown)} of the {selection.size} picks"
        if selection.size >= len(shown)
        else f"the {selection.size} picks, then the most relevant other chunks"
    )
    st.info(f"The pool has {n} chunks; the heatmap shows the top {len(shown)}: {what}.")
if selection.size == 0:
    st.info("Nothing is selected at these settings, so no block is outlined.")
else:
    st.caption(
        f"The outlined blocks are the pairs of selected chunks ({selection.size} picks, "
        f"strategy {settings.strategy}). Hover a cell for both chunks' snippets and their cosine."
    )
render.chart(figure, "sim_heatmap")
with st.expander(f"The {len(shown)} chunks of the heatmap, in row order"):
    rows = tables.heatmap_rows_frame(pool, selection, shown)
    render.table(rows, "sim_rows", render.RELEVANCE)

# ---- near-duplicate pairs
st.subheader("Near-duplicate pairs")
threshold = st.slider(
    "Cosine at or above",
    min_value=0.5,
    max_value=1.0,
    value=NEAR_DUPLICATE,
    step=0.01,
    help="Pairs of chunks of the whole pool whose cosine is at least this value.",
    key="pairs",
    bind="query-params",
    persist_state="session",
)
duplicates = compute.near_duplicates(key.pool, threshold, PAIRS_LISTED)
if not duplicates.total:
    st.info(f"No pair of chunks has a cosine of {threshold:.2f} or more.")
else:
    listed = len(duplicates.pairs)
    more = f"; the {listed} most similar are listed" if listed < duplicates.total else ""
    picked = set(selection.indices)
    both = sum(1 for i, j, _ in duplicates.pairs if i in picked and j in picked)
    st.caption(
        f"{count(duplicates.total, 'pair')} with cosine ≥ {threshold:.2f}{more}. "
        f"{both_in_selection(both, listed)}"
    )
    pairs = tables.pairs_frame(pool, duplicates, picked)
    render.table(pairs, "sim_pairs", {"cosine": render.FOUR_PLACES})
state.sync_url()
