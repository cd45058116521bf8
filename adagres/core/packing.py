"""Repeated text, paid for once: the context a run builds, pick by pick (SPEC.md, "Repeated text").

With :attr:`adagres.Settings.packing` on, each pick adds to the context only what the
context does not already hold:

1. **Stitched.** Where the pick overlaps a passage of the same source (placed by offsets or
   by shared edges, :mod:`~.overlaps`; chunks of two known, different sources are never
   placed together), the passage grows by the pick's characters outside it. The two texts
   must agree on the characters they share, else nothing is stitched.
2. **Left out.** A sentence of what the pick adds, of at least :data:`REPEAT_MIN_WORDS`
   words, that the context already holds word for word (in any passage) is left out, and
   :data:`OMISSION_MARK` stands in its place. The record names the pick that holds it
   (:class:`Omission`). The rest of the chunk is kept.
3. **Nothing new.** A pick that would add no word is not taken: it is a duplicate of the
   pick that holds its text (:class:`~.guard.Duplicate` with ``inside``).

The budget pays for what is added: tokens(passage after) − tokens(passages it joined),
counted by the pool's tokenizer with :func:`context_tokens` (in pieces cut where the
tokenizers' pre-tokenisation cuts anyway, so no passage is too long to count); a pool whose
counts came without a tokenizer is charged each pick's added characters at its own tokens
per character, rounded up. A pick that is a passage of its own with nothing left out costs
exactly ℓ_i, so a pool without repeated text selects as without packing. Every cost that
decides is exact when it decides (:meth:`Packer.exact`): a pick whose exact cost is over
the tokens left does not fit and the step is decided again, so the passages' tokens sum to
at most the budget (a property test attacks this).

Scores are unchanged (what a pick costs, not what it is worth). A chunk that did not fit
stays out even if a later pick would have made it cheaper (SPEC step 2, one pass).
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Callable, Sequence
from itertools import pairwise
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from .arrays import FloatArray
from .guard import Duplicate
from .overlaps import Spans

__all__ = [
    "OMISSION_MARK",
    "REPEAT_MIN_WORDS",
    "Merge",
    "Omission",
    "Packer",
    "Passage",
    "context_after",
    "context_tokens",
    "packer_for",
    "render",
    "sentences",
    "stitch",
]

#: What stands in the context where a repeated sentence was left out.
OMISSION_MARK = "[…]"

#: A sentence of fewer words is never left out: short lines ("Yes.", "Side effects:") carry
#: their meaning from what is around them. Chosen on the tuning half (SPEC.md).
REPEAT_MIN_WORDS = 6

# A sentence ends at . ! ? (with closing quotes or brackets) before white space, or at a line
# break; what lies between two ends, without its white space, is one sentence.
_SENTENCE = re.compile(r"\S(?:.*?)(?:[.!?]+[\"')\]]*(?=\s)|(?=\n)|$)", re.S)


_ENDED = re.compile(r"[.!?]+[\"')\]]*$")


def sentences(text: str) -> list[tuple[int, int, str | None]]:
    """(start, end, key) of each sentence of ``text``; key is its words joined by one space,
    None (never left out) for a sentence shorter than :data:`REPEAT_MIN_WORDS` words and for
    the piece a chunk ends with when it stops mid-sentence (a window may cut a sentence: a
    later window of the same source completes it).

    >>> [(a, b, k) for a, b, k in sentences("One two three four five six. Short one.\\nEnd")]
    [(0, 28, 'One two three four five six.'), (29, 39, None), (40, 43, None)]
    >>> sentences("One two three four five six seven")[0][2] is None  # cut: not a sentence
    True
    """
    out: list[tuple[int, int, str | None]] = []
    for found in _SENTENCE.finditer(text):
        body = found.group().rstrip()
        words = body.split()
        whole = found.end() < len(text) or _ENDED.search(body) is not None
        key = " ".join(words) if whole and len(words) >= REPEAT_MIN_WORDS else None
        out.append((found.start(), found.start() + len(body), key))
    return out


# Where a passage is cut to count its tokens: before a space that follows a sentence's end
# or before a line break that follows a letter or digit (both are pre-tokenisation
# boundaries of the BPE tokenizers here), and before a space between words once a piece is
# longer than _PIECE characters.
_CUT = re.compile(r"(?<=[.!?])(?= \S)|(?<=\w)(?=\n)")
_WORD_CUT = re.compile(r"(?<=\w)(?= \w)")
_PIECE = 2_000


def pieces(text: str) -> list[str]:
    """``text`` cut where its tokens would be cut anyway (:func:`context_tokens`).

    >>> pieces("One. Two three\\nfour")
    ['One.', ' Two three', '\\nfour']
    """
    cuts = [0]
    for at in [*(found.start() for found in _CUT.finditer(text)), len(text)]:
        while at - cuts[-1] > _PIECE:  # a long piece: cut between words, else hard
            inner = _WORD_CUT.search(text, cuts[-1] + _PIECE // 2, cuts[-1] + _PIECE)
            cuts.append(inner.start() if inner else cuts[-1] + _PIECE)
        if at > cuts[-1]:
            cuts.append(at)
    return [text[a:b] for a, b in pairwise(cuts)]


def context_tokens(
    text: str, count: Callable[[str], int], cache: dict[str, int] | None = None
) -> int:
    """The tokens of ``text`` as the budget counts a passage: the sum of ``count`` over its
    :func:`pieces` (``cache`` keeps each piece's count, so a growing passage is counted in
    the pieces that changed). For the BPE tokenizers the cuts are pre-tokenisation
    boundaries, so the sum is the whole text's count (a property test checks it never is
    less)."""
    cache = {} if cache is None else cache
    total = 0
    for piece in pieces(text):
        found = cache.get(piece)
        if found is None:
            found = cache[piece] = int(count(piece))
        total += found
    return total


class Omission(NamedTuple):
    """A sentence the pick ``chunk`` would have repeated: characters ``start``…``end`` of its
    passage's ``source_text`` were left out (the marker stands there), since the pick
    ``holder`` had already put ``text`` in the context."""

    chunk: int
    holder: int
    start: int
    end: int
    text: str


class Passage(NamedTuple):
    """One stretch of the context: ``chunks`` (pool positions in text order) stitched into
    ``source_text`` (a true slice of their source), sent as ``text`` (the omitted sentences
    replaced by :data:`OMISSION_MARK`). ``tokens`` is what the budget paid, ``separate_tokens``
    what the chunks cost apart (Σ ℓ); ``spans`` each chunk's (start, end) in ``source_text``."""

    chunks: tuple[int, ...]
    text: str
    tokens: int
    separate_tokens: int
    spans: tuple[tuple[int, int], ...] = ()
    source_text: str = ""
    omissions: tuple[Omission, ...] = ()

    @property
    def saved(self) -> int:
        """Tokens that stitching and leaving out repeats saved (0 for one whole chunk)."""
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


