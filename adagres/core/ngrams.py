"""Repeated text, measured on words (SPEC.md, "Metrics of a selection": repeated text).

Text is compared as lower-cased word tokens (runs of Unicode letters, digits and the
underscore: ``\\w+``; punctuation and white space only separate words) in word n-grams of
:data:`REPEAT_NGRAM` = 8 words. Eight words in a row rarely recur by chance in prose, so a
shared 8-gram is copied text: an overlapping window, a boilerplate line, a re-posted answer.
A chunk shorter than n words counts as one n-gram of all its words, so an exact copy of a
short chunk is still a copy.

:func:`repeated_share` is the metric: the share of a context's words that repeat text already
in it. :func:`containment` is the near-duplicate guard's shared-text test of two chunks.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

__all__ = ["REPEAT_NGRAM", "containment", "gram_set", "repeated_share", "words"]

#: Words per n-gram when text is compared.
REPEAT_NGRAM = 8

_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The lower-cased word tokens of ``text``.

    >>> words("The cat's  hat, 2 dollars!")
    ['the', 'cat', 's', 'hat', '2', 'dollars']
    """
    return _WORD.findall(text.lower())


def _grams(tokens: list[str], n: int) -> list[tuple[str, ...]]:
    """The word n-grams of ``tokens`` in order; fewer than n words are one n-gram."""
    if len(tokens) < n:
        return [tuple(tokens)] if tokens else []
    # built in C: the shifted lists end together at the last full n-gram
    return list(zip(*(tokens[i:] for i in range(n)), strict=False))


def repeated_share(texts: Sequence[str], n: int = REPEAT_NGRAM) -> float:
    """The share of the words of ``texts`` (a context's chunks, in pick order) that repeat
    text already in it; 0.0 for a context without words.

    A word is repeated when it lies in a word n-gram that already occurred earlier in the
    context: in an earlier chunk, or earlier in the same chunk. N-grams do not span two
    chunks. The first occurrence of any text is never counted, so a context that holds a
    chunk twice repeats exactly the second copy's words.

    >>> repeated_share(["a b c d e f g h i j", "a b c d e f g h"], n=8)  # 8 of 18 words
    0.4444444444444444
    >>> repeated_share(["one two", "one two"], n=8)  # short chunks: one gram each
    0.5
    """
    seen: set[tuple[str, ...]] = set()
    total = repeated = 0
    for text in texts:
        tokens = words(text)
        total += len(tokens)
        span = min(n, len(tokens))
        marked_to = 0  # words before this position are already counted as repeated
        for p, gram in enumerate(_grams(tokens, n)):
            if gram in seen:
                start = max(p, marked_to)
                repeated += p + span - start
                marked_to = p + span
            else:
                seen.add(gram)
    return repeated / total if total else 0.0


@functools.lru_cache(maxsize=8192)
def gram_set(text: str, n: int = REPEAT_NGRAM) -> frozenset[tuple[str, ...]]:
    """The distinct word n-grams of ``text`` (kept for the last 8,192 texts: the app and the
    evaluation select from one pool many times).

    >>> sorted(gram_set("a b c", n=2))
    [('a', 'b'), ('b', 'c')]
    """
    return frozenset(_grams(words(text), n))


def containment(a: frozenset[tuple[str, ...]], b: frozenset[tuple[str, ...]]) -> float:
    """|a ∩ b| / min(|a|, |b|): 1.0 when one chunk's n-grams all occur in the other (a copy,
    or a chunk inside a longer one); 0.0 when either has none.

    >>> containment(gram_set("a b c d", n=2), gram_set("b c d e f", n=2))
    0.6666666666666666
    """
    smaller = min(len(a), len(b))
    if smaller == 0:
        return 0.0
    if len(a) > len(b):
        a, b = b, a
    return len(a & b) / smaller
