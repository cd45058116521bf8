"""Greedy, redundancy-aware context selection under a token budget (SPEC.md).

The one loop in :func:`_greedy` serves AdaGReS (every policy) and the greedy baselines, so
every strategy returns the same frozen :class:`Selection` with the same step record. The
redundancy term is kept as a vector ``R`` over the pool and updated with one
matrix-vector product per pick: a selection of k chunks costs O(k·N·d) time and O(N)
memory beyond the embeddings; no N×N matrix is formed.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from functools import cached_property
from typing import Any, Literal

import numpy as np

from . import validate as v
from .calibration import FORMULAS, Calibration, Formula, _calibrate, _top_n

__all__ = [
    "POLICIES",
    "Candidates",
    "GainAtStep",
    "Selection",
    "Step",
    "StopReason",
    "Verdict",
    "VerdictKind",
    "objective",
    "select",
]

Policy = Literal["skip", "stop", "ratio", "fill"]
POLICIES: tuple[str, ...] = ("skip", "stop", "ratio", "fill")


class StopReason(StrEnum):
    """Why a selection ended."""

    BUDGET_EXHAUSTED = "budget_exhausted"
    NO_POSITIVE_GAIN = "no_positive_gain"
    POOL_EXHAUSTED = "pool_exhausted"
    K_REACHED = "k_reached"  # baselines with a fixed number of picks
    OPTIMAL = "optimal"  # the exact solver's set


class VerdictKind(StrEnum):
    """The fate of one chunk of the pool (SPEC.md, "Why was this chunk dropped?")."""

    SELECTED = "selected"
    DID_NOT_FIT = "did_not_fit"
    OUTSCORED = "outscored"
    NON_POSITIVE_GAIN = "non_positive_gain"
    NOT_IN_OPTIMUM = "not_in_optimum"


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class Candidates:
    """Per-chunk numbers at one step, as arrays over the whole pool (length N).

    ``in_play`` marks chunks not yet selected; ``eligible`` those that also fit the tokens
    left (for strategies that ignore the budget it equals ``in_play``). ``score`` is what the
    strategy maximised (the gain for AdaGReS, gain per token for ``ratio``, the MMR score,
    relevance for top-k). Values of chunks not in play are NaN.
    """

    redundancy_term: np.ndarray
    gain: np.ndarray
    score: np.ndarray
    eligible: np.ndarray
    in_play: np.ndarray

    @property
    def relevance_term(self) -> np.ndarray:
        """α·r_i for every chunk (NaN where not in play): gain + redundancy term."""
        return self.gain + self.redundancy_term


@dataclass(frozen=True)
class Step:
    """One step of a selection: the best candidate, its terms and the tokens around it.

    ``accepted`` is False only for the last step, where the run stopped (``winner`` is then
    the candidate that would have come next, or None if nothing was in play or eligible).
    ``tokens_used`` and ``tokens_left`` are after the step; ``tokens_available`` is what was
    left when the step was decided. ``candidates`` holds the per-chunk numbers when the run
    was traced (and always for the last step).
    """

    number: int
    winner: int | None
    accepted: bool
    winner_tokens: int | None
    relevance_term: float | None
    redundancy_term: float | None
    gain: float | None
    score: float | None
    runner_up: int | None
    runner_up_gain: float | None
    runner_up_score: float | None
    tokens_used: int
    tokens_left: int
    candidates: Candidates | None = field(default=None, repr=False, compare=False)

    @property
    def tokens_available(self) -> int:
        """Tokens left when this step was decided (before its pick)."""
        taken = self.winner_tokens if self.accepted and self.winner_tokens is not None else 0
        return self.tokens_left + taken

    @property
    def positive(self) -> bool:
        """Whether the winner's marginal gain was > 0."""
        return self.gain is not None and self.gain > 0


@dataclass(frozen=True)
class GainAtStep:
    """A chunk's numbers at one step, next to the winner's."""

    step: int
    gain: float
    score: float
    eligible: bool
    winner: int | None
    winner_gain: float | None
    winner_score: float | None


