"""The chunk map's figure: picks, numbers, the ring, hovers and point identities, against
the selection's record (the pool fixture is test_figures.py's)."""

from __future__ import annotations

import html

import numpy as np
import pytest
from figure_support import as_dict, figure_pool, strip_own_markup, trace

import adagres
from adagres import figures as F
from adagres.errors import InputError
from adagres.figures.layout import plain_name
from adagres.figures.projection import project

N = 40
BUDGET = 450


@pytest.fixture(scope="module")
def pool():
    return figure_pool(N, BUDGET)


def test_map_numbers_picks_in_order_at_projection_coordinates(pool):
    s, p = pool["s"], pool["proj"]
    unfit_seen = 0
    for t in range(1, s.size + 1):
        data = F.map_data(p, s, t, ids=pool["ids"], texts=pool["texts"])
        assert data.picked.indices == s.indices[:t]
        assert data.picked.labels == tuple(str(k) for k in range(1, t + 1))
        np.testing.assert_array_equal(data.picked.x, p.chunks[list(s.indices[:t]), 0])
        np.testing.assert_array_equal(data.picked.y, p.chunks[list(s.indices[:t]), 1])
        assert data.winner == s.indices[t - 1] and data.winner_accepted
        assert data.winner_xy == tuple(p.chunks[s.indices[t - 1]])
        # every chunk is in exactly one group
        groups = [*data.picked.indices, *data.candidates.indices, *data.unfit.indices]
        assert sorted(groups) == list(range(N))
        record = s.steps[t - 1].candidates
        assert set(data.unfit.indices) == set(np.flatnonzero(record.in_play & ~record.eligible))
        unfit_seen += len(data.unfit.indices)
        gains = record.gain
        assert data.candidates.values == tuple(gains[list(data.candidates.indices)])
        fig = F.pool_map(p, s, t, ids=pool["ids"], texts=pool["texts"])
        sel = trace(fig, "selected")
        assert sel["text"] == [str(k) for k in range(1, t + 1)]
        assert sel["x"] == list(data.picked.x) and sel["y"] == list(data.picked.y)
        ring = trace(fig, "winner")
        assert (ring["x"][0], ring["y"][0]) == data.winner_xy
        cand = trace(fig, "candidates")
        assert cand["marker"]["color"] == list(data.candidates.values)
        assert trace(fig, "query")["x"] == [p.query[0]]
        assert trace(fig, "does not fit")["x"] == list(data.unfit.x)
    assert unfit_seen > 0


def test_map_keeps_numbers_star_and_ring_apart_and_hovers_readable(pool):
    """Pick numbers sit on the side away from the query's star (the first picks lie
    around it), the picks are drawn over the star and the winner's ring, and hovers are
    white, dark-bordered and narrow (a one-line 160-character snippet was a label as wide
    as the map, drawn over its top)."""
    s, p = pool["s"], pool["proj"]
    t = s.size
    figure = F.pool_map(p, s, t, ids=pool["ids"], texts=pool["texts"])
    fig = as_dict(figure)
    sel = trace(figure, "selected")
    qx, qy = p.query
    away = {  # the label's side, as an offset from the query that side requires
        "top center": lambda dx, dy: dy >= 0,
        "bottom center": lambda dx, dy: dy < 0,
        "middle right": lambda dx, dy: dx > 0,
        "middle left": lambda dx, dy: dx < 0,
    }
    for x, y, where in zip(sel["x"], sel["y"], sel["textposition"], strict=True):
        assert away[where](x - qx, y - qy), (where, x - qx, y - qy)
    assert len(set(sel["textposition"])) > 1  # not every label above its point
    names = [d["name"] for d in fig["data"]]
    assert names.index("selected") > names.index("query")
    assert names.index("selected") > names.index("winner")
    hover = fig["layout"]["hoverlabel"]
    assert hover["bgcolor"] == "white" and hover["bordercolor"] == "#444444"
    assert hover["font"]["color"] == "#222222"
    for text in trace(figure, "candidates")["hovertext"]:
        lines = text.split("<br>")
        snippet_lines = lines[4:]  # id, tokens, gain, verdict; then the text
        assert 2 <= len(snippet_lines) <= 4
        assert all(len(html.unescape(line)) <= F.HOVER_LINE for line in snippet_lines)


