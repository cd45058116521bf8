"""Token counts for budgets, with offline tokenizers.

``TOKENIZERS``:

- ``"cl100k"`` and ``"o200k"``: OpenAI's BPE vocabularies, bundled by ``bpe-openai``
  (same counts as tiktoken; special-token strings count as ordinary text);
- ``"minilm"``: the tokenizer of the packaged all-MiniLM-L6-v2 embedding model (word
  pieces, without the [CLS]/[SEP] markers, no truncation);
- ``"words"``: a dependency-free counter, one token per run of word characters and one per
  other non-space character.

Heavy packages are imported inside the functions that use them.

Memory is bounded whatever the input: texts go to a tokenizer in batches of at most
``BATCH_CHARS`` characters (the MiniLM tokenizer holds about 150 bytes per character while
it works), and a text of ``MAX_CHARS`` characters or more is refused, as bpe-openai refuses
it, by every tokenizer alike. Texts must be ``str`` without lone surrogates (which no
tokenizer can encode); anything else raises :class:`~adagres.errors.InputError` naming the
text.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from functools import cache, lru_cache
from itertools import accumulate
from typing import Any

import numpy as np

from adagres.core.validate import string_problem
from adagres.errors import InputError, require

__all__ = [
    "BATCH_CHARS",
    "DEFAULT_TOKENIZER",
    "MAX_CHARS",
    "TOKENIZERS",
    "check_name",
    "check_texts",
    "count_tokens",
    "text_batches",
    "token_spans",
]

TOKENIZERS = ("cl100k", "o200k", "minilm", "words")
DEFAULT_TOKENIZER = "cl100k"
#: Texts of this many characters or more are refused (bpe-openai's own limit, for all).
MAX_CHARS = 1_000_000
#: Characters per batch handed to a tokenizer (bounds its memory, ~150 MB for MiniLM).
BATCH_CHARS = 1_000_000

_WORDS = re.compile(r"\w+|[^\w\s]")
_BPE_NAMES = {"cl100k": "cl100k_base", "o200k": "o200k_base"}


def check_name(tokenizer: str) -> None:
    if tokenizer not in TOKENIZERS:
        raise InputError(f"unknown tokenizer {tokenizer!r}; choose one of {', '.join(TOKENIZERS)}")


@cache
def _bpe(tokenizer: str) -> Any:
    with warnings.catch_warnings():  # bpe-openai reads its data with a deprecated call
        warnings.simplefilter("ignore", DeprecationWarning)
        bpe_openai = require("bpe_openai", "embed", purpose=f"the {tokenizer!r} tokenizer")
        encoding = bpe_openai.get_encoding(_BPE_NAMES[tokenizer])
        encoding.encode_ordinary("warm up")  # the vocabulary loads on first use
    return encoding


@lru_cache(maxsize=1)
def _minilm() -> Any:
    from adagres.embed.minilm import packaged_folder

    tokenizers = require("tokenizers", "embed", purpose="the 'minilm' tokenizer")
    model = tokenizers.Tokenizer.from_file(str(packaged_folder() / "tokenizer.json"))
    model.no_truncation()
    model.no_padding()
    return model


def check_texts(texts: Any, what: str = "texts", *, max_chars: int = MAX_CHARS) -> list[str]:
    """``texts`` as a list of strings, each without lone surrogates and of fewer than
    ``max_chars`` characters; else InputError naming the text."""
    if isinstance(texts, str):
        raise InputError(f"{what}: expected a list of texts, got one string")
    try:
        listed: list[str] = list(texts)
    except TypeError:
        raise InputError(f"{what}: expected a list of texts, got {type(texts).__name__}") from None
    for position, text in enumerate(listed):
        if not isinstance(text, str):
            raise InputError(f"{what}[{position}]: expected a string, got {type(text).__name__}")
        problem = string_problem(text, max_chars - 1, "max_text_chars")
        if problem is not None:
            if len(text) >= max_chars:
                problem = (
                    f"has {len(text):,} characters; the tokenizers count texts of fewer than "
                    f"{max_chars:,} (split it into chunks first)"
                )
            raise InputError(f"{what}[{position}]: {problem}")
    return listed


def text_batches(texts: list[str], max_texts: int | None = None) -> list[list[str]]:
    """Consecutive runs of texts of at most BATCH_CHARS characters and ``max_texts`` texts
    (one text at least): a tokenizer's memory grows with a batch's characters."""
    out: list[list[str]] = []
    size = BATCH_CHARS + 1
    for text in texts:
        if size + len(text) > BATCH_CHARS or len(out[-1]) == max_texts:
            out.append([])
            size = 0
        out[-1].append(text)
        size += len(text)
    return out


def _count_batch(batch: list[str], tokenizer: str, offset: int) -> list[int]:
    if tokenizer == "words":
        return [len(_WORDS.findall(text)) for text in batch]
    if tokenizer == "minilm":
        encodings = _minilm().encode_batch(batch, add_special_tokens=False)
        return [len(encoding.ids) for encoding in encodings]
    encoding = _bpe(tokenizer)  # outside the try: a missing extra is not a text's fault
    try:  # the batch call starts a thread pool: 8 ms a call, more than one short text costs
        if len(batch) == 1:
            return [len(encoding.encode_ordinary(batch[0]))]
        return [len(ids) for ids in encoding.encode_ordinary_batch(batch)]
    except ValueError as error:  # bpe-openai's limit of tokens per text
        for position, text in enumerate(batch):
            try:
                encoding.encode_ordinary(text)
            except ValueError:
                raise InputError(
                    f"texts[{offset + position}]: the {tokenizer} tokenizer refuses it ({error})"
                ) from None
        raise  # pragma: no cover - the batch failed, so one text fails alone


def count_tokens(texts: Sequence[str], tokenizer: str = DEFAULT_TOKENIZER) -> np.ndarray:
    """Return the (N,) int64 token count of each text under ``tokenizer`` (one of TOKENIZERS).

    Raises InputError for a text that is not a string, holds a lone surrogate or has
    ``MAX_CHARS`` characters or more.

    >>> count_tokens(["hello world", "Hello, world!"], "words").tolist()
    [2, 4]
    >>> count_tokens(["hello world"], "cl100k").tolist()
    [2]
    """
    check_name(tokenizer)
    texts = check_texts(texts)
    counts: list[int] = []
    for batch in text_batches(texts):
        counts.extend(_count_batch(batch, tokenizer, len(counts)))
    return np.array(counts, dtype=np.int64)


def token_spans(text: str, tokenizer: str = DEFAULT_TOKENIZER) -> list[tuple[int, int]]:
    """Return the (start, end) character span of each token of ``text``, in order.

    A BPE token that ends inside a multi-byte character is widened to the whole character,
    so every span cuts the text at character boundaries.

    >>> token_spans("Hi, you", "words")
    [(0, 2), (2, 3), (4, 7)]
    """
    check_name(tokenizer)
    check_texts([text], "text")
    if tokenizer == "words":
        return [match.span() for match in _WORDS.finditer(text)]
    if tokenizer == "minilm":
        encoding = _minilm().encode(text, add_special_tokens=False)
        return [tuple(offset) for offset in encoding.offsets]
    encoding = _bpe(tokenizer)
    pieces = encoding.decode_tokens_bytes(encoding.encode_ordinary(text))
    # for each byte offset b, the end of the character that holds byte b − 1
    char_end = [0, *(i + 1 for i, char in enumerate(text) for _ in char.encode("utf-8"))]
    ends = [char_end[end] for end in accumulate(len(piece) for piece in pieces)]
    return list(zip([0, *ends], ends, strict=False))