@dataclass(frozen=True)
class Verdict:
    """Why chunk ``chunk`` was selected or not, with the numbers behind it.

    ``step`` is the step of the pick (selected), the first step at which it no longer fit
    (did_not_fit) or the last step (the other kinds). ``history`` lists its gain against the
    winner's at every step it was in play (traced runs only). ``redundancy_sources`` lists
    the selected chunks that contributed most to its redundancy term, as (chunk, cosine),
    largest first (traced runs only).
    """

    chunk: int
    kind: VerdictKind
    step: int | None
    tokens: int
    tokens_left: int | None
    relevance_term: float | None
    redundancy_term: float | None
    gain: float | None
    runner_up: int | None
    runner_up_gain: float | None
    history: tuple[GainAtStep, ...]
    redundancy_sources: tuple[tuple[int, float], ...]

    def summary(self, ids: Any = None) -> str:
        """One sentence with the numbers; ``ids`` maps pool positions to chunk ids."""

        def name(i: int | None) -> str:
            return "none" if i is None else repr(ids[i]) if ids is not None else f"#{i}"

        if self.kind is VerdictKind.SELECTED:
            text = (
                f"selected at step {self.step}: gain {self.gain:+.4f} = relevance "
                f"{self.relevance_term:.4f} − redundancy {self.redundancy_term:.4f}"
            )
            if self.runner_up is not None:
                text += f"; runner-up {name(self.runner_up)} ({self.runner_up_gain:+.4f})"
            return text
        if self.kind is VerdictKind.DID_NOT_FIT:
            return (
                f"did not fit at step {self.step}: needs {self.tokens} tokens, "
                f"{self.tokens_left} were left"
            )
        sources = ", ".join(f"{name(j)} (cos {s:.3f})" for j, s in self.redundancy_sources)
        because = f"; most redundant with {sources}" if sources else ""
        if self.kind is VerdictKind.NON_POSITIVE_GAIN:
            return (
                f"non-positive gain at the stop (step {self.step}): redundancy "
                f"{self.redundancy_term:.4f} ≥ relevance {self.relevance_term:.4f}{because}"
            )
        if self.kind is VerdictKind.NOT_IN_OPTIMUM:
            return f"not in the optimal set; adding it would change F by {self.gain:+.4f}"
        return f"outscored until the stop (step {self.step}): gain {self.gain:+.4f}{because}"