def test_map_numbers_picks_only_up_to_max_labels(pool):
    """Past ``max_labels`` picks the map draws no numbers; each pick keeps its number in
    its hover ("pick k · …"), and the points are the same."""
    s, p = pool["s"], pool["proj"]
    t = s.size
    labelled = trace(
        F.pool_map(p, s, t, ids=pool["ids"], texts=pool["texts"], max_labels=t), "selected"
    )
    plain = trace(
        F.pool_map(p, s, t, ids=pool["ids"], texts=pool["texts"], max_labels=t - 1), "selected"
    )
    assert labelled["mode"] == "markers+text"
    assert labelled["text"] == [str(k) for k in range(1, t + 1)]
    assert plain["mode"] == "markers" and "text" not in plain
    assert plain["x"] == labelled["x"] and plain["customdata"] == labelled["customdata"]
    for k, hover in enumerate(plain["hovertext"], start=1):
        assert f"pick {k} · gain at pick" in hover
    assert F.MAX_PICK_LABELS == 60 and s.size <= F.MAX_PICK_LABELS  # the default numbers them


def test_a_click_selection_dims_no_point_of_the_map(pool):
    """The pages select a chunk with a click on the map, and plotly dims every point outside
    a selection to a fifth unless the trace says otherwise: each trace keeps its look (the
    numbers of the picks too), so the map still reads after a click."""
    s, p = pool["s"], pool["proj"]
    for t, max_labels in ((1, 60), (s.size, 60), (len(s.steps), 0)):
        fig = F.pool_map(p, s, t, ids=pool["ids"], texts=pool["texts"], max_labels=max_labels)
        assert len(fig.data) >= 4
        for layer in fig.data:
            assert layer.unselected.marker.opacity == 1.0, layer.name
        picks = next(layer for layer in fig.data if layer.name == "selected")
        if max_labels:
            assert picks.textfont.color == picks.unselected.textfont.color == F.PALETTE["selected"]
        else:
            assert picks.unselected.textfont.color is None  # no numbers drawn


def test_every_map_point_carries_its_pool_position(pool):
    """A click names its chunk through customdata, whatever the trace order."""
    s, p = pool["s"], pool["proj"]
    for t in (1, s.size, len(s.steps)):
        fig = F.pool_map(p, s, t, ids=pool["ids"], texts=pool["texts"])
        seen = []
        for layer in as_dict(fig)["data"]:
            if layer["name"] == "query":
                assert "customdata" not in layer
                continue
            positions = list(layer["customdata"])
            assert len(positions) == len(layer["x"])
            np.testing.assert_array_equal(layer["x"], p.chunks[positions, 0])
            np.testing.assert_array_equal(layer["y"], p.chunks[positions, 1])
            for position, hover in zip(positions, layer.get("hovertext", []), strict=False):
                assert hover.startswith(f"<b>c{position}&lt;i&gt;</b>")
            if not layer["name"].startswith(("winner", "next")):
                seen += positions
        assert sorted(seen) == list(range(N))  # every chunk once (the ring repeats one)


def test_figures_take_a_prepared_pool_like_its_matrix(pool):
    s, C, q = pool["s"], pool["C"], pool["q"]
    prepared = adagres.prepare(q, C, pool["tokens"])
    for method in ("pick", "cluster"):
        assert F.heatmap_order(s, prepared, method=method) == F.heatmap_order(s, C, method=method)
    order = F.heatmap_order(s, C)
    kwargs = {"order": order, "ids": pool["ids"], "texts": pool["texts"], "selected": s.indices}
    assert F.heatmap_data(prepared, **kwargs) == F.heatmap_data(C, **kwargs)
    a, b = project(prepared, prepared.query, method="pca"), project(C, q, method="pca")
    np.testing.assert_array_equal(a.chunks, b.chunks)
    np.testing.assert_array_equal(a.query, b.query)


