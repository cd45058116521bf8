"""The pools of this server process, by key, and where each comes from.

Pools live in a process-wide registry (``st.cache_resource``) under a short key:

- ``<file stem>``: a bundled pool (``data/*.json``, or ``$ADAGRES_DATA_DIR``), loaded on
  first use;
- ``upload-<12 hex>``: an uploaded pool file (:func:`load_upload`);
- ``corpus-<12 hex>``: a pool built from documents and a query (:func:`build_from_documents`);
- ``fanoutqa-<index>``: the FanOutQA dev sub-question pool at that index (optional data
  packages, see ``adagres.pools.datasets``); :func:`get_pool` rebuilds it on demand (from
  the disk cache), so such keys survive the URL round trip on a new session or server;
- ``drugs-<12 hex of the parameters>``: a drug-review pool built in corpus mode; it cannot
  be rebuilt from its key, so a link to one falls back to the first pool (with the
  sidebar's warning) once the server has restarted.

Every pool in the registry has token counts and embeddings. Loading, counting and embedding
report through ``ui.progress``.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
import streamlit as st

from adagres.errors import PoolError
from adagres.pools.io import load_pools
from adagres.pools.pool import Pool

from . import progress

__all__ = [
    "ROOT",
    "add_pool",
    "budget_limits",
    "build_drug_pool",
    "build_from_documents",
    "bundled_pools",
    "data_dir",
    "drug_conditions",
    "drug_pool_key",
    "fanoutqa_key",
    "fanoutqa_questions",
    "get_pool",
    "load_fanoutqa_pool",
    "load_upload",
    "open_drug_pool",
    "open_fanoutqa_pool",
    "pool_keys",
    "pool_label",
    "prepare_pool",
    "resolvable",
    "short_hash",
]

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TOKENIZER = "cl100k"
Report = Callable[[str], None]
Progress = Callable[[int, int], None]


def data_dir() -> Path:
    """Folder of the bundled pools (``$ADAGRES_DATA_DIR`` or ``<repo>/data``)."""
    return Path(os.environ.get("ADAGRES_DATA_DIR") or ROOT / "data")


def short_hash(data: bytes) -> str:
    """12 hex characters of sha256 (names an uploaded file or a set of parameters)."""
    return hashlib.sha256(data).hexdigest()[:12]


def budget_limits(pool: Pool) -> tuple[int, int]:
    """The budget slider's range for ``pool``: 1 to its total tokens (at least 1)."""
    total = int(np.asarray(pool.token_counts).sum())
    return 1, max(total, 1)


# --------------------------------------------------------------------------- registry