@dataclass(frozen=True, eq=False)
class Selection:
    """A selection and the full record of how it was made.

    ``indices`` are pool positions in pick order. ``steps`` has one record per pick plus a
    final, non-accepted step that shows where and why the run stopped (``step_rows`` holds
    the same as plain tuples). ``relevance`` (r, cosine to the query) and ``token_counts``
    are over the whole pool. ``pick_similarity`` (traced runs) holds, for each pick in
    order, its cosine to every chunk of the pool: the rows the redundancy term was built
    from. ``objective`` is F(S) at ``lam`` and ``alpha``.
    """

    strategy: str
    indices: tuple[int, ...]
    step_rows: tuple[tuple, ...] = field(repr=False)
    stop_reason: StopReason
    tokens_used: int
    budget: int
    objective: float
    lam: float
    alpha: float
    redundancy_floor: float | None
    calibration: Calibration | None
    relevance: np.ndarray = field(repr=False)
    token_counts: np.ndarray = field(repr=False)
    pick_similarity: np.ndarray | None = field(default=None, repr=False)
    policy: str | None = None
    respects_budget: bool = True
    note: str | None = None
    params: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def steps(self) -> tuple[Step, ...]:
        """One :class:`Step` per pick, plus the final step where the run stopped.

        The loop records plain tuples (cheap on the fast path); the Step objects are made
        on first access.
        """
        return tuple(Step(*row) for row in self.step_rows)

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
    def positive_steps(self) -> int:
        """Number of leading picks whose gain was > 0 (where ``fill`` kept going after)."""
        count = 0
        for step in self.steps:
            if not (step.accepted and step.positive):
                break
            count += 1
        return count

    @property
    def traced(self) -> bool:
        """Whether every step carries its per-candidate numbers."""
        return all(step.candidates is not None for step in self.steps)

    @cached_property
    def verdicts(self) -> tuple[Verdict, ...]:
        """One verdict for every chunk of the pool, by pool position (with full history).

        For the kind and step of every chunk alone, :attr:`verdict_kinds` is much cheaper.
        """
        return tuple(_verdict(self, i) for i in range(self.n_chunks))

    @cached_property
    def verdict_kinds(self) -> tuple[tuple[VerdictKind, int | None], ...]:
        """(kind, step) of every chunk's verdict, computed for the whole pool at once.

        The same kinds and steps as :attr:`verdicts` (a test checks it), without building
        each chunk's history: O(N log k) array work instead of O(N·k) Python objects.
        """
        n = self.n_chunks
        kinds = np.full(n, _KIND_INDEX[_final_kind(self.stop_reason)])
        steps = np.full(n, len(self.steps))
        if self.respects_budget and self.stop_reason is not StopReason.OPTIMAL:
            # Tokens available only go down over the steps: the first step at which a chunk
            # no longer fits is a binary search on the negated sequence.
            available = -np.array([s.tokens_available for s in self.steps])
            first = np.searchsorted(available, -self.token_counts, side="right")
            unfit = first < len(self.steps)
            kinds[unfit] = _KIND_INDEX[VerdictKind.DID_NOT_FIT]
            steps[unfit] = first[unfit] + 1
        for number, chunk in enumerate(self.indices, start=1):
            kinds[chunk], steps[chunk] = _KIND_INDEX[VerdictKind.SELECTED], number
        members = list(VerdictKind)
        return tuple((members[k], int(t)) for k, t in zip(kinds, steps, strict=True))

    def verdict(self, chunk: int) -> Verdict:
        """The verdict of the chunk at pool position ``chunk``."""
        if not 0 <= chunk < self.n_chunks:
            raise v.InputError(f"chunk: position {chunk} is outside the pool of {self.n_chunks}")
        if "verdicts" in self.__dict__:  # already built for the whole pool
            return self.verdicts[chunk]
        return _verdict(self, chunk)

    def to_dict(self, ids: Any = None, *, candidates: bool = False) -> dict[str, Any]:
        """A JSON-ready summary: picks, steps, stop reason, λ derivation and verdicts.

        ``ids`` (a sequence of chunk ids) replaces pool positions by ids where given;
        ``candidates=True`` adds the per-candidate arrays of traced steps.
        """

        def name(i: int | None) -> Any:
            return None if i is None else (ids[i] if ids is not None else int(i))

        def step_dict(step: Step) -> dict[str, Any]:
            out = {k: val for k, val in asdict(step).items() if k != "candidates"}
            out["winner"], out["runner_up"] = name(step.winner), name(step.runner_up)
            if candidates and step.candidates is not None:
                c = step.candidates
                out["candidates"] = {
                    "redundancy_term": _nan_to_none(c.redundancy_term),
                    "gain": _nan_to_none(c.gain),
                    "score": _nan_to_none(c.score),
                    "eligible": c.eligible.tolist(),
                    "in_play": c.in_play.tolist(),
                }
            return out

        def verdict_dict(verdict: Verdict) -> dict[str, Any]:
            return {
                "chunk": name(verdict.chunk),
                "verdict": verdict.kind.value,
                "step": verdict.step,
                "tokens": verdict.tokens,
                "tokens_left": verdict.tokens_left,
                "gain": verdict.gain,
                "relevance_term": verdict.relevance_term,
                "redundancy_term": verdict.redundancy_term,
                "summary": verdict.summary(ids),
            }

        return {
            "strategy": self.strategy,
            "policy": self.policy,
            "selected": [name(i) for i in self.indices],
            "stop_reason": self.stop_reason.value,
            "tokens_used": self.tokens_used,
            "budget": self.budget,
            "budget_use": self.budget_use,
            "objective": self.objective,
            "lam": self.lam,
            "alpha": self.alpha,
            "redundancy_floor": self.redundancy_floor,
            "note": self.note,
            "params": dict(self.params),
            "calibration": None if self.calibration is None else asdict(self.calibration),
            "steps": [step_dict(s) for s in self.steps],
            "verdicts": [verdict_dict(vd) for vd in self.verdicts],
        }


def _nan_to_none(array: np.ndarray) -> list[float | None]:
    return [None if math.isnan(x) else float(x) for x in array.tolist()]


# --------------------------------------------------------------------------- the loop


@dataclass(frozen=True)
class _Pool:
    """Validated inputs of one run: unit embeddings, relevance, tokens, budget."""

    chunks: np.ndarray
    relevance: np.ndarray  # float64, cosine to the query
    tokens: np.ndarray  # int64
    budget: int
    squares: float  # Σ‖c_i‖² of the rows as stored (N up to rounding), for ρ̄


