"""Overlap-aware packing: overlapping picks are stitched and paid for once.

References are independent of the packer: the passages are compared with the source text
sliced by the chunks' offsets, and their tokens with the tokenizer run on that slice.
"""

from __future__ import annotations

import itertools
import json
from typing import cast

import numpy as np
import pytest

from adagres import Settings
from adagres.core.metrics import evaluate
from adagres.core.overlaps import Spans, edge_placements
from adagres.core.packing import stitch
from adagres.core.prepared import prepare
from adagres.core.records import VerdictKind
from adagres.core.selection import select_prepared
from adagres.core.settings import Policy
from adagres.corpora.documents import chunk_documents
from adagres.embed.tokens import count_tokens
from adagres.errors import InputError, PoolError
from adagres.figures import budget_bar_data  # (the package binds it; see its __getattr__)
from adagres.pools.io import load_pool
from adagres.pools.pool import Chunk, Pool

DOC = " ".join(f"w{i}" for i in range(400))


def windows_pool(chunks, relevance_order, *, seed=0, dim=24, keep_offsets=True):
    """A pool of ``chunks`` whose relevance falls in ``relevance_order`` (pool positions)."""
    rng = np.random.default_rng(seed)
    query = rng.normal(size=dim)
    query /= np.linalg.norm(query)
    rows = []
    rank = {c: r for r, c in enumerate(relevance_order)}
    for i in range(len(chunks)):
        noise = rng.normal(size=dim)
        noise -= noise @ query * query
        noise /= np.linalg.norm(noise)
        r = 0.9 * 0.97 ** rank.get(i, len(chunks))
        rows.append(r * query + np.sqrt(1 - r * r) * noise)
    if not keep_offsets:
        chunks = [Chunk(c.id, c.text, tokens=c.tokens) for c in chunks]
    return Pool(
        "q",
        tuple(chunks),
        raw_embeddings=np.array(rows),
        raw_query_embedding=query,
        tokenizer="words",
    )


def source_range(chunks, members):
    """(start, end) in DOC of the union of ``members`` (chunk_documents' own offsets)."""
    return (
        min(chunks[m].metadata["start"] for m in members),
        max(chunks[m].metadata["end"] for m in members),
    )


@pytest.mark.parametrize("offsets", [True, False], ids=["offsets", "shared-edges"])
def test_two_windows_overlapping_by_40_tokens_are_charged_once_as_one_passage(offsets):
    chunks = chunk_documents({"d": DOC}, size=100, overlap=40, tokenizer="words")
    assert [c.tokens for c in chunks[:2]] == [100, 100]
    pool = windows_pool(chunks, [0, 1], keep_offsets=offsets)
    apart = select_prepared(pool.prepared, 160, Settings(lam=0.0), texts=pool.texts)
    assert apart.indices == (0,)  # 100 + 100 > 160: the second window does not fit
    packed = select_prepared(pool.prepared, 160, Settings(lam=0.0, packing=True))
    assert packed.indices == (0, 1)
    assert packed.tokens_used == 160  # 100 + the 60 tokens the second window adds
    (passage,) = packed.passages
    assert passage.chunks == (0, 1)
    assert passage.text == " ".join(f"w{i}" for i in range(160))
    assert (passage.tokens, passage.separate_tokens, packed.tokens_saved) == (160, 200, 40)
    (merge,) = packed.merges
    assert (merge.step, merge.chunk, merge.joined, merge.tokens, merge.saved) == (
        2,
        1,
        (0,),
        60,
        40,
    )
    assert [s.winner_tokens for s in packed.steps if s.accepted] == [100, 60]
    passages = cast("list[dict[str, object]]", packed.to_dict(pool.ids)["passages"])
    assert passages[0]["chunks"] == ["d#0", "d#1"]


def test_packing_off_or_without_overlaps_changes_nothing():
    chunks = chunk_documents({"d": DOC}, size=50, overlap=0, tokenizer="words")  # no overlap
    pool = windows_pool(chunks, list(range(len(chunks))))
    for settings in (Settings(), Settings(policy="fill"), Settings(lam=0.3)):
        off = select_prepared(pool.prepared, 170, settings)
        on = select_prepared(pool.prepared, 170, settings.replace(packing=True))
        assert on.indices == off.indices and on.tokens_used == off.tokens_used
        assert [s.gain for s in on.steps] == [s.gain for s in off.steps]  # bit for bit
        assert on.merges == () and [p.chunks for p in on.passages] == [(i,) for i in off.indices]
        assert [p.text for p in on.passages] == [pool.texts[i] for i in off.indices]


