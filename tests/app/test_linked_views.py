"""The Pool page's views follow the map: the chunks a search finds are listed, and the
chunks chosen on the map (lasso or box, kept in the address) are what the relevance and
length histograms overlay, with their verdicts counted."""

from __future__ import annotations

from collections import Counter

import pytest
from apptest_support import DEMO, POOL_PAGE, array, figures, frames, no_error, page, pool_of

from adagres.figures.layout import plain_name

pytestmark = pytest.mark.usefixtures("data_dir")


def histogram(at, name_start: str) -> list[dict]:
    figure = next(f for f in figures(at) if any(t.get("type") == "histogram" for t in f["data"]))
    return [t for t in figure["data"] if t.get("name", "").startswith(name_start)]


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
    relevance, tokens = histogram(at, "chosen on the map (4)")
    assert pool.embeddings is not None and pool.query_embedding is not None
    expected = pool.embeddings @ pool.query_embedding
    assert array(relevance["x"]) == pytest.approx(expected[chosen], abs=1e-6)
    assert pool.token_counts is not None
    assert array(tokens["x"]).tolist() == [pool.token_counts[i] for i in chosen]
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
    # Without a choice the histograms overlay the picks.
    plain = page(POOL_PAGE, pool=DEMO, budget="1000")
    assert histogram(plain, "selected (")
