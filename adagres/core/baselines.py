"""Baseline strategies on the same pool, budget and tokenizer (SPEC.md, "Baselines").

Every baseline returns the same :class:`~adagres.core.selection.Selection` as
:func:`adagres.select`, with a step record, so every metric and view works on any of
them. ``lam`` is the λ at which F (``Selection.objective``) and the per-step gains are
reported; by default it is the adaptive λ, so F is comparable with AdaGReS's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from ..errors import InputError, SolverError
from . import validate as v
from .calibration import FALLBACK_LAM, FORMULAS, Calibration, mean_pairwise_similarity
from .selection import (
    Selection,
    StopReason,
    _finish,
    _greedy,
    _objective,
    _Pool,
    _prepare,
    _replay,
    _resolve_floor,
    _resolve_lam,
    _Rule,
    select,
)

__all__ = [
    "STRATEGIES",
    "exact",
    "mmr",
    "reference_code",
    "run",
    "run_comparable",
    "topk_budget",
    "topk_same_k",
]

#: Largest pool :func:`exact` accepts by default (pairs grow as N²/2).
EXACT_MAX_CHUNKS = 40
#: Seconds :func:`exact` gives the solver by default before it reports no proven optimum.
EXACT_TIME_LIMIT = 30.0


def _setup(
    query_embedding: Any,
    chunk_embeddings: Any,
    token_counts: Any,
    budget: Any,
    lam: Any,
    alpha: Any,
    formula: str,
    redundancy_floor: Any = None,
) -> tuple[_Pool, float, float, float | None, Calibration]:
    pool = _prepare(query_embedding, chunk_embeddings, token_counts, budget)
    alpha = v.real(alpha, "alpha", minimum=0.0)
    lam_value, calibration = _resolve_lam(
        lam, pool, alpha=alpha, formula=v.choice(formula, "formula", FORMULAS),
        scale=1.0, offset=0.0, lam_max=None,
    )  # fmt: skip
    return pool, lam_value, alpha, _resolve_floor(redundancy_floor, calibration), calibration


def topk_budget(
    query_embedding: Any,
    chunk_embeddings: Any,
    token_counts: Any,
    budget: int,
    *,
    lam: float | Literal["adaptive"] = "adaptive",
    alpha: float = 1.0,
    formula: str = "paper",
    trace: bool = True,
) -> Selection:
    """Chunks in relevance order, skipping any that does not fit, until nothing fits.

    >>> import numpy as np
    >>> q = np.array([1.0, 0.0]); C = np.array([[0.9, 0.1], [0.95, 0.05], [0.5, 0.5]])
    >>> topk_budget(q, C, [60, 60, 30], 100).indices
    (1, 2)
    """
    pool, lam_value, alpha, tau, calibration = _setup(
        query_embedding, chunk_embeddings, token_counts, budget, lam, alpha, formula
    )
    rule = _Rule(score="relevance", budget="skip", stop_nonpositive=False)
    run_ = _greedy(pool, lam_value, alpha, tau, rule, trace)
    return _finish("topk_budget", pool, run_, lam=lam_value, alpha=alpha, tau=tau,
                   calibration=calibration)  # fmt: skip


def topk_same_k(
    query_embedding: Any,
    chunk_embeddings: Any,
    token_counts: Any,
    budget: int,
    *,
    k: int | None = None,
    lam: float | Literal["adaptive"] = "adaptive",
    alpha: float = 1.0,
    formula: str = "paper",
    trace: bool = True,
) -> Selection:
    """The paper's "simple" baseline: the ``k`` most relevant chunks that fit the budget.

    ``k`` defaults to the size of the AdaGReS selection (policy ``skip``) for the same query,
    budget and λ settings. A chunk that would break the budget is skipped, as in
    :func:`topk_budget`.
    """
    pool, lam_value, alpha, tau, calibration = _setup(
        query_embedding, chunk_embeddings, token_counts, budget, lam, alpha, formula
    )
    if k is None:
        k = select(query_embedding, chunk_embeddings, token_counts, budget, lam=lam,
                   alpha=alpha, formula=formula, trace=False).size  # fmt: skip
    elif isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise InputError(f"k: expected a whole number >= 0, got {k!r}")
    rule = _Rule(score="relevance", budget="skip", stop_nonpositive=False, max_picks=int(k))
    run_ = _greedy(pool, lam_value, alpha, tau, rule, trace)
    return _finish("topk_same_k", pool, run_, lam=lam_value, alpha=alpha, tau=tau,
                   calibration=calibration, params={"k": int(k)})  # fmt: skip


def mmr(
    query_embedding: Any,
    chunk_embeddings: Any,
    token_counts: Any,
    budget: int,
    *,
    lambda_mmr: float = 0.5,
    lam: float | Literal["adaptive"] = "adaptive",
    alpha: float = 1.0,
    formula: str = "paper",
    trace: bool = True,
) -> Selection:
    """Maximal marginal relevance under the budget: λ_mmr·r_i − (1 − λ_mmr)·max_{j∈S} s_ij.

    The first pick scores λ_mmr·r_i (nothing selected yet). Only chunks that fit compete; the
    run continues until nothing fits (MMR has no stopping score). ``step.score`` is the MMR
    score; ``step.gain`` is the marginal F gain at ``lam``.
    """
    lambda_mmr = v.real(lambda_mmr, "lambda_mmr", minimum=0.0)
    if lambda_mmr > 1:
        raise InputError(f"lambda_mmr: must be in [0, 1], got {lambda_mmr}")
    pool, lam_value, alpha, tau, calibration = _setup(
        query_embedding, chunk_embeddings, token_counts, budget, lam, alpha, formula
    )
    rule = _Rule(score="mmr", budget="skip", stop_nonpositive=False, lambda_mmr=lambda_mmr)
    run_ = _greedy(pool, lam_value, alpha, tau, rule, trace)
    return _finish("mmr", pool, run_, lam=lam_value, alpha=alpha, tau=tau,
                   calibration=calibration, params={"lambda_mmr": lambda_mmr})  # fmt: skip


def exact(
    query_embedding: Any,
    chunk_embeddings: Any,
    token_counts: Any,
    budget: int,
    *,
    lam: float | Literal["adaptive"] = "adaptive",
    alpha: float = 1.0,
    formula: str = "paper",
    redundancy_floor: float | Literal["pool"] | None = None,
    max_chunks: int = EXACT_MAX_CHUNKS,
    time_limit: float = EXACT_TIME_LIMIT,
    trace: bool = True,
) -> Selection:
    """The subset with the largest F within the budget, solved as a MILP with SciPy/HiGHS.

    F's pair terms are linearised compactly, one variable per chunk for its penalties and
    one for its rewards (negative cosines) with tight bounds (see ``_solve_exact``).
    Pools of more than ``max_chunks`` chunks that fit are refused with :class:`SolverError`,
    as is a solve that does not prove optimality within ``time_limit`` seconds. The empty
    set (F = 0) is a candidate, so F(exact) >= 0. The steps list the optimal set in
    relevance order with each chunk's marginal gain in that order.
    """
    pool, lam_value, alpha, tau, calibration = _setup(
        query_embedding, chunk_embeddings, token_counts, budget, lam, alpha, formula,
        redundancy_floor,
    )  # fmt: skip
    chosen = _solve_exact(pool, lam_value, alpha, tau, max_chunks, time_limit)
    order = sorted(chosen, key=lambda i: (-pool.relevance[i], i))
    run_ = _replay(pool, order, lam_value, alpha, tau, trace, StopReason.OPTIMAL)
    return _finish("exact", pool, run_, lam=lam_value, alpha=alpha, tau=tau,
                   calibration=calibration)  # fmt: skip


def _solve_exact(
    pool: _Pool, lam: float, alpha: float, tau: float | None, max_chunks: int, time_limit: float
) -> list[int]:
    """Maximise F over the subsets within the budget with a compact (Glover) MILP.

    With W = λ·(pair weights, i < j) split into its positive part P (penalties) and the
    magnitude of its negative part Q (rewards), F = α·r·x − Σ_i x_i·(P_i·x) + Σ_i x_i·(Q_i·x).
    Each product gets one continuous variable: p_i >= P_i·x − U_i·(1 − x_i) and
    q_i <= Q_i·x, q_i <= V_i·x_i, where the bounds U_i, V_i are the sums of the largest
    weights of row i that a set within the budget can hold (the k of the largest set that
    fits; k − 1 others when i is in it). That is 3n variables instead of n + n(n−1)/2, and
    the tight bounds make the relaxation strong: about 3x faster than the pairwise
    linearisation at 30 chunks.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import csr_array, hstack, identity, vstack

    from .guarantee import largest_set_size

    live = np.flatnonzero(pool.tokens <= pool.budget)  # a chunk larger than T is never in a set
    n = len(live)
    if n > max_chunks:
        raise SolverError(
            f"exact: {n} chunks fit the budget of {pool.budget} tokens; the exact solver "
            f"accepts at most {max_chunks} (its search grows exponentially: about 10 s at 30 "
            "chunks). Use a smaller pool or budget, or raise max_chunks."
        )
    if n == 0:
        return []
    sub = pool.chunks[live]
    gram = (sub @ sub.T).astype(np.float64)
    if tau is not None:
        gram = np.maximum(gram - tau, 0.0)
    weights = np.triu(lam * gram, k=1)
    penalty, reward = np.maximum(weights, 0.0), np.maximum(-weights, 0.0)
    k = largest_set_size(pool.tokens[live], pool.budget)

    def top_sum(matrix: np.ndarray, count: int) -> np.ndarray:
        return -np.sort(-matrix, axis=1)[:, : max(count, 0)].sum(axis=1)

    upper_p, upper_q = top_sum(penalty, k), top_sum(reward, k - 1)
    eye = identity(n, format="csr")
    zero = csr_array((n, n))
    tokens = csr_array(pool.tokens[live].astype(np.float64)[None, :])
    # Rows: budget; P·x + U·x_i − p <= U; q − Q·x <= 0; q − V·x_i <= 0.
    matrix = vstack(
        [
            hstack([tokens, csr_array((1, 2 * n))]),
            hstack([csr_array(penalty) + csr_array(np.diag(upper_p)), -eye, zero]),
            hstack([-csr_array(reward), zero, eye]),
            hstack([-csr_array(np.diag(upper_q)), zero, eye]),
        ]
    ).tocsr()
    upper = np.concatenate([[float(pool.budget)], upper_p, np.zeros(n), np.zeros(n)])
    cost = np.concatenate([-alpha * pool.relevance[live], np.ones(n), -np.ones(n)])
    result = milp(
        cost,
        constraints=[LinearConstraint(matrix, -np.inf, upper)],
        integrality=np.concatenate([np.ones(n), np.zeros(2 * n)]),
        bounds=Bounds(0.0, np.concatenate([np.ones(n), np.full(2 * n, np.inf)])),
        options={"time_limit": float(time_limit), "mip_rel_gap": 1e-9, "presolve": True},
    )
    if result.status != 0 or result.x is None:
        raise SolverError(
            f"exact: the solver did not prove an optimum for {n} chunks within "
            f"{time_limit:g} s ({result.message})"
        )
    chosen = [int(live[i]) for i in range(n) if result.x[i] > 0.5]
    # The solver works to a tolerance; never report a set worse than the empty one.
    if _objective(pool, chosen, lam, alpha, tau) < 0:
        return []
    return chosen