def _prepare(query_embedding: Any, chunk_embeddings: Any, token_counts: Any, budget: Any) -> _Pool:
    chunks, squares = v.unit_rows_and_squares(chunk_embeddings)
    query = v.unit_vector(query_embedding, chunks.shape[1])
    tokens = v.token_counts(token_counts, chunks.shape[0])
    relevance = (chunks @ query.astype(chunks.dtype)).astype(np.float64)
    return _Pool(chunks, _frozen(relevance), _frozen(tokens), v.budget(budget), squares)


@dataclass(frozen=True)
class _Rule:
    """How one greedy strategy scores, filters and stops."""

    score: str  # "gain", "ratio", "mmr", "relevance"
    budget: str  # "skip": only fitting chunks compete; "stop": stop if the best does not fit;
    # "ignore": no budget check at all (the authors' reference code)
    stop_nonpositive: bool
    max_picks: int | None = None
    lambda_mmr: float = 0.5


class _Fit:
    """Which chunks still fit, updated in O(changes) as the tokens left shrink.

    Chunks are sorted by token count once; since the tokens left only go down, the chunks
    that stop fitting at a step are a contiguous run at the top of that order. Each array
    in ``masks`` gets False (bool) or -inf (float penalty) for them.
    """

    def __init__(self, tokens: np.ndarray, eligible: np.ndarray, penalty: np.ndarray | None):
        self.order = np.argsort(tokens, kind="stable")
        self.sorted_tokens = tokens[self.order]
        self.end = len(tokens)  # chunks order[end:] no longer fit
        self.largest = int(self.sorted_tokens[-1]) if len(tokens) else 0  # largest that fits
        self.eligible, self.penalty = eligible, penalty

    def shrink(self, left: int) -> None:
        if left >= self.largest:  # the common case: everything still in play fits
            return
        end = int(np.searchsorted(self.sorted_tokens, left, side="right"))
        self.largest = int(self.sorted_tokens[end - 1]) if end else -1
        gone = self.order[end : self.end]
        self.eligible[gone] = False
        if self.penalty is not None:
            self.penalty[gone] = -np.inf
        self.end = end


#: How each AdaGReS policy scores, filters and stops (SPEC.md, "Greedy selection").
_POLICY_RULES = {
    "skip": _Rule(score="gain", budget="skip", stop_nonpositive=True),
    "stop": _Rule(score="gain", budget="stop", stop_nonpositive=True),
    "ratio": _Rule(score="ratio", budget="skip", stop_nonpositive=True),
    "fill": _Rule(score="gain", budget="skip", stop_nonpositive=False),
}


