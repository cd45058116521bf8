"""Run every strategy on every query at every budget: one row of metrics per run.

A query travels to a worker as a :class:`Task` (its prepared pool, texts, gold positions
and answers); :func:`evaluate_task` runs the strategies on it and measures each selection
with :func:`adagres.core.metrics.evaluate`, so a row's numbers are that function's numbers.
:func:`evaluate_cases` spreads the tasks over ``workers`` processes and returns the rows in
task order; BLAS runs one thread in every mode, so the serial and the parallel run give the
same bits (only ``time_ms`` differs between runs).
"""

from __future__ import annotations

import contextlib
import functools
import pickle
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any

from ..core.guarantee import guarantee
from ..core.metrics import answer_found, evaluate
from ..core.prepared import PreparedPool
from ..errors import InputError, SolverError
from .cases import Case
from .strategies import Configuration

__all__ = [
    "NOT_RUN",
    "QUERY_COLUMNS",
    "ROW_COLUMNS",
    "Task",
    "evaluate_cases",
    "evaluate_task",
    "query_record",
    "short_message",
]

#: The fields of one row (one strategy on one query at one budget).
ROW_COLUMNS = (
    "corpus",
    "query_id",
    "strategy",
    "budget",
    "solved",
    "error",
    "size",
    "tokens_used",
    "budget_use",
    "objective",
    "lam",
    "stop_reason",
    "iou",
    "gold_recall",
    "gold_precision",
    "answer_found",
    "redundancy_mean",
    "redundancy_max",
    "near_duplicates",
    "repeated_text",
    "stitched",
    "left_out",
    "left_out_words",
    "tokens_saved",
    "time_ms",
    "paper_bound",
    "upper_bound",
)
#: The fields of one query record.
QUERY_COLUMNS = (
    "corpus",
    "query_id",
    "query",
    "n_chunks",
    "pool_tokens",
    "n_gold",
    "answers",
    "answer_in_pool",
    "mean_similarity",
    "tokenizer",
    "source",
)

Progress = Callable[[int, int], None]
#: The error of a row whose strategy was not run on that query (``exact_queries``).
NOT_RUN = "not run: exact runs on the first queries of each pool set only (exact_queries)"


@dataclass(frozen=True, eq=False)
class Task:
    """What a worker needs for one query (pickles; no model, no files)."""

    corpus: str
    query_id: str
    pool: PreparedPool
    texts: tuple[str, ...]
    gold: tuple[int, ...] | None
    answers: tuple[str, ...]
    skip: tuple[str, ...] = ()

    @classmethod
    def of(cls, case: Case, skip: Sequence[str] = ()) -> Task:
        """The task of one case; ``skip`` names strategies not run on it."""
        return cls(
            case.corpus,
            case.query_id,
            case.pool.prepared,
            case.pool.texts,
            case.gold_positions,
            case.answers,
            tuple(skip),
        )


def query_record(case: Case) -> dict[str, Any]:
    """The per-query facts a report states (no selection involved)."""
    pool = case.pool
    answers = list(case.answers)
    return {
        "corpus": case.corpus,
        "query_id": case.query_id,
        "query": pool.query,
        "n_chunks": len(pool),
        "pool_tokens": int(pool.prepared.tokens.sum()),
        "n_gold": len(case.gold_positions or ()),
        "answers": answers,
        "answer_in_pool": answer_found(answers, "\n".join(pool.texts)) if answers else None,
        "mean_similarity": pool.prepared.mean_similarity,
        "tokenizer": pool.tokenizer,
        "source": case.source,
    }


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS limited to one thread inside (threadpoolctl when installed)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # without it the BLAS default stays; the results are still seeded
        yield
        return
    with threadpool_limits(1):
        yield


def evaluate_task(
    task: Task, strategies: Sequence[Configuration], budgets: Sequence[int]
) -> list[dict[str, Any]]:
    """One row per (budget, strategy), in that order. A :class:`~adagres.SolverError` gives
    a row with ``solved=False`` and the message; any other error propagates, with a note
    naming the strategy, the query and the budget."""
    with one_blas_thread():
        return [_run_one(task, s, int(budget)) for budget in budgets for s in strategies]


