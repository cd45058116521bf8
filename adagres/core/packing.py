"""Overlap-aware packing: chunks that overlap in their source are paid for once.

With :attr:`adagres.Settings.packing` on, the greedy loop charges a pick only for the
tokens it adds to the context. The context is a list of passages: a pick that overlaps no
earlier pick is a passage of its own and costs its token count ℓ_i; a pick that overlaps
picks already made (same source, intersecting character ranges, :mod:`~.overlaps`) is
stitched with them into one passage, the union of their texts, and costs

    tokens(stitched passage) − Σ tokens(the passages it joined)

where tokens() is the pool's tokenizer (``Spans.count_tokens``); without one, a stitched
passage is charged its share of characters at the joined chunks' own tokens per character,
rounded up. A charge is never negative and never above ℓ_i (then the chunk stays a
passage of its own). A chunk whose text lies whole inside a passage adds nothing: it stops
being eligible and is recorded as a duplicate of the pick whose text holds it
(shared text 1.0; verdict ``duplicate``).

Scores are unchanged (packing changes what a pick costs, not what it is worth), so a run
without overlapping picks is the run without packing, bit for bit. Costs only fall as
passages grow; a chunk dropped because it did not fit stays dropped even if a later merge
would have made it cheaper (the rule of SPEC step 2, kept so that the loop's record stays
one pass). Two texts that disagree on the characters their offsets say they share do not
merge.

The record keeps each merge (:class:`Merge`) and the final passages (:class:`Passage`):
``Selection.passages`` is the context as the budget paid for it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from .guard import Duplicate
from .overlaps import Spans

__all__ = ["Merge", "Packer", "Passage", "context_after", "packer_for", "stitch"]


class Passage(NamedTuple):
    """One stretch of the context: ``chunks`` (pool positions in text order) stitched into
    ``text``; ``tokens`` is what the budget paid, ``separate_tokens`` what the chunks cost
    apart (Σ ℓ); ``spans`` each chunk's (start, end) characters in ``text``."""

    chunks: tuple[int, ...]
    text: str
    tokens: int
    separate_tokens: int
    spans: tuple[tuple[int, int], ...] = ()

    @property
    def saved(self) -> int:
        """Tokens merging saved (0 for a passage of one chunk)."""
        return self.separate_tokens - self.tokens


class Merge(NamedTuple):
    """At step ``step`` the pick ``chunk`` joined the picks ``joined`` in one passage and was
    charged ``tokens`` of its ℓ (``saved`` = ℓ − tokens)."""

    step: int
    chunk: int
    joined: tuple[int, ...]
    tokens: int
    saved: int


def stitch(a_start: int, a_text: str, b_start: int, b_text: str) -> str | None:
    """The union of two texts placed at ``a_start`` ≤ ``b_start`` of one source, or None
    where they do not overlap or disagree on the characters they share (white space at the
    end of either aside).

    >>> stitch(0, "one two three", 8, "three four")
    'one two three four'
    >>> stitch(0, "one two three", 4, "two")
    'one two three'
    >>> stitch(0, "one two three", 8, "thirty") is None
    True
    """
    rel = b_start - a_start
    inner = b_text.rstrip()
    if not inner or rel >= len(a_text.rstrip()):
        return None
    if a_text.startswith(inner, rel):
        return a_text
    head = a_text[rel:].rstrip()
    if head and b_text.startswith(head):
        return a_text[:rel] + b_text
    return None


class _Open(NamedTuple):
    """A passage during a run."""

    members: tuple[int, ...]  # in text order
    start: int
    text: str
    tokens: int


class _Plan(NamedTuple):
    """What taking a chunk now would do: join ``absorbed`` passages into ``passage``."""

    absorbed: tuple[int, ...]  # passage ids
    passage: _Open
    charge: int
    inside: int | None  # the pick whose text holds the chunk, if it adds nothing