def _greedy(
    pool: _Pool, lam: float, alpha: float, tau: float | None, rule: _Rule, trace: bool
) -> tuple[list[int], list[Step], StopReason, np.ndarray | None]:
    """The selection loop shared by every greedy strategy (see :class:`_Rule`).

    ``gain`` holds α·r_i − λ·R̃_i(S) and is updated with one matrix-vector product per
    pick; the traced and the fast path do the same arithmetic, so they pick the same
    chunks, and tracing only adds copies. At small N the cost is numpy call overhead, so
    the loop keeps the number of array operations per step low (about eight).
    """
    chunks, tokens = pool.chunks, pool.tokens
    n = chunks.shape[0]
    relevance_term = alpha * pool.relevance
    # The loop works in the embeddings' precision (float32 embeddings: float32 gains, as
    # their products already are); records and F are read out as Python floats.
    dtype = chunks.dtype
    gain = relevance_term.astype(dtype)
    # penalty is 0 for the chunks that compete at this step and -inf for the others, so
    # one addition masks the scores. Buffers are reused: fresh arrays cost page faults.
    penalty, masked, work = np.zeros(n, dtype), np.empty(n, dtype), np.empty(n, dtype)
    in_play = np.ones(n, dtype=bool)
    eligible = np.ones(n, dtype=bool)  # in play and, unless the budget is ignored, fitting
    fit = _Fit(tokens, eligible, penalty if rule.budget == "skip" else None)
    max_sim = np.zeros(n, dtype) if rule.score == "mmr" else None  # 0 before the first pick
    per_token = np.maximum(tokens, 1).astype(dtype) if rule.score == "ratio" else None
    scaled_update = tau is None  # gain -= C·(λ·c_w): one product, no separate scaling
    need_similarity = trace or not scaled_update or max_sim is not None
    lam_typed = chunks.dtype.type(lam)
    score_kind, budget_kind, max_picks = rule.score, rule.budget, rule.max_picks
    check_fit = budget_kind != "ignore"
    picks: list[int] = []
    steps: list[Step] = []
    pick_rows: list[np.ndarray] = []
    used = 0
    reason: StopReason | None = None

    while reason is None:
        left = pool.budget - used
        if check_fit and left < fit.largest:  # inline check: most steps change nothing
            fit.shrink(left)
        if score_kind == "gain":
            score = gain
        elif score_kind == "ratio":
            score = np.divide(gain, per_token, out=work)
        elif score_kind == "mmr":
            np.multiply(max_sim, rule.lambda_mmr - 1.0, out=work)
            work += rule.lambda_mmr * pool.relevance
            score = work
        else:
            score = pool.relevance
        np.add(score, penalty, out=masked)
        winner: int | None = int(masked.argmax())
        if masked[winner] == -np.inf:
            winner = None

        if winner is None:
            reason = StopReason.POOL_EXHAUSTED if not in_play.any() else StopReason.BUDGET_EXHAUSTED
        elif max_picks is not None and len(picks) >= max_picks:
            reason = StopReason.K_REACHED
        elif rule.stop_nonpositive and score[winner] <= 0:
            reason = StopReason.NO_POSITIVE_GAIN
        elif budget_kind == "stop" and tokens[winner] > left:
            reason = StopReason.BUDGET_EXHAUSTED

        runner_up = None
        if winner is not None:
            masked[winner] = -np.inf
            second = int(masked.argmax())
            runner_up = second if masked[second] > -np.inf else None

        record = None
        if trace or reason is not None:
            record = _candidates(relevance_term - gain, gain, score, eligible, in_play)
        if reason is None:
            used += int(tokens[winner])
        steps.append(_row(len(steps) + 1, winner, reason is None, runner_up, tokens,
                          relevance_term, gain, score, used, pool.budget, record))  # fmt: skip
        if reason is not None:
            break
        picks.append(winner)
        in_play[winner] = eligible[winner] = False
        penalty[winner] = -np.inf
        vector = chunks[winner]
        if scaled_update:
            gain -= chunks @ (vector * lam_typed)
        if need_similarity:
            similarity = chunks @ vector
            if trace:
                pick_rows.append(similarity.astype(np.float64))
            if not scaled_update:
                gain -= lam * np.maximum(similarity - tau, 0.0)
            if max_sim is not None:
                np.maximum(max_sim, similarity, out=max_sim)

    pick_similarity = None
    if trace:
        pick_similarity = _frozen(np.array(pick_rows).reshape(len(pick_rows), n))
    return picks, steps, reason, pick_similarity


def _row(
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
    record: Candidates | None,
) -> tuple:
    """One step as a tuple in :class:`Step`'s field order (Steps are built on first access)."""
    if winner is None:
        return (number, None, False, None, None, None, None, None, None, None, None,
                used, budget - used, record)  # fmt: skip
    relevance, gain_w = float(relevance_term[winner]), float(gain[winner])
    same = score is gain  # AdaGReS scores by the gain itself: skip the second reads
    score_w = gain_w if same else float(score[winner])
    if runner_up is None:
        runner_gain = runner_score = None
    else:
        runner_gain = float(gain[runner_up])
        runner_score = runner_gain if same else float(score[runner_up])
    return (number, winner, accepted, int(tokens[winner]), relevance, relevance - gain_w,
            gain_w, score_w, runner_up, runner_gain, runner_score, used,
            budget - used, record)  # fmt: skip


def _candidates(
    redundancy_term: np.ndarray,
    gain: np.ndarray,
    score: np.ndarray,
    eligible: np.ndarray,
    in_play: np.ndarray,
) -> Candidates:
    out = ~in_play

    def blank(array: np.ndarray) -> np.ndarray:
        array = np.array(array, dtype=np.float64)
        array[out] = np.nan
        return _frozen(array)

    return Candidates(
        redundancy_term=blank(redundancy_term),
        gain=blank(gain),
        score=blank(score),
        eligible=_frozen(eligible.copy()),
        in_play=_frozen(in_play.copy()),
    )


def _objective(pool: _Pool, picks: Any, lam: float, alpha: float, tau: float | None) -> float:
    picks = np.asarray(picks, dtype=np.int64)
    if picks.size == 0:
        return 0.0
    sub = pool.chunks[picks]
    gram = (sub @ sub.T).astype(np.float64)
    if tau is not None:
        gram = np.maximum(gram - tau, 0.0)
    pairs = float(np.triu(gram, k=1).sum())
    return float(alpha * pool.relevance[picks].sum() - lam * pairs)


