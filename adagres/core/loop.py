"""The machinery of the budgeted greedy loop, shared by AdaGReS and the greedy baselines:
how each step's score is computed, decided and recorded.

:func:`adagres.core.selection.greedy` is the loop itself, written step by step as SPEC.md
states it; this module holds what it calls, in the order a step uses it: the :class:`Rule`
a strategy scores and stops by (:data:`POLICY_RULES` for AdaGReS's policies), the engines
(:class:`Gains`, :class:`Scores`) answering each step with a
:class:`~adagres.core.engine.Pick`, what still fits (:class:`Fit`, :class:`PackedFit`), the
:class:`Loop` state with one method per SPEC step, and :func:`finish`, which makes the frozen
:class:`~adagres.Selection` of a run (of this loop or of :func:`~adagres.core.replay.replay`).

The redundancy term is kept as the vector of gains over the pool and updated with one
matrix-vector product per pick: k picks cost O(k·N·d) time and O(N) memory beyond the
embeddings; no N×N matrix is formed. Large pools without a redundancy floor need fewer
products (:class:`~adagres.core.shortlist.Shortlist`). Every engine takes the arithmetic of
a decision from the same place on the traced and the fast path, so the two paths give
bit-identical picks, gains and runner-ups.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray

from .arrays import FloatArray, frozen
from .calibration import Calibration
from .engine import NEG, NO_PICK, Engine, Pick, Rows, accumulate_rows, pick_rows, top_two
from .guard import Duplicate, Guard
from .packing import Merge, Packer, Passage
from .prepared import PreparedPool
from .records import Candidates, Scoring, Step, StopReason, Terms
from .result import GAIN_SCORING, Selection
from .settings import Settings
from .shortlist import SHORTLIST_MIN_CHUNKS, Shortlist

__all__ = [
    "POLICY_RULES",
    "Fit",
    "Gains",
    "Loop",
    "PackedFit",
    "Records",
    "Rule",
    "Run",
    "Scores",
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
    engine: Callable[[PreparedPool, FloatArray, bool], Engine] | None = None


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
        relevance=relevance,
        redundancy=redundancy,
        similarity=similarity,
        floor=terms.tau,
        per_token=rule.score == "ratio",
        competes=competes,
        stops_nonpositive=rule.stop_nonpositive,
        fills=fills,
        sources=sources,
    )


class Fit:
    """Which chunks still fit, updated in O(changes) as the tokens left shrink.

    Chunks are sorted by token count once; since the tokens left only go down, the chunks
    that stop fitting at a step are a contiguous run at the top of that order.
    """

    def __init__(self, tokens: NDArray[np.int64]) -> None:
        self.tokens = tokens
        self.end = len(tokens)  # chunks order[end:] no longer fit
        self.largest = int(tokens.max()) if len(tokens) else 0  # the largest that fits
        self.order: NDArray[np.intp] | None = None  # sorted when a chunk first stops fitting

    def shrink(self, left: int) -> NDArray[np.intp]:
        """The chunks that stop fitting now that ``left`` tokens are left."""
        if self.order is None:
            self.order = np.argsort(self.tokens, kind="stable")
            self.sorted_tokens = self.tokens[self.order]
        end = int(np.searchsorted(self.sorted_tokens, left, side="right"))
        self.largest = int(self.sorted_tokens[end - 1]) if end else -1
        gone = self.order[end : self.end]
        self.end = end
        return gone


class PackedFit:
    """Which chunks still fit when packing lets a chunk's cost change (O(N) a step).

    ``packer.cost`` holds what each chunk cost when it was last counted; a chunk over the
    tokens left whose context changed since is counted again (exact) before it is dropped."""

    def __init__(self, packer: Packer) -> None:
        self.packer = packer
        self.gone = np.zeros(len(packer.cost), dtype=bool)
        self.largest = int(packer.cost.max()) if len(packer.cost) else 0

    def shrink(self, left: int) -> NDArray[np.intp]:
        """The chunks that stop fitting now that ``left`` tokens are left."""
        packer = self.packer
        over = ~self.gone & (packer.cost > left)
        for i in np.flatnonzero(over).tolist():
            if i not in packer.passage_of and packer.dirty[i]:  # a pick may have changed it
                over[i] = packer.exact(i) > left
        gone = np.flatnonzero(over)
        self.gone[gone] = True
        self.settle()
        return gone

    def drop(self, chunk: int) -> None:
        """``chunk`` stops fitting (its exact cost, counted as it was about to win)."""
        self.gone[chunk] = True
        self.settle()

    def settle(self) -> None:
        rest = self.packer.cost[~self.gone]
        self.largest = int(rest.max()) if rest.size else -1


def penalise(
    similarity: FloatArray, lam: np.floating[Any], tau: float | None, out: FloatArray
) -> FloatArray:
    """λ·s, or λ·max(0, s − τ) with the floor τ, into ``out``: what a pick with cosine row
    ``similarity`` takes from every gain (one rounding order, wherever it is computed)."""
    if tau is None:
        return np.multiply(similarity, lam, out=out)
    np.subtract(similarity, tau, out=out)
    np.maximum(out, 0.0, out=out)
    out *= lam
    return out


class Gains:
    """AdaGReS's gain, kept in place for every chunk and updated with one product per pick.

    Chunks out of play hold -inf, so the argmax needs no mask: a pick is set to -inf once
    (it stays -inf under every update), and a chunk that stops fitting moves to a small
    ``benched`` store whose gains are still updated, for the record. With τ the update is
    gain −= λ·max(0, s − τ). The winner is held at -inf while the runner-up is found and
    put back if the run stops at it.

    Traced, a step keeps nothing but the pick's cosine row: :meth:`history` rebuilds every
    step's gains at the end with the same float operations in the same order, so the
    record holds the very numbers each decision was made with.
    """

    def __init__(self, pool: PreparedPool, terms: Terms, trace: bool) -> None:
        chunks = pool.chunks
        dtype, n = chunks.dtype, chunks.shape[0]
        self.pool, self.chunks, self.tau, self.trace = pool, chunks, terms.tau, trace
        self.lam = dtype.type(terms.lam)
        self.relevance_term = terms.alpha * pool.relevance
        self.gain = self.relevance_term.astype(dtype)
        self.start = self.gain.copy() if trace else self.gain  # the gains before any pick
        self.work = np.empty(n, dtype)
        self.bench_index = np.zeros(0, np.intp)
        self.bench_gain = np.zeros(0, dtype)
        self.held: tuple[int, float] | None = None
        self.sims: list[FloatArray] = []

    def score_relevance(self) -> NDArray[np.float64]:
        return self.relevance_term

    def best(self) -> Pick:
        gain = self.gain
        winner = int(gain.argmax())
        top = gain.item(winner)  # a Python float: the record needs no conversion
        if top == NEG:
            return NO_PICK
        gain[winner] = NEG
        self.held = (winner, top)
        second = int(gain.argmax())
        runner = gain.item(second)
        return top_two(winner, top, top, None if runner == NEG else second, runner, runner)

    def release(self, winner: int) -> None:
        """Put the held winner's gain back (:meth:`dropped` then benches it, for the record)."""
        if self.held is not None and self.held[0] == winner:
            self.gain[winner] = self.held[1]
            self.held = None

    def dropped(self, gone: NDArray[np.intp]) -> None:
        gone = gone[self.gain[gone] > NEG]  # picks are out already
        if len(gone):
            self.bench_index = np.concatenate([self.bench_index, gone])
            self.bench_gain = np.concatenate([self.bench_gain, self.gain[gone]])
            self.gain[gone] = NEG

    def take(self, winner: int) -> None:
        self.held = None
        similarity = self.pool.similarities(winner)  # C·c_w, once per pool and chunk
        work = penalise(similarity, self.lam, self.tau, self.work)
        self.gain -= work
        if len(self.bench_index):
            self.bench_gain -= work[self.bench_index]
        if self.trace:
            self.sims.append(similarity)  # read-only: the memo's row or this product

    def history(self) -> NDArray[np.float64]:
        """Every chunk's gain before each pick and after the last, (k + 1, N) float64.

        Row t is α·r − w_1 − … − w_t with w the update :meth:`take` subtracted, computed
        as :meth:`take` computes it (the same dtype, operations and order: one subtraction
        per pick, left to right), so each row holds the bits the loop's vector held.
        """
        rows = np.empty((len(self.sims) + 1, len(self.start)), self.start.dtype)
        rows[0] = self.start
        if self.sims:
            penalise(np.array(self.sims), self.lam, self.tau, rows[1:])
            accumulate_rows(np.subtract, rows)
        return rows.astype(np.float64)

    def row(self) -> NDArray[np.float64]:
        """Every chunk's gain now, float64 (-inf for the picks)."""
        row = self.gain.astype(np.float64)
        if len(self.bench_index):
            row[self.bench_index] = self.bench_gain
        if self.held is not None:
            row[self.held[0]] = self.held[1]
        return row

    def trace_step(self) -> None:
        return None  # the rows are rebuilt at the end (:meth:`history`)

    def candidate_rows(self, steps: list[None], picks: list[int]) -> Rows:
        if not self.trace:
            return self.row()[None], None, None
        gains = self.history()
        assert len(gains) == len(steps)  # one row per record: a record per pick and the stop
        return gains, None, pick_rows(self.sims, self.chunks.shape[0])


