"""The repeated-text metric: the share of a context's words that repeat a word 8-gram in it."""

from __future__ import annotations

import numpy as np
import pytest

from adagres import select
from adagres.core.metrics import evaluate
from adagres.core.ngrams import containment, gram_set, repeated_share, words

W = [f"w{i}" for i in range(40)]


def text(*idx: int) -> str:
    return " ".join(W[i] for i in idx)


def test_words_are_lower_cased_and_split_at_punctuation() -> None:
    assert words("Ibuprofen, 200-MG tablets; take_one.") == [
        "ibuprofen",
        "200",
        "mg",
        "tablets",
        "take_one",
    ]


@pytest.mark.parametrize(
    ("texts", "expected"),
    [
        ([text(*range(10))], 0.0),  # nothing repeats
        ([text(*range(10)), text(*range(10))], 10 / 20),  # the second copy, all its words
        # windows 0-9 and 5-14 share 5 words: fewer than 8, no 8-gram repeats
        ([text(*range(10)), text(*range(5, 15))], 0.0),
        # windows 0-11 and 4-15 share 8 words (4-11): those 8 of the second window repeat
        ([text(*range(12)), text(*range(4, 16))], 8 / 24),
        # 0-15 then 4-11 inside it: the whole second chunk repeats
        ([text(*range(16)), text(*range(4, 12))], 8 / 24),
        # inside one chunk: w0..w7 twice in a row; the second run repeats
        ([text(*range(8), *range(8))], 8 / 16),
        # short chunks are one gram each: an exact copy counts, a different one does not
        (["Call us", "call US!", "call them"], 2 / 6),
        ([], 0.0),
        (["", "..."], 0.0),
    ],
)
def test_repeated_text_by_hand(texts: list[str], expected: float) -> None:
    assert repeated_share(texts) == pytest.approx(expected)


def test_order_matters_only_for_which_copy_is_first() -> None:
    a, b = text(*range(20)), text(*range(6, 14))  # b lies inside a
    assert repeated_share([a, b]) == pytest.approx(8 / 28)
    assert repeated_share([b, a]) == pytest.approx(8 / 28)  # a's w6..w13 repeat b


def test_two_overlapping_repeats_in_a_row_count_each_word_once() -> None:
    # the second chunk repeats w0..w8 (two 8-grams, overlapping): 9 words, not 16
    assert repeated_share([text(*range(9)), text(*range(9), 30, 31)]) == pytest.approx(9 / 20)


def test_evaluate_reports_repeated_text_in_pick_order() -> None:
    q = np.array([1.0, 0.0])
    chunks = np.array([[0.99, 0.14], [0.98, 0.2], [0.5, 0.86]])
    texts = [text(*range(12)), text(*range(12)), text(20, 21)]
    s = select(q, chunks, [10, 10, 10], 30, lam=0.0, policy="fill")
    assert s.indices == (0, 1, 2)
    m = evaluate(s, chunks, texts=texts)
    assert m.repeated_text == pytest.approx(12 / 26)
    assert evaluate(s, chunks).repeated_text is None  # no texts, no metric


def test_containment_by_hand() -> None:
    a, b = gram_set(text(*range(12))), gram_set(text(*range(4, 16)))
    # each has 5 grams (0-7 … 4-11 and 4-11 … 8-15): one in common
    assert containment(a, b) == pytest.approx(1 / 5)
    assert containment(a, gram_set(text(*range(12)))) == 1.0
    assert containment(gram_set(text(2, 3)), gram_set(text(*range(12)))) == 0.0  # one short gram
    assert containment(frozenset(), a) == 0.0
