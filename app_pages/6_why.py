"""Why dropped: pick any chunk (map, table or id) and see its verdict and the numbers behind it."""

import streamlit as st

from adagres import figures
from ui import charts, render, state, tables
from ui.sidebar import sidebar
from ui.text import plain_name

SIGNED = st.column_config.NumberColumn(format="%+.4f")

# ---- controls
settings = sidebar()
st.title("Why dropped")

# ---- cached call
pool, key, selection = render.pool_and_selection(settings)
st.caption(
    f"{settings.strategy} picks by {selection.scoring.formula}. Scores below are that rule's; "
    "“Gain” is F's marginal gain at the λ and plain cosine AdaGReS uses with these settings."
)
position = {chunk_id: i for i, chunk_id in enumerate(pool.ids)}
if settings.chunk not in position:
    if settings.chunk is not None:
        st.warning(render.escape_md(f"No chunk {settings.chunk!r} in this pool."))
    # Default: the most relevant chunk that was not selected (else the first pick).
    dropped = [i for i in selection.relevance.argsort()[::-1] if i not in selection.indices]
    default = pool.ids[dropped[0] if dropped else selection.indices[0]]
    settings = state.update(chunk=default, record=False)


def picked(chunk_id: str) -> None:
    """A chunk was picked on the map or in the table: show its verdict, in view."""
    state.update(chunk=chunk_id)
    st.session_state["why_picks"] = st.session_state.get("why_picks", 0) + 1


def chunk_from_map() -> None:
    """A click on the map: each point carries its pool position (``customdata``)."""
    clicked = render.clicked_position(st.session_state["why_map"]["selection"]["points"])
    if clicked is not None:
        picked(pool.ids[clicked])


def chunk_from_table() -> None:
    rows = st.session_state["why_table"]["selection"]["rows"]
    if rows:
        picked(pool.ids[rows[0]])


state.bind(st.selectbox, "chunk", "why_chunk", "Chunk id", options=pool.ids)
chosen = state.current().chunk
assert chosen is not None  # set above when the URL named none
chunk = position[chosen]
verdict = selection.verdict(chunk)

# ---- render: the verdict and its numbers, and the chunk ringed on the map
st.subheader(f"Verdict on {render.md_line(pool.ids[chunk])}", anchor="verdict")
st.text(f"{pool.ids[chunk]}: {verdict.summary(pool.ids)}")
relevance = verdict.relevance_term
render.metrics(
    [
        ("Verdict", plain_name(verdict.kind)),
        ("Tokens", verdict.tokens),
        ("Score", "–" if verdict.score is None else f"{verdict.score:+.4f}"),
        ("Relevance term", "–" if relevance is None else f"{relevance:.4f}"),
        ("Gain", "–" if verdict.gain is None else f"{verdict.gain:+.4f}"),
    ]
)
if verdict.tokens_left is not None and str(verdict.kind) == "did_not_fit":
    st.text(
        f"Needed {verdict.tokens} tokens; {verdict.tokens_left} were left at step {verdict.step}."
    )
marked, method, pending = charts.marked_map(key, len(selection.steps), chunk)
render.chart(marked, "why_map", on_select=chunk_from_map, selection_mode="points")
render.projection_note(method, pending)
st.caption(
    f"{render.md_line(pool.ids[chunk])} is ringed. Click another chunk on the map or in the "
    "table below."
)
if pending:
    render.wait_for_projection(key.pool)
if st.session_state.get("why_picks"):
    render.scroll_to("verdict", st.session_state["why_picks"])

if verdict.history:
    render.chart(
        figures.verdict_figure(
            selection,
            chunk,
            ids=pool.ids,
            title=f"Score of {figures.escape(pool.ids[chunk])} at each step, against the winner's",
        ),
        "why_verdict",
    )
    render.table(
        tables.history_frame(pool, selection, verdict),
        "why_history",
        {"its score": SIGNED, "winner score": SIGNED, "its gain": SIGNED, "winner gain": SIGNED},
    )
if verdict.redundancy_sources:
    similarity = selection.scoring.similarity
    st.text(f"Selected chunks that made it redundant ({similarity} to this chunk):")
    render.table(tables.sources_frame(pool, verdict), "why_sources", {"cosine": render.FOUR_PLACES})
render.chunk_text(pool, chunk)

# ---- pick another chunk in the table
st.subheader("All chunks")
render.table(
    tables.pool_frame(pool, selection),
    "why_table",
    render.RELEVANCE,
    on_select=chunk_from_table,
    selection_mode="single-row",
)
state.sync_url()
