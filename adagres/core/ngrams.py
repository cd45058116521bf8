"""Repeated text, measured on words (SPEC.md, "Metrics of a selection": repeated text).

Text is compared as lower-cased word tokens (runs of Unicode letters, digits and the
underscore: ``\\w+``; punctuation and white space only separate words) in word n-grams of
:data:`REPEAT_NGRAM` = 8 words. Eight words in a row rarely recur by chance in prose, so a
shared 8-gram is copied text: an overlapping window, a boilerplate line, a re-posted answer.
A chunk shorter than n words counts as one n-gram of all its words, so an exact copy of a
short chunk is still a copy.

:func:`repeated_share` is the metric: the share of a context's words that repeat text already
in it. :class:`GramIndex` answers, for the near-duplicate guard, which chunks of a pool share
most of their n-grams with a given one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

import numpy as np

__all__ = ["REPEAT_NGRAM", "GramIndex", "gram_index", "gram_keys", "repeated_share", "words"]

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
    if not tokens:
        return []
    if len(tokens) < n:
        return [tuple(tokens)]
    return [tuple(tokens[p : p + n]) for p in range(len(tokens) - n + 1)]


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


def gram_keys(text: str, n: int = REPEAT_NGRAM) -> np.ndarray:
    """The distinct word n-grams of ``text`` as sorted int64 keys (hashes of the n-grams)."""
    keys = [hash(gram) for gram in _grams(words(text), n)]
    return np.unique(np.array(keys, dtype=np.int64))


class GramIndex:
    """An inverted index from word n-grams to the chunks of one pool that hold them.

    :meth:`shared` gives, for one chunk, the share of every chunk's n-grams it holds too,
    over the smaller of the two sets (containment): 1.0 when one chunk is a copy of, or is
    contained in, the other. One call costs O(g·log E + matches) for g n-grams of the chunk
    and E entries in the index.
    """

    def __init__(self, texts: Sequence[str], n: int = REPEAT_NGRAM) -> None:
        per_chunk = [gram_keys(text, n) for text in texts]
        self.n_chunks = len(per_chunk)
        self.sizes = np.array([len(k) for k in per_chunk], dtype=np.int64)
        self.keys = per_chunk
        flat = np.concatenate(per_chunk) if per_chunk else np.zeros(0, np.int64)
        owner = np.repeat(np.arange(self.n_chunks), self.sizes)
        order = np.argsort(flat, kind="stable")
        self.sorted_keys, self.sorted_owner = flat[order], owner[order]

    def shared(self, chunk: int) -> np.ndarray:
        """|G_i ∩ G_chunk| / min(|G_i|, |G_chunk|) for every chunk i (0 where either is empty)."""
        keys = self.keys[chunk]
        lo = np.searchsorted(self.sorted_keys, keys, side="left")
        hi = np.searchsorted(self.sorted_keys, keys, side="right")
        lengths = hi - lo
        total = int(lengths.sum())
        if total == 0:
            return np.zeros(self.n_chunks)
        # the entries lo[0]..hi[0], lo[1]..hi[1], … as one index array
        starts = np.repeat(lo - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
        entries = starts + np.arange(total)
        common = np.bincount(self.sorted_owner[entries], minlength=self.n_chunks)
        smaller = np.minimum(self.sizes, self.sizes[chunk])
        return np.divide(common, smaller, out=np.zeros(self.n_chunks), where=smaller > 0)


@functools.lru_cache(maxsize=8)
def gram_index(texts: tuple[str, ...], n: int = REPEAT_NGRAM) -> GramIndex:
    """The :class:`GramIndex` of ``texts``, kept for the last few pools (the app reruns a
    strategy on one pool at every control change)."""
    return GramIndex(texts, n)
