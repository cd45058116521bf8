"""The map is SVG up to ui.charts.SVG_MAX_POINTS chunks (faster to draw than WebGL without a
GPU) and WebGL above; the SVG copy keeps every property of every trace."""

from __future__ import annotations

import plotly.graph_objects as go

from ui.charts import SVG_MAX_POINTS, as_svg


def figure(n: int) -> go.Figure:
    fig = go.Figure()
    fig.add_trace(go.Scattergl(x=list(range(n)), y=list(range(n)), customdata=list(range(n)),
                               hovertext=[f"c{i}" for i in range(n)], name="candidates",
                               marker={"size": 9, "color": list(range(n))}))  # fmt: skip
    fig.add_trace(go.Bar(x=[1], y=[2], name="not a scatter"))
    fig.update_layout(title="map")
    return fig


def test_small_maps_become_svg_with_the_same_properties():
    n = SVG_MAX_POINTS
    original = figure(n)
    svg = as_svg(original, n)
    assert [t.type for t in svg.data] == ["scatter", "bar"]
    before = {k: v for k, v in original.data[0].to_plotly_json().items() if k != "type"}
    after = {k: v for k, v in svg.data[0].to_plotly_json().items() if k != "type"}
    assert after == before
    assert svg.data[1].to_plotly_json() == original.data[1].to_plotly_json()
    assert svg.layout.title.text == "map"


def test_large_maps_stay_webgl():
    original = figure(3)
    assert as_svg(original, SVG_MAX_POINTS + 1) is original