class Scores:
    """Every chunk's gain as a vector updated with one product per pick, and a score that
    is not the gain: gain per token (with τ), MMR (which also keeps max_j s_ij) or relevance.
    ``penalty`` (owned by the loop) is 0 for the chunks that compete and -inf for the others.
    """

    def __init__(
        self, pool: PreparedPool, terms: Terms, rule: Rule, penalty: FloatArray, trace: bool
    ) -> None:
        chunks = pool.chunks
        dtype, n = chunks.dtype, chunks.shape[0]
        self.chunks, self.penalty, self.kind, self.trace = chunks, penalty, rule.score, trace
        self.lam, self.tau = dtype.type(terms.lam), terms.tau
        self.relevance_term = terms.alpha * pool.relevance
        self.gain = self.relevance_term.astype(dtype)
        self.masked, self.work = np.empty(n, dtype), np.empty(n, dtype)
        self.similarity, self.update = np.empty(n, dtype), np.empty(n, dtype)
        self.per_token = np.maximum(pool.tokens, 1).astype(dtype)  # ℓ_i, at least 1
        self.max_sim = np.zeros(n, dtype) if rule.score == "mmr" else None
        self.lambda_mmr = rule.lambda_mmr
        self.mmr_relevance = rule.lambda_mmr * pool.relevance  # float64, added into the scores
        self.relevance = pool.relevance
        self.score_now = self.gain
        self.sims: list[NDArray[np.float64]] = []

    def score(self) -> FloatArray:
        kind = self.kind
        if kind == "ratio":
            return np.divide(self.gain, self.per_token, out=self.work)
        if kind == "mmr":
            assert self.max_sim is not None
            np.multiply(self.max_sim, self.lambda_mmr - 1.0, out=self.work)
            self.work += self.mmr_relevance
            return self.work
        return self.relevance  # "relevance" (the gain is scored by Gains)

    def best(self) -> Pick:
        self.score_now = score = self.score()
        masked = np.add(score, self.penalty, out=self.masked)
        winner = int(masked.argmax())
        top = masked[winner]
        if top == NEG:
            return NO_PICK
        masked[winner] = NEG
        second = int(masked.argmax())
        runner_up = None if masked[second] == NEG else second
        gains, scores = self.gain.item, score.item
        return top_two(
            winner, gains(winner), scores(winner), runner_up, gains(second), scores(second)
        )

    def release(self, winner: int) -> None:
        """Nothing held: the loop's penalty masks the winner from now on."""

    def score_relevance(self) -> NDArray[np.float64]:
        kind = self.kind
        if kind == "ratio":
            return self.relevance_term / self.per_token.astype(np.float64)
        if kind == "mmr":
            return self.mmr_relevance
        return self.relevance

    def dropped(self, gone: NDArray[np.intp]) -> None:
        """Nothing to do: the gains stay, the penalty (already set) masks the chunks."""

    def take(self, winner: int) -> None:
        """Update every gain with C·c_w (the one product of the step)."""
        self.penalty[winner] = NEG
        similarity = np.matmul(self.chunks, self.chunks[winner], out=self.similarity)
        self.gain -= penalise(similarity, self.lam, self.tau, self.update)
        if self.max_sim is not None:
            np.maximum(self.max_sim, similarity, out=self.max_sim)
        if self.trace:
            self.sims.append(similarity.astype(np.float64))

    def trace_step(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        return self.gain.astype(np.float64), np.array(self.score_now, np.float64)

    def candidate_rows(
        self, steps: list[tuple[NDArray[np.float64], NDArray[np.float64]]], picks: list[int]
    ) -> Rows:
        if not self.trace:
            gain, score = self.trace_step()
            return gain[None], score[None], None
        gains, scores = (np.array(rows) for rows in zip(*steps, strict=True))
        return gains, scores, pick_rows(self.sims, self.chunks.shape[0])


class Records:
    """What :meth:`Loop.record` keeps of each step until :meth:`Loop.finish` makes its
    Step: one list per field (appending to lists is the cheapest record on the fast path)."""

    def __init__(self) -> None:
        self.picks: list[Pick] = []  # what the engine found at each step
        self.accepted: list[bool] = []
        self.charged: list[int] = []  # tokens each accepted step's pick was charged
        self.used: list[int] = []  # tokens used after the step
        self.left: list[int] = []  # tokens left when the step was decided

    def __len__(self) -> int:
        return len(self.picks)


class Run(NamedTuple):
    """What one run of a loop leaves: the picks, the step records, why it stopped."""

    picks: list[int]
    steps: list[Step]
    reason: StopReason
    pick_similarity: NDArray[np.float64] | None
    duplicates: tuple[Duplicate, ...] = ()  # what the near-duplicate guard dropped
    tokens_used: int | None = None  # None: Σ ℓ of the picks (no packing)
    passages: tuple[Passage, ...] = ()  # the context as packing stitched it
    merges: tuple[Merge, ...] = ()


class Loop:
    """The state of one greedy run, with one method per SPEC step; its engine scores.

    Gains are kept in the embeddings' precision (float32 embeddings: float32 gains, as their
    products already are); records and F are read out as Python floats. ``penalty`` is 0
    for the chunks that compete at this step and -inf for the others, so one addition masks
    the scores. Tracing only keeps each step's numbers: the per-candidate records are built
    once, in :meth:`finish`.
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
        self.pool, self.budget, self.trace, self.tokens = pool, budget, trace, tokens
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
            self.engine = Shortlist(pool, terms, rule.score == "ratio", self.penalty)
        elif rule.score == "gain":
            self.engine = Gains(pool, terms, trace)
        else:
            self.engine = Scores(pool, terms, rule, self.penalty, trace)
        self.picks: list[int] = []
        self.records = Records()
        self.decisions: list[Any] = []  # traced: what each step decided with
        self.used = 0

    def drop_unfit(self) -> None:
        """SPEC step 2: chunks with ℓ_i > T − used stop being eligible, for good."""
        left = self.budget - self.used
        if self.check_fit and left < self.fit.largest:  # most steps change nothing
            gone = self.fit.shrink(left)
            if self.mask_unfit:
                self.drop(gone)

    def best(self) -> Pick:
        """SPEC step 4: the competing chunk with the largest score and the runner-up.

        Ties go to the lowest pool position (``argmax`` returns the first maximum).
        """
        return self.engine.best()

    def stop_reason(self, pick: Pick) -> StopReason | None:
        """SPEC steps 3 and 5 (and a fixed k, and the ``stop`` policy's fit check)."""
        winner = pick.winner
        if winner is None:
            out = len(self.guard.dropped) if self.guard is not None else 0
            out += len(self.packer.contained) if self.packer is not None else 0
            exhausted = len(self.picks) + out == self.pool.n_chunks
            return StopReason.POOL_EXHAUSTED if exhausted else StopReason.BUDGET_EXHAUSTED
        if self.max_picks is not None and len(self.picks) >= self.max_picks:
            return StopReason.K_REACHED
        if self.stop_nonpositive and pick.winner_score is not None and pick.winner_score <= 0:
            return StopReason.NO_POSITIVE_GAIN
        if self.stop_on_fit and self.charge(winner) > self.budget - self.used:
            return StopReason.BUDGET_EXHAUSTED
        return None

    def record(self, pick: Pick, accepted: bool) -> None:
        """Record the step: its pick as the engine found it, whether it was taken and the
        tokens around it (its :class:`Step` is made in :meth:`finish`)."""
        left = self.budget - self.used
        records = self.records
        if accepted:
            assert pick.winner is not None
            charge = self.charge(pick.winner)
            self.used += charge
            records.charged.append(charge)
        records.picks.append(pick)
        records.accepted.append(accepted)
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
        elif packer is not None and packer.plan(winner).holder is not None:  # adds no word
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
        self.engine.release(winner)
        self.drop(np.array([winner], dtype=np.intp))
        return True

    def drop(self, gone: NDArray[np.intp]) -> None:
        """The chunks ``gone`` stop being eligible, for good (they no longer fit, duplicate a
        pick, or lie inside a passage already taken)."""
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
        winners = [p.winner for p in records.picks if p.winner is not None]
        charged = records.charged + [self.charge(w) for w in winners[len(records.charged) :]]
        looked_up = zip(
            self.relevance_term[winners].tolist(),
            score_relevance[winners].tolist(),
            charged,
            strict=True,
        )
        steps = []
        for t, (pick, accepted, used) in enumerate(
            zip(records.picks, records.accepted, records.used, strict=True)
        ):
            cand = candidates[t - first] if t >= first else None
            if pick.winner is None:
                steps.append(Step.stop(t + 1, used, budget, cand))
                continue
            relevance, score_relevance_w, tokens = next(looked_up)  # Python floats
            gain, score = pick.winner_gain, pick.winner_score
            assert gain is not None and score is not None  # a winner has both
            steps.append(
                Step(
                    number=t + 1,
                    winner=pick.winner,
                    accepted=accepted,
                    tokens_used=used,
                    tokens_left=budget - used,
                    winner_tokens=tokens,
                    relevance_term=relevance,
                    redundancy_term=relevance - gain,
                    gain=gain,
                    score=score,
                    runner_up=pick.runner_up,
                    runner_up_gain=pick.runner_gain,
                    runner_up_score=pick.runner_score,
                    candidates=cand,
                    score_relevance=score_relevance_w,
                    score_redundancy=score_relevance_w - score,
                )
            )
        packer = self.packer
        duplicates = tuple(self.guard.dropped) if self.guard is not None else ()
        passages, merges = packer.result() if packer is not None else ((), ())
        return Run(
            picks=self.picks,
            steps=steps,
            reason=reason,
            pick_similarity=pick_similarity,
            duplicates=duplicates + (tuple(packer.contained) if packer is not None else ()),
            tokens_used=None if packer is None else self.used,
            passages=passages,
            merges=merges,
        )

    def cost_rows(self, first: int, rows: int) -> NDArray[np.int64]:
        """What each chunk cost at steps ``first``… (one row a step; ℓ without packing)."""
        if self.packer is None or not self.packer.changes:
            return self.tokens
        costs = np.repeat(self.tokens[None, :], rows, axis=0)
        for step, chunk, cost in self.packer.changes:  # in effect from the next step
            costs[max(0, step - first) :, chunk] = cost
        return costs

    def candidates(
        self, gains: NDArray[np.float64], scores: NDArray[np.float64] | None, first: int
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
        arrays = map(frozen, (redundancy, gains, scores, eligible, in_play))
        # iterating an array yields its row views: one Candidates per step
        return [
            Candidates(redundancy_term=r, gain=g, score=sc, eligible=e, in_play=p, score_base=base)
            for r, g, sc, e, p in zip(*arrays, strict=True)
        ]


def objective_value(
    pool: PreparedPool, picks: Sequence[int] | NDArray[np.intp] | NDArray[np.int64], terms: Terms
) -> float:
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
    penalty_similarity: NDArray[np.float64] | None = None,
) -> Selection:
    """The frozen :class:`~adagres.Selection` of a run."""
    picks = run.picks
    return Selection(
        strategy=strategy,
        indices=tuple(picks),
        steps=tuple(run.steps),
        stop_reason=run.reason,
        tokens_used=int(pool.tokens[picks].sum()) if run.tokens_used is None else run.tokens_used,
        budget=budget,
        # F telescopes over the picks: the sum of the marginal gains (tests check it against
        # a direct evaluation of F).
        objective=math.fsum([s.gain for s in run.steps if s.accepted and s.gain is not None]),
        terms=Terms(lam=float(terms.lam), alpha=float(terms.alpha), tau=terms.tau),
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
