"""Pool set figures: counts across queries, checked against counts made by hand."""

from __future__ import annotations

import pytest
from figure_support import as_dict
from hypothesis import given
from hypothesis import strategies as hs

from adagres import figures as F


def _row(topk: float, adagres: float, recommended: float, dropped: int, dropped_rec: int):
    return {
        "topk_redundancy": topk,
        "adagres_redundancy": adagres,
        "recommended_redundancy": recommended,
        "dropped": dropped,
        "dropped_recommended": dropped_rec,
    }


ROWS = [
    _row(0.9, 0.3, 0.55, 2, 0),
    _row(0.55, 0.55, 0.55, 2, 1),
    _row(0.3, 0.3, 0.9, 0, 1),
    _row(0.9, 0.9, 0.3, 3, 1),
]


def test_redundancy_bins_span_the_values_and_count_each_strategy():
    bars = F.redundancy_data(ROWS)
    assert bars.names == ("top-k (budget)", "AdaGReS", "recommended")
    assert bars.width == pytest.approx(0.6 / 30)  # 30 bins from 0.3 to 0.9
    centres = bars.x[0]
    assert centres[0] == pytest.approx(0.31) and centres[-1] == pytest.approx(0.89)
    low, middle, high = 0, 12, 29  # 0.55 lies in the 13th bin, 0.54 to 0.56
    expected = {
        "top-k (budget)": {low: 1, middle: 1, high: 2},
        "AdaGReS": {low: 2, middle: 1, high: 1},
        "recommended": {low: 1, middle: 2, high: 1},
    }
    for name, counts in zip(bars.names, bars.counts, strict=True):
        assert {i: c for i, c in enumerate(counts) if c} == expected[name]
    assert bars.dtick == 1  # at most 2 per bin


def test_redundancy_figure_draws_the_counts_overlaid():
    fig = as_dict(F.redundancy_figure(ROWS))
    bars = F.redundancy_data(ROWS)
    assert [t["name"] for t in fig["data"]] == list(bars.names)
    for drawn, counts, x in zip(fig["data"], bars.counts, bars.x, strict=True):
        assert drawn["y"] == list(counts) and drawn["x"] == pytest.approx(list(x))
        assert drawn["width"] == pytest.approx(bars.width)
    assert fig["layout"]["barmode"] == "overlay"
    assert fig["layout"]["yaxis"]["dtick"] == 1


def test_one_value_gets_a_bin_range_and_no_rows_draw_empty_bars():
    one = F.redundancy_data([_row(0.5, 0.5, 0.5, 0, 0)])
    assert one.width == pytest.approx(0.01)  # 0.5 to 0.8 when every value is 0.5
    assert [c[0] for c in one.counts] == [1, 1, 1]
    empty = F.redundancy_data([])
    assert [sum(c) for c in empty.counts] == [0, 0, 0] and empty.dtick == 1


def test_dropped_counts_queries_per_k():
    bars = F.dropped_data(ROWS)
    assert bars.names == ("AdaGReS", "recommended")
    assert bars.x == ((0.0, 2.0, 3.0), (0.0, 1.0))
    assert bars.counts == ((1, 2, 1), (1, 3))
    fig = as_dict(F.dropped_figure(ROWS))
    assert [t["y"] for t in fig["data"]] == [[1, 2, 1], [1, 3]]
    assert fig["layout"]["barmode"] == "group"


@given(hs.lists(hs.integers(0, 40), min_size=1, max_size=60))
def test_every_query_is_counted_once_and_ticks_stay_few(ks):
    rows = [_row(0.1 * (k % 7), 0.2, 0.3, k, k // 2) for k in ks]
    bars = F.dropped_data(rows)
    assert [sum(c) for c in bars.counts] == [len(ks), len(ks)]
    assert max(max(c) for c in bars.counts) / bars.dtick <= 5
    assert [sum(c) for c in F.redundancy_data(rows).counts] == [len(ks)] * 3
