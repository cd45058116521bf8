"""The machinery of the budgeted greedy loop, shared by AdaGReS and the greedy baselines.

:func:`adagres.core.selection.greedy` is the loop itself, written step by step as SPEC.md
states it; this module holds what it calls: the :class:`Rule` a strategy scores and stops
by, the :class:`Loop` state with one method per SPEC step, the record of each step, the
replay of a given pick order (the exact optimum, the ratio safeguard) and :func:`finish`,
which turns a run into a :class:`~adagres.Selection`.

The redundancy term is kept as the vector of gains over the pool and updated with one
matrix-vector product per pick: k picks cost O(k·N·d) time and O(N) memory beyond the
embeddings; no N×N matrix is formed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np

from .calibration import Calibration
from .prepared import PreparedPool
from .records import Candidates, Step, StopReason
from .result import Selection
from .settings import Settings

__all__ = [
    "POLICY_RULES",
    "Loop",
    "Rule",
    "Run",
    "Terms",
    "finish",
    "objective_value",
    "replay",
]


class Terms(NamedTuple):
    """The numbers F and the gains are evaluated with: λ, α and the floor τ (None: off)."""

    lam: float
    alpha: float
    tau: float | None


class Run(NamedTuple):
    """What one run of a loop leaves: the picks, the step records, why it stopped."""

    picks: list[int]
    steps: list[Step]
    reason: StopReason
    pick_similarity: np.ndarray | None


@dataclass(frozen=True)
class Rule:
    """How one greedy strategy scores, filters and stops.

    ``score``: what the argmax is over (``"gain"`` for AdaGReS, ``"ratio"`` gain per token,
    ``"mmr"``, ``"relevance"`` for top-k). ``budget``: ``"skip"`` (only fitting chunks
    compete, SPEC step 2), ``"stop"`` (the best over all remaining chunks; stop if it does not
    fit: the paper's Algorithm 1 read literally) or ``"ignore"`` (the authors' code).
    ``stop_nonpositive``: SPEC step 5. ``max_picks``: a fixed k.
    """

    score: Literal["gain", "ratio", "mmr", "relevance"]
    budget: Literal["skip", "stop", "ignore"]
    stop_nonpositive: bool
    max_picks: int | None = None
    lambda_mmr: float = 0.5


#: How each AdaGReS policy scores, filters and stops (SPEC.md, "Greedy selection").
POLICY_RULES = {
    "skip": Rule(score="gain", budget="skip", stop_nonpositive=True),
    "stop": Rule(score="gain", budget="stop", stop_nonpositive=True),
    "ratio": Rule(score="ratio", budget="skip", stop_nonpositive=True),
    "fill": Rule(score="gain", budget="skip", stop_nonpositive=False),
}


def frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


class Fit:
    """Which chunks still fit, updated in O(changes) as the tokens left shrink.

    Chunks are sorted by token count once; since the tokens left only go down, the chunks
    that stop fitting at a step are a contiguous run at the top of that order. ``eligible``
    gets False and ``penalty`` (if given) -inf for them.
    """

    def __init__(self, tokens: np.ndarray, eligible: np.ndarray, penalty: np.ndarray | None):
        self.order = np.argsort(tokens, kind="stable")
        self.sorted_tokens = tokens[self.order]
        self.end = len(tokens)  # chunks order[end:] no longer fit
        self.largest = int(self.sorted_tokens[-1]) if len(tokens) else 0  # largest that fits
        self.eligible, self.penalty = eligible, penalty

    def shrink(self, left: int) -> None:
        end = int(np.searchsorted(self.sorted_tokens, left, side="right"))
        self.largest = int(self.sorted_tokens[end - 1]) if end else -1
        gone = self.order[end : self.end]
        self.eligible[gone] = False
        if self.penalty is not None:
            self.penalty[gone] = -np.inf
        self.end = end


class Loop:
    """The state of one greedy run, with one method per SPEC step.

    ``gain`` holds α·r_i − λ·R̃_i(S) for every chunk, in the embeddings' precision (float32
    embeddings: float32 gains, as their products already are); records and F are read out
    as Python floats. ``penalty`` is 0 for the chunks that compete at this step and -inf for
    the others, so one addition masks the scores. Buffers are reused (fresh arrays cost page
    faults); at small N the cost is numpy's call overhead, so each step does few array
    operations. The traced and the fast path do the same arithmetic, so they pick the same
    chunks; tracing only adds copies.
    """

    def __init__(
        self,
        pool: PreparedPool,
        budget: int,
        terms: Terms,
        rule: Rule,
        trace: bool,
    ) -> None:
        chunks, tokens, n = pool.chunks, pool.tokens, pool.n_chunks
        dtype = chunks.dtype
        self.pool, self.budget, self.rule, self.trace = pool, budget, rule, trace
        self.tau = terms.tau
        self.relevance_term = terms.alpha * pool.relevance
        self.gain = self.relevance_term.astype(dtype)
        self.penalty, self.masked = np.zeros(n, dtype), np.empty(n, dtype)
        self.work = np.empty(n, dtype)
        self.in_play = np.ones(n, dtype=bool)
        self.eligible = np.ones(n, dtype=bool)  # in play and, unless ignored, fitting
        self.fit = Fit(tokens, self.eligible, self.penalty if rule.budget == "skip" else None)
        self.check_fit = rule.budget != "ignore"
        self.max_sim = np.zeros(n, dtype) if rule.score == "mmr" else None
        self.per_token = np.maximum(tokens, 1).astype(dtype) if rule.score == "ratio" else None
        self.scaled_update = terms.tau is None  # gain -= C·(λ·c_w): one product, no scaling
        self.need_similarity = trace or not self.scaled_update or self.max_sim is not None
        self.lam = dtype.type(terms.lam)
        self.picks: list[int] = []
        self.steps: list[Step] = []
        self.pick_rows: list[np.ndarray] = []
        self.used = 0

    def drop_unfit(self) -> None:
        """SPEC step 2: chunks with ℓ_i > T − used stop being eligible, for good."""
        left = self.budget - self.used
        if self.check_fit and left < self.fit.largest:  # most steps change nothing
            self.fit.shrink(left)

    def score(self) -> np.ndarray:
        """What the strategy maximises at this step (the gain itself for AdaGReS)."""
        kind = self.rule.score
        if kind == "gain":
            return self.gain
        if kind == "ratio":
            assert self.per_token is not None
            return np.divide(self.gain, self.per_token, out=self.work)
        if kind == "mmr":
            assert self.max_sim is not None
            np.multiply(self.max_sim, self.rule.lambda_mmr - 1.0, out=self.work)
            self.work += self.rule.lambda_mmr * self.pool.relevance
            return self.work
        return self.pool.relevance

    def best(self, score: np.ndarray) -> tuple[int | None, int | None]:
        """SPEC step 4: the competing chunk with the largest score and the runner-up.

        ``argmax`` returns the first maximum, so ties go to the lowest pool position.
        """
        masked = np.add(score, self.penalty, out=self.masked)
        winner = int(masked.argmax())
        if masked[winner] == -np.inf:
            return None, None
        masked[winner] = -np.inf
        second = int(masked.argmax())
        return winner, (second if masked[second] > -np.inf else None)

    def stop_reason(self, winner: int | None, score: np.ndarray) -> StopReason | None:
        """SPEC steps 3 and 5 (and a fixed k, and the ``stop`` policy's fit check)."""
        rule = self.rule
        if winner is None:
            exhausted = not self.in_play.any()
            return StopReason.POOL_EXHAUSTED if exhausted else StopReason.BUDGET_EXHAUSTED
        if rule.max_picks is not None and len(self.picks) >= rule.max_picks:
            return StopReason.K_REACHED
        if rule.stop_nonpositive and score[winner] <= 0:
            return StopReason.NO_POSITIVE_GAIN
        if rule.budget == "stop" and self.pool.tokens[winner] > self.budget - self.used:
            return StopReason.BUDGET_EXHAUSTED
        return None

    def record(
        self, winner: int | None, runner_up: int | None, score: np.ndarray, accepted: bool
    ) -> None:
        """Record the step; every candidate's numbers when traced, and always at the stop."""
        candidates = None
        if self.trace or not accepted:
            candidates = make_candidates(
                self.relevance_term - self.gain, self.gain, score, self.eligible, self.in_play
            )
        if accepted:
            assert winner is not None
            self.used += int(self.pool.tokens[winner])
        self.steps.append(
            step_record(len(self.steps) + 1, winner, accepted, runner_up, self.pool.tokens,
                        self.relevance_term, self.gain, score, self.used, self.budget,
                        candidates)
        )  # fmt: skip

    def take(self, winner: int) -> None:
        """SPEC step 6: add the winner and update every gain, R += C·c_w (one product)."""
        self.picks.append(winner)
        self.in_play[winner] = self.eligible[winner] = False
        self.penalty[winner] = -np.inf
        chunks, vector = self.pool.chunks, self.pool.chunks[winner]
        if self.scaled_update:
            self.gain -= chunks @ (vector * self.lam)
        if self.need_similarity:
            similarity = chunks @ vector
            if self.trace:
                self.pick_rows.append(similarity.astype(np.float64))
            if not self.scaled_update:
                self.gain -= self.lam * np.maximum(similarity - self.tau, 0.0)
            if self.max_sim is not None:
                np.maximum(self.max_sim, similarity, out=self.max_sim)

    def finish(self, reason: StopReason) -> Run:
        pick_similarity = None
        if self.trace:
            rows = np.array(self.pick_rows).reshape(len(self.pick_rows), self.pool.n_chunks)
            pick_similarity = frozen(rows)
        return Run(self.picks, self.steps, reason, pick_similarity)


def step_record(
    number: int,
    winner: int | None,
    accepted: bool,
    runner_up: int | None,
    tokens: np.ndarray,
    relevance_term: np.ndarray,
    gain: np.ndarray,
    score: np.ndarray,
    used: int,
    budget: int,
    candidates: Candidates | None,
) -> Step:
    """One :class:`Step` from the loop's arrays (``used`` is after the step)."""
    if winner is None:
        return Step(number, None, False, None, None, None, None, None, None, None, None,
                    used, budget - used, candidates)  # fmt: skip
    relevance, gain_w = float(relevance_term[winner]), float(gain[winner])
    same = score is gain  # AdaGReS scores by the gain itself: skip the second reads
    score_w = gain_w if same else float(score[winner])
    runner_gain = runner_score = None
    if runner_up is not None:
        runner_gain = float(gain[runner_up])
        runner_score = runner_gain if same else float(score[runner_up])
    return Step(number, winner, accepted, int(tokens[winner]), relevance, relevance - gain_w,
                gain_w, score_w, runner_up, runner_gain, runner_score, used, budget - used,
                candidates)  # fmt: skip


def make_candidates(
    redundancy_term: np.ndarray,
    gain: np.ndarray,
    score: np.ndarray,
    eligible: np.ndarray,
    in_play: np.ndarray,
) -> Candidates:
    """Copies of the per-chunk arrays at one step, NaN where a chunk is no longer in play."""
    out = ~in_play

    def blank(array: np.ndarray) -> np.ndarray:
        array = np.array(array, dtype=np.float64)
        array[out] = np.nan
        return frozen(array)

    return Candidates(
        redundancy_term=blank(redundancy_term),
        gain=blank(gain),
        score=blank(score),
        eligible=frozen(eligible.copy()),
        in_play=frozen(in_play.copy()),
    )


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


def replay(
    pool: PreparedPool,
    budget: int,
    order: list[int],
    terms: Terms,
    trace: bool,
    final_reason: StopReason,
) -> Run:
    """Record a given pick order as steps (gain = the marginal F gain at each pick).

    For sets chosen by something other than a greedy score (the exact optimum, the ratio
    safeguard, the authors' rule at its own β). The last step is a non-accepted step with
    every remaining chunk's marginal gain, so verdicts work as for any other selection.
    """
    chunks, tokens, n = pool.chunks, pool.tokens, pool.n_chunks
    lam, tau = terms.lam, terms.tau
    relevance_term = terms.alpha * pool.relevance
    redundancy = np.zeros(n)
    in_play = np.ones(n, dtype=bool)
    steps: list[Step] = []
    rows: list[np.ndarray] = []
    used = 0
    for number, chunk in enumerate([*order, None], start=1):
        gain = relevance_term - lam * redundancy
        eligible = in_play & (tokens <= budget - used)
        last = chunk is None
        record = None
        if trace or last:
            record = make_candidates(lam * redundancy, gain, gain, eligible, in_play)
        if last:
            masked = np.where(in_play, gain, -np.inf)
            nxt = int(np.argmax(masked)) if in_play.any() else None
            steps.append(step_record(number, nxt, False, None, tokens, relevance_term, gain,
                                     gain, used, budget, record))  # fmt: skip
            break
        used += int(tokens[chunk])
        steps.append(step_record(number, chunk, True, None, tokens, relevance_term, gain, gain,
                                 used, budget, record))  # fmt: skip
        in_play[chunk] = False
        similarity = (chunks @ chunks[chunk]).astype(np.float64)
        rows.append(similarity)
        redundancy += similarity if tau is None else np.maximum(similarity - tau, 0.0)
    pick_similarity = frozen(np.array(rows).reshape(len(rows), n)) if trace else None
    return Run(list(order), steps, final_reason, pick_similarity)


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
) -> Selection:
    """The frozen :class:`~adagres.Selection` of a run."""
    picks = run.picks
    return Selection(
        strategy=strategy,
        indices=tuple(picks),
        steps=tuple(run.steps),
        stop_reason=run.reason,
        tokens_used=int(pool.tokens[picks].sum()) if picks else 0,
        budget=budget,
        # F telescopes over the picks: the sum of the marginal gains (tests check it against
        # a direct evaluation of F).
        objective=math.fsum([s.gain for s in run.steps if s.accepted and s.gain is not None]),
        lam=float(terms.lam),
        alpha=float(terms.alpha),
        redundancy_floor=terms.tau,
        calibration=calibration,
        relevance=pool.relevance,
        token_counts=pool.tokens,
        pick_similarity=run.pick_similarity,
        policy=policy,
        respects_budget=respects_budget,
        note=note,
        params=dict(params or {}),
        settings=settings,
    )
