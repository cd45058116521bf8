"""Cached data for the pages: pools by key, selections, projections, near-duplicate groups.

Pools live in a process-wide registry (``st.cache_resource``) under a short key: the file
stem for bundled pools (``data/*.json``, or ``$ADAGRES_DATA_DIR``), ``upload-<hash>`` for
uploaded files and ``corpus-<hash>`` for pools built from documents. Every other cache is
keyed on that key, the pool's fingerprint and small setting values, never on arrays.

Real corpora (optional data packages, see ``adagres.pools.datasets``): ``fanoutqa-<index>`` is the
FanOutQA dev sub-question pool at that index; :func:`get_pool` rebuilds it on demand (from
the disk cache), so such keys survive the URL round trip on a new session or server.
``drugs-<hash of the parameters>`` is a drug-review pool built in corpus mode; it cannot be
rebuilt from its key, so a link to one falls back to the first pool (with the sidebar's
warning) once the server has restarted.

Projections: the map needs 2-D coordinates. PCA is computed at once; UMAP (seeded) runs in
one background worker per server process and replaces PCA when it is done. Set
``ADAGRES_PROJECTION=pca`` to never start UMAP (tests, benchmarks).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from adagres import baselines, metrics
from adagres.core.result import Selection
from adagres.errors import AdagresError, PoolError
from adagres.pools.io import load_pools
from adagres.pools.pool import Pool

from .state import Settings
from .text import escape_md

__all__ = [
    "ROOT",
    "add_pool",
    "budget_limits",
    "build_drug_pool",
    "bundled_pools",
    "context_frame",
    "data_dir",
    "drug_conditions",
    "drug_pool_key",
    "fanoutqa_key",
    "fanoutqa_questions",
    "get_pool",
    "load_fanoutqa_pool",
    "near_duplicate_groups",
    "pool_frame",
    "pool_keys",
    "pool_label",
    "prepare_pool",
    "projection",
    "projection_method",
    "projection_store",
    "resolvable",
    "run_selection",
    "selection_key",
    "step_figures",
]

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TOKENIZER = "cl100k"


def data_dir() -> Path:
    """Folder of the bundled pools (``$ADAGRES_DATA_DIR`` or ``<repo>/data``)."""
    return Path(os.environ.get("ADAGRES_DATA_DIR") or ROOT / "data")


def projection_method() -> str:
    """``umap`` (default) or ``pca`` (``$ADAGRES_PROJECTION``): the map's final projection."""
    method = os.environ.get("ADAGRES_PROJECTION", "umap").strip().lower()
    return method if method in ("umap", "pca") else "umap"


# --------------------------------------------------------------------------- pools