def _finish(
    strategy: str,
    pool: _Pool,
    run: tuple[list[int], list[Step], StopReason, np.ndarray | None],
    *,
    lam: float,
    alpha: float,
    tau: float | None,
    calibration: Calibration | None,
    policy: str | None = None,
    respects_budget: bool = True,
    note: str | None = None,
    params: dict[str, Any] | None = None,
) -> Selection:
    picks, steps, reason, pick_similarity = run
    return Selection(
        strategy=strategy,
        indices=tuple(picks),
        step_rows=tuple(steps),
        stop_reason=reason,
        tokens_used=int(pool.tokens[picks].sum()) if picks else 0,
        budget=pool.budget,
        # F telescopes over the picks: the sum of the marginal gains (tests check it against
        # a direct evaluation of F).
        objective=math.fsum([row[6] for row in steps if row[2]]),
        lam=float(lam),
        alpha=float(alpha),
        redundancy_floor=tau,
        calibration=calibration,
        relevance=pool.relevance,
        token_counts=pool.tokens,
        pick_similarity=pick_similarity,
        policy=policy,
        respects_budget=respects_budget,
        note=note,
        params=dict(params or {}),
    )


def _resolve_lam(
    lam: Any,
    pool: _Pool,
    *,
    alpha: float,
    formula: str,
    scale: float,
    offset: float,
    lam_max: float | None,
    top_n: int | None = None,
) -> tuple[float, Calibration]:
    calibration = _calibrate(
        pool.relevance, pool.chunks, pool.tokens, pool.budget,
        alpha=alpha, formula=formula, scale=scale, offset=offset, lam_max=lam_max,
        squares=pool.squares, top_n=top_n,
    )  # fmt: skip
    if isinstance(lam, str):
        v.choice(lam, "lam", ("adaptive",))
        return calibration.lam, calibration
    return v.real(lam, "lam", minimum=0.0), calibration


def _resolve_floor(redundancy_floor: Any, calibration: Calibration) -> float | None:
    if redundancy_floor is None:
        return None
    if isinstance(redundancy_floor, str):
        v.choice(redundancy_floor, "redundancy_floor", ("pool",))
        rho = calibration.mean_similarity
        return float(rho) if math.isfinite(rho) else 0.0
    return v.real(redundancy_floor, "redundancy_floor")


def select(
    query_embedding: Any,
    chunk_embeddings: Any,
    token_counts: Any,
    budget: int,
    *,
    lam: float | Literal["adaptive"] = "adaptive",
    alpha: float = 1.0,
    policy: Policy = "skip",
    formula: Formula = "paper",
    scale: float = 1.0,
    offset: float = 0.0,
    redundancy_floor: float | Literal["pool"] | None = None,
    lam_max: float | None = None,
    calibration_top_n: int | None = None,
    trace: bool = True,
) -> Selection:
    """Select chunks greedily by α·relevance − λ·redundancy within ``budget`` tokens.

    ``query_embedding`` (d,) and ``chunk_embeddings`` (N, d) may be unnormalised; they are
    normalised once (a zero, NaN or infinite vector raises :class:`InputError` naming the
    chunk). ``token_counts`` (N,) are tokens of the tokenizer the budget is in. The pool's
    order is the retriever's rank order: ties go to the lowest position.

    ``lam="adaptive"`` derives λ from the pool (:func:`adagres.calibrate`; ``formula``,
    ``scale``, ``offset``, ``lam_max`` shape it; ``calibration_top_n`` takes the pool
    statistics over the N most relevant chunks, the paper's "top-N" pool, instead of the
    whole pool); a number ≥ 0 fixes it. ``policy`` is
    ``"skip"`` (stop only when nothing fits or no gain is positive), ``"stop"`` (the paper's
    Algorithm 1: stop when the best chunk does not fit), ``"ratio"`` (gain per token, with the
    best-single-chunk safeguard) or ``"fill"`` (keep adding the least redundant chunks after
    the gains turn non-positive, until nothing fits). ``redundancy_floor`` (τ) counts only
    similarity above τ (a number, or ``"pool"`` for the pool's mean pairwise similarity).
    ``trace=False`` skips the per-candidate record of each step (the fast path; it picks the
    same chunks).

    >>> import numpy as np
    >>> q = np.array([1.0, 0.0])
    >>> C = np.array([[0.94, 0.34], [0.91, 0.42], [0.87, -0.5]])  # 0 and 1 are near-twins
    >>> s = select(q, C, [50, 50, 50], 100, lam=1.0)
    >>> s.indices, s.stop_reason.value, s.tokens_used
    ((0, 2), 'budget_exhausted', 100)
    >>> s.verdict(1).kind.value
    'did_not_fit'
    """
    pool = _prepare(query_embedding, chunk_embeddings, token_counts, budget)
    alpha = v.real(alpha, "alpha", minimum=0.0)
    policy = v.choice(policy, "policy", POLICIES)
    lam_value, calibration = _resolve_lam(
        lam, pool, alpha=alpha, formula=v.choice(formula, "formula", FORMULAS),
        scale=v.real(scale, "scale"), offset=v.real(offset, "offset"),
        lam_max=None if lam_max is None else v.real(lam_max, "lam_max", minimum=0.0),
        top_n=_top_n(calibration_top_n),
    )  # fmt: skip
    tau = _resolve_floor(redundancy_floor, calibration)
    run = _greedy(pool, lam_value, alpha, tau, _POLICY_RULES[policy], trace)
    common = dict(lam=lam_value, alpha=alpha, tau=tau, calibration=calibration, policy=policy)
    result = _finish("adagres", pool, run, **common)
    if policy == "ratio":
        result = _ratio_safeguard(pool, result, trace, common)
    return result


