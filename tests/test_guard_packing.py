"""The near-duplicate guard with overlap-aware packing: two chunks that overlap in their
source are stitched, not dropped as duplicates (packing charges only the words the second
adds, and the context holds them once); a near-copy from elsewhere is still dropped; and the
near-duplicate metric counts the pairs the context holds apart, not the picks stitched into
one passage.

The cosines and shared-text shares each case relies on are asserted first, from the pool.
"""

from __future__ import annotations

import numpy as np
import pytest

from adagres import Settings
from adagres.core.baselines import run_prepared
from adagres.core.metrics import evaluate, near_duplicate_pairs
from adagres.core.ngrams import containment, gram_set
from adagres.core.records import VerdictKind
from adagres.corpora.documents import chunk_documents
from adagres.pools.pool import Chunk, Pool

DOC = " ".join(f"w{i}" for i in range(400))
ELSEWHERE = " ".join(f"x{i}" for i in range(100))
GUARD = (0.9, 0.8)


def with_cosines(relevance: float, cosine: float, v0: np.ndarray, axis: int) -> np.ndarray:
    """A unit vector at ``relevance`` to the query (axis 0) and ``cosine`` to ``v0`` (in the
    plane of axes 0 and 1), completed along ``axis``."""
    second = (cosine - v0[0] * relevance) / v0[1]
    v = np.zeros(6)
    v[0], v[1], v[axis] = relevance, second, np.sqrt(1 - relevance**2 - second**2)
    return v


def pool_of(overlap: int) -> Pool:
    """Window 0 and window 1 of DOC (100 words, overlapping by ``overlap``), and a chunk of
    another document at cosine 0.97 to window 0; relevance in that order. Window 1 sits at
    cosine 0.95 to window 0."""
    windows = chunk_documents({"d": DOC}, size=100, overlap=overlap, tokenizer="words")[:2]
    other = Chunk("e#0", ELSEWHERE, tokens=100, metadata={"doc_id": "e", "start": 0})
    q = np.eye(6)[0]
    v0 = np.array([0.8, 0.6, 0.0, 0.0, 0.0, 0.0])
    v1 = with_cosines(0.78, 0.95, v0, axis=2)
    v2 = with_cosines(0.75, 0.97, v0, axis=3)
    return Pool(
        "q",
        (*windows, other),
        raw_embeddings=np.array([v0, v1, v2]),
        raw_query_embedding=q,
        tokenizer="words",
    )


def run(pool: Pool, budget: int, *, packing: bool):
    settings = Settings(duplicate_guard=GUARD, packing=packing)
    return run_prepared("topk_budget", pool.prepared, budget, settings, texts=pool.texts)


def test_the_preconditions_hold():
    pool = pool_of(overlap=40)
    unit_rows = pool.prepared.chunks.astype(np.float64)
    relevance = unit_rows @ pool.prepared.query
    assert relevance[0] > relevance[1] > relevance[2]
    assert unit_rows[0] @ unit_rows[1] == pytest.approx(0.95, abs=1e-6)
    assert unit_rows[0] @ unit_rows[2] == pytest.approx(0.97, abs=1e-6)
    assert unit_rows[1] @ unit_rows[2] < 0.95


def test_overlapping_windows_are_stitched_not_dropped_and_a_copy_from_elsewhere_is_dropped():
    pool = pool_of(overlap=40)
    packed = run(pool, 400, packing=True)
    assert packed.indices == (0, 1)  # window 1 adds 60 words; e#0 duplicates window 0
    assert packed.tokens_used == 160
    ((chunks, _),) = [(p.chunks, p.text) for p in packed.passages]
    assert chunks == (0, 1)
    (dropped,) = packed.duplicates
    assert (dropped.chunk, dropped.of, dropped.inside) == (2, 0, False)
    assert dropped.cosine == pytest.approx(0.97, abs=1e-6)
    assert packed.verdict(2).kind is VerdictKind.DUPLICATE
    # Without packing the guard drops window 1 as well: the two would repeat 40 words.
    apart = run(pool, 400, packing=False)
    assert apart.indices == (0,)
    assert {(d.chunk, d.of) for d in apart.duplicates} == {(1, 0), (2, 0)}


def test_the_text_part_spares_an_overlapping_window_too():
    """Window 1 overlapping by 95 words shares more than 80 % of its 8-grams with window 0:
    the text part drops it without packing; with packing it adds 5 words."""
    pool = pool_of(overlap=95)
    shared = containment(gram_set(pool.texts[0]), gram_set(pool.texts[1]))
    assert shared >= GUARD[1]
    packed = run(pool, 400, packing=True)
    assert packed.indices == (0, 1) and packed.tokens_used == 105
    assert [(d.chunk, d.of) for d in packed.duplicates] == [(2, 0)]
    assert run(pool, 400, packing=False).indices == (0,)


def test_the_metric_counts_pairs_the_context_holds_apart():
    pool = pool_of(overlap=40)
    packed = run(pool, 400, packing=True)
    chunks = pool.prepared.chunks
    assert len(near_duplicate_pairs(chunks, packed.indices, 0.9)) == 1  # picks 0 and 1
    assert evaluate(packed, pool.prepared, texts=pool.texts).near_duplicates == 0
    # Picked apart (no packing, no guard), the same two chunks are a pair of the context.
    loose = run_prepared("topk_budget", pool.prepared, 200, Settings(), texts=pool.texts)
    assert loose.indices == (0, 1)
    assert evaluate(loose, pool.prepared, texts=pool.texts).near_duplicates == 1
