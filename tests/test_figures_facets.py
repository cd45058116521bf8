"""Facets beside the map: bins checked by hand, every chunk in one bin, bars that name
their chunks."""

from __future__ import annotations

import pytest
from figure_support import as_dict
from hypothesis import given
from hypothesis import strategies as hs

from adagres import figures as F
from adagres.errors import InputError


def test_numeric_bins_are_equal_and_hold_their_upper_edge_in_the_last():
    (f,) = F.facets_data([("relevance", [0.0, 0.05, 0.1, 0.55, 1.0], True)], chosen=[3, 4])
    assert f.labels[0] == "0.000–0.100" and f.labels[-1] == "0.900–1.000"
    assert f.members[0] == (0, 1) and f.members[1] == (2,) and f.members[5] == (3,)
    assert f.members[9] == (4,)  # 1.0, the largest value, is in the last bin
    assert f.chosen == (0, 0, 0, 0, 0, 1, 0, 0, 0, 1)


def test_token_labels_are_whole_numbers_and_one_value_gets_a_bin():
    (tokens,) = F.facets_data([("tokens", [100, 100, 100], True)])
    assert tokens.labels[0] == "100–100" and tokens.members[0] == (0, 1, 2)


def test_categories_by_count_then_other():
    values = [f"c{i % 12}" for i in range(24)] + ["c0"] * 3
    (f,) = F.facets_data([("meta:kind", values, False)], chosen=[0, 1])
    assert f.labels[0] == "c0" and len(f.members[0]) == 5
    assert f.labels[-1] == "other" and len(f.labels) == 10
    assert sorted(i for m in f.members for i in m) == list(range(len(values)))
    assert f.chosen[0] == 1 and sum(f.chosen) == 2


def test_facets_must_describe_the_same_chunks():
    with pytest.raises(InputError, match=r"facets: .*\[2, 3\]"):
        F.facets_data([("a", [1, 2], True), ("b", [1, 2, 3], True)])


def test_the_figure_draws_the_counts_and_each_bar_names_its_bin():
    facets = F.facets_data(
        [("verdict", ["picked", "outscored", "picked"], False), ("tokens", [10, 20, 30], True)],
        chosen=[1],
    )
    fig = as_dict(F.facets_figure(facets, chosen_name="chosen (1)"))
    pool_bars = [t for t in fig["data"] if t["name"] == "pool"]
    chosen_bars = [t for t in fig["data"] if t["name"] == "chosen (1)"]
    assert pool_bars[0]["x"] == ["picked", "outscored"] and pool_bars[0]["y"] == [2, 1]
    assert chosen_bars[0]["y"] == [0, 1]
    assert pool_bars[1]["customdata"][3] == [1, 3]
    assert sum(pool_bars[1]["y"]) == 3 and sum(chosen_bars[1]["y"]) == 1
    assert fig["layout"]["dragmode"] == "select" and fig["layout"]["barmode"] == "overlay"
    bars = [tuple(c) for c in chosen_bars[0]["customdata"]]
    assert F.facet_positions(facets, bars) == (0, 1, 2)
    assert F.facet_positions(facets, [(0, 1), (5, 0), (0, 9)]) == (1,)  # unknown bars ignored


@given(
    hs.lists(hs.floats(-5, 5, allow_nan=False), min_size=1, max_size=80),
    hs.sets(hs.integers(0, 79)),
)
def test_every_chunk_is_in_one_bin_and_chosen_counts_add_up(values, chosen):
    chosen = {i for i in chosen if i < len(values)}
    (f,) = F.facets_data([("x", values, True)], chosen=chosen)
    assert sorted(i for m in f.members for i in m) == list(range(len(values)))
    assert sum(f.chosen) == len(chosen)
    for k, members in enumerate(f.members):
        assert F.facet_positions([f], [(0, k)]) == members