class _Registry:
    """Pools by key, shared by every session of this server process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pools: dict[str, Pool] = {}
        self.labels: dict[str, str] = {}


@st.cache_resource(show_spinner=False)
def _registry() -> _Registry:
    return _Registry()


def bundled_pools() -> dict[str, Path]:
    """Bundled pool files by key (file stem), sorted by name."""
    folder = data_dir()
    if not folder.is_dir():
        return {}
    return {path.stem: path for path in sorted(folder.glob("*.json"))}


def pool_keys() -> list[str]:
    """Keys of every pool the user can choose: bundled ones first, then loaded ones."""
    keys = list(bundled_pools())
    with _registry().lock:
        keys += [key for key in _registry().pools if key not in keys]
    return keys


def pool_label(key: str) -> str:
    """A short label for a pool key (plain text)."""
    registry = _registry()
    if key in registry.labels:
        return registry.labels[key]
    return key.replace("_", " ")


def prepare_pool(pool: Pool, report: Callable[[str], None] | None = None) -> Pool:
    """Return ``pool`` with token counts and embeddings, computing what is missing.

    Counting uses cl100k; embedding uses the packaged MiniLM model (slow the first time:
    ``report`` receives progress messages).
    """
    from adagres.pools.embed import ensure_embeddings
    from adagres.pools.tokens import ensure_token_counts

    if pool.token_counts is None:
        if report:
            report(f"Counting tokens of {len(pool)} chunks ({DEFAULT_TOKENIZER})…")
        pool = ensure_token_counts(pool, DEFAULT_TOKENIZER)
    if pool.raw_embeddings is None or pool.raw_query_embedding is None:
        if report:
            report(f"Embedding {len(pool)} chunks and the query (MiniLM, on this machine)…")

        def progress(done: int, total: int) -> None:
            if report:
                report(f"Embedded {done} of {total} texts…")

        pool = ensure_embeddings(pool, progress=progress)
    return pool


def add_pool(pool: Pool, kind: str, label: str | None = None) -> str:
    """Register a prepared pool; return its key (``<kind>-<12 hex of its fingerprint>``)."""
    key = f"{kind}-{pool.fingerprint[:12]}"
    registry = _registry()
    with registry.lock:
        registry.pools[key] = pool
        registry.labels[key] = label or f"{kind}: {pool.name or pool.query[:40]}"
    return key


def get_pool(key: str) -> Pool:
    """The pool with this key, loading a bundled file on first use (PoolError if unknown)."""
    registry = _registry()
    with registry.lock:
        pool = registry.pools.get(key)
    if pool is not None:
        return pool
    path = bundled_pools().get(key)
    if path is None and resolvable(key):
        return _resolve(key)
    if path is None:
        raise PoolError(f"no pool with key {key!r}")
    pool = load_pools(path)[0]
    if pool.token_counts is None or pool.raw_embeddings is None:
        name = escape_md(path.name)  # status labels render Markdown
        with st.status(f"Preparing {name}…", expanded=True) as status:
            pool = prepare_pool(pool, status.write)
            status.update(label=f"{name} is ready", state="complete", expanded=False)
    with registry.lock:
        registry.pools.setdefault(key, pool)
        registry.labels.setdefault(key, key.replace("_", " "))
        return registry.pools[key]


def _register(key: str, pool: Pool, label: str) -> Pool:
    """Register ``pool`` under a fixed ``key`` (the first one registered wins); return it."""
    registry = _registry()
    with registry.lock:
        registry.pools.setdefault(key, pool)
        registry.labels.setdefault(key, label)
        return registry.pools[key]


def _registered(key: str) -> bool:
    registry = _registry()
    with registry.lock:
        return key in registry.pools


# --------------------------------------------------------------------------- real corpora

FANOUTQA_PREFIX = "fanoutqa-"
_FANOUTQA_NOTE = (
    "Loading the FanOutQA pools (the first time builds a BM25 index over 10,033 Wikipedia "
    "summaries, about 10 s; then they are read from the disk cache)…"
)


def fanoutqa_key(index: int) -> str:
    """The pool key of FanOutQA dev sub-question ``index`` (``fanoutqa-<index>``)."""
    return f"{FANOUTQA_PREFIX}{int(index)}"


def _fanoutqa_index(key: str) -> int | None:
    rest = key[len(FANOUTQA_PREFIX) :] if key.startswith(FANOUTQA_PREFIX) else ""
    return int(rest) if rest.isdigit() and rest == str(int(rest)) else None


def resolvable(key: str) -> bool:
    """Whether :func:`get_pool` can build the pool ``key`` on demand (``fanoutqa-<index>``)."""
    return _fanoutqa_index(key) is not None


def _resolve(key: str) -> Pool:
    index = _fanoutqa_index(key)
    if index is None:
        raise PoolError(f"no pool with key {key!r}")
    with st.status(f"Preparing FanOutQA pool #{index}…", expanded=True) as status:
        load_fanoutqa_pool(index, status.write)
        status.update(label=f"FanOutQA pool #{index} is ready", state="complete", expanded=False)
    return get_pool(key)


@st.cache_data(show_spinner=False)
def fanoutqa_questions() -> list[str]:
    """The FanOutQA dev sub-questions; position i is pool ``fanoutqa-<i>``.

    Read from the dataset files (about 0.3 s), without building the pools. PoolError (not
    cached) when the optional data packages are missing.
    """
    from adagres import datasets

    # Same list, same order as datasets.fanoutqa_pools() builds its pools from.
    return [str(leaf["question"]) for leaf in datasets.sub_questions()]


@st.cache_resource(show_spinner=False)
def _fanoutqa_pools() -> list[Pool]:
    from adagres.pools.datasets import fanoutqa_pools

    return fanoutqa_pools()


def load_fanoutqa_pool(index: int, report: Callable[[str], None] | None = None) -> str:
    """Register the pool of FanOutQA dev sub-question ``index``, prepared; return its key.

    The pools are built once (BM25, ~10 s) and then read from the disk cache; the chosen
    pool's tokens are counted and its texts embedded with the packaged model (``report``
    receives progress messages). PoolError if the data packages are missing or the index
    is out of range.
    """
    key = fanoutqa_key(index)
    if _registered(key):
        return key
    if report:
        report(_FANOUTQA_NOTE)
    pools = _fanoutqa_pools()
    if not 0 <= int(index) < len(pools):
        raise PoolError(f"FanOutQA has {len(pools)} dev sub-question pools; no pool #{index}")
    pool = prepare_pool(pools[int(index)], report)
    _register(key, pool, f"FanOutQA #{index}: {pool.query[:40]}")
    return key


@st.cache_data(show_spinner=False)
def drug_conditions() -> list[tuple[str, int]]:
    """(condition, number of reviews) of the drug reviews, most frequent first (PoolError if
    the package is missing)."""
    from adagres.pools.datasets import conditions

    return [(str(name), int(count)) for name, count in conditions() if str(name).strip()]


def drug_pool_key(query: str, condition: str | None, size: int, overlap: int, top_n: int) -> str:
    """``drugs-<12 hex>``: the key of the drug-review pool built with these parameters."""
    params = json.dumps([query, condition, int(size), int(overlap), int(top_n)])
    return f"drugs-{short_hash(params.encode())}"


def build_drug_pool(
    query: str,
    condition: str | None,
    size: int,
    overlap: int,
    top_n: int,
    progress: Callable[[int, int], None] | None = None,
) -> str:
    """Build (once per parameters) and register a drug-review pool in corpus mode; return its
    key. ``progress(done, total)`` follows the embedding; AdagresError on bad input."""
    from adagres.pools.datasets import drug_review_pool

    key = drug_pool_key(query, condition, size, overlap, top_n)
    if _registered(key):
        return key
    pool = drug_review_pool(
        query,
        condition=condition,
        size=int(size),
        overlap=int(overlap),
        top_n=int(top_n),
        progress=progress,
    )
    where = f" ({condition})" if condition else ""
    _register(key, pool, f"drug reviews{where}: {query[:40]}")
    return key


def budget_limits(pool: Pool) -> tuple[int, int]:
    """The budget slider's range for ``pool``: 1 to its total tokens (at least 1)."""
    total = int(np.asarray(pool.token_counts).sum())
    return 1, max(total, 1)


