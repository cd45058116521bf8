"""The map is SVG up to ui.charts.SVG_MAX_POINTS chunks (faster to draw than WebGL without a
GPU) and WebGL above; the SVG map keeps every property of every trace."""

from __future__ import annotations

import json

import numpy as np
from plotly.utils import PlotlyJSONEncoder

import adagres
from adagres import figures
from adagres.figures.projection import project
from ui.charts import SVG_MAX_POINTS, uses_svg


def maps() -> tuple:
    rng = np.random.default_rng(3)
    q, C, tokens = rng.normal(size=8), rng.normal(size=(30, 8)), rng.integers(5, 20, 30)
    selection = adagres.select(q, C, tokens, 80)
    coordinates = project(
        adagres.prepare(q, C, tokens), adagres.prepare(q, C, tokens).query, method="pca", seed=0
    )
    ids, texts = [f"c{i}" for i in range(30)], [f"text {i}" for i in range(30)]
    kwargs = {"ids": ids, "texts": texts, "title": "map"}
    return (
        figures.pool_map(coordinates, selection, 2, **kwargs),
        figures.pool_map(coordinates, selection, 2, svg=True, **kwargs),
    )


def plain(trace) -> dict:
    """The trace as the browser receives it (numpy arrays as plotly encodes them), less its
    type."""
    out = json.loads(json.dumps(trace.to_plotly_json(), cls=PlotlyJSONEncoder))
    out.pop("type")
    return out


def test_small_maps_become_svg_with_the_same_properties():
    webgl, svg = maps()
    assert {t.type for t in webgl.data} == {"scattergl"}
    assert [t.type for t in svg.data] == ["scatter"] * len(webgl.data)
    for before, after in zip(webgl.data, svg.data, strict=True):
        assert plain(after) == plain(before)
    assert svg.layout.title.text == "map" == webgl.layout.title.text


def test_large_maps_stay_webgl():
    assert uses_svg(SVG_MAX_POINTS) and not uses_svg(SVG_MAX_POINTS + 1)