def _ratio_safeguard(pool: _Pool, result: Selection, trace: bool, common: dict) -> Selection:
    """Keep the best single fitting chunk instead of the ratio-greedy set if it scores higher."""
    fits = pool.tokens <= pool.budget
    if not fits.any():
        return result
    alpha = common["alpha"]
    single_value = np.where(fits, alpha * pool.relevance, -np.inf)
    best = int(np.argmax(single_value))
    if single_value[best] <= result.objective or (best,) == result.indices:
        return result
    forced = _replay(pool, [best], common["lam"], alpha, common["tau"], trace, result.stop_reason)
    note = (
        f"ratio safeguard: the best single chunk (position {best}, F = {single_value[best]:.4f}) "
        f"beats the gain-per-token set (F = {result.objective:.4f}, {result.size} chunks)"
    )
    return _finish("adagres", pool, forced, note=note, **common)


def _replay(
    pool: _Pool,
    order: list[int],
    lam: float,
    alpha: float,
    tau: float | None,
    trace: bool,
    final_reason: StopReason,
) -> tuple[list[int], list[Step], StopReason, np.ndarray | None]:
    """Record a given pick order as steps (gain = marginal F gain at each pick).

    Used for sets chosen by something other than a greedy score (the exact optimum, the
    ratio safeguard). The last step is a non-accepted step with every remaining chunk's
    marginal gain, so verdicts work as for any other selection.
    """
    chunks, n = pool.chunks, pool.chunks.shape[0]
    relevance_term = alpha * pool.relevance
    redundancy = np.zeros(n)
    in_play = np.ones(n, dtype=bool)
    steps: list[Step] = []
    rows: list[np.ndarray] = []
    used = 0
    for number, chunk in enumerate([*order, None], start=1):
        gain = relevance_term - lam * redundancy
        eligible = in_play & (pool.tokens <= pool.budget - used)
        last = chunk is None
        record = (
            _candidates(lam * redundancy, gain, gain, eligible, in_play) if trace or last else None
        )
        if last:
            masked = np.where(in_play, gain, -np.inf)
            nxt = int(np.argmax(masked)) if in_play.any() else None
            steps.append(
                (number, nxt, False, None if nxt is None else int(pool.tokens[nxt]),
                     None if nxt is None else float(relevance_term[nxt]),
                     None if nxt is None else float(lam * redundancy[nxt]),
                     None if nxt is None else float(gain[nxt]),
                     None if nxt is None else float(gain[nxt]),
                     None, None, None, used, pool.budget - used, record)
            )  # fmt: skip
            break
        used += int(pool.tokens[chunk])
        steps.append(
            (number, chunk, True, int(pool.tokens[chunk]), float(relevance_term[chunk]),
                 float(lam * redundancy[chunk]), float(gain[chunk]), float(gain[chunk]),
                 None, None, None, used, pool.budget - used, record)
        )  # fmt: skip
        in_play[chunk] = False
        similarity = (chunks @ chunks[chunk]).astype(np.float64)
        rows.append(similarity)
        redundancy += similarity if tau is None else np.maximum(similarity - tau, 0.0)
    pick_similarity = _frozen(np.array(rows).reshape(len(rows), n)) if trace else None
    return list(order), steps, final_reason, pick_similarity


