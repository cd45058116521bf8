"""What every adapter test checks: the picks against ``baselines.run`` on the same inputs,
the step record in the metadata, the recorded pool set, and the README's examples."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from adagres.core import baselines
from adagres.core.overlaps import Spans
from adagres.core.prepared import prepare
from adagres.core.presets import PRESETS
from adagres.core.result import Selection
from adagres.core.settings import Settings
from adagres.embed.tokens import count_tokens
from adagres.pools.io import load_pools
from adagres.pools.spans import TokenCounter

ROOT = Path(__file__).resolve().parents[2]
BUDGET = 400
TOP_K = 30
RECOMMENDED = PRESETS["recommended"]


def expected(
    query_vector: Any,
    vectors: Any,
    texts: list[str],
    *,
    strategy: str = RECOMMENDED.strategy,
    settings: Settings = RECOMMENDED.settings,
    budget: int = BUDGET,
    tokens: list[int] | None = None,
    counter: Any = None,
) -> Selection:
    """What the adapter must pick: ``baselines.run_prepared`` on the same vectors, counts
    (cl100k counts of ``texts`` unless ``tokens`` are given), settings and texts (placed by
    their shared edges, stitched text counted with cl100k, as the adapters count it)."""
    counts = count_tokens(texts, "cl100k") if tokens is None else tokens
    n = len(texts)
    pool = prepare(query_vector, vectors, counts)
    if settings.packing:
        counter = TokenCounter("cl100k") if counter is None else counter
        pool = pool.with_spans(Spans(tuple(texts), (None,) * n, (None,) * n, counter))
    return baselines.run_prepared(strategy, pool, budget, settings, texts=texts or None)


def check_picks(picked_ids: list[str], pool_ids: list[str], want: Selection) -> None:
    """The adapter's ids are the expected picks in pick order, within the budget, and a
    selection top-k would not make (so the comparison can fail)."""
    assert picked_ids == [pool_ids[i] for i in want.indices]
    assert 2 <= len(picked_ids) < len(pool_ids)
    assert want.tokens_used <= want.budget
    if want.strategy != "topk_budget":  # not what top-k would give
        assert set(want.indices) != set(range(want.size))


def check_annotations(
    metadatas: list[dict[str, Any]], want: Selection, original: list[dict]
) -> None:
    """Each pick keeps its metadata and adds its step number and gain (abs 1e-9: the same
    loop on the same float64 vectors, traced here and untraced in the adapter)."""
    accepted = [step for step in want.steps if step.accepted]
    for meta, before, step in zip(metadatas, original, accepted, strict=True):
        assert {k: meta[k] for k in before} == before
        assert meta["adagres_step"] == step.number
        assert meta["adagres_gain"] == pytest.approx(step.gain, abs=1e-9)


def check_record(path: Path, pool_ids: list[str], want: Selection, framework: str) -> None:
    """The pool set holds one pool: the retrieved documents, their counts, and the selection;
    selecting again from the file's vectors gives the same picks."""
    pools = load_pools(path)
    assert len(pools) == 1
    pool = pools[0]
    assert list(pool.ids) == pool_ids
    record = pool.extra["selection"]
    assert record["framework"] == framework and record["budget"] == want.budget
    assert record["selected"] == [pool_ids[i] for i in want.indices]
    assert record["tokens_used"] == want.tokens_used
    assert record["strategy"] == want.strategy
    again = baselines.run_prepared(  # the saved pool, loaded: its places and its tokenizer
        record["strategy"],
        pool.prepared,
        record["budget"],
        Settings(**record["settings"]),
        texts=pool.texts,
    )
    assert (again.indices, again.tokens_used) == (want.indices, want.tokens_used)
    # the loaded pool's unit rows are float32 (Pool.embeddings): F agrees to float32's 1e-6
    assert again.objective == pytest.approx(want.objective, abs=1e-6)


def readme_example(marker: str) -> str:
    """The Python block of the README's "In your pipeline" section that imports ``marker``."""
    text = (ROOT / "README.md").read_text("utf-8")
    section = text.split("\n## In your pipeline\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    found = [block for block in blocks if marker in block]
    assert len(found) == 1, f"one README example imports {marker}"
    return found[0]