def reference_lam(relevance: np.ndarray, unit_chunks: np.ndarray, k: int, alpha: float) -> float:
    """β as the authors' code computes it: integer k, fallback 0.01 only when ρ̄ == 0 or k <= 1."""
    rho = mean_pairwise_similarity(unit_chunks) if unit_chunks.shape[0] >= 2 else 0.0
    if rho == 0 or k <= 1:
        return FALLBACK_LAM
    return float(alpha * relevance.mean() / (((k - 1) / 2) * rho))


def reference_code(
    query_embedding: Any,
    chunk_embeddings: Any,
    token_counts: Any,
    budget: int,
    *,
    texts: Sequence[str],
    lam: float | None = None,
    alpha: float = 1.0,
    enforce_budget: bool = True,
    trace: bool = True,
) -> Selection:
    """What the authors' released code does: k = max(1, ⌊T / mean character length⌋) picks.

    Their rule divides the token budget by the mean length of the chunks in *characters*,
    computes β from the pool with that integer k (falling back to 0.01 only when the mean
    pairwise cosine is exactly 0 or k <= 1, so a negative ρ̄ gives a negative β), then adds
    the chunk with the largest gain k times with no gain check and no budget check. Their
    code samples 500 chunks for the mean length when the pool is larger; here the whole
    pool is used, so the result is deterministic. ``lam`` fixes β instead.

    This project never lets a strategy exceed the budget: with ``enforce_budget=True`` (the
    default) the run stops, with reason ``budget_exhausted``, at the first pick that would
    overflow it. ``enforce_budget=False`` reproduces the authors' output as is (then
    ``Selection.respects_budget`` is False and ``tokens_used`` may exceed ``budget``).
    """
    pool = _prepare(query_embedding, chunk_embeddings, token_counts, budget)
    alpha = v.real(alpha, "alpha", minimum=0.0)
    if isinstance(texts, str) or len(texts) != pool.chunks.shape[0]:
        got = "a single string" if isinstance(texts, str) else f"{len(texts)} texts"
        raise InputError(f"texts: got {got}, the pool has {pool.chunks.shape[0]} chunks")
    mean_chars = float(np.mean([len(t) for t in texts]))
    k = max(1, int(pool.budget // mean_chars)) if mean_chars > 0 else 1
    lam_value = (
        reference_lam(pool.relevance, pool.chunks, k, alpha) if lam is None else v.real(lam, "lam")
    )
    rule = _Rule(score="gain", budget="stop" if enforce_budget else "ignore",
                 stop_nonpositive=False, max_picks=k)  # fmt: skip
    run_ = _greedy(pool, lam_value, alpha, None, rule, trace)
    _, calibration = _resolve_lam(
        "adaptive", pool, alpha=alpha, formula="paper", scale=1.0, offset=0.0, lam_max=None
    )
    return _finish("reference_code", pool, run_, lam=lam_value, alpha=alpha, tau=None,
                   calibration=calibration, respects_budget=enforce_budget,
                   params={"k": k, "mean_chars": mean_chars})  # fmt: skip


#: Every strategy by name, as the CLI and the app offer them.
STRATEGIES: tuple[str, ...] = (
    "adagres", "topk_same_k", "topk_budget", "mmr", "exact", "reference_code",
)  # fmt: skip


def run(
    strategy: str,
    query_embedding: Any,
    chunk_embeddings: Any,
    token_counts: Any,
    budget: int,
    *,
    texts: Sequence[str] | None = None,
    **options: Any,
) -> Selection:
    """Run any strategy by name with the keywords it accepts (others raise a clear error)."""
    v.choice(strategy, "strategy", STRATEGIES)
    args = (query_embedding, chunk_embeddings, token_counts, budget)
    if strategy == "adagres":
        return select(*args, **options)
    if strategy == "reference_code":
        if texts is None:
            raise InputError("reference_code: needs the chunk texts (it counts characters)")
        lam = options.pop("lam", None)
        return reference_code(*args, texts=texts, lam=None if lam == "adaptive" else lam,
                              **options)  # fmt: skip
    function = {"topk_same_k": topk_same_k, "topk_budget": topk_budget, "mmr": mmr,
                "exact": exact}[strategy]  # fmt: skip
    try:
        return function(*args, **options)
    except TypeError as exc:
        raise InputError(f"{strategy}: {exc}") from None


def run_comparable(
    strategy: str,
    query_embedding: Any,
    chunk_embeddings: Any,
    token_counts: Any,
    budget: int,
    *,
    texts: Sequence[str] | None = None,
    lam: float | Literal["adaptive"] = "adaptive",
    alpha: float = 1.0,
    policy: str = "skip",
    formula: str = "paper",
    scale: float = 1.0,
    offset: float = 0.0,
    redundancy_floor: float | Literal["pool"] | None = None,
    lambda_mmr: float = 0.5,
    trace: bool = True,
    reference: Selection | None = None,
) -> Selection:
    """Run ``strategy`` so that its numbers compare with AdaGReS under the same settings.

    The AdaGReS run for these settings (``reference`` if the caller has it) fixes what the
    baselines share with it: F and the step gains are reported at its λ (so scale, offset
    and the adaptive formula apply to every strategy alike), ``topk_same_k`` takes its size
    as k, and ``exact`` optimises F with the same redundancy floor. ``reference_code`` uses
    its own β with an adaptive λ (that is the authors' rule) and the given λ otherwise.
    The app and :func:`adagres.core.sweep.budget_sweep` both go through here.
    """
    args = (query_embedding, chunk_embeddings, token_counts, budget)
    settings = dict(lam=lam, alpha=alpha, policy=policy, formula=formula, scale=scale,
                    offset=offset, redundancy_floor=redundancy_floor)  # fmt: skip
    if strategy == "adagres":
        return select(*args, trace=trace, **settings)
    if reference is None:
        reference = select(*args, trace=False, **settings)
    if strategy == "reference_code":
        return run(strategy, *args, texts=texts, alpha=alpha, trace=trace,
                   lam=None if lam == "adaptive" else reference.lam)  # fmt: skip
    options: dict[str, Any] = {"lam": reference.lam, "alpha": alpha, "formula": formula}
    if strategy == "topk_same_k":
        options["k"] = reference.size
    elif strategy == "exact":
        options["redundancy_floor"] = redundancy_floor
    elif strategy == "mmr":
        options["lambda_mmr"] = lambda_mmr
    return run(strategy, *args, trace=trace, **options)
