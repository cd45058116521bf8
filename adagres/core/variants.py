"""Redundancy-aware variants beyond the paper, each a named strategy with one idea.

The paper's objective (relevance minus λ times every pairwise cosine) turns its gains
negative on real pools, so it stops early and loses answers to top-k filling the budget.
Each variant here changes one thing, says why in its docstring, and returns the same
:class:`~adagres.Selection` as every other strategy: each step holds the score the variant
maximised (``step.score`` and its terms), and its F and marginal gains at the λ and τ of
the given settings (:func:`rescored`), so numbers compare across strategies.
"""

from __future__ import annotations

import dataclasses
import weakref

import numpy as np
from numpy.typing import NDArray

from ..errors import InputError
from .arrays import FloatArray
from .engine import NEG, NO_PICK, Pick, pick_rows, top_two
from .guard import Guard, guard_for
from .loop import POLICY_RULES, Rule, Run, finish, scoring_of
from .prepared import PreparedPool, build
from .records import Scoring, Step
from .replay import replay
from .result import Selection
from .selection import greedy, resolve_terms
from .settings import RunInputs, Settings
from .validate import normalise_rows

__all__ = [
    "NEAR_DUPLICATE_FLOOR",
    "coverage",
    "guard_of",
    "near_duplicates",
    "orthogonal",
    "orthogonal_pool",
    "rescored",
]

#: Cosine above which two chunks count as near-duplicates for :func:`near_duplicates`.
NEAR_DUPLICATE_FLOOR = 0.85
#: λ of :func:`near_duplicates`: steep enough that one near-duplicate pair (cosine 0.95,
#: 0.1 above the floor) costs 0.5, more than the relevance of most retrieved chunks.
NEAR_DUPLICATE_LAM = 5.0


def near_duplicates(
    pool: PreparedPool,
    budget: int,
    settings: Settings,
    trace: bool = True,
    inputs: RunInputs | None = None,
    *,
    floor: float = NEAR_DUPLICATE_FLOOR,
    lam: float = NEAR_DUPLICATE_LAM,
) -> Selection:
    """Penalise only near-duplicates, steeply, and spend the budget (policy ``fill``).

    What it changes: τ = ``floor`` (only similarity above it counts) with a large fixed λ.
    Why: chunks on one topic share a cosine of 0.3–0.6 with each other; the paper counts
    that shared topicality as redundancy, so every gain turns negative after a few picks.
    Counting only what is above ``floor`` removes the repeats (the same fact twice) and
    leaves the rest in relevance order, so the budget buys what top-k would have bought,
    less its duplicates.
    """
    own_settings = settings.replace(lam=lam, redundancy_floor=floor, policy="fill")
    terms, _ = resolve_terms(pool, budget, own_settings)
    rule = POLICY_RULES["fill"]
    guard = guard_of(pool, settings, inputs)
    own = greedy(pool, budget, terms, rule, trace, guard, settings.packing)
    return rescored(
        "near_duplicates",
        pool,
        budget,
        own,
        scoring_of(rule, terms),
        settings,
        trace,
        floor=floor,
        lam_near_duplicates=lam,
    )


def rescored(
    name: str,
    pool: PreparedPool,
    budget: int,
    own: Run,
    scoring: Scoring,
    settings: Settings,
    trace: bool,
    *,
    respects_budget: bool = True,
    **params: object,
) -> Selection:
    """A run by a score of its own, recorded with that score and its terms, and with F and
    the marginal gains at the λ and τ that ``settings`` give AdaGReS (so they compare with
    every other strategy run with those settings)."""
    terms, calibration = resolve_terms(pool, budget, settings)
    shared = replay(pool, budget, own.picks, terms, trace, own.reason)
    steps = [
        merged(o, s, terms.alpha * pool.relevance, pool.tokens)
        for o, s in zip(own.steps, shared.steps, strict=True)
    ]
    run = own._replace(steps=steps, pick_similarity=shared.pick_similarity)
    policy = settings.policy if name != "reference_code" else None
    return finish(
        name,
        pool,
        budget,
        run,
        terms,
        calibration=calibration,
        settings=settings,
        policy=policy,
        respects_budget=respects_budget,
        params=params,
        scoring=scoring,
        penalty_similarity=own.pick_similarity,
    )


