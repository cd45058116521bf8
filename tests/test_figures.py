"""Figure builders: the extracted data and as_dict(fig) against the selection's record."""

from __future__ import annotations

from typing import cast

import numpy as np
import pytest
from figure_support import as_dict, figure_pool, strip_own_markup, trace

import adagres
from adagres import figures as F
from adagres.core.sweep import budget_sweep, lam_sweep
from adagres.errors import InputError

N = 40
BUDGET = 450


@pytest.fixture(scope="module")
def pool():
    return figure_pool(N, BUDGET)


def test_fixture_selection_is_interesting(pool):
    s = pool["s"]
    assert s.traced and s.size >= 5 and len(s.steps) == s.size + 1
    assert s.stop_reason.value == "budget_exhausted"
    assert pool["adaptive"].stop_reason.value == "no_positive_gain"


def test_timeline_values_are_the_step_gains(pool):
    s = pool["s"]
    data = F.timeline_data(s, step=2)
    assert data.winner_gain == tuple(st.gain for st in s.steps)
    assert data.runner_up_gain == tuple(st.runner_up_gain for st in s.steps)
    for st, lo, hi in zip(s.steps[:-1], data.band_min, data.band_max, strict=False):
        assert hi == st.gain  # policy skip picks the largest eligible gain
        assert lo <= st.runner_up_gain <= hi
    fig = F.gain_timeline(s, step=2)
    winner = trace(fig, "winner")
    assert winner["x"] == list(range(1, s.size + 1))
    assert winner["y"] == [st.gain for st in s.steps[:-1]]
    layout = as_dict(fig)["layout"]
    assert s.stop_reason.value.replace("_", " ") in layout["annotations"][0]["text"]
    vlines = [sh for sh in layout["shapes"] if sh["x0"] == sh["x1"] == 2]
    assert len(vlines) == 1
    assert any(sh["y0"] == sh["y1"] == 0.0 for sh in layout["shapes"])  # zero line


def test_budget_bar_stacks_picks_and_the_remaining_budget(pool):
    s = pool["s"]
    for step in (0, 2, None):
        data = F.budget_bar_data(s, ids=pool["ids"], step=step)
        k = s.size if step is None else step
        assert [seg.chunk for seg in data.segments] == list(s.indices[:k])
        assert data.used == sum(int(s.token_counts[i]) for i in s.indices[:k])
        assert data.used + data.remaining == BUDGET
    fig = F.budget_bar(s, ids=pool["ids"])
    picks, rest = as_dict(fig)["data"]
    tokens = [int(s.token_counts[i]) for i in s.indices]
    assert picks["name"] == "picks" and rest["name"] == "remaining"
    assert list(picks["x"]) == tokens and list(picks["customdata"]) == list(s.indices)
    # The segments tile [0, budget] in pick order: each starts where the one before ends.
    starts = list(picks["base"]) + list(rest["base"])
    ends = [b + x for b, x in zip(starts, list(picks["x"]) + list(rest["x"]), strict=True)]
    assert starts[0] == 0 and starts[1:] == ends[:-1] and ends[-1] == BUDGET
    assert list(rest["x"]) == [BUDGET - s.tokens_used]
    # Its pick number, with its id where MIN_ID_CHARS of it fit (each label is checked
    # against its width in test_figure_drawing).
    assert picks["text"][0] == "1" or picks["text"][0].startswith("1. c")
    assert as_dict(fig)["layout"]["xaxis"]["range"] == [0, BUDGET]
    assert as_dict(fig)["layout"]["barmode"] == "overlay"
    empty = as_dict(F.budget_bar(s, ids=pool["ids"], step=0))["data"]
    assert list(empty[0]["x"]) == [] and list(empty[1]["x"]) == [BUDGET]


def test_heatmap_z_and_outline_in_pick_order(pool):
    s, C = pool["s"], pool["C"]
    order = F.heatmap_order(s, C)
    rest = sorted(set(range(N)) - set(s.indices), key=lambda i: (-float(C[i] @ pool["q"]), i))
    assert order == (*s.indices, *rest)
    fig = F.similarity_heatmap(
        C, order=order, ids=pool["ids"], texts=pool["texts"], selected=s.indices, max_chunks=25
    )
    z = np.asarray(fig.data[0].z)
    shown = list(order[:25])
    np.testing.assert_allclose(z, C[shown] @ C[shown].T, atol=1e-12)
    (rect,) = as_dict(fig)["layout"]["shapes"]
    k = s.size
    assert (rect["x0"], rect["x1"], rect["y0"], rect["y1"]) == (-0.5, k - 0.5, -0.5, k - 0.5)
    assert "top 25 of 40" in as_dict(fig)["layout"]["title"]["text"]
    # The hover of a cell shows its row's and its column's category: each chunk's id and
    # snippet, escaped.
    heat = as_dict(fig)["data"][0]
    assert heat["hovertemplate"].startswith("%{y}<br>%{x}<br>")
    assert "hovertext" not in heat and "text" not in heat
    assert list(heat["x"]) == list(heat["y"])
    for a, row in zip(shown, heat["y"], strict=True):
        assert row.startswith(f"<b>c{a}&lt;i&gt;</b>: ")
        assert "<script" not in strip_own_markup(row)
    # Both axes name the chunks by id (escaped), every one of the 25.
    layout = as_dict(fig)["layout"]
    for axis in ("xaxis", "yaxis"):
        assert list(layout[axis]["ticktext"]) == [f"c{a}&lt;i&gt;" for a in shown]
        assert list(layout[axis]["tickvals"]) == list(heat["y"])


