"""The Pool page's views follow the map: the chunks a search finds are listed, and the
chunks chosen on the map (lasso or box, kept in the address) are what the facets beside it
(relevance, tokens, verdict, a metadata column) count, with their verdicts listed; bars
chosen on the facets choose their chunks on the map."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from apptest_support import DEMO, POOL_PAGE, array, figures, frames, no_error, page, pool_of

from adagres.figures.layout import plain_name

pytestmark = pytest.mark.usefixtures("data_dir")


def facets_figure(at) -> dict:
    return next(f for f in figures(at) if any(t.get("type") == "bar" for t in f["data"]))


def bars(at, name_start: str) -> list[dict]:
    return [t for t in facets_figure(at)["data"] if t.get("name", "").startswith(name_start)]


def test_search_hits_are_listed(data_dir):
    pool = pool_of(data_dir, DEMO)
    at = page(POOL_PAGE, pool=DEMO, budget="1000", find="ibuprofen")
    no_error(at)
    hits = [
        i
        for i, chunk in enumerate(pool.chunks)
        if "ibuprofen" in (chunk.text + (chunk.title or "") + chunk.id).casefold()
    ]
    assert hits
    listed = [f for f in frames(at, "verdict") if len(f) == len(hits)]
    assert listed and list(listed[0]["id"]) == [pool.ids[i] for i in hits]


def test_the_histograms_overlay_the_chunks_chosen_on_the_map(data_dir):
    from adagres.core.baselines import run_prepared
    from adagres.core.presets import PRESETS

    pool = pool_of(data_dir, DEMO)
    chosen = [3, 17, 22, 40]
    at = page(POOL_PAGE, pool=DEMO, budget="1000", picked=",".join(map(str, chosen)))
    no_error(at)
    assert pool.embeddings is not None and pool.query_embedding is not None
    relevance, tokens, verdict, *_ = bars(at, "chosen on the map (4)")
    pool_relevance, pool_tokens, *_ = bars(at, "pool")
    expected = pool.embeddings @ pool.query_embedding
    edges = np.linspace(expected.min(), expected.max(), 11)
    in_bin = np.clip(np.searchsorted(edges, expected, side="right") - 1, 0, 9)
    assert array(relevance["y"]).tolist() == [
        sum(in_bin[i] == k for i in chosen) for k in range(10)
    ]
    assert array(pool_relevance["y"]).tolist() == np.bincount(in_bin, minlength=10).tolist()
    assert sum(array(tokens["y"])) == 4 and sum(array(pool_tokens["y"])) == len(pool)
    chosen_kinds = run_prepared(
        PRESETS["recommended"].strategy,
        pool.prepared,
        1000,
        PRESETS["recommended"].settings,
        texts=pool.texts,
    ).verdict_kinds
    counted = Counter(plain_name(chosen_kinds[i][0]) for i in chosen)
    line = next(t.value for t in at.text if t.value.startswith("Their verdicts: "))
    assert sorted(line.removeprefix("Their verdicts: ").split(" · ")) == sorted(
        f"{n} {v}" for v, n in counted.items()
    )
    counted_bars = dict(zip(verdict["x"], array(verdict["y"]).tolist(), strict=True))
    assert {v: n for v, n in counted_bars.items() if n} == dict(counted)
    # The map draws the four chosen, the rest dimmed, as a lasso around them would.
    explorer = next(f for f in figures(at) if f["layout"].get("dragmode") == "lasso")
    drawn = [
        int(array(t["customdata"])[k])
        for t in explorer["data"]
        if t.get("selectedpoints") is not None and not t["name"].startswith("matches")
        for k in t["selectedpoints"]
    ]
    assert sorted(drawn) == chosen
    # Without a choice nothing is chosen: no bar counts, nothing selected on the map.
    plain = page(POOL_PAGE, pool=DEMO, budget="1000")
    assert all(not any(array(t["y"])) for t in bars(plain, "chosen"))
