"""The record of a given pick order: the exact optimum, the ratio safeguard, the variants.

A set chosen by something other than the greedy score still gets the record every greedy
run has, so verdicts, F and the step gains compare across strategies: :func:`replay` walks
the order and records at each pick the marginal F gain of every chunk at the λ and τ given.

One product per pick (the pick's cosine row, :meth:`PreparedPool.similarities`); a traced
replay keeps the rows and builds every step's per-candidate arrays at the end in a few
whole-matrix operations, with the same float operations in the same order as a step by step
sum, so each step holds the bits a step by step replay would (``tests/test_replay.py``).
"""

from __future__ import annotations

import numpy as np

from .arrays import frozen
from .engine import accumulate_rows
from .loop import Run, Terms
from .prepared import PreparedPool
from .records import Candidates, Step, StopReason

__all__ = ["replay"]


def replay(
    pool: PreparedPool,
    budget: int,
    order: list[int],
    terms: Terms,
    trace: bool,
    final_reason: StopReason,
) -> Run:
    """Record a given pick order as steps (gain = the marginal F gain at each pick).

    The last step is a non-accepted step with every remaining chunk's marginal gain and the
    chunk with the largest one, so verdicts work as for any other selection. ``trace``:
    every step carries its per-candidate numbers and the run its picks' cosine rows.
    """
    tokens, n, lam, tau = pool.tokens, pool.n_chunks, terms.lam, terms.tau
    relevance_term = terms.alpha * pool.relevance
    k = len(order)
    picks = np.asarray(order, dtype=np.intp).reshape(k)
    # redundancy[t]: Σ of the floored cosine rows of the first t picks (t = 0…k)
    if trace:  # every step's sums, added one pick at a time, in order
        rows = np.empty((k, n))
        for t, chunk in enumerate(order):
            rows[t] = pool.similarities(chunk)
        redundancy = np.zeros((k + 1, n))
        redundancy[1:] = rows if tau is None else np.maximum(rows - tau, 0.0)
        accumulate_rows(np.add, redundancy)
        winner_redundancy = redundancy[np.arange(k), picks]
    else:  # the picks' own sums and the last row only: O(N) memory
        total, winner_redundancy = np.zeros(n), np.empty(k)
        for t, chunk in enumerate(order):
            winner_redundancy[t] = total[chunk]
            row = pool.similarities(chunk).astype(np.float64)
            total += row if tau is None else np.maximum(row - tau, 0.0)
        redundancy = total[None, :]
    term = np.multiply(redundancy, lam, out=redundancy)  # λ·R in place: one k×N array less
    gain = relevance_term - term
    pick_at = np.full(n, k + 1)
    pick_at[picks] = np.arange(k)
    first = 0 if trace else k  # the first step whose candidates are recorded
    in_play = pick_at[None, :] >= np.arange(first, k + 1)[:, None]
    used = np.concatenate([[0], np.cumsum(tokens[picks], dtype=np.int64)])
    eligible = in_play & (tokens[None, :] <= (budget - used[first:])[:, None])
    last_gain = gain[-1].copy()
    out = ~in_play
    gain[out] = np.nan
    term[out] = np.nan
    base = frozen(np.array(relevance_term, dtype=np.float64))  # the gain's relevance term
    gain, term, eligible, in_play = map(frozen, (gain, term, eligible, in_play))
    # the rows are views; the score a replay records is the marginal gain
    candidates = [
        Candidates(redundancy_term=r, gain=g, score=g, eligible=e, in_play=p, score_base=base)
        for r, g, e, p in zip(term, gain, eligible, in_play, strict=True)
    ]

    winner_gain = relevance_term[picks] - lam * winner_redundancy
    spent = int(used[-1])
    # each pick, then the next best: the eligible chunk with the largest gain (ties: the
    # lowest position), as (chunk, accepted, ℓ, relevance term, gain, tokens used, candidates)
    decided = [
        *zip(
            order,
            [True] * k,
            tokens[picks].tolist(),
            relevance_term[picks].tolist(),
            winner_gain.tolist(),
            used[1:].tolist(),
            candidates[:k] if trace else [None] * k,
            strict=True,
        )
    ]
    nxt = int(np.argmax(np.where(eligible[-1], last_gain, -np.inf))) if eligible[-1].any() else None
    if nxt is not None:
        next_best = float(relevance_term[nxt]), float(last_gain[nxt])
        decided.append((nxt, False, int(tokens[nxt]), *next_best, spent, candidates[-1]))
    # a replayed step's score is the marginal gain, relevance minus redundancy
    steps = [
        Step(
            number=t + 1,
            winner=chunk,
            accepted=accepted,
            tokens_used=used_t,
            tokens_left=budget - used_t,
            winner_tokens=size,
            relevance_term=relevance,
            redundancy_term=relevance - gain,
            gain=gain,
            score=gain,
            candidates=cand,
            score_relevance=relevance,
            score_redundancy=relevance - gain,
        )
        for t, (chunk, accepted, size, relevance, gain, used_t, cand) in enumerate(decided)
    ]
    if nxt is None:
        steps.append(Step.stop(k + 1, spent, budget, candidates[-1]))
    pick_similarity = frozen(rows) if trace else None
    return Run(picks=list(order), steps=steps, reason=final_reason, pick_similarity=pick_similarity)