def test_heatmap_names_chunks_on_its_axes_above_sixty_rows():
    """150 rows (the Similarity page's default): every 3rd id on each axis, not none."""
    rng = np.random.default_rng(3)
    C = rng.normal(size=(150, 6))
    C /= np.linalg.norm(C, axis=1, keepdims=True)
    ids = [f"id{i}" for i in range(150)]
    fig = as_dict(F.similarity_heatmap(C, order=range(150), ids=ids, texts=ids, max_chunks=150))
    for axis in ("xaxis", "yaxis"):
        assert list(fig["layout"][axis]["ticktext"]) == ids[::3]
        assert fig["layout"][axis].get("showticklabels", True) is not False


def test_heatmap_outlines_cover_exactly_the_selected_pairs_in_any_order(pool):
    s, C = pool["s"], pool["C"]
    order = F.heatmap_order(s, C, method="cluster")
    assert sorted(order) == list(range(N))
    data = F.heatmap_data(C, order=order, ids=pool["ids"], texts=pool["texts"], selected=s.indices)
    covered = np.zeros((N, N), dtype=bool)
    for x0, x1, y0, y1 in data.outlines:
        covered[int(y0 + 0.5) : int(y1 + 0.5), int(x0 + 0.5) : int(x1 + 0.5)] = True
    chosen = np.isin(np.array(order), s.indices)
    np.testing.assert_array_equal(covered, np.outer(chosen, chosen))
    assert not data.truncated and data.n_total == N


def test_cluster_order_groups_separated_clusters():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=8), rng.normal(size=8)
    C = np.array([a if i % 2 == 0 else b for i in range(12)]) + 0.05 * rng.normal(size=(12, 8))
    C /= np.linalg.norm(C, axis=1, keepdims=True)
    s = adagres.select(a, C, [10] * 12, 30, lam=0.5)
    order = F.heatmap_order(s, C, method="cluster")
    parity = [i % 2 for i in order]
    assert parity in ([0] * 6 + [1] * 6, [1] * 6 + [0] * 6)
    limited = F.heatmap_order(s, C, method="cluster", limit=5)
    assert sorted(limited) == sorted(F.heatmap_order(s, C, limit=5))