# --------------------------------------------------------------------------- selection


def _selection(*key: Any) -> Selection:
    """The cached selection for ``key`` (see :func:`selection_key`); raises its cached error."""
    result = _selection_or_error(*key)
    if isinstance(result, AdagresError):
        raise type(result)(str(result))  # a fresh exception: the cached one keeps its trace
    return result


@st.cache_resource(max_entries=64, show_spinner="Selecting…")
def _selection_or_error(*key: Any) -> Selection | AdagresError:
    """Errors are cached like results: a refused or timed-out exact solve is not rerun on
    every rerun of every page (st.cache_resource does not cache exceptions)."""
    try:
        return _make_selection(*key)
    except AdagresError as error:
        return error


def _make_selection(
    key: str,
    fingerprint: str,
    strategy: str,
    budget: int,
    policy: str,
    lam: Any,
    formula: str,
    scale: float,
    offset: float,
    floor: Any,
) -> Selection:
    pool = get_pool(key)
    # Baselines are run so their numbers compare with AdaGReS; its run comes from (and
    # stays in) the same cache.
    reference = None
    if strategy != "adagres":
        reference = _selection(key, fingerprint, "adagres", budget, policy, lam, formula,
                               scale, offset, floor)  # fmt: skip
    return baselines.run(
        strategy, pool.query_embedding, pool.embeddings, pool.token_counts, budget,
        texts=pool.texts, lam=lam, policy=policy, formula=formula, scale=scale,
        offset=offset, redundancy_floor=floor, reference=reference,
    )  # fmt: skip


def selection_key(settings: Settings) -> tuple[Any, ...]:
    """The small values a selection depends on (the cache key of selections and figures)."""
    pool = get_pool(settings.pool)
    return (settings.pool, pool.fingerprint, settings.strategy, settings.budget,
            settings.policy, settings.lam_arg, settings.formula, settings.scale,
            settings.offset, settings.redundancy_floor)  # fmt: skip


def run_selection(settings: Settings) -> Selection:
    """The (traced) selection for these settings; cached; AdagresError on bad input."""
    return _selection(*selection_key(settings))


@st.cache_resource(max_entries=256, show_spinner=False)
def _step_figures(
    key: tuple[Any, ...], step: int, method: str, _projection: Any
) -> tuple[Any, Any, Any]:
    """Figures of one step; keyed on the projection's method (its coordinates are not hashed)."""
    from adagres import figures

    selection = _selection(*key)
    pool = get_pool(key[0])
    projection = _projection
    titles = [chunk.title for chunk in pool.chunks]
    return (
        figures.pool_map(
            projection, selection, step, ids=pool.ids, texts=pool.texts, titles=titles
        ),
        figures.gain_timeline(selection, step=step),
        figures.budget_bar(selection, ids=pool.ids, step=step),
    )