class Packer:
    """The passages of one run and what each chunk still in play would cost now."""

    def __init__(
        self, spans: Spans, tokens: np.ndarray, similarities: Callable[[int], np.ndarray]
    ) -> None:
        self.texts, self.count = spans.texts, spans.count_tokens
        layout = spans.layout
        self.start, self.neighbours = layout.start, layout.neighbours
        self.tokens, self.similarities = tokens, similarities
        self.cost = tokens.astype(np.int64, copy=True)  # what a pick would be charged now
        self.passages: dict[int, _Open] = {}
        self.first_step: dict[int, int] = {}  # passage id -> the step of its first pick
        self.passage_of: dict[int, int] = {}  # pick -> passage id
        self.plans: dict[int, _Plan] = {}
        self.merges: list[Merge] = []
        self.contained: list[Duplicate] = []
        self.changes: list[tuple[int, int, int]] = []  # (record index from which, chunk, cost)
        self.stale = np.zeros(len(tokens), dtype=bool)  # cost only an upper bound till counted
        self.next_id = 0

    def take(self, chunk: int, step: int, competing: np.ndarray) -> np.ndarray:
        """Add the pick ``chunk`` (step ``step``) to the passages and re-cost the chunks
        next to its passage; return the chunks now inside it (they stop being eligible).
        ``competing`` marks the chunks still competing."""
        plan = self.plans.pop(chunk, None)
        pid, self.next_id = self.next_id, self.next_id + 1
        if plan is None:
            passage = _Open((chunk,), int(self.start[chunk]), self.texts[chunk],
                            int(self.tokens[chunk]))  # fmt: skip
            self.first_step[pid] = step
        else:
            passage = plan.passage
            joined = tuple(m for p in plan.absorbed for m in self.passages[p].members)
            self.first_step[pid] = min(self.first_step.pop(p) for p in plan.absorbed)
            for p in plan.absorbed:
                del self.passages[p]
            ell = int(self.tokens[chunk])
            self.merges.append(Merge(step, chunk, tuple(sorted(joined)), plan.charge,
                                     ell - plan.charge))  # fmt: skip
        self.passages[pid] = passage
        for member in passage.members:
            self.passage_of[member] = pid
        return self.recost(passage, step, competing)

    def recost(self, passage: _Open, step: int, competing: np.ndarray) -> np.ndarray:
        """The chunks next to ``passage`` still competing: those inside it are out (returned);
        the others' costs become upper bounds, counted again only when a decision needs
        them (:meth:`exact`): most never come near the budget's edge or the top."""
        near = {j for m in passage.members for j in self.neighbours.get(m, ())}
        gone = []
        for j in sorted(near - self.passage_of.keys()):
            if not competing[j]:
                continue
            holder = self.inside(j)
            if holder is not None:
                gone.append(j)
                cosine = float(self.similarities(holder)[j])
                self.contained.append(Duplicate(j, holder, step, cosine, 1.0, inside=True))
            else:
                self.stale[j] = True
                self.plans.pop(j, None)
        return np.array(gone, dtype=np.intp)

    def inside(self, chunk: int) -> int | None:
        """The pick whose passage holds ``chunk``'s whole text (None if none does)."""
        start, text = int(self.start[chunk]), self.texts[chunk]
        for p in {self.passage_of[m] for m in self.neighbours[chunk] if m in self.passage_of}:
            passage = self.passages[p]
            if start >= passage.start and self.join(passage, start, text) == passage.text:
                return self.holder(passage, chunk)
        return None

    def exact(self, chunk: int) -> int:
        """What ``chunk`` costs now, counted if its cost was only a bound (a change takes
        effect from the step being decided: the number of picks so far)."""
        if self.stale[chunk]:
            self.stale[chunk] = False
            plan = self.plan(chunk)
            cost = int(self.tokens[chunk]) if plan is None else plan.charge
            if plan is not None:
                self.plans[chunk] = plan
            if cost != self.cost[chunk]:
                self.cost[chunk] = cost
                self.changes.append((len(self.passage_of), chunk, cost))
        return int(self.cost[chunk])

    def plan(self, chunk: int) -> _Plan | None:
        """What taking ``chunk`` now would do (None: it would be a passage of its own)."""
        start, text = int(self.start[chunk]), self.texts[chunk]
        ids = sorted({self.passage_of[m] for m in self.neighbours[chunk] if m in self.passage_of})
        fits = [p for p in ids if self.join(self.passages[p], start, text) is not None]
        if not fits:
            return None
        if len(fits) == 1:
            joined = self.passages[fits[0]]
            merged = self.join(joined, start, text)
            assert merged is not None
            if merged == joined.text and start >= joined.start:
                return _Plan((fits[0],), joined, 0, self.holder(joined, chunk))
        pieces = sorted([(self.passages[p].start, self.passages[p].text) for p in fits]
                        + [(start, text)])  # fmt: skip
        begin, union = pieces[0]
        for at, piece in pieces[1:]:
            stitched = stitch(begin, union, at, piece)
            if stitched is None:  # passages that disagree among themselves: join the first
                return self.plan_with(fits[:1], chunk)
            union = stitched
        return self.plan_with(fits, chunk, begin, union)

    def plan_with(
        self, fits: list[int], chunk: int, begin: int | None = None, union: str | None = None
    ) -> _Plan | None:
        if union is None or begin is None:
            joined = self.passages[fits[0]]
            start, text = int(self.start[chunk]), self.texts[chunk]
            union = self.join(joined, start, text)
            begin = min(joined.start, start)
            assert union is not None
        parts = [self.passages[p] for p in fits]
        members = tuple(sorted({*(m for p in parts for m in p.members), chunk},
                               key=lambda m: (int(self.start[m]), m)))  # fmt: skip
        paid = sum(p.tokens for p in parts)
        ell = int(self.tokens[chunk])
        charge = max(0, self.tokens_of(union, members) - paid)
        if charge >= ell:
            return None
        return _Plan(tuple(fits), _Open(members, begin, union, paid + charge), charge, None)

    def join(self, passage: _Open, start: int, text: str) -> str | None:
        if start >= passage.start:
            return stitch(passage.start, passage.text, start, text)
        return stitch(start, text, passage.start, passage.text)

    def holder(self, passage: _Open, chunk: int) -> int:
        """The pick of ``passage`` whose own text holds ``chunk`` (else its first pick)."""
        lo, hi = int(self.start[chunk]), int(self.start[chunk]) + len(self.texts[chunk].rstrip())
        for m in passage.members:
            if self.start[m] <= lo and self.start[m] + len(self.texts[m]) >= hi:
                return m
        return passage.members[0]

    def tokens_of(self, text: str, members: tuple[int, ...]) -> int:
        if self.count is not None:
            return int(self.count(text))
        chars = sum(len(self.texts[m]) for m in members)
        ell = sum(int(self.tokens[m]) for m in members)
        return math.ceil(len(text) * ell / chars) if chars else 0

    def result(self) -> tuple[tuple[Passage, ...], tuple[Merge, ...]]:
        """The passages in the order of their first pick, and the merges."""
        order = sorted(self.passages, key=lambda p: self.first_step[p])
        passages = []
        for p in order:
            o = self.passages[p]
            apart = int(sum(int(self.tokens[m]) for m in o.members))
            spans = []
            for m in o.members:
                at = int(self.start[m]) - o.start
                spans.append((at, min(len(o.text), at + len(self.texts[m]))))
            passages.append(Passage(o.members, o.text, o.tokens, apart, tuple(spans)))
        return tuple(passages), tuple(self.merges)