def test_sensitivity_marks_changes_and_both_lams(pool):
    sweep = lam_sweep(pool["q"], pool["C"], pool["tokens"], BUDGET, include=[0.7])
    fig = F.sensitivity_figure(sweep, adaptive_lam=sweep.adaptive_lam, manual_lam=0.7)
    data = as_dict(fig)["data"]
    lines = [t for t in data if t["mode"] == "lines"]
    assert [t["y"] for t in lines] == [
        sweep.objective.tolist(),
        sweep.relevance_sum.tolist(),
        sweep.redundancy_mean.tolist(),
        sweep.size.tolist(),
    ]
    markers = [t for t in data if t["mode"] == "markers"]
    assert len(markers) == 4 and all(tuple(t["x"]) == sweep.changes for t in markers)
    assert len(sweep.changes) >= 1
    xs = sorted({sh["x0"] for sh in as_dict(fig)["layout"]["shapes"]})
    assert xs == sorted([sweep.adaptive_lam, 0.7])
    # The chunks panel has whole ticks only (a tick at 11.5 chunks means nothing).
    size_axis = as_dict(fig)["layout"]["yaxis4"]
    assert size_axis["tickformat"] == "d" and size_axis["tick0"] == 0
    spread = int(max(sweep.size) - min(sweep.size))
    assert size_axis["dtick"] == max(1, -(-spread // 4)) and float(size_axis["dtick"]).is_integer()


def test_budget_sweep_figure_has_one_line_per_strategy(pool):
    sweep = budget_sweep(pool["q"], pool["C"], pool["tokens"], [100, 300, 600])
    fig = F.budget_sweep_figure(sweep, metric="redundancy_mean")
    data = as_dict(fig)["data"]
    assert [t["name"].split(" ")[0] for t in data] == list(sweep.strategies)
    sizes = cast("dict[str, list[int]]", sweep.series("size"))  # every run succeeded
    for t in data:
        strategy = t["name"].split(" ")[0]
        assert t["x"] == [100, 300, 600]
        # The mean pair cosine is undefined below two picks: a gap, never 0.
        expected = [
            None if n < 2 else y
            for y, n in zip(sweep.series("redundancy_mean")[strategy], sizes[strategy], strict=True)
        ]
        assert t["y"] == expected
    with pytest.raises(InputError, match="metric"):
        F.budget_sweep_figure(sweep, metric="vibes")


def test_budget_sweep_gaps_where_one_chunk_fits_and_shows_identical_lines():
    # Chunk 0 alone fits 60 tokens: one pick, so no pair; at 200 all three fit.
    q = np.array([1.0, 0.0])
    C = np.array([[1.0, 0.0], [0.8, 0.6], [0.6, 0.8]])
    sweep = budget_sweep(
        q, C, [60, 70, 70], [60, 200], strategies=("topk_budget", "topk_same_k", "adagres")
    )
    assert sweep.series("size")["topk_budget"] == [1, 3]
    lines = F.sweep_lines(sweep, "redundancy_mean")
    assert lines.values["topk_budget"][0] is None  # not 0.0
    assert lines.values["topk_budget"][1] == pytest.approx((0.8 + 0.6 + 0.96) / 3)
    # AdaGReS picks one chunk at both budgets here, as top-k with its k: the later line says
    # so in the legend, dotted, with its own smaller marker, so neither hides the other.
    assert lines.same_as == {"adagres": "topk_same_k"}
    fig = as_dict(F.budget_sweep_figure(sweep, metric="size"))
    names = [t["name"] for t in fig["data"]]
    assert names == ["topk_budget", "topk_same_k", "adagres (same as topk_same_k)"]
    assert [t["line"]["dash"] for t in fig["data"]] == ["solid", "solid", "dot"]
    symbols = [t["marker"]["symbol"] for t in fig["data"]]
    sizes = [t["marker"]["size"] for t in fig["data"]]
    assert len(set(symbols)) == 3 and sizes == sorted(sizes, reverse=True)


def test_distributions_show_pool_and_selected(pool):
    s = pool["s"]
    fig = F.distributions_figure(s.relevance, s.token_counts, selected=s.indices)
    data = as_dict(fig)["data"]
    assert data[0]["x"] == s.relevance.tolist() and data[1]["x"] == s.token_counts.tolist()
    assert data[2]["x"] == [float(s.relevance[i]) for i in s.indices]
    assert data[3]["x"] == [int(s.token_counts[i]) for i in s.indices]


def test_verdict_figure_follows_the_history_for_every_chunk(pool):
    kinds = set()
    for s, i in [(s, i) for s in (pool["s"], pool["adaptive"]) for i in range(N)]:
        verdict = s.verdict(i)
        kinds.add(verdict.kind.value)
        fig = F.verdict_figure(s, i, ids=pool["ids"])
        data = as_dict(fig)["data"]
        # Its score is a line where the rule could take it and a hollow point where it could
        # not (too large, or barred): the two traces hold every step of its history.
        could = [g.gain if g.eligible else None for g in verdict.history]
        assert data[1]["y"] == could
        barred = [g.gain for g in verdict.history if not g.eligible]
        assert (data[2]["y"] if barred else []) == barred
        assert len(data) == (3 if barred else 2)
        assert data[0]["y"] == [g.winner_gain for g in verdict.history]
        assert data[1]["x"] == [g.step for g in verdict.history]
        # The step axis spans the run's steps, and names the rule's score.
        layout = as_dict(fig)["layout"]
        assert layout["xaxis"]["range"] == [0.5, len(s.steps) + 0.5]
        assert layout["yaxis"]["title"]["text"] == s.scoring.formula
        vline = [sh for sh in as_dict(fig)["layout"]["shapes"] if sh["x0"] == sh["x1"]]
        assert [sh["x0"] for sh in vline] == [verdict.step]
        if verdict.kind.value == "selected":
            assert data[1]["y"][-1] == data[0]["y"][-1] == verdict.gain
    assert {"selected", "did_not_fit", "non_positive_gain"} <= kinds


def test_every_figure_uses_the_shared_layout(pool):
    s, C = pool["s"], pool["C"]
    figs = [
        F.pool_map(pool["proj"], s, 1, ids=pool["ids"], texts=pool["texts"]),
        F.gain_timeline(s),
        F.budget_bar(s, ids=pool["ids"]),
        F.similarity_heatmap(C, order=F.heatmap_order(s, C), ids=pool["ids"], texts=pool["texts"]),
        F.distributions_figure(s.relevance, s.token_counts),
        F.verdict_figure(s, 0, ids=pool["ids"]),
    ]
    for fig in figs:
        layout = as_dict(fig)["layout"]
        assert layout["font"] == F.FONT
        assert layout["margin"]["l"] == 60
