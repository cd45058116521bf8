"""Pool sets: the pools of many queries at once, and one row of numbers per query.

A pool set comes from (see :func:`load_pool_set`):

- a ``.jsonl`` file of pools, one per line;
- a folder of pool files (``.json``, ``.jsonl``, ``.csv``, ``.parquet``; sub-folders are
  not read);
- queries against a Milvus collection: a mapping or a ``.json`` file
  ``{"uri": ..., "collection": ..., "top_n": 20, "queries": ["...", {"query": "...",
  "answers": [...], "gold": ["chunk id", ...]}]}``, retrieved when the set is loaded.

Loading only finds the pieces (a line's byte range, a file); the pools are parsed where they
are summarised, so the parsing runs in parallel too. :func:`summarize` (one row of numbers
per query) runs on the local cores (``ProcessPoolExecutor``) or on a Dask cluster
(``client=``) through one function, so every path gives the rows of the serial run, bit for
bit.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import sys
import threading
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from adagres.core.baselines import run_prepared
from adagres.core.metrics import evaluate
from adagres.core.presets import PRESETS
from adagres.core.settings import Settings
from adagres.core.strategies import ADAGRES, TOPK_BUDGET
from adagres.errors import InputError
from adagres.pools.pool import Pool
from adagres.poolsets.cluster import check_workers_read, map_scattered
from adagres.poolsets.files import PoolSet, Unit, load_pool_set, load_unit
from adagres.stores import lockfiles

__all__ = [
    "COMPARED",
    "SERIAL_BYTES",
    "PoolSet",
    "Unit",
    "load_pool_set",
    "load_unit",
    "prepare_pool",
    "summarize",
    "summarize_pool",
    "summarize_units",
]

#: Column prefix -> (strategy, settings or None for the caller's) of every summary row.
COMPARED: dict[str, tuple[str, Settings | None]] = {
    "topk": (TOPK_BUDGET.name, Settings()),  # the baseline, whatever the sidebar's guard
    "adagres": (ADAGRES.name, None),
    "recommended": (PRESETS["recommended"].strategy, PRESETS["recommended"].settings),
}
#: A set whose files total at most this many bytes is summarised in the calling process by
#: default (:func:`summarize`), where :func:`~adagres.poolsets.files.load_unit` keeps
#: its parsed pools between calls.
SERIAL_BYTES = 32 * 2**20
_TOKENIZER = "cl100k"  # for pools whose file has no token counts, as the app counts them


# --------------------------------------------------------------------------- summaries


def prepare_pool(pool: Pool) -> Pool:
    """``pool`` with token counts (cl100k, as the app counts) and embeddings (the packaged
    model) where its file had none: what a summary, and the app, select from."""
    from adagres.pools.ready import ensure_embeddings, ensure_token_counts

    if pool.token_counts is None:
        pool = ensure_token_counts(pool, _TOKENIZER)
    if pool.raw_embeddings is None or pool.raw_query_embedding is None:
        pool = ensure_embeddings(pool)
    return pool


def summarize_pool(pool: Pool, settings: Settings, budget: int) -> dict[str, Any]:
    """The numbers of one pool (without its place in the set): see :func:`summarize`."""
    pool = prepare_pool(pool)
    prepared = pool.prepared
    gold = [i for i, chunk in enumerate(pool.chunks) if chunk.gold]
    answers = list(pool.answers) or None
    row: dict[str, Any] = {
        "query": pool.query,
        "chunks": len(pool),
        "pool_tokens": int(prepared.tokens.sum()),
        "gold": len(gold),
        "answers": len(pool.answers),
    }
    picks = {}
    for prefix, (strategy, fixed) in COMPARED.items():
        chosen = fixed or settings
        selection = run_prepared(strategy, prepared, budget, chosen, texts=pool.texts, trace=False)
        metrics = evaluate(
            selection, prepared, gold=gold or None, answers=answers, texts=pool.texts
        )
        picks[prefix] = set(selection.indices)
        row[f"{prefix}_size"] = selection.size
        row[f"{prefix}_tokens"] = selection.tokens_used
        row[f"{prefix}_redundancy"] = metrics.redundancy_mean
        row[f"{prefix}_repeated"] = metrics.repeated_text
        row[f"{prefix}_recall"] = metrics.recall
        row[f"{prefix}_answer"] = metrics.answer_found
        if prefix == "adagres":
            row["lambda"] = selection.lam
    row["dropped"] = len(picks["topk"] - picks["adagres"])
    row["dropped_recommended"] = len(picks["topk"] - picks["recommended"])
    return row


def summarize_units(
    units: Sequence[tuple[int, Unit]], settings: Settings, budget: int, *, prepare: bool = True
) -> list[dict[str, Any]]:
    """Rows of these ``(unit index, unit)`` pieces: the one function every path runs.

    With ``prepare=False`` (the parallel paths) a pool that lacks token counts or
    embeddings gets a ``{"pending": True}`` row instead: the caller prepares it, so that no
    worker loads the embedding model or the tokenizer (one model in the caller, not one per
    worker; and neither runs in a forked copy of a process that has started their threads).
    """
    rows = []
    for number, unit in units:
        pools = load_unit(unit)
        for position, pool in enumerate(pools):
            label = unit.label if len(pools) == 1 else f"{unit.label} #{position}"
            place = {"unit": number, "position": position, "label": label}
            vectors = (pool.raw_embeddings, pool.raw_query_embedding, pool.token_counts)
            if not prepare and any(value is None for value in vectors):
                rows.append({**place, "pending": True})
            else:
                rows.append({**place, **summarize_pool(pool, settings, budget)})
    return rows


def _batches(units: Sequence[Unit], count: int) -> list[list[tuple[int, Unit]]]:
    numbered = list(enumerate(units))
    size = max(1, -(-len(numbered) // count))
    return [numbered[i : i + size] for i in range(0, len(numbered), size)]


_EXECUTORS: dict[int, ProcessPoolExecutor] = {}
_EXECUTORS_LOCK = threading.Lock()


def _context() -> Any:
    """forkserver (workers start from a clean process), unless ``__main__`` is a script run
    by path: forkserver and spawn run it again in every worker, and Streamlit runs each page
    as ``__main__``; then fork, which copies this process and runs nothing again."""
    main = sys.modules.get("__main__")
    if getattr(main, "__spec__", None) is None and getattr(main, "__file__", None):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context("forkserver")


def _executor(count: int) -> ProcessPoolExecutor:
    """A process pool of ``count`` workers, started once per process and reused (the app
    summarises again whenever a setting moves; worker start-up is most of a small run)."""
    with _EXECUTORS_LOCK:
        executor = _EXECUTORS.get(count)
        if executor is None:
            # A forked worker lets go of the stores it inherited (a Milvus Lite store's lock
            # would otherwise outlive the process that opened it).
            executor = _EXECUTORS[count] = ProcessPoolExecutor(
                count, mp_context=_context(), initializer=lockfiles.release_inherited
            )
        return executor


def summarize(
    pool_set: PoolSet,
    settings: Settings,
    budget: int,
    *,
    workers: int | None = None,
    client: Any = None,
) -> list[dict[str, Any]]:
    """One row per query of ``pool_set`` at ``budget`` tokens, in the set's order.

    Keys: ``query_id`` (0-based), ``unit`` and ``position`` (where :func:`load_unit` finds its
    pool), ``label``, ``query``, ``chunks``, ``pool_tokens``, ``gold`` and ``answers``
    (how many), ``lambda`` (AdaGReS's λ), and for each prefix of :data:`COMPARED`
    (``topk``, ``adagres``, ``recommended``): ``_size``, ``_tokens``, ``_redundancy`` (mean
    pairwise cosine of the picks), ``_recall`` (gold recall, None without gold) and
    ``_answer`` (an answer string found, None without answers); ``dropped`` (chunks top-k
    keeps that AdaGReS drops) and ``dropped_recommended``.

    ``settings`` apply to ``adagres``; ``topk`` is the plain baseline (no guard, no
    packing) and the preset has its own. ``workers`` processes run the batches (default:
    the local cores; or here, serially, for a set wholly in files of at most
    :data:`SERIAL_BYTES` in all, whose parsed pools this process keeps, so summarising it
    again costs only the selections; 1 runs here, serially); ``client`` (a
    ``distributed.Client``) runs them on its Dask cluster instead: its workers read the
    set's files at the absolute paths this process loaded them from (checked on every
    worker before submission). Pools without token counts or embeddings are prepared here
    (cl100k, the packaged model).
    """
    if not isinstance(settings, Settings):
        raise InputError(f"settings must be an adagres.Settings, got {type(settings).__name__}")
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise InputError(f"budget must be a whole number of tokens >= 0, got {budget!r}")
    if workers is not None and (
        isinstance(workers, bool) or not isinstance(workers, int) or workers < 1
    ):
        raise InputError(f"workers must be a whole number >= 1, got {workers!r}")
    sizes: dict[str, int] = {}  # the bytes of each pool file that the pieces read
    for unit in pool_set.units:
        if unit.path is not None:
            sizes[unit.path] = max(sizes.get(unit.path, 0), unit.end)
    count = min(workers or os.cpu_count() or 1, len(pool_set.units))
    in_files = all(unit.path is not None for unit in pool_set.units)
    if workers is None and in_files and sum(sizes.values()) <= SERIAL_BYTES:
        count = 1  # a small set: parsed once here (load_unit keeps it) beats worker start-up
    work = functools.partial(summarize_units, settings=settings, budget=budget, prepare=False)
    if client is not None:
        check_workers_read(client, sizes)
        batches = _batches(pool_set.units, 4 * max(1, len(client.scheduler_info()["workers"])))
        parts = map_scattered(client, work, batches)
    elif count > 1:
        try:
            parts = list(_executor(count).map(work, _batches(pool_set.units, 4 * count)))
        except BrokenProcessPool:
            with _EXECUTORS_LOCK:  # a worker died (out of memory?): the next call starts anew
                _EXECUTORS.pop(count, None)
            raise
    else:
        parts = [summarize_units(list(enumerate(pool_set.units)), settings, budget)]
    rows = [row for part in parts for row in part]
    pending = sorted({row["unit"] for row in rows if row.get("pending")})
    if pending:  # the pools that need the tokenizer or the model, prepared in this process
        done = summarize_units([(n, pool_set.units[n]) for n in pending], settings, budget)
        rows = [row for row in rows if row["unit"] not in set(pending)] + done
        rows.sort(key=lambda row: (row["unit"], row["position"]))
    return [{"query_id": number, **row} for number, row in enumerate(rows)]
