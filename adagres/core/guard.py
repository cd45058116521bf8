"""The near-duplicate guard: two chunks that duplicate each other are never selected together.

One setting, :attr:`adagres.Settings.duplicate_guard` = ``(cosine, shared_text)``, either
part None for off (the whole setting None, the default, is off):

- ``cosine``: a chunk whose embedding has cosine ≥ this with a selected chunk duplicates it;
- ``shared_text``: a chunk that shares at least this share of its word 8-grams with a
  selected chunk (of the smaller chunk's 8-grams: containment, :mod:`adagres.core.ngrams`)
  duplicates it. It needs the chunk texts; without them only the cosine applies. It catches
  near-copies the embeddings miss (a long chunk that contains a short one, the same answer
  with a different header).

In the greedy loop the guard is an eligibility filter: when a chunk is picked, every chunk
still competing that duplicates it stops being eligible, for good, and the record keeps which
pick it duplicated (:class:`Duplicate`; the chunk's verdict is ``duplicate``). The cosine is
always the plain cosine of the pool's embeddings, whatever similarity the strategy scores by.
Strategies with their own search (``coverage``, ``exact``) apply it as their docstrings say.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from .ngrams import GramIndex, gram_index
from .prepared import PreparedPool

__all__ = ["Duplicate", "Guard", "guard_for", "without_duplicates"]


class Duplicate(NamedTuple):
    """A chunk the guard made ineligible: at step ``step`` it duplicated the pick ``of``.

    ``cosine`` is the plain cosine of the two chunks; ``shared_text`` the share of word
    8-grams they have in common (None without texts).
    """

    chunk: int
    of: int
    step: int
    cosine: float
    shared_text: float | None


class Guard:
    """The guard's state during one run: which chunks are out and why."""

    def __init__(
        self,
        pool: PreparedPool,
        cosine: float | None,
        shared_text: float | None,
        texts: Sequence[str] | None,
    ) -> None:
        self.pool, self.cosine = pool, cosine
        self.shared_text = shared_text if texts is not None else None
        self.index: GramIndex | None = None
        if self.shared_text is not None and texts is not None:
            self.index = gram_index(tuple(texts))
        self.out = np.zeros(pool.n_chunks, dtype=bool)  # picked, or dropped as a duplicate
        self.dropped: list[Duplicate] = []

    def after_pick(self, winner: int, step: int, competing: np.ndarray | None) -> np.ndarray:
        """The chunks that stop being eligible now that ``winner`` was picked at ``step``.

        ``competing`` marks the chunks still competing (None: every chunk not yet out).
        """
        self.out[winner] = True
        sims = shared = None
        hit = np.zeros(self.pool.n_chunks, dtype=bool)
        if self.cosine is not None:
            sims = self.pool.similarities(winner)
            hit |= sims >= self.cosine
        if self.index is not None and self.shared_text is not None:
            shared = self.index.shared(winner)
            hit |= shared >= self.shared_text
        hit &= ~self.out
        if competing is not None:
            hit &= competing
        gone = np.flatnonzero(hit)
        if len(gone):
            self.out[gone] = True
            if sims is None:
                sims = self.pool.similarities(winner)
            for i in gone.tolist():
                share = None if shared is None else float(shared[i])
                self.dropped.append(Duplicate(i, winner, step, float(sims[i]), share))
        return gone


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
        if guard.out[i]:
            continue
        kept.append(i)
        guard.after_pick(i, len(kept), None)
    return kept, tuple(d for d in guard.dropped if d.chunk in set(picks))