def step_figures(settings: Settings, step: int) -> tuple[Any, Any, Any, str, bool]:
    """(map, gain timeline, budget bar, projection method, UMAP pending) at ``step``.

    Figures are cached per selection, step and projection method, so replaying steps or
    returning to a budget already seen costs no figure building.
    """
    # One read of the projection store: the coordinates drawn are the method named in the key,
    # even when the UMAP layout lands between two reads.
    coordinates, method, pending = projection(settings.pool)
    figs = _step_figures(selection_key(settings), step, method, coordinates)
    return (*figs, method, pending)


# --------------------------------------------------------------------------- tables


def pool_frame(pool: Pool, selection: Selection) -> pd.DataFrame:
    """One row per chunk: position, id, title, tokens, relevance, verdict, step and text."""
    verdicts = selection.verdict_kinds
    return pd.DataFrame(
        {
            "position": np.arange(len(pool)),
            "id": list(pool.ids),
            "title": [chunk.title or "" for chunk in pool.chunks],
            "tokens": np.asarray(pool.token_counts),
            "relevance": np.round(selection.relevance, 4),
            "verdict": [str(kind) for kind, _ in verdicts],
            "step": [step for _, step in verdicts],
            "text": list(pool.texts),
        }
    )


def context_frame(pool: Pool, indices: tuple[int, ...]) -> pd.DataFrame:
    """The selected chunks in pick order, with token counts and the running total."""
    tokens = np.asarray(pool.token_counts)[list(indices)] if indices else np.zeros(0, int)
    return pd.DataFrame(
        {
            "order": np.arange(1, len(indices) + 1),
            "id": [pool.ids[i] for i in indices],
            "tokens": tokens,
            "total": np.cumsum(tokens),
            "text": [pool.texts[i] for i in indices],
        }
    )


@st.cache_data(max_entries=32, show_spinner="Finding near-duplicates…")
def _groups(key: str, fingerprint: str, threshold: float) -> list[list[int]]:
    del fingerprint
    return metrics.near_duplicate_groups(get_pool(key).embeddings, threshold)


def near_duplicate_groups(key: str, threshold: float) -> list[list[int]]:
    """Groups of pool positions linked by cosine ≥ ``threshold`` (largest group first)."""
    return _groups(key, get_pool(key).fingerprint, float(threshold))


# --------------------------------------------------------------------------- projection


class ProjectionStore:
    """2-D coordinates per pool: PCA at once, UMAP from one background worker.

    The worker first runs ``adagres.figures.projection.warm_up()`` (numba's compilation), then the
    UMAP fits in submission order. Results are kept per pool key and fingerprint.
    """

    def __init__(self, method: str) -> None:
        self.method = method
        self._lock = threading.Lock()
        self._done: dict[tuple[str, str, str], Any] = {}
        self._pending: dict[tuple[str, str, str], Future[Any]] = {}
        self._executor: ThreadPoolExecutor | None = None
        if method == "umap":
            from adagres.figures.projection import warm_up

            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="umap")
            self._executor.submit(warm_up)

    def _fit(self, key: tuple[str, str, str], pool: Pool) -> Any:
        from adagres.figures.projection import project

        result = project(pool.embeddings, pool.query_embedding, method=key[2], seed=0)
        with self._lock:
            self._done[key] = result
            self._pending.pop(key, None)
        return result

    def get(self, key: str, pool: Pool) -> tuple[Any, str, bool]:
        """(projection, method used, whether a better one is still being computed)."""
        fast = (key, pool.fingerprint, "pca")
        best = (key, pool.fingerprint, self.method)
        with self._lock:
            if best in self._done:
                return self._done[best], self.method, False
            if self._executor is not None and best not in self._pending:
                self._pending[best] = self._executor.submit(self._fit, best, pool)
            ready = self._done.get(fast)
        if ready is None:
            ready = self._fit(fast, pool)
        return ready, "pca", self.method != "pca"

    def ready(self, key: str, pool: Pool) -> bool:
        """Whether the final projection of this pool is available."""
        with self._lock:
            return (key, pool.fingerprint, self.method) in self._done


@st.cache_resource(show_spinner=False)
def projection_store(method: str) -> ProjectionStore:
    """The process-wide projection store (created once per server process and method)."""
    return ProjectionStore(method)


def projection(key: str) -> tuple[Any, str, bool]:
    """The map coordinates of pool ``key``: (Projection, method, UMAP still pending)."""
    return projection_store(projection_method()).get(key, get_pool(key))


def short_hash(data: bytes) -> str:
    """12 hex characters of sha256 (names an uploaded file)."""
    return hashlib.sha256(data).hexdigest()[:12]