class Registry:
    """Pools and their labels by key, shared by every session of this server process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.pools: dict[str, Pool] = {}
        self.labels: dict[str, str] = {}

    def get(self, key: str) -> Pool | None:
        with self.lock:
            return self.pools.get(key)

    def put(self, key: str, pool: Pool, label: str) -> Pool:
        """Register ``pool`` under ``key`` unless one is there already; return the one kept."""
        with self.lock:
            self.pools.setdefault(key, pool)
            self.labels.setdefault(key, label)
            return self.pools[key]

    def names(self) -> list[str]:
        with self.lock:
            return list(self.pools)


@st.cache_resource(show_spinner=False)
def registry() -> Registry:
    """The process-wide registry (created once per server process)."""
    return Registry()


def bundled_pools() -> dict[str, Path]:
    """Bundled pool files by key (file stem), sorted by name."""
    folder = data_dir()
    if not folder.is_dir():
        return {}
    return {path.stem: path for path in sorted(folder.glob("*.json"))}


def pool_keys() -> list[str]:
    """Keys of every pool the user can choose: bundled ones first, then loaded ones."""
    keys = list(bundled_pools())
    return keys + [key for key in registry().names() if key not in keys]


def pool_label(key: str) -> str:
    """A short label for a pool key (plain text)."""
    return registry().labels.get(key) or key.replace("_", " ")


def prepare_pool(pool: Pool, report: Report | None = None) -> Pool:
    """Return ``pool`` with token counts and embeddings, computing what is missing.

    Counting uses cl100k; embedding uses the packaged MiniLM model (slow the first time:
    ``report`` receives progress messages).
    """
    from adagres.pools.embed import ensure_embeddings
    from adagres.pools.tokens import ensure_token_counts

    say = report or (lambda message: None)
    if pool.token_counts is None:
        say(f"Counting tokens of {len(pool)} chunks ({DEFAULT_TOKENIZER})…")
        pool = ensure_token_counts(pool, DEFAULT_TOKENIZER)
    if pool.raw_embeddings is None or pool.raw_query_embedding is None:
        say(f"Embedding {len(pool)} chunks and the query (MiniLM, on this machine)…")
        pool = ensure_embeddings(
            pool, progress=lambda done, total: say(f"Embedded {done} of {total} texts…")
        )
    return pool


def add_pool(pool: Pool, kind: str, label: str | None = None) -> str:
    """Register a prepared pool; return its key (``<kind>-<12 hex of its fingerprint>``)."""
    key = f"{kind}-{pool.fingerprint[:12]}"
    registry().put(key, pool, label or f"{kind}: {pool.name or pool.query[:40]}")
    return key


def get_pool(key: str) -> Pool:
    """The pool with this key, loading a bundled file or rebuilding a FanOutQA pool on first
    use (PoolError if there is no such pool)."""
    pool = registry().get(key)
    if pool is not None:
        return pool
    path = bundled_pools().get(key)
    if path is None and resolvable(key):
        index = int(key[len(FANOUTQA_PREFIX) :])
        ready = f"FanOutQA pool #{index} is ready"
        with progress.status(f"Preparing FanOutQA pool #{index}…", ready) as note:
            return get_pool(load_fanoutqa_pool(index, note))
    if path is None:
        raise PoolError(f"no pool with key {key!r}")
    pool = load_pools(path)[0]
    if pool.token_counts is None or pool.raw_embeddings is None:
        with progress.status(f"Preparing {path.name}…", f"{path.name} is ready") as note:
            pool = prepare_pool(pool, note)
    return registry().put(key, pool, key.replace("_", " "))


# --------------------------------------------------------------------------- uploads, documents


def load_upload(name: str, content: bytes) -> str:
    """Register the first pool of an uploaded file, prepared; return its key.

    Any format :func:`adagres.load_pools` reads; AdagresError (the loader's message) if the
    file is not a pool.
    """
    with progress.status(f"Loading {name}…", f"Loaded {name}") as note:
        found = load_pools(content, name=name)
        note(f"{len(found)} pool(s) in the file; using the first.")
        return add_pool(prepare_pool(found[0], note), "upload", f"upload: {name}")


def build_from_documents(
    documents: Mapping[str, str], query: str, *, size: int, overlap: int, top_n: int
) -> str:
    """Chunk and embed ``documents`` (name -> text), keep the ``top_n`` chunks closest to
    ``query`` and register that pool; return its key (AdagresError on bad input)."""
    from adagres.pools.corpus import pool_from_documents

    with progress.status("Building the pool…", "Pool built"), progress.bar("Embedding…") as report:
        built = pool_from_documents(
            dict(documents), query, size=size, overlap=overlap, top_n=top_n,
            progress=_embedding_progress(report),
        )  # fmt: skip
    return add_pool(built, "corpus", f"documents: {query[:40]}")


def _embedding_progress(report: Callable[..., None]) -> Progress:
    return lambda done, total: report(done / max(total, 1), f"Embedded {done} of {total} texts")


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


def load_fanoutqa_pool(index: int, report: Report | None = None) -> str:
    """Register the pool of FanOutQA dev sub-question ``index``, prepared; return its key.

    The pools are built once (BM25, ~10 s) and then read from the disk cache; the chosen
    pool's tokens are counted and its texts embedded with the packaged model (``report``
    receives progress messages). PoolError if the data packages are missing or the index
    is out of range.
    """
    key = fanoutqa_key(index)
    if registry().get(key) is not None:
        return key
    if report:
        report(_FANOUTQA_NOTE)
    pools = _fanoutqa_pools()
    if not 0 <= int(index) < len(pools):
        raise PoolError(f"FanOutQA has {len(pools)} dev sub-question pools; no pool #{index}")
    pool = prepare_pool(pools[int(index)], report)
    registry().put(key, pool, f"FanOutQA #{index}: {pool.query[:40]}")
    return key


def open_fanoutqa_pool(index: int) -> str:
    """:func:`load_fanoutqa_pool` with a status box; return the key."""
    ready = f"FanOutQA pool #{index} is ready"
    with progress.status(f"Loading FanOutQA pool #{index}…", ready) as note:
        return load_fanoutqa_pool(index, note)


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
    on_progress: Progress | None = None,
) -> str:
    """Build (once per parameters) and register a drug-review pool in corpus mode; return its
    key. ``on_progress(done, total)`` follows the embedding; AdagresError on bad input."""
    from adagres.pools.datasets import drug_review_pool

    key = drug_pool_key(query, condition, size, overlap, top_n)
    if registry().get(key) is not None:
        return key
    pool = drug_review_pool(
        query,
        condition=condition,
        size=int(size),
        overlap=int(overlap),
        top_n=int(top_n),
        progress=on_progress,
    )
    where = f" ({condition})" if condition else ""
    registry().put(key, pool, f"drug reviews{where}: {query[:40]}")
    return key


def open_drug_pool(query: str, condition: str | None, size: int, overlap: int, top_n: int) -> str:
    """:func:`build_drug_pool` with a status box and a progress bar; return the key."""
    with (
        progress.status("Building the drug-review pool…", "Pool built"),
        progress.bar("Chunking and embedding the reviews…") as report,
    ):
        return build_drug_pool(query, condition, size, overlap, top_n, _embedding_progress(report))
