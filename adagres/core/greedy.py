"""The machinery of the budgeted greedy loop, shared by AdaGReS and the greedy baselines.

:func:`adagres.core.selection.greedy` is the loop itself, written step by step as SPEC.md
states it; this module holds what it calls: the :class:`Rule` a strategy scores and stops
by, the :class:`Loop` state with one method per SPEC step, the record of each step and
:func:`finish`, which turns a run (of this loop or of :func:`~adagres.core.replay.replay`)
into a :class:`~adagres.Selection`.

The redundancy term is kept as the vector of gains over the pool and updated with one
matrix-vector product per pick: k picks cost O(k·N·d) time and O(N) memory beyond the
embeddings; no N×N matrix is formed. Large pools without a redundancy floor need fewer
products (:class:`~adagres.core.shortlist.Shortlist`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from .calibration import Calibration
from .guard import Guard
from .packing import Packer
from .prepared import PreparedPool
from .records import Candidates, Scoring, Step, StopReason, Terms
from .result import GAIN_SCORING, Selection
from .runs import Records, Run
from .scores import Engine, Fit, Gains, PackedFit, Scores
from .settings import Settings
from .shortlist import SHORTLIST_MIN_CHUNKS, Shortlist

__all__ = [
    "POLICY_RULES",
    "Loop",
    "Rule",
    "Run",
    "Terms",
    "finish",
    "objective_value",
    "scoring_of",
]


@dataclass(frozen=True)
class Rule:
    """How one greedy strategy scores, filters and stops.

    ``score``: what the argmax is over (``"gain"`` for AdaGReS, ``"ratio"`` gain per token,
    ``"mmr"``, ``"relevance"`` for top-k). ``budget``: ``"skip"`` (only fitting chunks
    compete, SPEC step 2), ``"stop"`` (the best over all remaining chunks; stop if it does not
    fit: the paper's Algorithm 1 read literally) or ``"ignore"`` (the authors' code).
    ``stop_nonpositive``: SPEC step 5. ``max_picks``: a fixed k. ``engine`` (score
    ``"own"``) makes the engine of a score of its own from the pool, the loop's penalty
    vector and whether the run is traced.
    """

    score: Literal["gain", "ratio", "mmr", "relevance", "own"]
    budget: Literal["skip", "stop", "ignore"]
    stop_nonpositive: bool
    max_picks: int | None = None
    lambda_mmr: float = 0.5
    engine: Callable[[PreparedPool, np.ndarray, bool], Engine] | None = None


#: How each AdaGReS policy scores, filters and stops (SPEC.md, "Greedy selection").
POLICY_RULES = {
    "skip": Rule(score="gain", budget="skip", stop_nonpositive=True),
    "stop": Rule(score="gain", budget="stop", stop_nonpositive=True),
    "ratio": Rule(score="ratio", budget="skip", stop_nonpositive=True),
    "fill": Rule(score="gain", budget="skip", stop_nonpositive=False),
}


@functools.lru_cache(maxsize=256)  # made once per run: kept off the fast path's few µs
def scoring_of(rule: Rule, terms: Terms, similarity: str = "cos") -> Scoring:
    """The :class:`Scoring` of a greedy rule at the terms it runs with."""
    competes: Literal["fits", "in_play"] = "in_play" if rule.budget != "skip" else "fits"
    sources = 3
    if rule.score == "mmr":
        relevance = f"{rule.lambda_mmr:g}·relevance"
        redundancy = f"{1 - rule.lambda_mmr:g}·largest {similarity} to a pick"
        sources = 1
    elif rule.score == "relevance":
        relevance, redundancy, sources = "relevance", "0", 0
    else:
        relevance = "α·relevance"
        above = "" if terms.tau is None else f" above {terms.tau:.2f}"
        redundancy = f"λ·Σ {similarity}{above} to the picks"
    fills = rule.score in ("gain", "ratio") and rule.budget == "skip" and not rule.stop_nonpositive
    return Scoring(
        relevance,
        redundancy,
        similarity,
        terms.tau,
        rule.score == "ratio",
        competes,
        rule.stop_nonpositive,
        fills=fills,
        sources=sources,
    )


def frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


class Loop:
    """The state of one greedy run, with one method per SPEC step.

    Gains are kept in the embeddings' precision (float32 embeddings: float32 gains, as their
    products already are); records and F are read out as Python floats. ``penalty`` is 0
    for the chunks that compete at this step and -inf for the others, so one addition masks
    the scores. The scores come from an engine of :mod:`adagres.core.scores`:
    :class:`~adagres.core.scores.Gains` (AdaGReS, one product per pick),
    :class:`~adagres.core.scores.Scores` (the other scores) or, for large pools with τ off,
    :class:`~adagres.core.shortlist.Shortlist` (a few full products per run). The traced and
    the fast path make the same decisions with the same arithmetic; tracing only keeps
    each step's numbers, and the per-candidate records are built once, in :meth:`finish`.
    """

    def __init__(
        self,
        pool: PreparedPool,
        budget: int,
        terms: Terms,
        rule: Rule,
        trace: bool,
        guard: Guard | None = None,
        packer: Packer | None = None,
    ) -> None:
        chunks, tokens, n = pool.chunks, pool.tokens, pool.n_chunks
        self.guard, self.packer = guard, packer
        self.pool, self.budget, self.rule, self.trace, self.terms = pool, budget, rule, trace, terms
        self.tokens = tokens
        self.max_picks, self.stop_nonpositive = rule.max_picks, rule.stop_nonpositive
        self.stop_on_fit = rule.budget == "stop"
        self.relevance_term = terms.alpha * pool.relevance
        self.penalty = np.zeros(n, chunks.dtype)
        # what a pick costs now: ℓ, or with packing only the tokens it adds (it may fall)
        self.cost = tokens if packer is None else packer.cost
        self.fit: Fit | PackedFit = Fit(tokens) if packer is None else PackedFit(packer)
        self.check_fit = rule.budget != "ignore"
        self.mask_unfit = rule.budget == "skip"
        self.engine: Engine
        if rule.engine is not None:
            self.engine = rule.engine(pool, self.penalty, trace)
        elif terms.tau is None and rule.score in ("gain", "ratio") and n >= SHORTLIST_MIN_CHUNKS:
            self.engine = Shortlist(
                pool, terms.lam, terms.alpha, rule.score == "ratio", self.penalty
            )
        elif rule.score == "gain":
            self.engine = Gains(pool, terms.lam, terms.alpha, terms.tau, trace)
        else:
            self.engine = Scores(
                pool,
                terms.lam,
                terms.alpha,
                terms.tau,
                rule.score,
                rule.lambda_mmr,
                self.penalty,
                trace,
            )
        self.picks: list[int] = []
        self.records = Records()
        self.decisions: list[Any] = []  # traced: what each step decided with
        self.used = 0

    def drop_unfit(self) -> None:
        """SPEC step 2: chunks with ℓ_i > T − used stop being eligible, for good."""
        left = self.budget - self.used
        if self.check_fit and left < self.fit.largest:  # most steps change nothing
            gone = self.fit.shrink(left)
            if self.mask_unfit and len(gone):
                self.penalty[gone] = -np.inf
                self.engine.dropped(gone)

    def best(self) -> tuple[int | None, int | None]:
        """SPEC step 4: the competing chunk with the largest score and the runner-up.

        Ties go to the lowest pool position (``argmax`` returns the first maximum).
        """
        return self.engine.best()

    def stop_reason(self, winner: int | None) -> StopReason | None:
        """SPEC steps 3 and 5 (and a fixed k, and the ``stop`` policy's fit check)."""
        if winner is None:
            out = len(self.guard.dropped) if self.guard is not None else 0
            out += len(self.packer.contained) if self.packer is not None else 0
            exhausted = len(self.picks) + out == self.pool.n_chunks
            return StopReason.POOL_EXHAUSTED if exhausted else StopReason.BUDGET_EXHAUSTED
        if self.max_picks is not None and len(self.picks) >= self.max_picks:
            return StopReason.K_REACHED
        if self.stop_nonpositive and self.engine.values.winner_score <= 0:
            return StopReason.NO_POSITIVE_GAIN
        if self.stop_on_fit and self.charge(winner) > self.budget - self.used:
            return StopReason.BUDGET_EXHAUSTED
        return None

    def record(self, winner: int | None, runner_up: int | None, accepted: bool) -> None:
        """Record the step (its Step is made in :meth:`finish`)."""
        left = self.budget - self.used
        records = self.records
        if accepted:
            assert winner is not None
            charge = self.charge(winner)
            self.used += charge
            records.charged.append(charge)
        records.winner.append(winner)
        records.accepted.append(accepted)
        records.runner_up.append(runner_up)
        records.values.append(self.engine.values)
        records.used.append(self.used)
        records.left.append(left)
        if self.trace:
            self.decisions.append(self.engine.trace_step())

    def charge(self, chunk: int) -> int:
        """What taking ``chunk`` now costs: ℓ, or with packing the tokens it adds."""
        return int(self.tokens[chunk]) if self.packer is None else self.packer.exact(chunk)

    def take(self, winner: int) -> None:
        """SPEC step 6: add the winner; R += C·c_w (for AdaGReS with τ off: V += c_w)."""
        self.picks.append(winner)
        self.engine.take(winner)
        if self.guard is not None:  # chunks that duplicate the pick stop being eligible
            self.drop(self.guard.after_pick(winner, len(self.picks), self.penalty == 0))
        if self.packer is not None:  # its new text joins the context (packing)
            self.packer.take(winner, len(self.picks))

    def rejects(self, winner: int) -> bool:
        """Whether the chunk about to win is out, for good, and the step decided again:
        the near-duplicate guard finds it repeats a pick's text, or, with packing, it would
        add no word (a duplicate of the pick holding its text) or its exact cost now is over
        the tokens left (it did not fit: a cost that decides is exact when it decides)."""
        packer, step = self.packer, len(self.picks) + 1
        if self.guard is not None and self.guard.rejects(winner):
            pass
        elif packer is not None and packer.adds_nothing(winner) is not None:
            packer.drop_duplicate(winner, step)
        elif (
            packer is not None
            and self.mask_unfit
            and packer.exact(winner) > self.budget - self.used
        ):
            assert isinstance(self.fit, PackedFit)
            self.fit.drop(winner)
        else:
            return False
        held = getattr(self.engine, "held", None)  # Gains holds the winner out of the argmax
        if held is not None and held[0] == winner:
            self.engine.gain[winner] = held[1]  # type: ignore[attr-defined]
            self.engine.held = None  # type: ignore[attr-defined]
        self.drop(np.array([winner], dtype=np.intp))
        return True

    def drop(self, gone: np.ndarray) -> None:
        """The chunks ``gone`` stop being eligible, for good (a duplicate of a pick, or a
        chunk inside a passage already taken)."""
        if len(gone):
            self.penalty[gone] = -np.inf
            self.engine.dropped(gone)

    def finish(self, reason: StopReason) -> Run:
        gains, scores, pick_similarity = self.engine.candidate_rows(self.decisions, self.picks)
        first = len(self.records) - gains.shape[0]  # the first step that gets candidates
        candidates = self.candidates(gains, scores, first)
        budget = self.budget
        score_relevance = self.engine.score_relevance()
        records = self.records
        winners = [w for w in records.winner if w is not None]
        charged = records.charged + [self.charge(w) for w in winners[len(records.charged) :]]
        looked_up = zip(
            self.relevance_term[winners].tolist(),
            score_relevance[winners].tolist(),
            charged,
            strict=True,
        )
        steps = []
        for t, (w, accepted, runner_up, values, used) in enumerate(
            zip(
                records.winner,
                records.accepted,
                records.runner_up,
                records.values,
                records.used,
                strict=True,
            )
        ):
            cand = candidates[t - first] if t >= first else None
            if w is None:
                steps.append(Step(t + 1, None, False, used, budget - used, candidates=cand))
                continue
            relevance, score_relevance_w, tokens = next(looked_up)  # Python floats
            gain, score = values.winner_gain, values.winner_score
            # Positional, in the order Step declares its fields: keywords double the cost of
            # a Step, made once a step on the fast path (tests/test_truthful_records.py reads
            # every field back).
            steps.append(
                Step(
                    t + 1,
                    w,
                    accepted,
                    used,
                    budget - used,  # number … tokens_left
                    tokens,
                    relevance,
                    relevance - gain,
                    gain,
                    score,  # winner_tokens … score
                    runner_up,
                    values.runner_gain,
                    values.runner_score,  # runner_up …
                    cand,
                    score_relevance_w,
                    score_relevance_w - score,  # candidates, score terms
                )
            )
        duplicates = tuple(self.guard.dropped) if self.guard is not None else ()
        if self.packer is None:
            return Run(self.picks, steps, reason, pick_similarity, duplicates)
        passages, merges = self.packer.result()
        duplicates += tuple(self.packer.contained)
        return Run(
            self.picks, steps, reason, pick_similarity, duplicates, self.used, passages, merges
        )

    def cost_rows(self, first: int, rows: int) -> np.ndarray:
        """What each chunk cost at steps ``first``… (one row a step; ℓ without packing)."""
        if self.packer is None or not self.packer.changes:
            return self.tokens
        costs = np.repeat(self.tokens[None, :], rows, axis=0)
        for step, chunk, cost in self.packer.changes:  # in effect from the next step
            costs[max(0, step - first) :, chunk] = cost
        return costs

    def candidates(
        self, gains: np.ndarray, scores: np.ndarray | None, first: int
    ) -> list[Candidates]:
        """The per-candidate records of steps ``first``… from their gain and score rows."""
        n, rows = self.pool.n_chunks, gains.shape[0]
        picks = np.array(self.picks, dtype=np.intp)
        if rows == 1:  # the stop of a fast run: exactly the picks are out of play
            in_play = np.ones((1, n), dtype=bool)
            in_play[0, picks] = False
            gains[0, picks] = np.nan
            if scores is not None:
                scores[0, picks] = np.nan
        else:
            pick_at = np.full(n, len(self.records))
            pick_at[picks] = np.arange(len(picks))
            in_play = pick_at[None, :] >= np.arange(first, first + rows)[:, None]
            out = ~in_play
            gains[out] = np.nan
            if scores is not None:
                scores[out] = np.nan
        if self.check_fit and rows == 1:
            eligible = in_play & (self.cost <= self.records.left[-1])
        elif self.check_fit:
            left = np.array(self.records.left[first:])
            eligible = in_play & (self.cost_rows(first, rows) <= left[:, None])
        else:
            eligible = in_play.copy()
        dropped = [] if self.guard is None else list(self.guard.dropped)
        dropped += [] if self.packer is None else self.packer.contained
        for d in dropped:  # a duplicate is ineligible from the step after its pick
            eligible[max(0, d.step - first) :, d.chunk] = False
        scores = gains if scores is None else scores
        redundancy = self.relevance_term - gains  # NaN where the gains are
        base = frozen(self.engine.score_relevance())  # shared, never written to
        arrays = (redundancy, gains, scores, eligible, in_play)
        for array in arrays:
            frozen(array)
        # iterating an array yields its row views: one Candidates per step
        return [
            Candidates(redundancy_term=r, gain=g, score=sc, eligible=e, in_play=p, score_base=base)
            for r, g, sc, e, p in zip(*arrays, strict=True)
        ]


def objective_value(pool: PreparedPool, picks: list[int] | np.ndarray, terms: Terms) -> float:
    """F(S) = α·Σ r_i − λ·Σ_{i<j} s̃_ij for the chunks ``picks`` (s̃ = max(0, s − τ) with τ)."""
    picks = np.asarray(picks, dtype=np.int64)
    if picks.size == 0:
        return 0.0
    sub = pool.chunks[picks]
    gram = (sub @ sub.T).astype(np.float64)
    if terms.tau is not None:
        gram = np.maximum(gram - terms.tau, 0.0)
    pairs = float(np.triu(gram, k=1).sum())
    return float(terms.alpha * pool.relevance[picks].sum() - terms.lam * pairs)


def finish(
    strategy: str,
    pool: PreparedPool,
    budget: int,
    run: Run,
    terms: Terms,
    *,
    calibration: Calibration | None,
    settings: Settings | None,
    policy: str | None = None,
    respects_budget: bool = True,
    note: str | None = None,
    params: dict[str, object] | None = None,
    scoring: Scoring | None = None,
    penalty_similarity: np.ndarray | None = None,
) -> Selection:
    """The frozen :class:`~adagres.Selection` of a run."""
    picks = run.picks
    return Selection(
        strategy=strategy,
        indices=tuple(picks),
        steps=tuple(run.steps),
        stop_reason=run.reason,
        tokens_used=run.tokens_used
        if run.tokens_used is not None
        else int(pool.tokens[picks].sum())
        if picks
        else 0,
        budget=budget,
        # F telescopes over the picks: the sum of the marginal gains (tests check it against
        # a direct evaluation of F).
        objective=math.fsum([s.gain for s in run.steps if s.accepted and s.gain is not None]),
        terms=Terms(float(terms.lam), float(terms.alpha), terms.tau),
        calibration=calibration,
        relevance=pool.relevance,
        token_counts=pool.tokens,
        pick_similarity=run.pick_similarity,
        policy=policy,
        respects_budget=respects_budget,
        note=note,
        params=dict(params or {}),
        settings=settings,
        scoring=scoring if scoring is not None else GAIN_SCORING,
        penalty_similarity=penalty_similarity,
        duplicates=run.duplicates,
        passages=run.passages,
        merges=run.merges,
    )
