"""The :class:`Selection`: what a strategy picked and the full record of how.

Every strategy returns one (AdaGReS and every baseline), so every metric, figure and page
works on any of them. It is frozen and pickles; its verdicts are derived from its record
on first access.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import cast

import numpy as np
from numpy.typing import NDArray

from . import validate as v
from .calibration import Calibration
from .guard import Duplicate
from .packing import Merge, Passage, context_after
from .records import Scoring, Step, StopReason, Terms, Verdict, VerdictKind
from .settings import Settings
from .verdicts import Fates, fates, verdict_kinds, verdict_of

__all__ = ["GAIN_SCORING", "Selection"]

#: The paper's score: the marginal gain of F.
GAIN_SCORING = Scoring("α·relevance", "λ·Σ cos to the picks", stops_nonpositive=True)


@dataclass(frozen=True, eq=False)
class Selection:
    """A selection and the full record of how it was made.

    ``indices`` are pool positions in pick order. ``steps`` has one record per pick plus a
    final, non-accepted step that shows where and why the run stopped. ``relevance`` (r, cosine
    to the query) and ``token_counts`` are over the whole pool. ``pick_similarity`` (traced
    runs) holds, for each pick in order, its cosine to every chunk of the pool: the rows the
    redundancy term was built from. ``objective`` is F(S) at ``terms`` (λ, α and τ, also
    read as ``lam``, ``alpha`` and ``redundancy_floor``); ``settings`` are the settings the
    run was made with (None for runs outside the public functions). ``scoring`` says what
    the rule maximised at each step (``step.score`` and its terms); ``penalty_similarity``
    (traced runs) holds, for each pick, the similarity its redundancy term reads (None:
    ``pick_similarity``; the orthogonal strategy reads the cosine beyond the query).
    ``duplicates`` lists the chunks the near-duplicate guard made ineligible and the pick each
    duplicated (:mod:`adagres.core.guard`; empty when the guard is off), and the chunks
    whose text lay whole inside a passage (packing). ``passages`` is the context as
    overlap-aware packing stitched it (:mod:`adagres.core.packing`; empty when packing is
    off or nothing overlaps: then every pick is its own passage) and ``merges`` each step
    that joined a pick to earlier ones; ``tokens_used`` is then what the passages cost.
    """

    strategy: str
    indices: tuple[int, ...]
    steps: tuple[Step, ...] = field(repr=False)
    stop_reason: StopReason
    tokens_used: int
    budget: int
    objective: float
    terms: Terms
    calibration: Calibration | None
    relevance: NDArray[np.float64] = field(repr=False)
    token_counts: NDArray[np.int64] = field(repr=False)
    pick_similarity: NDArray[np.float64] | None = field(default=None, repr=False)
    policy: str | None = None
    respects_budget: bool = True
    note: str | None = None
    params: dict[str, object] = field(default_factory=dict)
    settings: Settings | None = None
    scoring: Scoring = field(default_factory=lambda: GAIN_SCORING)
    penalty_similarity: NDArray[np.float64] | None = field(default=None, repr=False)
    duplicates: tuple[Duplicate, ...] = ()
    passages: tuple[Passage, ...] = ()
    merges: tuple[Merge, ...] = ()

    @property
    def lam(self) -> float:
        """λ of F and the recorded gains (``terms.lam``)."""
        return self.terms.lam

    @property
    def alpha(self) -> float:
        """α of F and the recorded gains (``terms.alpha``)."""
        return self.terms.alpha

    @property
    def redundancy_floor(self) -> float | None:
        """τ of F and the recorded gains (``terms.tau``; None: off)."""
        return self.terms.tau

    @property
    def source_similarity(self) -> NDArray[np.float64] | None:
        """For each pick, the similarity to every chunk that the rule's redundancy reads."""
        own = self.penalty_similarity
        return own if own is not None else self.pick_similarity

    @property
    def n_chunks(self) -> int:
        """Size of the pool the selection was made from."""
        return int(self.relevance.shape[0])

    @property
    def size(self) -> int:
        """Number of chunks selected."""
        return len(self.indices)

    @property
    def budget_use(self) -> float:
        """Tokens used / budget (0 for a zero budget)."""
        return self.tokens_used / self.budget if self.budget else 0.0

    @property
    def tokens_saved(self) -> int:
        """Tokens overlap-aware packing saved: Σ ℓ of the picks − tokens used (0 without)."""
        return sum(p.saved for p in self.passages)

    def context(
        self, texts: Sequence[str], step: int | None = None
    ) -> list[tuple[tuple[int, ...], str, int]]:
        """The context after ``step`` picks (None: all), in order: (pool positions, text,
        tokens paid) of each passage, or of each pick when nothing was stitched (overlap-aware
        packing, :func:`adagres.core.packing.context_after`). ``texts``: the chunk texts, one
        string per pool position; ``step``: a whole number from 0 to ``len(steps)`` (past the
        last pick, the whole context). Anything else is an :class:`~adagres.InputError`."""
        texts = v.texts(texts, self.n_chunks)
        if step is not None:
            step = v.whole(step, "step", maximum=len(self.steps), unit=" steps")
        k = self.size if step is None else min(step, self.size)
        charged = [
            int(s.winner_tokens if s.winner_tokens is not None else self.token_counts[i])
            for s, i in zip(self.steps, self.indices, strict=False)
        ]
        return context_after(self.indices, charged, self.passages, self.merges, k, texts)

    @property
    def positive_steps(self) -> int:
        """Number of leading picks whose gain was > 0 (where ``fill`` kept going after)."""
        return sum(1 for _ in itertools.takewhile(lambda s: s.accepted and s.positive, self.steps))

    @property
    def traced(self) -> bool:
        """Whether every step carries its per-candidate numbers."""
        return all(step.candidates is not None for step in self.steps)

    @cached_property
    def verdicts(self) -> tuple[Verdict, ...]:
        """One verdict for every chunk of the pool, by pool position (with full history).

        For the kind and step of every chunk alone, :attr:`verdict_kinds` is much cheaper.
        """
        return tuple(verdict_of(self, i) for i in range(self.n_chunks))

    @cached_property
    def fates(self) -> Fates:
        """Every chunk's verdict kind and step, read from the record once."""
        return fates(self)

    @cached_property
    def verdict_kinds(self) -> tuple[tuple[VerdictKind, int | None], ...]:
        """(kind, step) of every chunk's verdict, for the whole pool at once.

        The same kinds and steps as :attr:`verdicts` (a test checks it), without building
        each chunk's history: O(N log k) array work instead of O(N·k) Python objects.
        """
        return verdict_kinds(self)

    def verdict(self, chunk: int) -> Verdict:
        """The verdict of the chunk at pool position ``chunk``."""
        chunk = v.position(chunk, self.n_chunks)
        if "verdicts" in self.__dict__:  # already built for the whole pool
            return self.verdicts[chunk]
        return verdict_of(self, chunk)

    def to_dict(
        self, ids: Sequence[object] | None = None, *, candidates: bool = False, explain: bool = True
    ) -> dict[str, object]:
        """A JSON-ready summary: picks, steps, stop reason, λ derivation and verdicts.

        ``ids`` (a sequence of chunk ids) replaces pool positions by ids where given;
        ``candidates=True`` adds the per-candidate arrays of traced steps. With
        ``explain=False`` each verdict is its chunk, kind and step only (computed for the
        whole pool at once: cheap at any N); otherwise it carries its numbers and sentence.
        Non-finite floats (ρ̄ below two chunks) are given as None, so the result is strict
        JSON.
        """
        ids = v.chunk_ids(ids, self.n_chunks)

        def name(i: int | None) -> object:
            return None if i is None else (ids[i] if ids is not None else int(i))

        def step_dict(step: Step) -> dict[str, object]:
            out = {k: val for k, val in step._asdict().items() if k != "candidates"}
            out["winner"], out["runner_up"] = name(step.winner), name(step.runner_up)
            if candidates and step.candidates is not None:  # NaN becomes None below (finite)
                fields = ("redundancy_term", "gain", "score", "eligible", "in_play")
                out["candidates"] = {k: getattr(step.candidates, k).tolist() for k in fields}
            return out

        def verdict_dict(verdict: Verdict) -> dict[str, object]:
            numbers = ("step", "tokens", "tokens_left", "gain", "relevance_term", "redundancy_term")
            return {
                "chunk": name(verdict.chunk),
                "verdict": verdict.kind.value,
                **{k: getattr(verdict, k) for k in numbers},
                "summary": verdict.summary(ids),
            }

        as_is = ("tokens_used", "budget", "budget_use", "objective", "lam", "alpha")
        out = {
            "strategy": self.strategy,
            "policy": self.policy,
            "selected": [name(i) for i in self.indices],
            "stop_reason": self.stop_reason.value,
            **{k: getattr(self, k) for k in (*as_is, "redundancy_floor", "note")},
            "params": dict(self.params),
            "settings": None if self.settings is None else self.settings.as_dict(),
            "calibration": None if self.calibration is None else asdict(self.calibration),
            "steps": [step_dict(s) for s in self.steps],
            "passages": [
                {
                    "chunks": [name(i) for i in p.chunks],
                    "tokens": p.tokens,
                    "separate_tokens": p.separate_tokens,
                    "text": p.text,
                }
                for p in self.passages
            ],
            "merges": [
                {**m._asdict(), "chunk": name(m.chunk), "joined": [name(i) for i in m.joined]}
                for m in self.merges
            ],
            "duplicates": [
                {
                    "chunk": name(d.chunk),
                    "duplicate_of": name(d.of),
                    "step": d.step,
                    "cosine": d.cosine,
                    "shared_text": d.shared_text,
                    "inside_passage": d.inside,
                }
                for d in self.duplicates
            ],
            "verdicts": (
                [verdict_dict(vd) for vd in self.verdicts]
                if explain
                else [
                    {"chunk": name(i), "verdict": kind.value, "step": step}
                    for i, (kind, step) in enumerate(self.verdict_kinds)
                ]
            ),
        }
        return cast("dict[str, object]", finite(out))  # a dict stays a dict


def finite(value: object) -> object:
    """``value`` with every NaN or infinite float replaced by None (containers walked)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite(v) for v in value]
    return value
