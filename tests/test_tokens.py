"""Token counts of the offline tokenizers, against known values."""

from __future__ import annotations

import numpy as np
import pytest

from adagres.embed.tokens import TOKENIZERS, count_tokens, token_spans
from adagres.errors import InputError
from adagres.pools.io import pool_from_dict
from adagres.pools.ready import ensure_token_counts


def test_every_listed_tokenizer_counts_and_no_other_is_accepted():
    # "hello world" is 2 tokens for each: cl100k [15339, 1917], o200k [24912, 2375], MiniLM
    # word pieces "hello", "world", and two words.
    assert {name: count_tokens(["hello world"], name).tolist() for name in TOKENIZERS} == {
        "cl100k": [2],
        "o200k": [2],
        "minilm": [2],
        "words": [2],
    }
    for unlisted in ("gpt2", "p50k_base", "tiktoken", "CL100K"):
        with pytest.raises(InputError, match=r"choose one of cl100k, o200k, minilm, words$"):
            count_tokens(["hello world"], unlisted)


def test_cl100k_counts_match_tiktoken_reference_values():
    # tiktoken's documented examples: "hello world" -> [15339, 1917]; "tiktoken is great!" -> 6
    counts = count_tokens(["hello world", "tiktoken is great!", ""], "cl100k")
    assert counts.dtype == np.int64
    assert counts.tolist() == [2, 6, 0]


def test_special_token_text_is_counted_as_ordinary_text():
    # "<|endoftext|>" is 1 special token, but in a chunk it is just text: 7 ordinary tokens
    assert count_tokens(["<|endoftext|>"], "cl100k").tolist() == [7]


def test_o200k_differs_from_cl100k_on_non_english_text():
    text = "日本語のテキストは語彙によってトークン数が変わります。"
    cl100k, o200k = count_tokens([text], "cl100k")[0], count_tokens([text], "o200k")[0]
    assert o200k < cl100k


def test_minilm_counts_word_pieces_without_markers_or_truncation():
    assert count_tokens(["hello world", "Hello, world!"], "minilm").tolist() == [2, 4]
    long_text = " ".join(["word"] * 600)
    assert count_tokens([long_text], "minilm").tolist() == [600]  # no truncation at 128/256


def test_words_counter_splits_words_and_punctuation():
    # "it's 3.5 km" -> it ' s 3 . 5 km
    assert count_tokens(["Hello, world!", "it's 3.5 km", "  "], "words").tolist() == [4, 7, 0]


def test_unknown_tokenizer_is_an_input_error():
    with pytest.raises(InputError, match="unknown tokenizer 'gpt5'; choose one of cl100k"):
        count_tokens(["x"], "gpt5")


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_token_spans_cover_tokens_at_character_boundaries(tokenizer):
    text = "Café au lait, naïve 日本語 text."
    spans = token_spans(text, tokenizer)
    assert len(spans) == count_tokens([text], tokenizer)[0]
    starts = [start for start, _ in spans]
    assert starts == sorted(starts) and all(0 <= s <= e <= len(text) for s, e in spans)
    if tokenizer in ("cl100k", "o200k"):  # BPE spans tile the whole text
        assert "".join(text[s:e] for s, e in spans) == text


def test_ensure_token_counts_keeps_given_counts_and_recounts_on_request():
    pool = pool_from_dict({"query": "q", "chunks": [{"id": "a", "text": "one two", "tokens": 9}]})
    assert ensure_token_counts(pool, "words") is pool
    recounted = ensure_token_counts(pool, "words", recount=True).token_counts
    assert recounted is not None and recounted.tolist() == [2]
    bare = pool_from_dict({"query": "q", "chunks": [{"id": "a", "text": "hello world"}]})
    counted = ensure_token_counts(bare, "cl100k")
    assert counted.token_counts is not None and counted.token_counts.tolist() == [2]
    assert counted.tokenizer == "cl100k"
    assert ensure_token_counts(counted, "o200k").tokenizer == "o200k"
