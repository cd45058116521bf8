"""Selection: replay the greedy step by step on the pool map, timeline, budget bar, context."""

import json

import streamlit as st

from ui import charts, compute, render, state, tables
from ui.projection_store import projection
from ui.replay import picked_after, replay, step_summary, step_totals
from ui.sidebar import sidebar
from ui.text import count, lam_note, percent, plain_name, reference_code_note

# ---- controls
settings = sidebar()
st.title("Selection")

# ---- cached call
pool, key, selection = render.pool_and_selection(settings)


def lam_at_work() -> None:
    """Where λ changes no pick (top-k, the default preset), say so under the title, on one
    line with the one click that shows λ at work: the λ page, where the paper's method picks
    differently as λ moves (the sidebar offers the paper's method itself). Outside the
    replay's fragment: the click reruns the whole page."""
    note = lam_note(settings.strategy, short=True)
    if note is None:
        st.caption(f"{settings.strategy}: {selection.scoring.formula}")
        return
    row = st.container(horizontal=True, vertical_alignment="center", gap="small")
    row.caption(note, width="content")
    if row.button(
        "See λ at work",
        key="sel_lam_page",
        icon=":material/function:",
        help="The λ page: the paper's method at every λ, and where its picks change.",
    ):
        state.switch_page("app_pages/4_lambda.py")


def draw_header(step: int) -> None:
    """The page's numbers at the step the replay shows (the whole run at the last step):
    one row of the numbers that change with the step, the run's context numbers folded."""
    size, used, objective = step_totals(selection, step)
    last = len(selection.steps)
    weighs_lam = lam_note(settings.strategy) is None
    headline = [
        ("Chunks selected", size),
        ("Tokens used", f"{used:,} / {selection.budget:,}"),
        # Short while replaying ("not yet"): the slider and the sentence below give the step.
        ("Stop reason", plain_name(selection.stop_reason) if step >= last else "not yet"),
    ]
    if weighs_lam:  # λ and F(S) are this rule's own numbers only where λ weighs its score
        headline[2:2] = [("λ", f"{selection.lam:.4f}"), ("F(S)", f"{objective:.4f}")]
    render.metrics(headline, gap="small")  # three tiles on one row at 1024 px
    # What the context pays for twice, for the whole run: folded, its numbers in the label.
    measured = compute.metrics_of(key)
    repeated = percent(measured.repeated_text or 0.0)
    summary = (
        f"Whole run: {repeated} repeated text · mean pair cos {measured.redundancy_mean:.3f} · "
        f"{count(len(selection.duplicates), 'duplicate')} dropped"
    )
    if selection.tokens_saved:
        summary += f" · {selection.tokens_saved:,} tokens merged"
    if not weighs_lam:
        summary += f" · the paper's F(S) {selection.objective:.4f} at λ {selection.lam:.4f}"
    with st.expander(summary, key="sel_whole_run"):
        render.metrics(
            [
                ("Mean pair cosine", f"{measured.redundancy_mean:.3f}"),
                ("Repeated text", repeated),
                ("Near-duplicate pairs", measured.near_duplicates),
                ("Duplicates dropped", len(selection.duplicates)),
                ("Tokens merged", selection.tokens_saved),
            ],
            help={
                "Repeated text": "Share of the context's words (lower-cased) that lie in a word "
                "8-gram already earlier in the context, chunks in pick order.",
                "Duplicates dropped": "Chunks the near-duplicate guard made ineligible because "
                "they duplicate a pick, or whose text lies inside a passage already taken (see "
                "Why dropped).",
                "Tokens merged": "Tokens that picks overlapping in their source share, paid for "
                "once (Pay once for overlapping text, in the sidebar).",
            },
        )
        if not weighs_lam:
            st.caption(
                f"F(S) = {selection.objective:.4f} is the paper's objective for the whole "
                f"run's picks at λ {selection.lam:.4f}; {settings.strategy} does not maximise it."
            )
        if selection.calibration is not None and "λ" in selection.scoring.redundancy:
            st.text(selection.calibration.describe())
    if selection.note:
        st.text(selection.note)
    note = reference_code_note(selection)
    if note:
        st.info(render.escape_md(note))


