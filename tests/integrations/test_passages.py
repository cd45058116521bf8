"""Packing in the adapters' shared part, without a framework: the spans, the tokenizer a
stitched passage is counted with, the passages returned, the record."""

from __future__ import annotations

import numpy as np
import pytest

from adagres.errors import InputError
from adagres.integrations import common
from adagres.integrations.passages import Places
from adagres.pools.io import load_pools

DOC = " ".join(f"w{i}" for i in range(40))
A, B = DOC[: DOC.index("w20")], DOC[DOC.index("w12") :]  # w0..w19 and w12..w39: 8 shared
NOTE = "an unrelated note"


def retrieved(ids=("a", "b", "n"), relevance=(0.9, 0.8, 0.5), offsets=True) -> common.Retrieved:
    """Two windows of DOC and a note; the query is e0, each document on an axis of its own."""
    vectors = np.zeros((3, 4))
    for i, r in enumerate(relevance):
        vectors[i, 0], vectors[i, i + 1] = r, np.sqrt(1 - r * r)
    places = Places((A, B, NOTE), ("doc", "doc", None), (0, DOC.index("w12"), None))
    return common.Retrieved(
        query="which?",
        texts=(A, B, NOTE),
        embeddings=vectors,
        query_embedding=np.array([1.0, 0.0, 0.0, 0.0]),
        ids=ids,
        metadata=(None,) * 3,
        places=places if offsets else None,
    )


def header_words(text: str) -> int:
    """A tokenizer with a fixed cost per text (like a header): words + 7."""
    return len(text.split()) + 7


def test_a_callable_tokenizer_counts_the_stitched_passage_itself():
    # a = 20 + 7, b = 28 + 7 apart; together 40 + 7 (the estimate would charge both headers)
    budget = 47
    chosen = common.options(budget, tokenizer=header_words)
    for offsets in (True, False):  # by the offsets, or by the eight words the two share
        selection = common.select(chosen, retrieved(offsets=offsets), framework="test")
        assert selection.indices == (0, 1) and selection.tokens_used == budget
        (passage,) = selection.passages
        assert passage.text == DOC and passage.tokens == 47 and passage.separate_tokens == 62
        returned = common.returned(selection, retrieved(offsets=offsets))
        assert returned is not None  # the two windows are stitched
        [placed] = returned
        assert placed.stitched and placed.text == DOC and placed.chunks == (0, 1)
        assert placed.extra["adagres_chunks"] == ["a", "b"] and placed.extra["adagres_tokens"] == 47
        assert placed.extra["adagres_step"] == 1


def test_a_callable_that_gives_no_count_for_a_stitched_passage_is_named():
    def odd(text: str) -> int | float:
        return len(text.split()) if len(text) <= len(B) else 1.5

    with pytest.raises(InputError, match=r"^tokenizer: a stitched passage: .*got 1\.5"):
        common.select(
            common.options(100, tokenizer=odd),  # type: ignore[arg-type]  # the mistake
            retrieved(),
            framework="test",
        )


def test_passages_of_one_chunk_are_returned_as_that_chunk_with_the_keys():
    # b is the least relevant: a and the note fill the budget, nothing is stitched
    item = retrieved(relevance=(0.9, 0.2, 0.8), ids=("a", "a", None))  # ids that do not name
    chosen = common.options(24, tokenizer="words")
    selection = common.select(chosen, item, framework="test")
    assert selection.indices == (0, 2) and selection.merges == ()
    placed = common.returned(selection, item)
    assert placed is not None
    assert [(p.chunks, p.first, p.text, p.stitched) for p in placed] == [
        ((0,), 0, A, False),
        ((2,), 2, NOTE, False),
    ]
    assert [p.extra["adagres_chunks"] for p in placed] == [["c0"], ["c2"]]  # by position
    assert [p.extra["adagres_tokens"] for p in placed] == [20, 3]
    off = common.options(24, tokenizer="words", settings=chosen.settings.replace(packing=False))
    assert common.returned(common.select(off, item, framework="test"), item) is None


def test_the_record_keeps_the_passages_and_the_tokens_saved(tmp_path):
    path = tmp_path / "runs.jsonl"
    chosen = common.options(40, tokenizer="words", record_to=path)
    selection = common.select(chosen, retrieved(), framework="test")
    assert selection.tokens_saved == 8
    record = load_pools(path)[0].extra["selection"]
    assert record["passages"] == [["a", "b"]] and record["tokens_saved"] == 8
    assert record["tokens_used"] == 40 and record["selected"] == ["a", "b"]
