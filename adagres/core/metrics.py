"""Metrics of a selection (SPEC.md, "Metrics of a selection").

Works on any :class:`~adagres.core.selection.Selection`, whichever strategy made it.
"""

from __future__ import annotations

import re
import string
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass
from numbers import Integral, Real

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InputError
from . import validate as v
from .arrays import FloatArray
from .ngrams import repeated_share
from .packing import sentences
from .prepared import PreparedPool, unit_chunks
from .result import Selection

__all__ = [
    "NEAR_DUPLICATE",
    "Metrics",
    "answer_found",
    "evaluate",
    "iou",
    "near_duplicate_groups",
    "near_duplicate_pairs",
    "normalize_answer",
]

#: Cosine at or above which two chunks count as near-duplicates.
NEAR_DUPLICATE = 0.9


@dataclass(frozen=True)
class Metrics:
    """The numbers that describe one selection. Gold-based fields are None without gold."""

    strategy: str
    size: int
    tokens_used: int
    budget: int
    budget_use: float
    objective: float
    relevance_sum: float
    relevance_mean: float
    redundancy_mean: float
    redundancy_max: float
    near_duplicates: int
    iou: float | None
    recall: float | None
    precision: float | None
    answer_found: bool | None
    repeated_text: float | None = None

    def as_dict(self) -> dict[str, str | float | bool | None]:
        """The metrics as a plain dict (for tables and JSON)."""
        return asdict(self)


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower case, strip punctuation and the articles a/an/the, collapse white space.

    >>> normalize_answer("The  Maximum: 1,200 mg!")
    'maximum 1200 mg'
    """
    text = text.lower().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def answer_found(answers: Iterable[str], text: str) -> bool:
    """Whether any answer string occurs in ``text`` after :func:`normalize_answer`.

    The match is on whole words: "12" does not match inside "120". An answer of several
    sentences is also found when each of its sentences stands somewhere in ``text``: a
    packed context leaves out a sentence it already holds, so an answer may be split there.

    >>> answer_found(["1,200 mg"], "Never take more than 1200 mg a day.")
    True
    >>> answer_found(["Take 400 mg. Stop at 1200 mg."], "Stop at 1200 mg. [...] Take 400 mg.")
    True
    """
    haystack = f" {normalize_answer(text)} "
    for answer in answers:
        needle = normalize_answer(answer)
        if needle and f" {needle} " in haystack:
            return True
        parts = [normalize_answer(answer[a:b]) for a, b, _ in sentences(answer)]
        if len(parts) > 1 and all(not p or f" {p} " in haystack for p in parts):
            return True
    return False


def iou(selected: Iterable[Hashable], gold: Iterable[Hashable]) -> float:
    """|S ∩ G| / |S ∪ G| (the paper's metric); 1.0 when both are empty.

    >>> iou([1, 2, 3], [2, 3, 4])
    0.5
    """
    s, g = set(selected), set(gold)
    union = s | g
    return len(s & g) / len(union) if union else 1.0


def near_duplicate_pairs(
    unit_chunks: FloatArray,
    indices: Sequence[int] | None = None,
    threshold: float = NEAR_DUPLICATE,
    *,
    block: int = 512,
) -> list[tuple[int, int, float]]:
    """Pairs (i, j, cosine), i < j, among ``indices`` (None: the whole pool) with cosine ≥
    ``threshold``, sorted by (i, j).

    The cosines are computed in row blocks, so no N×N matrix is formed for a large pool,
    and in the rows' own precision, so every caller counts the same pairs at a threshold.

    >>> import numpy as np
    >>> near_duplicate_pairs(np.array([[1.0, 0.0], [0.6, 0.8], [1.0, 0.0]]), threshold=0.99)
    [(0, 2, 1.0)]
    """
    idx = np.arange(unit_chunks.shape[0]) if indices is None else np.asarray(indices, np.int64)
    if idx.size < 2:
        return []
    sub = unit_chunks[idx]
    pairs: list[tuple[int, int, float]] = []
    for start in range(0, idx.size, block):
        sims = (sub[start : start + block] @ sub.T).astype(np.float64)
        rows, cols = np.nonzero(sims >= threshold)
        keep = cols > start + rows  # each unordered pair once, never a chunk with itself
        for r, c in zip(rows[keep].tolist(), cols[keep].tolist(), strict=True):
            i, j = int(idx[start + r]), int(idx[c])
            pairs.append((min(i, j), max(i, j), float(sims[r, c])))
    return sorted(pairs)


def near_duplicate_groups(
    unit_chunks: FloatArray, threshold: float = NEAR_DUPLICATE
) -> list[list[int]]:
    """Groups of pool positions linked by chains of near-duplicate pairs (cosine ≥
    ``threshold``), largest group first; chunks with no near-duplicate are left out.

    >>> import numpy as np
    >>> near_duplicate_groups(np.array([[1.0, 0.0], [0.6, 0.8], [1.0, 0.0]]), 0.99)
    [[0, 2]]
    """
    parent = list(range(unit_chunks.shape[0]))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j, _ in near_duplicate_pairs(unit_chunks, None, threshold):
        a, b = root(i), root(j)
        if a != b:
            parent[max(a, b)] = min(a, b)
    members: dict[int, list[int]] = {}
    for i in range(len(parent)):
        members.setdefault(root(i), []).append(i)
    return sorted((m for m in members.values() if len(m) > 1), key=lambda m: (-len(m), m[0]))


def _gold_positions(gold: Iterable[int | str], ids: Sequence[str] | None, n: int) -> set[int]:
    position = {chunk_id: i for i, chunk_id in enumerate(ids)} if ids is not None else {}
    out = set()
    if isinstance(gold, str | bytes) or not isinstance(gold, Iterable):
        raise InputError(f"gold: expected chunk ids or pool positions, got {gold!r:.60}")
    for item in gold:
        if isinstance(item, str):
            if item not in position:
                known = "no ids were given (ids=...)" if ids is None else "not in the pool"
                raise InputError(f"gold: chunk id {item!r:.80}: {known}")
            out.add(position[item])
        elif not isinstance(item, Integral) or isinstance(item, bool):
            raise InputError(f"gold: {item!r:.40} is neither a chunk id nor a pool position")
        elif not 0 <= item < n:
            raise InputError(f"gold: position {item} is outside the pool of {n} chunks")
        else:
            out.add(int(item))
    return out


def checked_texts(texts: object, n: int, name: str = "texts") -> Sequence[str]:
    """``texts`` if it is a sequence of ``n`` strings; otherwise an error naming the problem
    (:func:`adagres.core.validate.texts`)."""
    return v.texts(texts, n, name)


def evaluate(
    selection: Selection,
    chunk_embeddings: ArrayLike | PreparedPool,
    *,
    gold: Iterable[int | str] | None = None,
    answers: Sequence[str] | None = None,
    texts: Sequence[str] | None = None,
    ids: Sequence[str] | None = None,
    near_duplicate: float = NEAR_DUPLICATE,
) -> Metrics:
    """Compute every metric of ``selection`` on the pool it was made from.

    ``chunk_embeddings`` are the pool's embeddings, or its :class:`~adagres.PreparedPool` (then
    they are not validated again). ``gold`` names the gold chunks (IoU, recall, precision) by
    pool position, or by chunk id when ``ids`` (the pool's ids in order) is given; ``answers``
    (a list, tuple or 1-D numpy array of strings; a single string is refused) with ``texts``
    give whether any answer occurs in the selected text. Redundancy is the mean
    and max cosine over pairs inside the selection (0 with fewer than two chunks);
    ``repeated_text`` (with ``texts``) is the share of the selected words that repeat a word
    8-gram already in the context, what a reader pays for twice where mean pairwise cosine
    also counts chunks on one topic that carry different facts
    (:func:`adagres.core.ngrams.repeated_share`, picks in pick order; where
    overlap-aware packing stitched picks, the context is its passages, each once).
    ``near_duplicates`` counts the pairs of picks at cosine ≥ ``near_duplicate`` that the
    context holds as two texts: two picks stitched into one passage are one text.

    >>> import numpy as np
    >>> from adagres import select
    >>> q = np.array([1.0, 0.0]); C = np.array([[0.94, 0.34], [0.91, 0.42], [0.87, -0.5]])
    >>> s = select(q, C, [50, 50, 50], 100, lam=1.0)
    >>> m = evaluate(s, C, gold=[0, 2])
    >>> m.size, m.iou, m.near_duplicates
    (2, 1.0, 0)
    """
    chunks = unit_chunks(chunk_embeddings)
    if chunks.shape[0] != selection.n_chunks:
        raise InputError(
            f"chunk_embeddings: has {chunks.shape[0]} chunks, the selection was made from "
            f"{selection.n_chunks}"
        )
    picks = list(selection.indices)
    rel = selection.relevance[picks] if picks else np.zeros(0)
    if len(picks) >= 2:
        sub = chunks[picks]
        gram = (sub @ sub.T).astype(np.float64)
        pair_values = gram[np.triu_indices(len(picks), k=1)]
        red_mean, red_max = float(pair_values.mean()), float(pair_values.max())
    else:
        red_mean = red_max = 0.0
    overlap = recall = precision = None
    if gold is not None:
        gold_set = _gold_positions(gold, ids, selection.n_chunks)
        overlap = iou(picks, gold_set)
        hit = len(gold_set & set(picks))
        recall = hit / len(gold_set) if gold_set else None
        precision = hit / len(picks) if picks else None
    found = None
    context: list[str] | None = None  # the context as sent: packing's passages, each once
    if texts is not None:
        texts = checked_texts(texts, selection.n_chunks)
        context = [text for _, text, _ in selection.context(texts)]
    if (
        not isinstance(near_duplicate, Real)
        or isinstance(near_duplicate, bool)
        or not (-1.0 <= near_duplicate <= 1.0)
    ):
        raise InputError(f"near_duplicate: expected a cosine in [-1, 1], got {near_duplicate!r}")
    if answers is not None:
        answers = v.strings(answers, "answers")  # a numpy array of strings is taken too
    if answers:
        if texts is None:
            raise InputError("answers: checking answers needs the chunk texts (texts=...)")
        assert context is not None
        found = answer_found(answers, "\n".join(context))
    # the pairs the context holds as two texts: two picks that overlap-aware packing
    # stitched into one passage are one text, its words once, not a pair
    passage_of = {i: k for k, passage in enumerate(selection.passages) for i in passage.chunks}
    pairs = [
        (i, j)
        for i, j, _ in near_duplicate_pairs(chunks, picks, near_duplicate)
        if i not in passage_of or passage_of[i] != passage_of.get(j)
    ]
    return Metrics(
        strategy=selection.strategy,
        size=len(picks),
        tokens_used=selection.tokens_used,
        budget=selection.budget,
        budget_use=selection.budget_use,
        objective=selection.objective,
        relevance_sum=float(rel.sum()),
        relevance_mean=float(rel.mean()) if picks else 0.0,
        redundancy_mean=red_mean,
        redundancy_max=red_max,
        near_duplicates=len(pairs),
        iou=overlap,
        recall=recall,
        precision=precision,
        answer_found=found,
        repeated_text=None if context is None else repeated_share(context),
    )