def guard_of(pool: PreparedPool, settings: Settings, inputs: RunInputs | None) -> Guard | None:
    """The near-duplicate guard the settings ask for (None when off), with the chunk texts
    the run's inputs carry."""
    return guard_for(pool, settings.duplicate_guard, None if inputs is None else inputs.texts)


def merged(
    own: Step, shared: Step, relevance_term: NDArray[np.float64], tokens: NDArray[np.int64]
) -> Step:
    """``own``'s decision and score with the marginal F gains of ``shared`` (same picks).

    The runner-up's F gain is left out (its score is kept): the fast path has no per-step
    gains to read it from, and both paths must record the same numbers.
    """
    c, f = own.candidates, shared.candidates
    candidates = None
    if c is not None and f is not None:
        candidates = dataclasses.replace(c, redundancy_term=f.redundancy_term, gain=f.gain)
    w = own.winner
    if w is None:
        return own._replace(candidates=candidates)
    # at the stop, own's next best at the shared terms (the last step always has candidates)
    gain = shared.gain if own.accepted or f is None else float(f.gain[w])
    relevance = float(relevance_term[w])
    redundancy = None if gain is None else relevance - gain
    charged = int(tokens[w]) if own.winner_tokens is None else own.winner_tokens  # packing
    return own._replace(
        winner_tokens=charged,
        relevance_term=relevance,
        redundancy_term=redundancy,
        gain=gain,
        runner_up_gain=None,
        candidates=candidates,
    )


#: Each prepared pool's orthogonal pool, while the pool lives: the app reruns the orthogonal
#: strategy on one pool at every control change, and a kept pool keeps its cosine rows.
ORTHOGONAL_POOLS: weakref.WeakKeyDictionary[PreparedPool, PreparedPool] = (
    weakref.WeakKeyDictionary()
)


def orthogonal_pool(pool: PreparedPool) -> PreparedPool:
    """The pool with every chunk replaced by its unit component orthogonal to the query.

    Relevance is kept as it is (r_i = q·c_i of the original chunks); only the similarity
    between chunks changes: s⊥_ij = cos(c_i − r_i·q, c_j − r_j·q). A chunk parallel to the
    query (no orthogonal component) keeps its own direction. Made once per pool
    (:data:`ORTHOGONAL_POOLS`; prepared pools are read-only, so a kept one is still right).
    """
    kept = ORTHOGONAL_POOLS.get(pool)
    if kept is not None:
        return kept
    q = pool.query.astype(pool.chunks.dtype)
    residual = pool.chunks - np.outer(pool.relevance.astype(pool.chunks.dtype), q)
    norms = np.sqrt(np.vecdot(residual, residual))
    flat = norms <= 1e-6
    residual[flat] = pool.chunks[flat]
    residual = normalise_rows(residual)
    prepared = build(residual, pool.query, np.asarray(pool.tokens))
    kept = ORTHOGONAL_POOLS[pool] = dataclasses.replace(
        prepared, relevance=pool.relevance, spans=pool.spans
    )
    return kept


def orthogonal(
    pool: PreparedPool,
    budget: int,
    settings: Settings,
    trace: bool = True,
    inputs: RunInputs | None = None,
) -> Selection:
    """Redundancy measured on what two chunks share beyond their relevance to the query.

    What it changes: s_ij becomes the cosine of the chunks' components orthogonal to q
    (:func:`orthogonal_pool`); λ and τ are those the settings give on the pool itself (Eq. 7
    with the plain ρ̄: the orthogonal ρ̄ is near 0 or negative on most pools, where Eq. 7
    has no value). Why: two relevant chunks are similar partly because both point at the
    query; that part is not redundancy. Each step records that score; F and the marginal
    gains are at the plain cosine.
    """
    terms, _ = resolve_terms(pool, budget, settings)
    rule = POLICY_RULES[settings.policy]
    guard = guard_of(pool, settings, inputs)  # it compares the plain cosine: the pool's own
    own = greedy(orthogonal_pool(pool), budget, terms, rule, trace, guard, settings.packing)
    scoring = scoring_of(rule, terms, "cos beyond the query")
    return rescored("orthogonal", pool, budget, own, scoring, settings, trace)