def context_after(
    picks: tuple[int, ...],
    charged: list[int],
    passages: tuple[Passage, ...],
    merges: tuple[Merge, ...],
    step: int,
    texts: Sequence[str],
) -> list[tuple[tuple[int, ...], str, int]]:
    """The context after the first ``step`` picks: (chunks, text, tokens paid) per passage,
    in the order of each passage's first pick. ``charged`` is what each pick was charged.

    Without passages every pick is its own. With them, the picks so far that merges had
    joined by then form one passage each, whose text is the stretch of the final passage
    they cover (joined picks overlap, so the stretch has no gap).
    """
    so_far = picks[:step]
    if not passages:
        return [((i,), texts[i], charged[n]) for n, i in enumerate(so_far)]
    group = {i: i for i in so_far}  # union of the picks joined by step ``step``

    def root(i: int) -> int:
        while group[i] != i:
            i = group[i]
        return i

    for merge in merges:
        if merge.step <= step:
            for j in merge.joined:
                group[root(j)] = root(merge.chunk)
    where = {m: (p, k) for p in passages for k, m in enumerate(p.chunks)}
    order: dict[int, list[int]] = {}
    for i in so_far:
        order.setdefault(root(i), []).append(i)
    paid = dict(zip(so_far, charged, strict=False))
    out = []
    for members in order.values():
        passage = where[members[0]][0]
        spans = [passage.spans[where[m][1]] for m in members]
        text = passage.text[min(a for a, _ in spans) : max(b for _, b in spans)]
        in_text_order = tuple(sorted(members, key=lambda m: where[m][1]))
        out.append((in_text_order, text, sum(paid[m] for m in members)))
    return out


def packer_for(
    spans: Spans | None, on: bool, tokens: np.ndarray, similarities: Callable[[int], np.ndarray]
) -> Packer | None:
    """The packer of one run, or None when packing is off or no two chunks overlap (then the
    run is the unpacked run)."""
    if not on or spans is None or not spans.any_overlap:
        return None
    return Packer(spans, tokens, similarities)
