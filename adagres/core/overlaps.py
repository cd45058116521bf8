"""Where chunks overlap in their sources: the input of overlap-aware packing.

A pool's chunks are often windows of the same document that share text (a splitter's
overlap). :class:`Spans` places each chunk it can in a coordinate system of characters:
chunk i covers ``[start[i], start[i] + len(text_i))`` of source ``source[i]`` (-1: placed
nowhere, it never merges). Two placements exist:

- **offsets**, given by the pool: a source key and the character offset of the chunk's
  text in it (corpus mode, the Milvus collections ``index_documents`` writes, LangChain's
  ``start_index``, LlamaIndex's ``start_char_idx``, the pool format's ``offset``; the pool
  layer reads them, :mod:`adagres.pools.spans`);
- **shared edges**, found from the texts alone for the chunks without offsets: chunk b
  starts inside chunk a when b's first :data:`ANCHOR_WORDS` words occur in a and a's text
  from there on is where b begins (a's trailing white space aside), or b lies whole inside
  a. Chained windows become one virtual source; an edge that contradicts the placement
  already made is left out.

Placement says only where a chunk would sit; whether two chunks really merge is decided
when they are stitched (:mod:`adagres.core.packing`), which checks that their texts agree
on the shared characters. Finding edges costs one pass over the words of the pool and a
string comparison per candidate pair; it is done once per pool, when packing first needs it.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from . import validate

__all__ = ["ANCHOR_WORDS", "MAX_ANCHORED", "MAX_NEIGHBOURS", "Layout", "Spans", "edge_placements"]

#: Words at the start of a chunk that must recur in another chunk for a shared edge: eight
#: words in a row rarely recur by chance (the same n as the repeated-text metric).
ANCHOR_WORDS = 8

#: Chunks that begin with the same eight words beyond this many are not windows of one
#: another but share a header (a template, a contextual prefix): they get no shared edge
#: from those words, which keeps placement linear (their repeated sentences are still left
#: out, :mod:`adagres.core.packing`).
MAX_ANCHORED = 8

#: Each placed chunk is compared with at most this many chunks that start after it in its
#: source: windows overlap a few neighbours, and a source where thousands of chunks claim
#: one offset stays linear to place.
MAX_NEIGHBOURS = 16

_WORD = re.compile(r"\S+")


class Layout(NamedTuple):
    """Placements: ``source`` (N,) int64 (-1: none), ``start`` (N,) int64 characters,
    ``origin`` per chunk ("offset", "edge" or None), and for each placed chunk the chunks
    whose ranges intersect its own in the same source (``neighbours``)."""

    source: NDArray[np.int64]
    start: NDArray[np.int64]
    origin: tuple[str | None, ...]
    neighbours: dict[int, tuple[int, ...]]


@dataclass(frozen=True, eq=False)
class Spans:
    """The chunk texts, the offsets the pool gave (None where it gave none), and how to count
    the tokens of a stitched passage (None: estimated, :mod:`adagres.core.packing`).

    ``sources[i]`` is any hashable key of chunk i's document and ``starts[i]`` the character
    offset of its text there; a chunk with either None is placed by its shared edges.

    >>> spans = Spans(("one two three four", "three four five six"), (None, None), (None, None))
    >>> spans.layout.neighbours  # no eight shared words: nothing placed
    {}
    >>> spans = Spans(("a b", "b c"), ("d", "d"), (0, 2))
    >>> spans.layout.start.tolist(), spans.layout.neighbours
    ([0, 2], {0: (1,), 1: (0,)})
    """

    texts: tuple[str, ...]
    sources: tuple[Hashable | None, ...]
    starts: tuple[int | None, ...]
    count_tokens: Callable[[str], int] | None = None

    def __post_init__(self) -> None:
        # Spans built in code are checked here once (InputError naming the field and the
        # position); the pool layer and the adapters check their offsets before that.
        validate.spans(self.texts, self.sources, self.starts, self.count_tokens)

    @cached_property
    def layout(self) -> Layout:
        n = len(self.texts)
        source = np.full(n, -1, dtype=np.int64)
        start = np.zeros(n, dtype=np.int64)
        origin: list[str | None] = [None] * n
        keys: dict[Hashable, int] = {}
        loose: dict[Hashable | None, list[int]] = defaultdict(list)  # by their source, if any
        for i, (key, offset) in enumerate(zip(self.sources, self.starts, strict=True)):
            if key is None or offset is None:
                loose[key].append(i)
                continue
            source[i] = keys.setdefault(key, len(keys))
            start[i], origin[i] = offset, "offset"
        groups = len(keys)
        for members in loose.values():  # edges only within one source, or among no source
            found = edge_placements(self.texts, members)
            for i, group, offset in found:
                source[i], start[i], origin[i] = groups + group, offset, "edge"
            groups += len({group for _, group, _ in found})
        return Layout(source, start, tuple(origin), _neighbours(self.texts, source, start))


def _neighbours(
    texts: Sequence[str], source: NDArray[np.int64], start: NDArray[np.int64]
) -> dict[int, tuple[int, ...]]:
    """For each placed chunk, the chunks of its source whose ranges intersect its own."""
    found: dict[int, list[int]] = defaultdict(list)
    placed = np.flatnonzero(source >= 0)
    ends = (start + np.array([len(t) for t in texts], dtype=np.int64)).tolist()
    order = placed[np.lexsort((start[placed], source[placed]))].tolist()
    src, begin = source.tolist(), start.tolist()
    for k, a in enumerate(order):
        # sorted by start: stop at the first after a, or after MAX_NEIGHBOURS
        for j in range(k + 1, min(len(order), k + 1 + MAX_NEIGHBOURS)):
            b = order[j]
            if src[b] != src[a] or begin[b] >= ends[a]:
                break
            found[a].append(b)
            found[b].append(a)
    return {i: tuple(sorted(found[i])) for i in sorted(found)}


def edge_placements(texts: Sequence[str], members: Sequence[int]) -> list[tuple[int, int, int]]:
    """(chunk, group, start) for the chunks of ``members`` that share an edge with another.

    Each group is a chain of windows; starts are relative to the group's earliest chunk
    (which starts at 0).

    >>> a = "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10"
    >>> b = "w3 w4 w5 w6 w7 w8 w9 w10 w11 w12"
    >>> edge_placements([a, b], [0, 1])
    [(0, 0, 0), (1, 0, 6)]
    """
    if len(members) < 2:
        return []
    words = {i: texts[i].split() for i in members}  # the runs of non-space: \S+
    lengths = np.array([len(words[i]) for i in members], dtype=np.int64)
    total = int(lengths.sum())
    valid = total - ANCHOR_WORDS + 1
    if valid <= 0:
        return []
    # one int64 per word (Python's string hash; equal words, equal hashes), then a rolling
    # hash of the eight words from each position (wrapping arithmetic; checked on the words)
    flat = np.fromiter(map(hash, chain.from_iterable(words[i] for i in members)), np.int64, total)
    grams = np.zeros(valid, dtype=np.uint64)
    for k in range(ANCHOR_WORDS):
        grams = grams * np.uint64(1_000_003) + flat[k : k + valid].view(np.uint64)
    first = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    index = np.arange(valid)
    chunk_of = np.searchsorted(first, index, "right") - 1
    whole = index + ANCHOR_WORDS <= (first + lengths)[chunk_of]  # the eight words in one chunk
    anchors: dict[int, list[int]] = defaultdict(list)  # hash of a chunk's first words -> chunks
    for k, i in enumerate(members):
        if lengths[k] >= ANCHOR_WORDS:
            anchors[int(grams[first[k]])].append(i)
    starts_of = {h: found for h, found in anchors.items() if len(found) <= MAX_ANCHORED}
    keys = np.fromiter(starts_of, dtype=np.uint64, count=len(starts_of))
    hits = np.flatnonzero(whole & np.isin(grams, keys))
    edges: dict[int, list[tuple[int, int]]] = defaultdict(list)  # a -> [(b, offset of b in a)]
    for hit, k in zip(hits.tolist(), chunk_of[hits].tolist(), strict=True):
        a, p = members[k], hit - int(first[k])
        text = texts[a]
        for b in starts_of[int(grams[hit])]:
            if b == a or words[a][p : p + ANCHOR_WORDS] != words[b][:ANCHOR_WORDS]:
                continue  # itself, or a hash collision
            # b's first eight words as written, found in a from where word p can begin
            lead = texts[b][: _end_of_words(texts[b], ANCHOR_WORDS)]
            at = text.find(lead, sum(map(len, words[a][:p])) + p)
            if at >= 0 and _continues(text, at, texts[b]):
                edges[a].append((b, at))
    return _place(members, edges)


def _end_of_words(text: str, count: int) -> int:
    """The character just after the ``count``-th run of non-space of ``text``."""
    end = 0
    for _, found in zip(range(count), _WORD.finditer(text), strict=False):
        end = found.end()
    return end


def _continues(text: str, at: int, other: str) -> bool:
    """Whether ``other`` begins at character ``at`` of ``text`` (lies inside it from there,
    or starts with the rest of it, trailing white space aside)."""
    if text.startswith(other, at):
        return True
    rest = text[at:].rstrip()
    return len(other) > len(rest) and other.startswith(rest)


def _place(
    members: Sequence[int], edges: dict[int, list[tuple[int, int]]]
) -> list[tuple[int, int, int]]:
    """Chains of edges as groups with consistent starts (breadth first; an edge that would
    place a chunk a second time elsewhere is left out)."""
    linked: dict[int, list[tuple[int, int]]] = defaultdict(list)  # both directions
    for a, found in edges.items():
        for b, offset in found:
            linked[a].append((b, offset))
            linked[b].append((a, -offset))
    placed: dict[int, tuple[int, int]] = {}
    out: list[tuple[int, int, int]] = []
    group = 0
    for root in members:
        if root in placed or root not in linked:
            continue
        placed[root] = (group, 0)
        queue, found_group = [root], [root]
        while queue:
            a = queue.pop()
            for b, offset in linked[a]:
                if b not in placed:
                    placed[b] = (group, placed[a][1] + offset)
                    queue.append(b)
                    found_group.append(b)
        low = min(placed[i][1] for i in found_group)
        out.extend((i, group, placed[i][1] - low) for i in sorted(found_group))
        group += 1
    return out