@pytest.mark.parametrize("seed", range(12))
def test_packed_runs_against_the_source_text(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(20, 60))
    chunks = chunk_documents(
        {"d": DOC}, size=size, overlap=int(rng.integers(0, size - 5)), tokenizer="words"
    )
    order = list(rng.permutation(len(chunks)))
    pool = windows_pool(chunks, order, seed=seed, keep_offsets=bool(seed % 2))
    budget = int(rng.integers(size, 5 * size))
    settings = Settings(
        lam=float(rng.uniform(0, 0.3)),
        packing=True,
        policy=cast(Policy, str(rng.choice(["skip", "fill", "stop"]))),
    )
    fast = select_prepared(pool.prepared, budget, settings, trace=False)
    traced = select_prepared(pool.prepared, budget, settings, trace=True)
    assert traced.indices == fast.indices and traced.passages == fast.passages
    assert traced.tokens_used == fast.tokens_used <= budget
    assert traced.tokens_used == sum(p.tokens for p in traced.passages)
    assert sorted(m for p in traced.passages for m in p.chunks) == sorted(traced.indices)
    spans = []
    for p in traced.passages:
        start, end = source_range(chunks, p.chunks)
        assert p.text == DOC[start:end]
        assert p.tokens == int(count_tokens([p.text], "words")[0])
        spans.append((start, end))
    spans.sort()
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))  # disjoint
    used = 0
    for step in traced.steps:  # the record adds up: each step pays what its pick added
        if step.accepted:
            assert step.winner_tokens is not None  # an accepted step names what it paid
            used += step.winner_tokens
            assert step.tokens_used == used and step.winner_tokens >= 0
    assert used == traced.tokens_used


def test_a_chunk_inside_a_passage_is_a_duplicate_of_the_pick_that_holds_it():
    long = Chunk(
        "long",
        DOC[:200],
        tokens=int(count_tokens([DOC[:200]], "words")[0]),
        source="doc",
        extra={"offset": 0},
    )
    inner_text = DOC[20:80]
    inner = Chunk(
        "inner",
        inner_text,
        tokens=int(count_tokens([inner_text], "words")[0]),
        source="doc",
        extra={"offset": 20},
    )
    other = Chunk("other", "something else entirely", tokens=3)
    pool = windows_pool([long, inner, other], [0, 1, 2])
    packed = select_prepared(pool.prepared, 1000, Settings(lam=0.0, packing=True))
    assert 1 not in packed.indices and packed.indices == (0, 2)
    verdict = packed.verdict(1)
    assert verdict.kind is VerdictKind.DUPLICATE and verdict.duplicate_of == 0
    assert verdict.duplicate_shared_text == 1.0
    assert "which 'long' put there" in verdict.summary(pool.ids)
    apart = select_prepared(pool.prepared, 1000, Settings(lam=0.0))
    assert apart.indices == (0, 1, 2)  # without packing the copy is paid for again


def test_offsets_whose_texts_disagree_do_not_merge():
    a = Chunk("a", "alpha beta gamma delta", tokens=4, source="doc", extra={"offset": 0})
    b = Chunk("b", "gamma epsilon zeta eta", tokens=4, source="doc", extra={"offset": 11})
    pool = windows_pool([a, b], [0, 1])
    assert pool.prepared.spans.layout.neighbours == {0: (1,), 1: (0,)}  # placed as overlapping
    packed = select_prepared(pool.prepared, 100, Settings(lam=0.0, packing=True))
    assert packed.indices == (0, 1) and packed.tokens_used == 8 and packed.merges == ()


def test_stitch_and_edges_by_hand():
    assert stitch(0, "one two three", 8, "three four") == "one two three four"
    assert stitch(0, "one two three\n", 8, "three four") == "one two three four"  # white space
    assert stitch(0, "one two three", 14, "four") is None  # touching is not overlapping
    assert stitch(0, "one two three", 8, "thirty") is None
    words = [f"x{i}" for i in range(30)]
    # overlaps of 8 words (the anchor) each; "unrelated text" shares none
    a, b, c = " ".join(words[:16]), " ".join(words[8:26]), " ".join(words[18:30])
    placed = edge_placements([a, "unrelated text", b, c], [0, 1, 2, 3])
    # b starts at x8 of a, c at x18 of b: one chain with starts in a's characters
    assert placed == [(0, 0, 0), (2, 0, a.index("x8")), (3, 0, a.index("x8") + b.index("x18"))]
    spans = Spans((a, "unrelated text", b, c), (None,) * 4, (None,) * 4)
    assert spans.layout.neighbours == {0: (2,), 2: (0, 3), 3: (2,)}