def open_verdict() -> None:
    """A click on the map: show that chunk's verdict on "Why dropped"."""
    clicked = render.clicked_position(st.session_state["sel_map"]["selection"]["points"])
    if clicked is not None:
        state.update(chunk=pool.ids[clicked])
        st.session_state["sel_playing"] = False
        st.session_state["sel_open_why"] = True
        # The page switch may keep this page's scroll position: Why dropped scrolls its
        # verdict into view on every new pick.
        st.session_state["why_picks"] = st.session_state.get("why_picks", 0) + 1


def draw_step(step: int) -> None:
    """Everything that shows one step (drawn by the replay, step after step)."""
    st.text(step_summary(pool, selection, step))
    map_figure, timeline, budget_figure, method, pending = charts.step_figures(key, step)
    # The map and the timeline side by side (stacked on a narrow screen): both stay in view
    # while the replay plays, at 1024 px as at 1280 px.
    views = st.columns([3, 2], gap="small")
    with views[0]:
        render.chart(map_figure, "sel_map", on_select=open_verdict, selection_mode="points")
    with views[1]:
        render.chart(timeline, "sel_timeline", modebar=False)  # a narrow column at 1024 px
    if st.session_state.pop("sel_open_why", False):
        state.switch_page("app_pages/6_why.py")
    render.projection_note(method, pending)
    st.caption("Click a chunk on the map to see why it was picked or dropped.")
    render.chart(budget_figure, "sel_budget")
    picked = picked_after(selection, step)
    context = selection.context(pool.texts, step)  # once: the heading, both views, download
    stitched = "" if len(context) == len(picked) else f" in {count(len(context), 'passage')}"
    st.subheader(f"Context after step {step}: {count(len(picked), 'chunk')}{stitched}")
    if stitched:
        st.caption(
            "Chunks that overlap in their source are one passage (ids joined by +), "
            "paid for once: the tokens are what each passage added to the budget."
        )
    left_out = tables.left_out_frame(pool, selection, step)
    if len(left_out):
        repeats = st.expander(
            f"Left out as repeats: {count(len(left_out), 'sentence')} ([…] in the context)",
            key="sel_left_out",
            on_change="rerun",
        )
        if repeats.open:
            with repeats:
                st.caption(
                    "Each sentence was already in the context, put there by the pick named: "
                    "the budget paid for it once, and […] stands where it was left out."
                )
                render.table(left_out, "sel_left_out_table")
    # Both views of the context are drawn only once opened (and stay open for the session):
    # the table's grid costs a new visitor's browser about 0.6 s before the first chart,
    # the code block's syntax highlighter 0.3 s. The budget bar above lists the picks.
    table = st.expander("Context as a table", key="sel_context_table", on_change="rerun")
    if table.open:
        with table:
            render.table(
                tables.context_frame(pool, context),
                "sel_context",
                {"text": st.column_config.TextColumn("text", width="large")},
            )
    text = tables.context_text(context)
    plain_text = st.expander("Context as plain text", key="sel_plain_text", on_change="rerun")
    if plain_text.open:
        plain_text.code(text, language=None, wrap_lines=True)
    draw_downloads(step, text)


def draw_downloads(step: int, text: str) -> None:
    """The selection with its step record, and ``text``: the context after the step shown."""
    downloads = st.columns(2)
    downloads[0].download_button(
        "Download selection + steps (JSON)",
        data=lambda: json.dumps(
            selection.to_dict(pool.ids, candidates=True), ensure_ascii=False, indent=1
        ),
        file_name=f"selection-{settings.pool}-{settings.budget}.json",
        mime="application/json",
        key="sel_download_json",
        on_click="ignore",
    )
    whole = step >= len(selection.steps)
    downloads[1].download_button(
        "Download context (text)" if whole else f"Download context after step {step} (text)",
        data=text,
        file_name=f"context-{settings.pool}-{settings.budget}{'' if whole else f'-step{step}'}.txt",
        mime="text/plain",
        key="sel_download_text",
        on_click="ignore",
    )


lam_at_work()
replay(selection, draw_step, header=draw_header)
if projection(key.pool)[2]:  # the UMAP layout is still being computed
    render.wait_for_projection(key.pool)
state.sync_url()