class CoverageScores:
    """The engine of :func:`coverage`: relevance plus the coverage a chunk would add.

    score_i = r_i + weight·Σ_j w_j·max(0, s⁺_ij − covered_j), s⁺ = max(0, s); its redundancy
    term is the coverage the picks already provide (what it would add alone minus what it
    adds now). Holds the N×N cosines: meant for retrieved pools.
    """

    def __init__(self, pool: PreparedPool, weight: float, penalty: FloatArray, trace: bool) -> None:
        chunks, relevance = pool.chunks, pool.relevance
        self.cosines = (chunks @ chunks.T).astype(np.float64)
        self.sims = np.maximum(self.cosines, 0.0)
        w = np.maximum(relevance, 0.0)
        n = pool.n_chunks
        self.w = w / w.sum() if w.sum() > 0 else np.full(n, 1.0 / max(n, 1))
        self.weight, self.relevance, self.penalty, self.trace = weight, relevance, penalty, trace
        self.covered = np.zeros(n)
        self.score: NDArray[np.float64] = relevance + weight * (self.sims @ self.w)
        self.alone: NDArray[np.float64] = self.score.copy()
        self.rows: list[NDArray[np.float64]] = []

    def score_relevance(self) -> NDArray[np.float64]:
        return self.alone

    def best(self) -> Pick:
        masked = self.score + self.penalty
        winner = int(np.argmax(masked))
        if masked[winner] == NEG:
            return NO_PICK
        top = float(masked[winner])
        masked[winner] = NEG
        second = int(np.argmax(masked))
        runner = float(masked[second])
        return top_two(winner, top, top, None if runner == NEG else second, runner, runner)

    def release(self, winner: int) -> None:
        """Nothing held: the loop's penalty masks the winner."""

    def dropped(self, gone: NDArray[np.intp]) -> None:
        """Nothing to do: the penalty (already set) masks the chunks."""

    def take(self, winner: int) -> None:
        self.penalty[winner] = NEG
        self.covered = np.maximum(self.covered, self.sims[winner])
        self.score = self.relevance + self.weight * (
            np.maximum(self.sims - self.covered, 0.0) @ self.w
        )
        if self.trace:
            self.rows.append(self.cosines[winner])

    def trace_step(self) -> NDArray[np.float64]:
        return self.score.copy()

    def candidate_rows(
        self, steps: list[NDArray[np.float64]], picks: list[int]
    ) -> tuple[NDArray[np.float64], None, NDArray[np.float64] | None]:
        if not self.trace:
            return self.score[None].copy(), None, None
        return np.array(steps), None, pick_rows(self.rows, len(self.score))


def coverage(
    pool: PreparedPool,
    budget: int,
    settings: Settings,
    trace: bool = True,
    inputs: RunInputs | None = None,
    *,
    weight: float = 1.0,
) -> Selection:
    """Budgeted facility location: relevance plus how well the set covers the pool.

    F_cov(S) = Σ_{i∈S} r_i + weight · Σ_j w_j · max(0, max_{i∈S} s_ij), w_j = max(r_j, 0) / Σ
    max(r, 0) (chunks count as much as they are relevant). What it changes: a monotone
    submodular objective instead of a pairwise penalty. Why: its gains never turn negative,
    so it spends the budget like top-k, while a chunk that repeats a selected one adds no
    coverage and loses to one that covers something new. Greedy by gain among the chunks
    that fit (ties: lowest position), until nothing fits or no gain is positive; O(k·N²)
    with the N×N cosines, so meant for retrieved pools (hundreds to a few thousand chunks).
    """
    if not weight >= 0:
        raise InputError(f"weight: must be >= 0, got {weight!r}")
    engine: list[CoverageScores] = []

    def make(p: PreparedPool, penalty: FloatArray, traced: bool) -> CoverageScores:
        engine.append(CoverageScores(p, weight, penalty, traced))
        return engine[0]

    rule = Rule(score="own", budget="skip", stop_nonpositive=True, engine=make)
    terms, _ = resolve_terms(pool, budget, settings)
    guard = guard_of(pool, settings, inputs)
    own = greedy(pool, budget, terms, rule, trace, guard, settings.packing)
    picks = own.picks
    made = engine[0]
    value = float(pool.relevance[picks].sum() + weight * (made.covered @ made.w)) if picks else 0.0
    scoring = Scoring(
        relevance="relevance + coverage alone",
        redundancy="coverage the picks already give",
        stops_nonpositive=True,
    )
    return rescored(
        "coverage",
        pool,
        budget,
        own,
        scoring,
        settings,
        trace,
        weight=weight,
        coverage_objective=value,
    )
