"""What every adapter's packing test checks: two overlapping windows of one source, cut by
the framework's own splitter, come back as one document whose text is the source slice and
whose tokens the budget paid once; the picks are the core's on the same pool and spans.

Vectors are made by hand (no model): the query is e0 and the document of rank r has
relevance 0.9·0.8^r along it, the rest on an axis of its own (so no two documents are
near-duplicates and the ranks decide the first picks).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence

from adagres.core import baselines
from adagres.core.overlaps import Spans
from adagres.core.prepared import prepare
from adagres.core.presets import PRESETS
from adagres.core.result import Selection
from adagres.embed.tokens import count_tokens
from adagres.pools.spans import TokenCounter

#: The source document: 120 words, one token each under the "words" tokenizer.
DOC = " ".join(f"w{i}" for i in range(120))
DIM = 32
QUERY = "which words?"
RECOMMENDED = PRESETS["recommended"]
NOTES = [f"an unrelated note, number {i}, about something else entirely" for i in range(3)]


def words(text: str) -> int:
    return int(count_tokens([text], "words")[0])


def vector(rank: int) -> list[float]:
    """The vector of the document of relevance rank ``rank`` (0: the most relevant)."""
    r = 0.9 * 0.8**rank
    out = [0.0] * DIM
    out[0], out[rank + 1] = r, math.sqrt(1 - r * r)
    return out


QUERY_VECTOR = [1.0] + [0.0] * (DIM - 1)


def union_budget(first: tuple[int, str], second: tuple[int, str]) -> tuple[str, int]:
    """The source slice two windows (offset, text) cover together, and its tokens, which
    must be fewer than the two windows' tokens apart (the budget fits only the union)."""
    (a, text_a), (b, text_b) = sorted([first, second])
    assert a < b < a + len(text_a.rstrip()), "the two windows overlap"
    assert DOC[a : a + len(text_a)].rstrip() == text_a.rstrip()
    assert DOC[b : b + len(text_b)].rstrip() == text_b.rstrip()
    union = DOC[a : max(a + len(text_a.rstrip()), b + len(text_b.rstrip()))]
    budget = words(union)
    assert words(text_a) + words(text_b) > budget
    return union, budget


def core(
    texts: Sequence[str],
    sources: Sequence[Hashable | None],
    starts: Sequence[int | None],
    ranks: Sequence[int],
    budget: int,
    *,
    tokens: Sequence[int] | None = None,
    count: Callable[[str], int] | None = None,
) -> Selection:
    """``baselines.run_prepared`` on the pool the adapter was handed, with spans made here
    (``tokens``: the pool's counts, default the words of ``texts``; ``count``: how a
    stitched text is counted, default its words)."""
    spans = Spans(tuple(texts), tuple(sources), tuple(starts), count or TokenCounter("words"))
    lengths = count_tokens(list(texts), "words") if tokens is None else tokens
    pool = prepare(QUERY_VECTOR, [vector(r) for r in ranks], lengths)
    return baselines.run_prepared(
        RECOMMENDED.strategy,
        pool.with_spans(spans),
        budget,
        RECOMMENDED.settings,
        texts=list(texts),
    )
