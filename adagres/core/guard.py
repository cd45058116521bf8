"""The near-duplicate guard: two chunks that duplicate each other are never selected together.

One setting, :attr:`adagres.Settings.duplicate_guard` = ``(cosine, shared_text)``, either
part None for off (the whole setting None, the default, is off):

- ``cosine``: a chunk whose embedding has cosine ≥ this with a selected chunk duplicates it;
- ``shared_text``: a chunk that shares at least this share of its word 8-grams with a
  selected chunk (of the smaller chunk's 8-grams: containment, :mod:`adagres.core.ngrams`)
  duplicates it. It needs the chunk texts; without them only the cosine applies. It catches
  near-copies the embeddings miss (a long chunk that contains a short one, the same answer
  with a different header).

With overlap-aware packing on (:mod:`adagres.core.packing`), two chunks that overlap in
their source are never each other's duplicates: packing stitches them into one passage and
charges only the words the second adds, so the context holds no word of theirs twice (two
windows overlapping by half are at cosine 0.9 or more and still half new text). A chunk
whose text lies whole inside a passage adds nothing and is dropped by packing itself.

In the greedy loop the guard is an eligibility filter: once a chunk is picked, a chunk that
duplicates it is never eligible again, and the record keeps which pick it duplicated
(:class:`Duplicate`; the chunk's verdict is ``duplicate``). The cosine is
always the plain cosine of the pool's embeddings, whatever similarity the strategy scores by.
Strategies with their own search (``coverage``, ``exact``) apply it as their docstrings say.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from itertools import chain
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from .ngrams import containment, gram_set
from .prepared import PreparedPool

__all__ = ["NEAR_DUPLICATE_GUARD", "Duplicate", "Guard", "guard_for", "without_duplicates"]

#: The near-duplicate guard a user may add (a preset's choice, not a default): never two chunks at
#: cosine ≥ 0.9 (the metrics' near-duplicate line), nor two that share ≥ 80 % of the smaller
#: one's word 8-grams. It drops whole chunks, and with them any fact only they hold.
NEAR_DUPLICATE_GUARD = (0.9, 0.8)


class Duplicate(NamedTuple):
    """A chunk the guard made ineligible: at step ``step`` it duplicated the pick ``of``.

    ``cosine`` is the plain cosine of the two chunks; ``shared_text`` the share of word
    8-grams they have in common (None without texts). ``inside``: not the guard but
    overlap-aware packing dropped it, its text lying inside the passage of ``of``.
    """

    chunk: int
    of: int
    step: int
    cosine: float
    shared_text: float | None
    inside: bool = False


class Guard:
    """The guard's state during one run: which chunks are out and why.

    The cosine part is applied when a chunk is picked, to every chunk still competing (one
    product with the pick's cosine row, which the loop often has already). The shared-text
    part is checked when a chunk is about to win (:meth:`rejects`), against every pick made
    so far: a chunk that never reaches the top needs no text comparison, so a run compares
    the texts of about k chunks, not the whole pool's. Both make the same selection as
    dropping every duplicate at its pick would; a text duplicate that never came near the
    top keeps the verdict it would have had anyway (outscored, did not fit).
    """

    def __init__(
        self,
        pool: PreparedPool,
        cosine: float | None,
        shared_text: float | None,
        texts: Sequence[str] | None,
    ) -> None:
        self.pool, self.cosine, self.texts = pool, cosine, texts
        self.shared_text = shared_text if texts is not None else None
        self.out = np.zeros(pool.n_chunks, dtype=bool)  # picked, or dropped as a duplicate
        self.dropped: list[Duplicate] = []
        self.picks: list[tuple[int, int]] = []  # (chunk, step)
        self.owners: dict[tuple[str, ...], Sequence[int]] = {}  # n-gram -> picks holding it
        self.indexed = 0  # picks already in ``owners``
        #: chunk -> the chunks packing stitches it with (never duplicates: see the module)
        self.stitched: Callable[[int], tuple[int, ...]] = lambda chunk: ()
        self.step_of: dict[int, int] = {}  # pick -> its step

    def gram_set(self, chunk: int) -> frozenset[tuple[str, ...]]:
        assert self.texts is not None
        return gram_set(self.texts[chunk])  # kept by text (ngrams.gram_set)

    def shared(self, a: int, b: int) -> float | None:
        """The share of word 8-grams chunks a and b have in common (None without texts)."""
        return None if self.texts is None else containment(self.gram_set(a), self.gram_set(b))

    def after_pick(
        self, winner: int, step: int, competing: NDArray[np.bool_] | None
    ) -> NDArray[np.intp]:
        """The chunks at cosine ≥ the guard's with ``winner``, picked at ``step``: they stop
        being eligible now. ``competing`` marks the chunks still competing (None: every chunk
        not yet out)."""
        self.out[winner] = True
        self.picks.append((winner, step))
        self.step_of[winner] = step
        if self.cosine is None:
            return np.zeros(0, dtype=np.intp)
        sims = self.pool.similarities(winner)
        hit = (sims >= self.cosine) & ~self.out
        if competing is not None:
            hit &= competing
        spared = self.stitched(winner)
        if spared:  # packing stitches these (no index at all without packing: 1.4 µs a pick)
            hit[list(spared)] = False
        gone = np.flatnonzero(hit)
        if len(gone):
            self.out[gone] = True
            for i in gone.tolist():
                self.dropped.append(
                    Duplicate(
                        chunk=i,
                        of=winner,
                        step=step,
                        cosine=float(sims[i]),
                        shared_text=self.shared(i, winner),
                    )
                )
        return gone

    def rejects(self, chunk: int) -> bool:
        """Whether ``chunk``, about to win, shares at least the guard's share of its text with
        a pick (then it is recorded as the first such pick's duplicate and is out for good).

        The picks' n-grams are kept in one map from n-gram to the picks that hold it, so a
        check costs O(n-grams of the chunk), not one set intersection per pick.
        """
        if self.shared_text is None or not self.picks:
            return False
        grams = self.gram_set(chunk)
        self.index_picks()
        held = [picks for picks in map(self.owners.get, grams) if picks is not None]
        common = Counter(chain.from_iterable(held))  # pick -> n-grams in common
        spared = self.stitched(chunk)
        for pick in sorted(common, key=self.step_of.__getitem__):  # the picks it shares with
            step = self.step_of[pick]
            if pick in spared:
                continue
            share = common[pick] / min(len(grams), len(self.gram_set(pick)))
            if share >= self.shared_text:
                self.out[chunk] = True
                cosine = float(self.pool.similarities(pick)[chunk])
                self.dropped.append(
                    Duplicate(chunk=chunk, of=pick, step=step, cosine=cosine, shared_text=share)
                )
                return True
        return False

    def index_picks(self) -> None:
        """Add the picks made since the last check to the map from n-gram to picks."""
        owners = self.owners
        for pick, _ in self.picks[self.indexed :]:
            grams = self.gram_set(pick)
            earlier = {gram: owners[gram] for gram in grams if gram in owners}  # (few)
            owners.update(dict.fromkeys(grams, (pick,)))
            for gram, picks in earlier.items():
                owners[gram] = (*picks, pick)
        self.indexed = len(self.picks)


def guard_for(
    pool: PreparedPool,
    setting: tuple[float | None, float | None] | None,
    texts: Sequence[str] | None,
) -> Guard | None:
    """The guard of one run, or None when the setting turns it off."""
    if setting is None:
        return None
    cosine, shared_text = setting
    if cosine is None and (shared_text is None or texts is None):
        return None
    return Guard(pool, cosine, shared_text, texts)


def without_duplicates(
    pool: PreparedPool,
    picks: Sequence[int],
    setting: tuple[float | None, float | None] | None,
    texts: Sequence[str] | None,
) -> tuple[list[int], tuple[Duplicate, ...]]:
    """``picks`` (in pick order) less every pick that duplicates an earlier kept one.

    The guard of strategies that do not run the greedy loop (the exact solver's set): their
    search is not changed, a later duplicate is removed from its result and nothing is added
    in its place.
    """
    guard = guard_for(pool, setting, texts)
    if guard is None:
        return list(picks), ()
    kept: list[int] = []
    for i in picks:
        if guard.out[i] or guard.rejects(i):
            continue
        kept.append(i)
        guard.after_pick(i, len(kept), None)
    chosen = set(picks)
    return kept, tuple(d for d in guard.dropped if d.chunk in chosen)