def _run_one(task: Task, strategy: Configuration, budget: int) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(ROW_COLUMNS)
    row.update(corpus=task.corpus, query_id=task.query_id, strategy=strategy.name, budget=budget)
    if strategy.name in task.skip:
        row.update(solved=False, error=NOT_RUN)
        return row
    start = time.perf_counter()
    try:
        selection = strategy.fn(task.pool, budget, task.texts)
    except SolverError as error:
        row.update(
            solved=False,
            error=short_message(str(error)),
            time_ms=1e3 * (time.perf_counter() - start),
        )
        if error.result is not None:  # a search stopped by its limit: what it proved
            row["upper_bound"] = error.result.upper_bound
        return row
    except Exception as error:
        error.add_note(f"strategy {strategy.name!r} on {task.corpus} {task.query_id} at {budget}")
        raise
    elapsed = 1e3 * (time.perf_counter() - start)
    metrics = evaluate(
        selection, task.pool, gold=task.gold, answers=task.answers or None, texts=task.texts
    )
    measured = metrics.as_dict()
    row.update({k: v for k, v in measured.items() if k in row and k not in ("strategy", "budget")})
    row.update(
        solved=True,
        lam=selection.lam,
        stop_reason=selection.stop_reason.value,
        gold_recall=metrics.recall,
        gold_precision=metrics.precision,
        # what packing did: picks stitched to a passage, sentences left out (and their
        # words) because the context held them, tokens the budget did not pay for
        stitched=len(selection.merges),
        left_out=sum(len(p.omissions) for p in selection.passages),
        left_out_words=sum(len(o.text.split()) for p in selection.passages for o in p.omissions),
        tokens_saved=selection.tokens_saved,
        time_ms=elapsed,
    )
    if strategy.proves_optimum:  # the paper's bound on F(greedy), at this optimum
        pool = task.pool
        found = guarantee(pool.chunks, pool.tokens, budget, selection.lam)
        row["paper_bound"] = found.bound(metrics.objective)
        row["upper_bound"] = metrics.objective  # proven: the optimum itself
    return row


def short_message(message: str, limit: int = 120) -> str:
    """The first clause of an error message (before a parenthesis or a second sentence).

    >>> short_message("exact: 60 chunks fit; it accepts 40 (about 10 s). Use fewer.")
    'exact: 60 chunks fit; it accepts 40'
    """
    cut = min((i for i in (message.find(" ("), message.find(". ")) if i > 0), default=None)
    return message[:cut][:limit]


def evaluate_cases(
    cases: Sequence[Case],
    strategies: Sequence[Configuration],
    budgets: Sequence[int],
    *,
    workers: int = 2,
    progress: Progress | None = None,
    exact_queries: int | None = None,
) -> list[dict[str, Any]]:
    """Every row of every case, in case order (then budget, then strategy).

    ``exact_queries`` runs ``exact`` on the first that many cases of each corpus only (it
    is the one strategy that may search for seconds); the others get a "not run" row.

    ``workers`` > 1 runs the cases in that many fresh processes (``spawn``: the parent may
    hold the embedding model and its threads); each strategy's function must pickle.
    ``progress(done, total)`` is called after each case.
    """
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise InputError(f"workers: expected a whole number >= 1, got {workers!r}")
    seen: dict[str, int] = {}
    searches = tuple(s.name for s in strategies if s.proves_optimum)  # may take seconds
    tasks = []
    for case in cases:
        seen[case.corpus] = seen.get(case.corpus, 0) + 1
        capped = exact_queries is not None and seen[case.corpus] > exact_queries
        tasks.append(Task.of(case, searches if capped else ()))
    run = functools.partial(evaluate_task, strategies=tuple(strategies), budgets=tuple(budgets))
    rows: list[dict[str, Any]] = []
    with contextlib.ExitStack() as stack:
        done_tasks: Iterator[list[dict[str, Any]]] = map(run, tasks)
        if workers > 1 and len(tasks) > 1:
            for strategy in strategies:
                try:
                    pickle.dumps(strategy.fn)
                except (pickle.PicklingError, AttributeError, TypeError) as error:
                    raise InputError(
                        f"strategy {strategy.name!r} cannot be sent to a worker process "
                        f"({error}); register a module-level function or a functools.partial "
                        "of one, or run with --workers 1"
                    ) from None
            context = get_context("spawn")
            ex = stack.enter_context(ProcessPoolExecutor(workers, mp_context=context))
            done_tasks = ex.map(run, tasks, chunksize=max(1, len(tasks) // (workers * 8)))
        for done, task_rows in enumerate(done_tasks, 1):
            rows.extend(task_rows)
            if progress:
                progress(done, len(tasks))
    return rows