def test_the_pool_format_offset_is_checked_at_load(tmp_path):
    path = tmp_path / "pool.json"
    path.write_text(
        json.dumps(
            {"query": "q", "chunks": [{"id": "a", "text": "alpha", "source": "doc", "offset": -3}]}
        )
    )
    with pytest.raises(PoolError, match=r"'a'.*offset.*whole number of characters >= 0"):
        load_pool(path)


def test_a_stitched_passage_is_counted_by_the_pools_tokenizer_not_summed():
    # the passage is counted by cl100k on the stitched text, never as a sum of parts
    chunks = chunk_documents({"d": DOC}, size=40, overlap=10, tokenizer="cl100k")
    pool = windows_pool(chunks, [0, 1])
    pool = Pool(
        pool.query,
        pool.chunks,
        raw_embeddings=pool.raw_embeddings,
        raw_query_embedding=pool.raw_query_embedding,
        tokenizer="cl100k",
    )
    packed = select_prepared(pool.prepared, 70, Settings(lam=0.0, packing=True))
    assert packed.indices == (0, 1)
    (passage,) = packed.passages
    assert passage.tokens == int(count_tokens([passage.text], "cl100k")[0]) == packed.tokens_used


def test_packing_without_texts_is_refused_and_with_texts_packs():
    p = prepare([1.0, 0.0], [[1.0, 0.0], [0.9, 0.1]], [5, 5])
    with pytest.raises(InputError, match=r"^packing: needs the chunk texts"):
        select_prepared(p, 10, Settings(lam=0.0, packing=True))
    s = select_prepared(p, 10, Settings(lam=0.0, packing=True), texts=["a b", "c d"])
    assert s.indices == (0, 1) and s.tokens_used == 10
    assert [q.text for q in s.passages] == ["a b", "c d"]


def test_the_context_bar_and_metrics_read_the_passages():
    chunks = chunk_documents({"d": DOC}, size=100, overlap=40, tokenizer="words")
    pool = windows_pool(chunks, [0, 3, 1])  # 0, then 3 (apart), then 1 joins 0
    packed = select_prepared(pool.prepared, 260, Settings(lam=0.0, packing=True))
    assert packed.indices == (0, 3, 1) and packed.tokens_used == 260
    after_2 = packed.context(pool.texts, 2)
    assert [(c, paid) for c, _, paid in after_2] == [((0,), 100), ((3,), 100)]
    assert after_2[0][1] == chunks[0].text and after_2[1][1] == chunks[3].text
    whole = packed.context(pool.texts)
    assert [(c, paid) for c, _, paid in whole] == [((0, 1), 160), ((3,), 100)]
    start, end = source_range(chunks, (0, 1))
    assert whole[0][1] == DOC[start:end]
    bar = budget_bar_data(packed, ids=pool.ids)
    assert [(s.chunk, s.tokens, s.saved) for s in bar.segments] == [
        (0, 100, 0),
        (3, 100, 0),
        (1, 60, 40),
    ]
    assert bar.used == packed.tokens_used and bar.remaining == 0
    apart = select_prepared(pool.prepared, 300, Settings(lam=0.0))  # the same three, unpacked
    assert apart.indices == (0, 3, 1)
    texts = pool.texts
    assert evaluate(packed, pool.prepared, texts=texts).repeated_text == 0.0
    assert evaluate(apart, pool.prepared, texts=texts).repeated_text == pytest.approx(40 / 300)


@pytest.mark.parametrize("seed", range(6))
def test_shared_edges_place_windows_where_their_offsets_do(seed):
    rng = np.random.default_rng(seed)
    words = [f"v{i}" for i in rng.integers(0, 300, size=900)]  # repeats: collisions happen
    starts = np.concatenate([[0], np.cumsum(rng.integers(10, 40, size=25))])
    sizes = rng.integers(45, 90, size=len(starts))
    offsets = np.concatenate([[0], np.cumsum([len(w) + 1 for w in words])])
    texts = tuple(" ".join(words[s : s + z]) for s, z in zip(starts, sizes, strict=True))
    given = Spans(texts, ("doc",) * len(texts), tuple(int(offsets[s]) for s in starts))
    found = Spans(texts, (None,) * len(texts), (None,) * len(texts))
    assert found.layout.origin == ("edge",) * len(texts)  # every window shares ≥ 8 words
    assert (found.layout.start - found.layout.start[0]).tolist() == (
        given.layout.start - given.layout.start[0]
    ).tolist()
    assert found.layout.neighbours == given.layout.neighbours