def test_map_at_and_beyond_the_stop_shows_all_picks_and_the_stop(pool):
    s, p = pool["s"], pool["proj"]
    last = len(s.steps)
    data = F.map_data(p, s, last, ids=pool["ids"], texts=pool["texts"])
    beyond = F.map_data(p, s, last + 5, ids=pool["ids"], texts=pool["texts"])
    assert data == beyond
    assert data.picked.indices == s.indices
    assert not data.winner_accepted and data.stop_reason == s.stop_reason.value
    assert data.winner == s.steps[-1].winner
    # At the stop the verdicts are final: every chunk not picked is drawn in the group of
    # its verdict kind, the groups the Pool table counts (the record's verdict kinds).
    assert data.candidates.indices == data.unfit.indices == data.ineligible.indices == ()
    drawn = {i: kind for kind, group in data.by_verdict for i in group.indices}
    record = {
        i: kind.value for i, (kind, _) in enumerate(s.verdict_kinds) if kind.value != "selected"
    }
    assert drawn == record and len(set(record.values())) > 1
    figure = F.pool_map(p, s, last, ids=pool["ids"], texts=pool["texts"])
    for kind, group in data.by_verdict:
        layer = trace(figure, f"{plain_name(kind)} ({len(group.indices)})")
        assert list(layer["customdata"]) == list(group.indices)
    before = F.map_data(p, s, 0, ids=pool["ids"], texts=pool["texts"])
    assert before.picked.indices == () and before.winner is None
    assert before.candidates.values == tuple(
        s.steps[0].candidates.gain[list(before.candidates.indices)]
    )


def test_map_needs_a_trace_except_at_the_stop(pool):
    s = adagres.select(pool["q"], pool["C"], pool["tokens"], BUDGET, trace=False)
    with pytest.raises(InputError, match="trace=True"):
        F.map_data(pool["proj"], s, 1, ids=pool["ids"], texts=pool["texts"])
    data = F.map_data(pool["proj"], s, len(s.steps), ids=pool["ids"], texts=pool["texts"])
    assert data.picked.indices == s.indices
    with pytest.raises(InputError, match="ids"):
        F.map_data(pool["proj"], s, 1, ids=pool["ids"][:-1], texts=pool["texts"])


def test_hover_text_cannot_inject_markup(pool):
    fig = F.pool_map(pool["proj"], pool["s"], 2, ids=pool["ids"], texts=pool["texts"])
    hovers = [h for t in as_dict(fig)["data"] for h in t.get("hovertext") or []]
    assert len(hovers) == N + 1  # every chunk and the query
    for h in hovers:
        assert "<" not in strip_own_markup(h) and ">" not in strip_own_markup(h)
    # Each point's hover names its own chunk, escaped: id, token count and text.
    data = F.map_data(pool["proj"], pool["s"], 2, ids=pool["ids"], texts=pool["texts"])
    groups = {"selected": data.picked, "candidates": data.candidates, "does not fit": data.unfit}
    for name, group in groups.items():
        hovertext = trace(fig, name).get("hovertext") or []
        assert len(hovertext) == len(group.indices), name
        for i, h in zip(group.indices, hovertext, strict=True):
            assert h.startswith(f"<b>c{i}&lt;i&gt;</b><br>tokens {pool['tokens'][i]} ")
            assert f"chunk {i}: &lt;script&gt;alert({i})&lt;/script&gt; &amp; more" in h


def test_snippet_escapes_and_cuts():
    assert F.snippet("<script>alert('x')</script>") == "&lt;script&gt;alert('x')&lt;/script&gt;"
    assert F.snippet("a &  b\n\nc", n=160) == "a &amp; b c"
    assert F.snippet("&" * 10, n=5) == "&amp;" * 5 + "…"  # the cut never splits an entity
    assert len(F.snippet("x" * 500)) == 161


@pytest.mark.parametrize("svg", [False, True])
def test_mark_chunk_rings_the_inspected_chunk_and_leaves_the_map_as_it_was(pool, svg):
    s, p = pool["s"], pool["proj"]
    fig = F.pool_map(p, s, 2, ids=pool["ids"], texts=pool["texts"], svg=svg)
    before = as_dict(fig)
    chunk = 7
    point = (float(p.chunks[chunk, 0]), float(p.chunks[chunk, 1]))
    marked = F.mark_chunk(fig, point, chunk, name="<b>c7</b>", svg=svg)
    assert as_dict(fig) == before  # a copy: the cached map is not changed
    after = as_dict(marked)
    assert after["data"][:-1] == before["data"]
    ring = after["data"][-1]
    assert ring["type"] == ("scatter" if svg else "scattergl")
    assert (ring["x"], ring["y"], ring["customdata"]) == ([point[0]], [point[1]], [chunk])
    assert ring["name"] == "inspected: &lt;b&gt;c7&lt;/b&gt;"  # chunk ids are plain text
    assert ring["marker"]["symbol"] == "circle-open" and ring["hoverinfo"] == "skip"
    assert ring["unselected"]["marker"]["opacity"] == 1.0  # the lasso does not dim it