def render(
    source_text: str, omissions: Sequence[Omission], lo: int = 0, hi: int | None = None
) -> str:
    """``source_text[lo:hi]`` with each omission inside it replaced by :data:`OMISSION_MARK`.

    >>> render("Keep this. Drop that. Keep.", [Omission(1, 0, 11, 21, "Drop that.")])
    'Keep this. […] Keep.'
    """
    hi = len(source_text) if hi is None else hi
    out, at = [], lo
    for o in sorted(omissions, key=lambda o: o.start):
        if o.start >= at and o.end <= hi:
            out.append(source_text[at : o.start])
            out.append(OMISSION_MARK)
            at = o.end
    out.append(source_text[at:hi])
    return "".join(out)


class _Open(NamedTuple):
    """A passage during a run: its members in text order, where it starts in its source,
    its characters there and what was left out of them."""

    members: tuple[int, ...]
    start: int
    source_text: str
    omissions: tuple[Omission, ...]
    tokens: int  # paid


class _Plan(NamedTuple):
    """What taking a chunk now would do: join the passages ``absorbed`` into ``passage`` and
    cost ``charge``; ``holder``: the pick that holds its text if it would add nothing."""

    absorbed: tuple[int, ...]
    passage: _Open
    charge: int
    holder: int | None


class _Reading:
    """What packing reads from a pool's texts, the same in every run: each chunk's
    :func:`sentences`, each sentence that may be left out -> the chunks holding it, and the
    tokens of each passage piece counted so far (:func:`context_tokens`)."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.sentences = [sentences(text) for text in texts]
        self.holding: dict[str, list[int]] = {}
        for i, found in enumerate(self.sentences):
            for _, _, key in found:
                if key is not None:
                    self.holding.setdefault(key, []).append(i)
        self.piece_tokens: dict[str, int] = {}


# One reading per Spans (a pool's runs share its Spans), dropped with it. A budget or λ sweep
# runs the selector dozens of times on one pool; each used to split every text again.
_READINGS: weakref.WeakKeyDictionary[Spans, _Reading] = weakref.WeakKeyDictionary()

#: Pieces whose counts one reading keeps before it starts again (bounds its memory).
_MAX_PIECES = 50_000


def _read(spans: Spans) -> _Reading:
    found = _READINGS.get(spans)
    if found is None:
        found = _READINGS[spans] = _Reading(spans.texts)
    elif len(found.piece_tokens) > _MAX_PIECES:
        found.piece_tokens = {}
    return found


class Packer:
    """The passages of one run, and what each chunk still in play would cost now.

    ``cost[i]`` is what chunk i cost when it was last counted; a pick marks ``dirty`` the
    chunks whose cost it may change (those next to its passage in their source, and those
    holding a sentence it put in the context), and :meth:`exact` counts a dirty chunk again.
    Each sentence enters the context once, so marking costs time linear in the pool's
    sentences; counting a chunk reads its sentences and at most the passages next to it.
    """

    def __init__(
        self,
        spans: Spans,
        tokens: NDArray[np.int64],
        similarities: Callable[[int], FloatArray],
    ) -> None:
        self.texts, self.count = spans.texts, spans.count_tokens
        layout = spans.layout
        self.source, self.start, self.neighbours = layout.source, layout.start, layout.neighbours
        self.tokens, self.similarities = tokens, similarities
        self.cost = tokens.astype(np.int64, copy=True)  # alone in an empty context: ℓ
        self.dirty = np.zeros(len(tokens), dtype=bool)
        self.read = _read(spans)  # the pool's sentences and counted pieces, kept across runs
        self.held: dict[str, int] = {}  # a sentence the context holds -> the pick holding it
        self.passages: dict[int, _Open] = {}
        self.first_step: dict[int, int] = {}  # passage id -> the step of its first pick
        self.passage_of: dict[int, int] = {}  # pick -> passage id
        self.plans: dict[int, _Plan] = {}  # chunk -> what taking it would do, while clean
        self.merges: list[Merge] = []
        self.contained: list[Duplicate] = []
        self.changes: list[tuple[int, int, int]] = []  # (record index from which, chunk, cost)
        self.next_id = 0
        self.agreeing: dict[int, tuple[int, ...]] = {}

    # -- what a chunk would cost -------------------------------------------------------

    def exact(self, chunk: int) -> int:
        """What ``chunk`` costs now (a change is in effect from the step being decided)."""
        plan = self.plan(chunk)
        if plan.charge != self.cost[chunk]:
            self.cost[chunk] = plan.charge
            self.changes.append((len(self.passage_of), chunk, plan.charge))
        return plan.charge

    def plan(self, chunk: int) -> _Plan:
        """What taking ``chunk`` now would do (counted again only once it is dirty)."""
        found = self.plans.get(chunk)
        if found is not None and not self.dirty[chunk]:
            return found
        made = self.make_plan(chunk)
        self.plans[chunk] = made
        self.dirty[chunk] = False
        return made

    def sentences_of(self, chunk: int) -> list[tuple[int, int, str | None]]:
        return self.read.sentences[chunk]

    def make_plan(self, chunk: int) -> _Plan:
        text, ell = self.texts[chunk], int(self.tokens[chunk])
        start = int(self.start[chunk])
        absorbed = self.overlapping(chunk)
        parts = [self.passages[p] for p in absorbed]  # none: a passage of its own
        begin = min([start, *(p.start for p in parts)])
        pieces_ = sorted([(p.start, p.source_text) for p in parts] + [(start, text)])
        union = pieces_[0][1]
        for at, piece in pieces_[1:]:
            stitched = stitch(begin, union, at, piece)
            assert stitched is not None  # overlapping() keeps only agreeing passages
            union = stitched
        covered = [(p.start - begin, p.start - begin + len(p.source_text)) for p in parts]
        omissions = [
            o._replace(start=o.start + p.start - begin, end=o.end + p.start - begin)
            for p in parts
            for o in p.omissions
        ]
        joined = {*(m for p in parts for m in p.members), chunk}
        members = tuple(sorted(joined, key=lambda m: (int(self.start[m]), m)))
        paid = sum(p.tokens for p in parts)
        offset = start - begin
        gaps = _gaps(offset, offset + len(text), covered)  # what the chunk adds, in union
        new: list[Omission] = []
        for a, b, key in self.sentences_of(chunk):
            holder = None if key is None else self.held.get(key)
            if holder is None:  # (most sentences: no lookup of the gaps)
                continue
            a, b = a + offset, b + offset
            if any(x <= a and b <= y for x, y in gaps):  # whole in what the chunk adds
                new.append(Omission(chunk=chunk, holder=holder, start=a, end=b, text=union[a:b]))
        # A stitch can show that what a window took for a sentence was the tail of a longer
        # one (it began mid-sentence): such an omission is put back, or it would cut the
        # longer sentence, which another pick may hold for a sentence left out elsewhere.
        omissions = [o for o in omissions if _whole_sentence(union, o.start, o.end)]
        new = [o for o in new if _whole_sentence(union, o.start, o.end)]
        omitted = sum(o.end - o.start for o in new)
        added_words = sum(len(union[x:y].split()) for x, y in gaps)
        kept_words = added_words - sum(len(o.text.split()) for o in new)
        if kept_words <= 0 and len(absorbed) < 2:  # (joining two passages is something new)
            holder = self.holder(chunk, absorbed, new)
            return _Plan(
                absorbed, _Open(members, begin, union, (*omissions, *new), paid), 0, holder
            )
        if not absorbed and not new:
            charge = ell
        elif self.count is not None:  # the passage as it would be sent, counted
            passage_text = render(union, [*omissions, *new])
            charge = max(0, context_tokens(passage_text, self.count, self.read.piece_tokens) - paid)
        else:  # the chunk's own tokens per character, over the characters it adds
            added = sum(y - x for x, y in gaps) - omitted + len(OMISSION_MARK) * len(new)
            charge = math.ceil(added * ell / len(text)) if text else 0
        passage = _Open(members, begin, union, (*omissions, *new), paid + charge)
        return _Plan(absorbed, passage, charge, None)

    def overlapping(self, chunk: int) -> tuple[int, ...]:
        """The passages ``chunk`` overlaps in its source and agrees with (a passage that
        disagrees with it is left apart, and so are passages that disagree among themselves:
        the first one is kept)."""
        if self.source[chunk] < 0:
            return ()
        start, text = int(self.start[chunk]), self.texts[chunk]
        ids = sorted(
            {self.passage_of[m] for m in self.neighbours.get(chunk, ()) if m in self.passage_of}
        )
        agree = [p for p in ids if self.join(self.passages[p], start, text) is not None]
        if len(agree) > 1:
            begin, union = start, text
            for p in agree:
                joined = self.passages[p]
                lo, hi = sorted([(begin, union), (joined.start, joined.source_text)])
                stitched = stitch(lo[0], lo[1], hi[0], hi[1])
                if stitched is None:
                    return tuple(agree[:1])
                begin, union = lo[0], stitched
        return tuple(agree)

    def stitches(self, chunk: int) -> tuple[int, ...]:
        """The chunks that overlap ``chunk`` in its source and agree with its text there."""
        found = self.agreeing.get(chunk)
        if found is None:
            start, text = int(self.start[chunk]), self.texts[chunk]
            found = tuple(
                j
                for j in self.neighbours.get(chunk, ())
                if self.join(_Open((j,), int(self.start[j]), self.texts[j], (), 0), start, text)
                is not None
            )
            self.agreeing[chunk] = found
        return found

    def join(self, passage: _Open, start: int, text: str) -> str | None:
        if start >= passage.start:
            return stitch(passage.start, passage.source_text, start, text)
        return stitch(start, text, passage.start, passage.source_text)

    def holder(self, chunk: int, absorbed: tuple[int, ...], new: list[Omission]) -> int:
        """The pick whose text holds most of ``chunk``'s: the pick of its passage whose range
        covers most of it, else the pick holding its first omitted sentence."""
        lo, hi = int(self.start[chunk]), int(self.start[chunk]) + len(self.texts[chunk].rstrip())
        best, most = None, -1
        for p in absorbed:
            for m in self.passages[p].members:
                s = int(self.start[m])
                cover = min(hi, s + len(self.texts[m])) - max(lo, s)
                if cover > most:
                    best, most = m, cover
        if best is not None:
            return best
        return new[0].holder if new else chunk

    # -- taking a pick --------------------------------------------------------------------

    def take(self, chunk: int, step: int) -> None:
        """Add the pick ``chunk`` (step ``step``) to the context as :meth:`plan` says."""
        plan = self.plan(chunk)
        pid, self.next_id = self.next_id, self.next_id + 1
        if plan.absorbed:
            joined = tuple(m for p in plan.absorbed for m in self.passages[p].members)
            self.first_step[pid] = min(self.first_step.pop(p) for p in plan.absorbed)
            for p in plan.absorbed:
                del self.passages[p]
            ell = int(self.tokens[chunk])
            self.merges.append(
                Merge(
                    step=step,
                    chunk=chunk,
                    joined=tuple(sorted(joined)),
                    tokens=plan.charge,
                    saved=ell - plan.charge,
                )
            )
        else:
            self.first_step[pid] = step
        self.passages[pid] = plan.passage
        for member in plan.passage.members:
            self.passage_of[member] = pid
        omitted = {(o.start, o.end) for o in plan.passage.omissions if o.chunk == chunk}
        offset = int(self.start[chunk]) - plan.passage.start
        changed = {j for m in plan.passage.members for j in self.neighbours.get(m, ())}
        holding = self.read.holding
        for a, b, key in self.sentences_of(chunk):
            if key is not None and (a + offset, b + offset) not in omitted and key not in self.held:
                self.held[key] = chunk
                changed.update(holding.get(key, ()))
        if changed:
            self.dirty[list(changed)] = True
        self.plans.pop(chunk, None)

    def drop_duplicate(self, chunk: int, step: int) -> None:
        """Record ``chunk``, which would add no word, as a duplicate of the pick holding it."""
        holder = self.plan(chunk).holder
        assert holder is not None
        cosine = float(self.similarities(holder)[chunk])
        self.contained.append(
            Duplicate(
                chunk=chunk, of=holder, step=step, cosine=cosine, shared_text=1.0, inside=True
            )
        )

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
                spans.append((at, min(len(o.source_text), at + len(self.texts[m]))))
            omissions = tuple(sorted(o.omissions, key=lambda x: x.start))
            passages.append(
                Passage(
                    chunks=o.members,
                    text=render(o.source_text, omissions),
                    tokens=o.tokens,
                    separate_tokens=apart,
                    spans=tuple(spans),
                    source_text=o.source_text,
                    omissions=omissions,
                )
            )
        return tuple(passages), tuple(self.merges)


def _whole_sentence(text: str, a: int, b: int) -> bool:
    """Whether ``text[a:b]`` stands in ``text`` as a sentence of its own: it starts the text
    or follows white space after a sentence's end (or a line break), and it ends the text or
    white space follows it (:func:`sentences`' boundaries).

    >>> _whole_sentence("Take it daily. Keep it dry.", 15, 27)
    True
    >>> _whole_sentence("Never take it daily. Keep it dry.", 6, 20)  # the tail of a sentence
    False
    """
    before = text[:a]
    space = len(before) - len(before.rstrip())
    if a and not space:
        return False
    opens = a == 0 or "\n" in before[a - space :] or _ENDED.search(before.rstrip()) is not None
    return opens and (b == len(text) or text[b].isspace())


def _gaps(lo: int, hi: int, covered: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of [lo, hi) outside every range of ``covered``."""
    out, at = [], lo
    for a, b in sorted(covered):
        if a > at:
            out.append((at, min(a, hi)))
        at = max(at, b)
        if at >= hi:
            break
    if at < hi:
        out.append((at, hi))
    return [(a, b) for a, b in out if b > a]


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
    they cover (joined picks overlap, so the stretch has no gap), with the sentences those
    picks left out marked.
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
    taken = set(so_far)
    out = []
    for members in order.values():
        passage = where[members[0]][0]
        spans = [passage.spans[where[m][1]] for m in members]
        lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
        source_text = passage.source_text or passage.text
        marked = [o for o in passage.omissions if o.chunk in taken]
        text = render(source_text, marked, lo, hi)
        in_text_order = tuple(sorted(members, key=lambda m: where[m][1]))
        out.append((in_text_order, text, sum(paid[m] for m in members)))
    return out


def packer_for(
    spans: Spans | None,
    on: bool,
    tokens: NDArray[np.int64],
    similarities: Callable[[int], FloatArray],
) -> Packer | None:
    """The packer of one run, or None when packing is off (or the pool has no texts)."""
    if not on or spans is None:
        return None
    return Packer(spans, tokens, similarities)