def objective(
    query_embedding: Any,
    chunk_embeddings: Any,
    indices: Any,
    lam: float,
    *,
    alpha: float = 1.0,
    redundancy_floor: float | None = None,
) -> float:
    """F(S) = α·Σ_{i∈S} r_i − λ·Σ_{i<j∈S} s_ij for the chunks at pool positions ``indices``.

    >>> import numpy as np
    >>> q = np.array([1.0, 0.0]); C = np.array([[1.0, 0.0], [0.6, 0.8]])
    >>> round(objective(q, C, [0, 1], 0.5), 6)  # (1.0 + 0.6) - 0.5 * 0.6
    1.3
    """
    chunks = v.unit_rows(chunk_embeddings)
    query = v.unit_vector(query_embedding, chunks.shape[1])
    picks = v.indices(indices, chunks.shape[0])
    relevance = (chunks @ query.astype(chunks.dtype)).astype(np.float64)
    pool = _Pool(chunks, relevance, np.zeros(chunks.shape[0], dtype=np.int64), 0, 0.0)
    tau = None if redundancy_floor is None else v.real(redundancy_floor, "redundancy_floor")
    return _objective(pool, picks, v.real(lam, "lam"), v.real(alpha, "alpha"), tau)


# --------------------------------------------------------------------------- verdicts


_KIND_INDEX = {kind: i for i, kind in enumerate(VerdictKind)}


def _final_kind(reason: StopReason) -> VerdictKind:
    """The verdict of a chunk that was in play and fitting when the run stopped."""
    if reason is StopReason.OPTIMAL:
        return VerdictKind.NOT_IN_OPTIMUM
    if reason is StopReason.NO_POSITIVE_GAIN:
        return VerdictKind.NON_POSITIVE_GAIN
    return VerdictKind.OUTSCORED


def _verdict(selection: Selection, i: int) -> Verdict:
    steps = selection.steps
    tokens = int(selection.token_counts[i])
    picked = {s.winner: s for s in steps if s.accepted}
    history = _history(steps, i)
    if i in picked:
        s = picked[i]
        return Verdict(i, VerdictKind.SELECTED, s.number, tokens, s.tokens_available,
                       s.relevance_term, s.redundancy_term, s.gain, s.runner_up,
                       s.runner_up_gain, history, _sources(selection, i, s.number - 1))  # fmt: skip
    last = steps[-1]
    relevance_term = float(selection.alpha * selection.relevance[i])
    if selection.respects_budget and selection.stop_reason is not StopReason.OPTIMAL:
        for s in steps:
            if tokens > s.tokens_available:
                return Verdict(i, VerdictKind.DID_NOT_FIT, s.number, tokens, s.tokens_available,
                               relevance_term, None, None, None, None, history, ())  # fmt: skip
    c = last.candidates
    gain = float(c.gain[i]) if c is not None else None
    redundancy_term = float(c.redundancy_term[i]) if c is not None else None
    kind = _final_kind(selection.stop_reason)
    return Verdict(i, kind, last.number, tokens, last.tokens_available, relevance_term,
                   redundancy_term, gain, None, None, history,
                   _sources(selection, i, len(selection.indices)))  # fmt: skip


def _history(steps: tuple[Step, ...], i: int) -> tuple[GainAtStep, ...]:
    rows = []
    for s in steps:
        c = s.candidates
        if c is None or not c.in_play[i]:
            continue
        rows.append(
            GainAtStep(s.number, float(c.gain[i]), float(c.score[i]), bool(c.eligible[i]),
                       s.winner, s.gain, s.score)
        )  # fmt: skip
    return tuple(rows)


def _sources(
    selection: Selection, i: int, n_picks: int, top: int = 3
) -> tuple[tuple[int, float], ...]:
    """The picks made before the verdict's step that are most similar to chunk i."""
    if selection.pick_similarity is None or n_picks == 0:
        return ()
    sims = selection.pick_similarity[:n_picks, i]
    order = np.argsort(-sims, kind="stable")[:top]
    return tuple((selection.indices[k], float(sims[k])) for k in order)
