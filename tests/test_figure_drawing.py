"""What the browser has to draw: figures that plotly draws once, with no work it throws away.

Streamlit draws a changed figure anew on each rerun, so a figure's own drawing cost is paid
on every control change. These tests hold the figure builders to the choices that keep it
small: a title margin plotly need not grow (a grown margin redraws the whole figure), no
budget-bar labels plotly would measure and hide, no timeline markers past
:data:`~adagres.figures.timeline.MARKER_STEPS` steps. The layout browser test checks in
Chromium that plotly keeps the margin given.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from figure_support import as_dict, trace

import adagres
from adagres import figures as F


def test_budget_bar_labels_only_segments_that_can_hold_them():
    """A label is sent only where its segment, at the width labels are fitted to, holds at
    least its number at 11 px; the browser would hide the others after measuring each."""
    rng = np.random.default_rng(5)
    C, q = rng.normal(size=(300, 8)), rng.normal(size=8)
    tokens = np.where(np.arange(300) % 50 == 0, 4000, 20)  # a few wide, many narrow
    s = adagres.select(q, C, tokens, 20_000, lam=0.0, policy="fill")
    ids = [f"chunk-{i}" for i in range(300)]
    picks = trace(F.budget_bar(s, ids=ids), "picks")
    scale = F.LABEL_FIT_WIDTH / 20_000
    labelled = 0
    for n, (chunk, text) in enumerate(zip(s.indices, picks["text"], strict=True), start=1):
        label = f"{n}. chunk-{chunk}"
        fits = tokens[chunk] * scale >= len(label) * F.LABEL_CHAR_WIDTH + 6
        assert text == (label if fits else "")
        labelled += fits
    assert 0 < labelled < s.size  # both cases occur: 4,000 tokens fit a label, 20 do not


def test_budget_bar_cuts_long_ids_instead_of_dropping_them():
    """Picks with ids like a Live pool's: where a segment holds "<pick>. " and at least
    MIN_ID_CHARS characters of the id, the label is the start of the id cut with "…"; where
    it holds fewer (eleven picks of 90 of 1,000 tokens, about 58 px: "3. so…"), the number
    alone, never an id cut to meaninglessness."""
    for n, tokens, cut in ((5, 200, True), (11, 90, False)):
        C = np.eye(n, 12)
        q = np.ones(12)
        ids = [
            f"some/long/folder/document-number-{i:02d}-of-the-collection.md#{i}" for i in range(n)
        ]
        s = adagres.select(q, C, np.full(n, tokens), 1000, lam=0.0)
        assert s.size == n
        picks = trace(F.budget_bar(s, ids=ids), "picks")
        width = tokens * F.LABEL_FIT_WIDTH / 1000
        for k, (chunk, text) in enumerate(zip(s.indices, picks["text"], strict=True), start=1):
            assert len(text) * F.LABEL_CHAR_WIDTH + 6 <= width
            if not cut:
                assert text == str(k)
                continue
            assert text.startswith(f"{k}. ") and text.endswith("…"), text
            shown = text[len(f"{k}. ") : -1]
            assert ids[chunk].startswith(shown) and len(shown) >= F.MIN_ID_CHARS


def test_timeline_draws_markers_only_while_they_stay_apart():
    rng = np.random.default_rng(6)
    for n in (F.MARKER_STEPS - 20, F.MARKER_STEPS + 50):
        C, q = rng.normal(size=(n, 8)), rng.normal(size=8)
        s = adagres.select(q, C, np.full(n, 10), 10 * n, lam=0.0, policy="fill")
        assert len(s.steps) == n + 1
        fig = F.gain_timeline(s)
        mode = "lines+markers" if n + 1 <= F.MARKER_STEPS else "lines"
        assert trace(fig, "winner")["mode"] == trace(fig, "runner-up")["mode"] == mode


def test_a_title_starts_with_the_top_margin_plotly_would_grow_to():
    """plotly grows the margin to fit the title (automargin) and then draws the figure a
    second time; the margin given holds the title already (the browser test checks that
    plotly keeps it)."""
    for words, lines in ((3, 1), (14, 2), (25, 3)):
        fig = F.apply_layout(go.Figure(), title=" ".join(["word"] * words))
        layout = as_dict(fig)["layout"]
        assert layout["title"]["text"].count("<br>") + 1 == lines
        assert layout["margin"]["t"] == F.TITLE_MARGIN + F.TITLE_MARGIN_PER_LINE * (lines - 1)
        assert layout["title"]["automargin"] is True
    assert as_dict(F.apply_layout(go.Figure()))["layout"]["margin"]["t"] < F.TITLE_MARGIN
